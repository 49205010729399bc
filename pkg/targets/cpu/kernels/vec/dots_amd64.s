//go:build amd64 && !purego

#include "textflag.h"

// func dotsAVX2(s, q, k *float32, n, d, ldk int)
// s[j] = sum over i < d of q[i]*k[j*ldk+i], for j in [0, n): per row, four
// accumulators of 8 lanes over 32 columns at a time, then 8 at a time into
// the first, then the 8-lane sum folded to one, then the last d%8 columns
// one by one.
TEXT ·dotsAVX2(SB), NOSPLIT, $0-48
	MOVQ s+0(FP), DI
	MOVQ q+8(FP), SI
	MOVQ k+16(FP), R8
	MOVQ n+24(FP), CX
	MOVQ d+32(FP), R9
	MOVQ ldk+40(FP), R10
	SHLQ $2, R10         // row stride in bytes
	MOVQ R9, R11
	ANDQ $-32, R11       // columns in whole 32s
	MOVQ R9, R12
	ANDQ $-8, R12        // columns in whole 8s

row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   BX, BX

by32:
	CMPQ        BX, R11
	JGE         by8
	VMOVUPS     (R8)(BX*4), Y4
	VMOVUPS     32(R8)(BX*4), Y5
	VMOVUPS     64(R8)(BX*4), Y6
	VMOVUPS     96(R8)(BX*4), Y7
	VFMADD231PS (SI)(BX*4), Y4, Y0
	VFMADD231PS 32(SI)(BX*4), Y5, Y1
	VFMADD231PS 64(SI)(BX*4), Y6, Y2
	VFMADD231PS 96(SI)(BX*4), Y7, Y3
	ADDQ        $32, BX
	JMP         by32

by8:
	CMPQ        BX, R12
	JGE         fold
	VMOVUPS     (R8)(BX*4), Y4
	VFMADD231PS (SI)(BX*4), Y4, Y0
	ADDQ        $8, BX
	JMP         by8

fold:
	VADDPS       Y1, Y0, Y0
	VADDPS       Y3, Y2, Y2
	VADDPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VMOVHLPS     X0, X1, X1
	VADDPS       X1, X0, X0
	VMOVSHDUP    X0, X1
	VADDSS       X1, X0, X0

tail:
	CMPQ        BX, R9
	JGE         store
	VMOVSS      (R8)(BX*4), X4
	VFMADD231SS (SI)(BX*4), X4, X0
	INCQ        BX
	JMP         tail

store:
	VMOVSS X0, (DI)
	ADDQ   $4, DI
	ADDQ   R10, R8
	DECQ   CX
	JNE    row
	VZEROUPPER
	RET
