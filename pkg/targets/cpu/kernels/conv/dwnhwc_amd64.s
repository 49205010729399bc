//go:build amd64 && !purego

#include "textflag.h"

// Register use: AX bases, BX w, R8 bias, R9 c·4 (bytes per tap row of w),
// R10 outStep, R11 inStep, R14 3·inStep, DI the group's first output
// pixel, R12 its first input offset (p·inStep), R13 the channel byte
// offset, R15 the current tap's weights, DX pixels left, Y14/Y15 lo/hi.

// TAPPTR(t): tap t's input for the group's first pixel and channel block.
#define TAPPTR(t) \
	MOVQ (t*8)(AX), SI; ADDQ R12, SI; ADDQ R13, SI

// Tap t of four pixels over sixteen channels: the first eight channels
// into Y0..Y3, the next eight into Y4..Y7; R15 steps to the next tap.
#define TAP4x16(t) \
	TAPPTR(t); \
	VMOVUPS (R15), Y8; VMOVUPS 32(R15), Y9; ADDQ R9, R15; \
	VFMADD231PS (SI), Y8, Y0; \
	VFMADD231PS (SI)(R11*1), Y8, Y1; \
	VFMADD231PS (SI)(R11*2), Y8, Y2; \
	VFMADD231PS (SI)(R14*1), Y8, Y3; \
	VFMADD231PS 32(SI), Y9, Y4; \
	VFMADD231PS 32(SI)(R11*1), Y9, Y5; \
	VFMADD231PS 32(SI)(R11*2), Y9, Y6; \
	VFMADD231PS 32(SI)(R14*1), Y9, Y7

// Tap t of four pixels over eight channels into Y0..Y3.
#define TAP4x8(t) \
	TAPPTR(t); \
	VMOVUPS (R15), Y8; ADDQ R9, R15; \
	VFMADD231PS (SI), Y8, Y0; \
	VFMADD231PS (SI)(R11*1), Y8, Y1; \
	VFMADD231PS (SI)(R11*2), Y8, Y2; \
	VFMADD231PS (SI)(R14*1), Y8, Y3

// Tap t of one pixel over sixteen channels into Y0, Y4.
#define TAP1x16(t) \
	TAPPTR(t); \
	VMOVUPS (R15), Y8; VMOVUPS 32(R15), Y9; ADDQ R9, R15; \
	VFMADD231PS (SI), Y8, Y0; \
	VFMADD231PS 32(SI), Y9, Y4

// Tap t of one pixel over eight channels into Y0.
#define TAP1x8(t) \
	TAPPTR(t); \
	VMOVUPS (R15), Y8; ADDQ R9, R15; \
	VFMADD231PS (SI), Y8, Y0

#define TAPS(m) m(0); m(1); m(2); m(3); m(4); m(5); m(6); m(7); m(8)

// max(lo, x) then min(hi, x), the bound first: NaN passes.
#define CLAMP(y) VMAXPS y, Y14, y; VMINPS y, Y15, y

// func dwNHWCAVX(out *float32, outStep int, bases *[9]uintptr, inStep int, w, bias *float32, c, npix int, lo, hi float32)
//
// Channels-last depthwise taps: for pixel p < npix and channel j < c (a
// multiple of 8), out[p*outStep + j] = clamp(bias[j] + Σ_t x_t[j]·w[t*c+j],
// lo, hi) (NaN kept), where x_t is tap t's input pixel at bases[t] +
// p*inStep. Steps are in bytes. Nine taps, summed in order t = 0..8.
//
// Four pixels at a time (then one), and within them sixteen channels at a
// time (then eight): eight accumulators, enough to keep both FMA pipes
// busy through their latency, each tap's weight vectors loaded once for
// the four pixels, the inputs taken straight from memory. Channels go
// innermost so a pixel's inputs are read in one sequential run and the
// weights (9·c floats) stay in L1. An earlier version, weights loaded with
// every tap and channel blocks outermost, ran at about half the rate.
TEXT ·dwNHWCAVX(SB), NOSPLIT, $0-72
	MOVQ bases+16(FP), AX
	MOVQ w+32(FP), BX
	MOVQ bias+40(FP), R8
	MOVQ c+48(FP), R9
	SHLQ $2, R9
	MOVQ outStep+8(FP), R10
	MOVQ inStep+24(FP), R11
	LEAQ (R11)(R11*2), R14
	VBROADCASTSS lo+64(FP), Y14
	VBROADCASTSS hi+68(FP), Y15
	MOVQ out+0(FP), DI
	XORQ R12, R12
	MOVQ npix+56(FP), DX

group4:
	CMPQ DX, $4
	JL   single
	XORQ R13, R13

g4c16:
	LEAQ 64(R13), CX
	CMPQ CX, R9
	JG   g4c8
	VMOVUPS (R8)(R13*1), Y10
	VMOVUPS 32(R8)(R13*1), Y11
	VMOVAPS Y10, Y0
	VMOVAPS Y10, Y1
	VMOVAPS Y10, Y2
	VMOVAPS Y10, Y3
	VMOVAPS Y11, Y4
	VMOVAPS Y11, Y5
	VMOVAPS Y11, Y6
	VMOVAPS Y11, Y7
	LEAQ (BX)(R13*1), R15
	TAPS(TAP4x16)
	CLAMP(Y0); CLAMP(Y1); CLAMP(Y2); CLAMP(Y3)
	CLAMP(Y4); CLAMP(Y5); CLAMP(Y6); CLAMP(Y7)
	LEAQ (DI)(R13*1), SI
	VMOVUPS Y0, (SI)
	VMOVUPS Y4, 32(SI)
	VMOVUPS Y1, (SI)(R10*1)
	VMOVUPS Y5, 32(SI)(R10*1)
	VMOVUPS Y2, (SI)(R10*2)
	VMOVUPS Y6, 32(SI)(R10*2)
	LEAQ (SI)(R10*2), SI
	VMOVUPS Y3, (SI)(R10*1)
	VMOVUPS Y7, 32(SI)(R10*1)
	ADDQ $64, R13
	JMP  g4c16

g4c8:
	CMPQ R13, R9
	JGE  g4next
	VMOVUPS (R8)(R13*1), Y0
	VMOVAPS Y0, Y1
	VMOVAPS Y0, Y2
	VMOVAPS Y0, Y3
	LEAQ (BX)(R13*1), R15
	TAPS(TAP4x8)
	CLAMP(Y0); CLAMP(Y1); CLAMP(Y2); CLAMP(Y3)
	LEAQ (DI)(R13*1), SI
	VMOVUPS Y0, (SI)
	VMOVUPS Y1, (SI)(R10*1)
	VMOVUPS Y2, (SI)(R10*2)
	LEAQ (SI)(R10*2), SI
	VMOVUPS Y3, (SI)(R10*1)
	ADDQ $32, R13
	JMP  g4c8

g4next:
	LEAQ (DI)(R10*4), DI
	LEAQ (R12)(R11*4), R12
	SUBQ $4, DX
	JMP  group4

single:
	TESTQ DX, DX
	JZ    done
	// A run of at least four pixels ends with a group of its last four,
	// the pixels it shares with the group before computed and stored
	// again (the same values): one pixel alone keeps two accumulators.
	CMPQ npix+56(FP), $4
	JL   s1start
	MOVQ $4, CX
	SUBQ DX, CX
	IMULQ R10, CX
	SUBQ CX, DI
	MOVQ $4, CX
	SUBQ DX, CX
	IMULQ R11, CX
	SUBQ CX, R12
	MOVQ $4, DX
	JMP  group4

s1start:
	XORQ R13, R13

s1c16:
	LEAQ 64(R13), CX
	CMPQ CX, R9
	JG   s1c8
	VMOVUPS (R8)(R13*1), Y0
	VMOVUPS 32(R8)(R13*1), Y4
	LEAQ (BX)(R13*1), R15
	TAPS(TAP1x16)
	CLAMP(Y0); CLAMP(Y4)
	VMOVUPS Y0, (DI)(R13*1)
	VMOVUPS Y4, 32(DI)(R13*1)
	ADDQ $64, R13
	JMP  s1c16

s1c8:
	CMPQ R13, R9
	JGE  s1next
	VMOVUPS (R8)(R13*1), Y0
	LEAQ (BX)(R13*1), R15
	TAPS(TAP1x8)
	CLAMP(Y0)
	VMOVUPS Y0, (DI)(R13*1)
	ADDQ $32, R13
	JMP  s1c8

s1next:
	ADDQ R10, DI
	ADDQ R11, R12
	DECQ DX
	JNZ  s1start
	JMP  done

done:
	VZEROUPPER
	RET
