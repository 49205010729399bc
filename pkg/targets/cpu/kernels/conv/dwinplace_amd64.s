//go:build amd64 && !purego

#include "textflag.h"

// Lane 0 gets element 7 (then replaced by the padding zero), lane i
// element i-1: x[0..7] becomes [·, x0 .. x6]. Also read by
// convs2pack_amd64.s.
DATA ·laneUp+0(SB)/4, $7
DATA ·laneUp+4(SB)/4, $0
DATA ·laneUp+8(SB)/4, $1
DATA ·laneUp+12(SB)/4, $2
DATA ·laneUp+16(SB)/4, $3
DATA ·laneUp+20(SB)/4, $4
DATA ·laneUp+24(SB)/4, $5
DATA ·laneUp+28(SB)/4, $6
GLOBL ·laneUp(SB), RODATA|NOPTR, $32

// Lane i gets element i+1, lane 7 element 0 (then replaced by the padding
// zero): x[0..7] becomes [x1 .. x7, ·].
DATA dwshl<>+0(SB)/4, $1
DATA dwshl<>+4(SB)/4, $2
DATA dwshl<>+8(SB)/4, $3
DATA dwshl<>+12(SB)/4, $4
DATA dwshl<>+16(SB)/4, $5
DATA dwshl<>+20(SB)/4, $6
DATA dwshl<>+24(SB)/4, $7
DATA dwshl<>+28(SB)/4, $0
GLOBL dwshl<>(SB), RODATA|NOPTR, $32

// The weights, bias and clamp bounds broadcast into Y0..Y11, and the
// arguments common to both kernels into registers.
#define LOADW \
	MOVQ w+72(FP), AX; \
	VBROADCASTSS 0(AX), Y0; \
	VBROADCASTSS 4(AX), Y1; \
	VBROADCASTSS 8(AX), Y2; \
	VBROADCASTSS 12(AX), Y3; \
	VBROADCASTSS 16(AX), Y4; \
	VBROADCASTSS 20(AX), Y5; \
	VBROADCASTSS 24(AX), Y6; \
	VBROADCASTSS 28(AX), Y7; \
	VBROADCASTSS 32(AX), Y8; \
	VBROADCASTSS 36(AX), Y9; \
	VBROADCASTSS 40(AX), Y10; \
	VBROADCASTSS 44(AX), Y11; \
	MOVQ dst+0(FP), DI; \
	MOVQ r0+16(FP), R8; \
	MOVQ r1+24(FP), R9; \
	MOVQ r2+32(FP), R10; \
	MOVQ n+48(FP), DX

// Stride 1: the three taps of kernel row R for the eight outputs at byte
// offset BX are the unaligned loads one column either side.
#define S1ROW(R, W0, W1, W2) \
	VFMADD231PS -4(R)(BX*1), W0, Y12; \
	VFMADD231PS (R)(BX*1), W1, Y12; \
	VFMADD231PS 4(R)(BX*1), W2, Y12

// S1ROW at column 0, where column -1 is padding.
#define S1ROW0(R, W0, W1, W2) \
	VMOVUPS     (R), Y14; \
	VMOVUPS     ·laneUp(SB), Y13; \
	VPERMPS     Y14, Y13, Y13; \
	VXORPS      Y15, Y15, Y15; \
	VBLENDPS    $1, Y15, Y13, Y13; \
	VFMADD231PS Y13, W0, Y12; \
	VFMADD231PS Y14, W1, Y12; \
	VFMADD231PS 4(R), W2, Y12

// S1ROW at the row's last eight columns (BX), where the column after is
// padding.
#define S1ROWN(R, W0, W1, W2) \
	VMOVUPS     (R)(BX*1), Y14; \
	VMOVUPS     dwshl<>(SB), Y13; \
	VPERMPS     Y14, Y13, Y13; \
	VXORPS      Y15, Y15, Y15; \
	VBLENDPS    $0x80, Y15, Y13, Y13; \
	VFMADD231PS -4(R)(BX*1), W0, Y12; \
	VFMADD231PS Y14, W1, Y12; \
	VFMADD231PS Y13, W2, Y12

// The clamp (NaN passes) and the store of a stride-1 block at byte offset BX.
#define S1STORE \
	VMAXPS  Y12, Y10, Y12; \
	VMINPS  Y12, Y11, Y12; \
	VMOVUPS Y12, (DI)(BX*1)

// func dwS1RowsAVX2(dst *float32, ldd int, r0, r1, r2 *float32, srcStep, n, blocks, last int, w *dwWeights)
//
// Stride 1, for n output rows (dst ldd bytes apart; the input rows r0,
// r1, r2, one per kernel row, srcStep bytes apart): the eight outputs at
// column 0, blocks more at byte offsets 32, 64, ..., and the row's last
// eight at byte offset last. w holds the nine taps, the bias and the
// clamp bounds.
TEXT ·dwS1RowsAVX2(SB), NOSPLIT, $0-80
	LOADW

s1row:
	XORQ BX, BX
	VMOVAPS Y9, Y12
	S1ROW0(R8, Y0, Y1, Y2)
	S1ROW0(R9, Y3, Y4, Y5)
	S1ROW0(R10, Y6, Y7, Y8)
	S1STORE
	MOVQ blocks+56(FP), SI
	TESTQ SI, SI
	JZ   s1tail

s1block:
	ADDQ $32, BX
	VMOVAPS Y9, Y12
	S1ROW(R8, Y0, Y1, Y2)
	S1ROW(R9, Y3, Y4, Y5)
	S1ROW(R10, Y6, Y7, Y8)
	S1STORE
	DECQ SI
	JNZ  s1block

s1tail:
	MOVQ last+64(FP), BX
	VMOVAPS Y9, Y12
	S1ROWN(R8, Y0, Y1, Y2)
	S1ROWN(R9, Y3, Y4, Y5)
	S1ROWN(R10, Y6, Y7, Y8)
	S1STORE
	ADDQ ldd+8(FP), DI
	MOVQ srcStep+40(FP), AX
	ADDQ AX, R8
	ADDQ AX, R9
	ADDQ AX, R10
	DECQ DX
	JNZ  s1row
	VZEROUPPER
	RET

// One kernel row of an eight-output stride-2 block at output column j0:
// R is the input row, CX = 8·j0 bytes. The even columns of
// x[2j0-1 : 2j0+15] are the left taps, the even and odd columns of
// x[2j0 : 2j0+16] the middle and right ones, each in lane order
// j0 + [0 1 4 5 | 2 3 6 7] (VSHUFPS keeps to 128-bit lanes).
#define S2ROW(R, W0, W1, W2) \
	VMOVUPS     -4(R)(CX*1), Y13; \
	VSHUFPS     $0x88, 28(R)(CX*1), Y13, Y13; \
	VFMADD231PS Y13, W0, Y12; \
	VMOVUPS     (R)(CX*1), Y14; \
	VSHUFPS     $0x88, 32(R)(CX*1), Y14, Y15; \
	VFMADD231PS Y15, W1, Y12; \
	VSHUFPS     $0xDD, 32(R)(CX*1), Y14, Y14; \
	VFMADD231PS Y14, W2, Y12

// S2ROW at j0 = 0, where column -1 is padding: x[-1 .. 6] is x[0 .. 7]
// moved up a lane with a zero in lane 0.
#define S2ROW0(R, W0, W1, W2) \
	VMOVUPS     (R), Y14; \
	VMOVUPS     ·laneUp(SB), Y13; \
	VPERMPS     Y14, Y13, Y13; \
	VXORPS      Y15, Y15, Y15; \
	VBLENDPS    $1, Y15, Y13, Y13; \
	VSHUFPS     $0x88, 28(R), Y13, Y13; \
	VFMADD231PS Y13, W0, Y12; \
	VSHUFPS     $0x88, 32(R), Y14, Y15; \
	VFMADD231PS Y15, W1, Y12; \
	VSHUFPS     $0xDD, 32(R), Y14, Y14; \
	VFMADD231PS Y14, W2, Y12

// The end of a block at output byte offset BX: the clamp (NaN passes),
// the lanes put back in order, the store.
#define S2STORE \
	VMAXPS  Y12, Y10, Y12; \
	VMINPS  Y12, Y11, Y12; \
	VPERMPD $0xD8, Y12, Y12; \
	VMOVUPS Y12, (DI)(BX*1)

// The block at output byte offset BX (CX = 2·BX): bias, then the nine
// taps in order.
#define S2BLOCK \
	VMOVAPS Y9, Y12; \
	S2ROW(R8, Y0, Y1, Y2); \
	S2ROW(R9, Y3, Y4, Y5); \
	S2ROW(R10, Y6, Y7, Y8); \
	S2STORE

// func dwS2RowsAVX2(dst *float32, ldd int, r0, r1, r2 *float32, srcStep, n, blocks, last int, w *dwWeights)
//
// Stride 2, for n output rows (dst ldd bytes apart; the input rows r0, r1, r2, one
// per kernel row, srcStep bytes apart): the eight outputs at column 0,
// blocks more at byte offsets 32, 64, ..., and, when last > 0, eight at
// byte offset last. w holds the nine taps, the bias and the clamp bounds.
TEXT ·dwS2RowsAVX2(SB), NOSPLIT, $0-80
	LOADW

row:
	XORQ BX, BX
	VMOVAPS Y9, Y12
	S2ROW0(R8, Y0, Y1, Y2)
	S2ROW0(R9, Y3, Y4, Y5)
	S2ROW0(R10, Y6, Y7, Y8)
	S2STORE
	MOVQ blocks+56(FP), SI
	TESTQ SI, SI
	JZ   tail

block:
	ADDQ $32, BX
	LEAQ (BX)(BX*1), CX
	S2BLOCK
	DECQ SI
	JNZ  block

tail:
	MOVQ last+64(FP), BX
	TESTQ BX, BX
	JZ   next
	LEAQ (BX)(BX*1), CX
	S2BLOCK

next:
	ADDQ ldd+8(FP), DI
	MOVQ srcStep+40(FP), AX
	ADDQ AX, R8
	ADDQ AX, R9
	ADDQ AX, R10
	DECQ DX
	JNZ  row
	VZEROUPPER
	RET
