//go:build arm64 && !purego

#include "textflag.h"

// func sgemm8x8NEON(kc int, a, b, c *float32, ldc int, acc int)
//
// The 8×8 tile of C at c (rows ldc floats apart) gets the sum over p < kc
// of a[p*8+i]·b[p*8+j] (packed panels), or, when acc is 1, C plus that sum
// (the accumulators start from C). Row i of the tile accumulates in V(2i)
// (columns 0..3) and V(2i+1) (columns 4..7); each k step loads a B row into
// V16, V17 and an A column into V18, V19, and broadcasts each A value with
// VDUP (Go's assembler has no by-element FMLA).
TEXT ·sgemm8x8NEON(SB), NOSPLIT, $0-48
	MOVD kc+0(FP), R4
	MOVD a+8(FP), R0
	MOVD b+16(FP), R1
	MOVD c+24(FP), R2
	MOVD ldc+32(FP), R3
	LSL  $2, R3, R3
	MOVD acc+40(FP), R5
	MOVD R2, R6
	CBZ  R5, zero
	VLD1 (R6), [V0.S4, V1.S4]
	ADD  R3, R6, R6
	VLD1 (R6), [V2.S4, V3.S4]
	ADD  R3, R6, R6
	VLD1 (R6), [V4.S4, V5.S4]
	ADD  R3, R6, R6
	VLD1 (R6), [V6.S4, V7.S4]
	ADD  R3, R6, R6
	VLD1 (R6), [V8.S4, V9.S4]
	ADD  R3, R6, R6
	VLD1 (R6), [V10.S4, V11.S4]
	ADD  R3, R6, R6
	VLD1 (R6), [V12.S4, V13.S4]
	ADD  R3, R6, R6
	VLD1 (R6), [V14.S4, V15.S4]
	ADD  R3, R6, R6
	B    ready

zero:
	VEOR V0.B16, V0.B16, V0.B16
	VEOR V1.B16, V1.B16, V1.B16
	VEOR V2.B16, V2.B16, V2.B16
	VEOR V3.B16, V3.B16, V3.B16
	VEOR V4.B16, V4.B16, V4.B16
	VEOR V5.B16, V5.B16, V5.B16
	VEOR V6.B16, V6.B16, V6.B16
	VEOR V7.B16, V7.B16, V7.B16
	VEOR V8.B16, V8.B16, V8.B16
	VEOR V9.B16, V9.B16, V9.B16
	VEOR V10.B16, V10.B16, V10.B16
	VEOR V11.B16, V11.B16, V11.B16
	VEOR V12.B16, V12.B16, V12.B16
	VEOR V13.B16, V13.B16, V13.B16
	VEOR V14.B16, V14.B16, V14.B16
	VEOR V15.B16, V15.B16, V15.B16

ready:
	CBZ  R4, store

loop:
	VLD1.P 32(R1), [V16.S4, V17.S4]
	VLD1.P 32(R0), [V18.S4, V19.S4]
	VDUP V18.S[0], V20.S4
	VFMLA V16.S4, V20.S4, V0.S4
	VFMLA V17.S4, V20.S4, V1.S4
	VDUP V18.S[1], V20.S4
	VFMLA V16.S4, V20.S4, V2.S4
	VFMLA V17.S4, V20.S4, V3.S4
	VDUP V18.S[2], V20.S4
	VFMLA V16.S4, V20.S4, V4.S4
	VFMLA V17.S4, V20.S4, V5.S4
	VDUP V18.S[3], V20.S4
	VFMLA V16.S4, V20.S4, V6.S4
	VFMLA V17.S4, V20.S4, V7.S4
	VDUP V19.S[0], V20.S4
	VFMLA V16.S4, V20.S4, V8.S4
	VFMLA V17.S4, V20.S4, V9.S4
	VDUP V19.S[1], V20.S4
	VFMLA V16.S4, V20.S4, V10.S4
	VFMLA V17.S4, V20.S4, V11.S4
	VDUP V19.S[2], V20.S4
	VFMLA V16.S4, V20.S4, V12.S4
	VFMLA V17.S4, V20.S4, V13.S4
	VDUP V19.S[3], V20.S4
	VFMLA V16.S4, V20.S4, V14.S4
	VFMLA V17.S4, V20.S4, V15.S4
	SUB  $1, R4, R4
	CBNZ R4, loop

store:
	VST1 [V0.S4, V1.S4], (R2)
	ADD  R3, R2, R2
	VST1 [V2.S4, V3.S4], (R2)
	ADD  R3, R2, R2
	VST1 [V4.S4, V5.S4], (R2)
	ADD  R3, R2, R2
	VST1 [V6.S4, V7.S4], (R2)
	ADD  R3, R2, R2
	VST1 [V8.S4, V9.S4], (R2)
	ADD  R3, R2, R2
	VST1 [V10.S4, V11.S4], (R2)
	ADD  R3, R2, R2
	VST1 [V12.S4, V13.S4], (R2)
	ADD  R3, R2, R2
	VST1 [V14.S4, V15.S4], (R2)
	ADD  R3, R2, R2
	RET
