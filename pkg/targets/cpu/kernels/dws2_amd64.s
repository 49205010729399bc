//go:build amd64 && !purego

#include "textflag.h"

// Lane 0 gets element 7 (then replaced by the padding zero), lane i
// element i-1: x[0..7] becomes [·, x0 .. x6].
DATA dws2shift<>+0(SB)/4, $7
DATA dws2shift<>+4(SB)/4, $0
DATA dws2shift<>+8(SB)/4, $1
DATA dws2shift<>+12(SB)/4, $2
DATA dws2shift<>+16(SB)/4, $3
DATA dws2shift<>+20(SB)/4, $4
DATA dws2shift<>+24(SB)/4, $5
DATA dws2shift<>+28(SB)/4, $6
GLOBL dws2shift<>(SB), RODATA|NOPTR, $32

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
	VMOVUPS     dws2shift<>(SB), Y13; \
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

// func dwS2RowsAVX2(dst *float32, ldd int, r0, r1, r2 *float32, srcStep, n, blocks, last int, w *dwS2Weights)
//
// For n output rows (dst ldd bytes apart; the input rows r0, r1, r2, one
// per kernel row, srcStep bytes apart): the eight outputs at column 0,
// blocks more at byte offsets 32, 64, ..., and, when last > 0, eight at
// byte offset last. w holds the nine taps, the bias and the clamp bounds.
TEXT ·dwS2RowsAVX2(SB), NOSPLIT, $0-80
	MOVQ w+72(FP), AX
	VBROADCASTSS 0(AX), Y0
	VBROADCASTSS 4(AX), Y1
	VBROADCASTSS 8(AX), Y2
	VBROADCASTSS 12(AX), Y3
	VBROADCASTSS 16(AX), Y4
	VBROADCASTSS 20(AX), Y5
	VBROADCASTSS 24(AX), Y6
	VBROADCASTSS 28(AX), Y7
	VBROADCASTSS 32(AX), Y8
	VBROADCASTSS 36(AX), Y9
	VBROADCASTSS 40(AX), Y10
	VBROADCASTSS 44(AX), Y11
	MOVQ dst+0(FP), DI
	MOVQ r0+16(FP), R8
	MOVQ r1+24(FP), R9
	MOVQ r2+32(FP), R10
	MOVQ n+48(FP), DX

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
