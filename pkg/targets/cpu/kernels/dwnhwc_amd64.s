//go:build amd64 && !purego

#include "textflag.h"

// One tap over eight vectors (64 channels): x at SI, weights at R10.
#define TAP8 \
	VMOVUPS (SI), Y8; VFMADD231PS (R10), Y8, Y0; \
	VMOVUPS 32(SI), Y9; VFMADD231PS 32(R10), Y9, Y1; \
	VMOVUPS 64(SI), Y8; VFMADD231PS 64(R10), Y8, Y2; \
	VMOVUPS 96(SI), Y9; VFMADD231PS 96(R10), Y9, Y3; \
	VMOVUPS 128(SI), Y8; VFMADD231PS 128(R10), Y8, Y4; \
	VMOVUPS 160(SI), Y9; VFMADD231PS 160(R10), Y9, Y5; \
	VMOVUPS 192(SI), Y8; VFMADD231PS 192(R10), Y8, Y6; \
	VMOVUPS 224(SI), Y9; VFMADD231PS 224(R10), Y9, Y7

// One tap over four vectors (32 channels).
#define TAP4 \
	VMOVUPS (SI), Y8; VFMADD231PS (R10), Y8, Y0; \
	VMOVUPS 32(SI), Y9; VFMADD231PS 32(R10), Y9, Y1; \
	VMOVUPS 64(SI), Y8; VFMADD231PS 64(R10), Y8, Y2; \
	VMOVUPS 96(SI), Y9; VFMADD231PS 96(R10), Y9, Y3

// Tap t's input row for this pixel and channel block into SI.
#define XPTR(t) \
	MOVQ (t*8)(AX), SI; ADDQ R12, SI; ADDQ R13, SI

// func dwNHWCAVX(out *float32, outStep int, bases *[9]uintptr, inStep int, w, bias *float32, c, npix int, lo, hi float32)
//
// Channels-last depthwise taps: for pixel p < npix and channel j < c (a
// multiple of 8), out[p*outStep + j] = clamp(bias[j] + Σ_t x_t[j]·w[t*c+j],
// lo, hi) (NaN kept), where x_t is tap t's input pixel at bases[t] +
// p*inStep. Steps are in bytes. Nine taps, summed in order t = 0..8.
// Channel blocks go outermost, so a block's weights stay in L1 across the
// pixels.
TEXT ·dwNHWCAVX(SB), NOSPLIT, $0-72
	MOVQ bases+16(FP), AX
	MOVQ w+32(FP), BX
	MOVQ bias+40(FP), R8
	MOVQ c+48(FP), R9
	SHLQ $2, R9                 // bytes per tap row of w
	VBROADCASTSS lo+64(FP), Y14
	VBROADCASTSS hi+68(FP), Y15
	XORQ R13, R13               // channel byte offset
	MOVQ R9, CX                 // channel bytes left

block64:
	CMPQ CX, $256
	JL   block32
	MOVQ out+0(FP), DI
	XORQ R12, R12               // p·inStep
	MOVQ npix+56(FP), DX

pixel64:
	VMOVUPS (R8)(R13*1), Y0
	VMOVUPS 32(R8)(R13*1), Y1
	VMOVUPS 64(R8)(R13*1), Y2
	VMOVUPS 96(R8)(R13*1), Y3
	VMOVUPS 128(R8)(R13*1), Y4
	VMOVUPS 160(R8)(R13*1), Y5
	VMOVUPS 192(R8)(R13*1), Y6
	VMOVUPS 224(R8)(R13*1), Y7
	LEAQ (BX)(R13*1), R10
	XPTR(0); TAP8; ADDQ R9, R10
	XPTR(1); TAP8; ADDQ R9, R10
	XPTR(2); TAP8; ADDQ R9, R10
	XPTR(3); TAP8; ADDQ R9, R10
	XPTR(4); TAP8; ADDQ R9, R10
	XPTR(5); TAP8; ADDQ R9, R10
	XPTR(6); TAP8; ADDQ R9, R10
	XPTR(7); TAP8; ADDQ R9, R10
	XPTR(8); TAP8
	// max(lo, x) then min(hi, x), the bound first: NaN passes.
	VMAXPS Y0, Y14, Y0
	VMAXPS Y1, Y14, Y1
	VMAXPS Y2, Y14, Y2
	VMAXPS Y3, Y14, Y3
	VMAXPS Y4, Y14, Y4
	VMAXPS Y5, Y14, Y5
	VMAXPS Y6, Y14, Y6
	VMAXPS Y7, Y14, Y7
	VMINPS Y0, Y15, Y0
	VMINPS Y1, Y15, Y1
	VMINPS Y2, Y15, Y2
	VMINPS Y3, Y15, Y3
	VMINPS Y4, Y15, Y4
	VMINPS Y5, Y15, Y5
	VMINPS Y6, Y15, Y6
	VMINPS Y7, Y15, Y7
	VMOVUPS Y0, (DI)(R13*1)
	VMOVUPS Y1, 32(DI)(R13*1)
	VMOVUPS Y2, 64(DI)(R13*1)
	VMOVUPS Y3, 96(DI)(R13*1)
	VMOVUPS Y4, 128(DI)(R13*1)
	VMOVUPS Y5, 160(DI)(R13*1)
	VMOVUPS Y6, 192(DI)(R13*1)
	VMOVUPS Y7, 224(DI)(R13*1)
	ADDQ outStep+8(FP), DI
	ADDQ inStep+24(FP), R12
	DECQ DX
	JNZ  pixel64
	ADDQ $256, R13
	SUBQ $256, CX
	JMP  block64

block32:
	CMPQ CX, $128
	JL   block8
	MOVQ out+0(FP), DI
	XORQ R12, R12
	MOVQ npix+56(FP), DX

pixel32:
	VMOVUPS (R8)(R13*1), Y0
	VMOVUPS 32(R8)(R13*1), Y1
	VMOVUPS 64(R8)(R13*1), Y2
	VMOVUPS 96(R8)(R13*1), Y3
	LEAQ (BX)(R13*1), R10
	XPTR(0); TAP4; ADDQ R9, R10
	XPTR(1); TAP4; ADDQ R9, R10
	XPTR(2); TAP4; ADDQ R9, R10
	XPTR(3); TAP4; ADDQ R9, R10
	XPTR(4); TAP4; ADDQ R9, R10
	XPTR(5); TAP4; ADDQ R9, R10
	XPTR(6); TAP4; ADDQ R9, R10
	XPTR(7); TAP4; ADDQ R9, R10
	XPTR(8); TAP4
	VMAXPS Y0, Y14, Y0
	VMAXPS Y1, Y14, Y1
	VMAXPS Y2, Y14, Y2
	VMAXPS Y3, Y14, Y3
	VMINPS Y0, Y15, Y0
	VMINPS Y1, Y15, Y1
	VMINPS Y2, Y15, Y2
	VMINPS Y3, Y15, Y3
	VMOVUPS Y0, (DI)(R13*1)
	VMOVUPS Y1, 32(DI)(R13*1)
	VMOVUPS Y2, 64(DI)(R13*1)
	VMOVUPS Y3, 96(DI)(R13*1)
	ADDQ outStep+8(FP), DI
	ADDQ inStep+24(FP), R12
	DECQ DX
	JNZ  pixel32
	ADDQ $128, R13
	SUBQ $128, CX
	JMP  block32

block8:
	CMPQ CX, $32
	JL   done
	MOVQ out+0(FP), DI
	XORQ R12, R12
	MOVQ npix+56(FP), DX

pixel8:
	VMOVUPS (R8)(R13*1), Y0
	LEAQ (BX)(R13*1), R10
	XPTR(0); VMOVUPS (SI), Y8; VFMADD231PS (R10), Y8, Y0; ADDQ R9, R10
	XPTR(1); VMOVUPS (SI), Y8; VFMADD231PS (R10), Y8, Y0; ADDQ R9, R10
	XPTR(2); VMOVUPS (SI), Y8; VFMADD231PS (R10), Y8, Y0; ADDQ R9, R10
	XPTR(3); VMOVUPS (SI), Y8; VFMADD231PS (R10), Y8, Y0; ADDQ R9, R10
	XPTR(4); VMOVUPS (SI), Y8; VFMADD231PS (R10), Y8, Y0; ADDQ R9, R10
	XPTR(5); VMOVUPS (SI), Y8; VFMADD231PS (R10), Y8, Y0; ADDQ R9, R10
	XPTR(6); VMOVUPS (SI), Y8; VFMADD231PS (R10), Y8, Y0; ADDQ R9, R10
	XPTR(7); VMOVUPS (SI), Y8; VFMADD231PS (R10), Y8, Y0; ADDQ R9, R10
	XPTR(8); VMOVUPS (SI), Y8; VFMADD231PS (R10), Y8, Y0
	VMAXPS Y0, Y14, Y0
	VMINPS Y0, Y15, Y0
	VMOVUPS Y0, (DI)(R13*1)
	ADDQ outStep+8(FP), DI
	ADDQ inStep+24(FP), R12
	DECQ DX
	JNZ  pixel8
	ADDQ $32, R13
	SUBQ $32, CX
	JMP  block8

done:
	VZEROUPPER
	RET
