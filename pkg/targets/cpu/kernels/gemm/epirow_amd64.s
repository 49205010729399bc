//go:build amd64 && !purego

#include "textflag.h"

// func epiRowAVX2(c, bias, res *float32, n int, flags uint, bv, lo, hi float32)
//
// Over c[j], j < n (a multiple of 8), in the order the tiles apply it:
// epiBiasCol adds bias[j], epiBiasRow adds bv, epiClamp takes max(lo, ·)
// then min(hi, ·) with the bound as the first source (a NaN passes
// through, as in Go), epiRes adds res[j]. Pointers a flag does not name
// are not read.
TEXT ·epiRowAVX2(SB), NOSPLIT, $0-52
	MOVQ         c+0(FP), DI
	MOVQ         bias+8(FP), SI
	MOVQ         res+16(FP), R8
	MOVQ         n+24(FP), CX
	MOVQ         flags+32(FP), DX
	VBROADCASTSS bv+40(FP), Y13
	VBROADCASTSS lo+44(FP), Y14
	VBROADCASTSS hi+48(FP), Y15
	SHLQ         $2, CX
	XORQ         AX, AX

loop:
	CMPQ    AX, CX
	JGE     done
	VMOVUPS (DI)(AX*1), Y0
	TESTQ   $2, DX
	JZ      nobiascol
	VADDPS  (SI)(AX*1), Y0, Y0

nobiascol:
	TESTQ  $4, DX
	JZ     nobiasrow
	VADDPS Y13, Y0, Y0

nobiasrow:
	TESTQ  $8, DX
	JZ     noclamp
	VMAXPS Y0, Y14, Y0
	VMINPS Y0, Y15, Y0

noclamp:
	TESTQ  $16, DX
	JZ     nores
	VADDPS (R8)(AX*1), Y0, Y0

nores:
	VMOVUPS Y0, (DI)(AX*1)
	ADDQ    $32, AX
	JMP     loop

done:
	VZEROUPPER
	RET
