//go:build linux

#include "textflag.h"

// func clearCache(start, end uintptr)
TEXT ·clearCache(SB), NOSPLIT, $0-16
	MOVD start+0(FP), R0
	MOVD end+8(FP), R1
	MRS  CTR_EL0, R2

	// Data cache lines of 4 << CTR_EL0.DminLine bytes: clean to the
	// point of unification.
	UBFX $16, R2, $4, R3
	MOVD $4, R4
	LSL  R3, R4, R3
	SUB  $1, R3, R5
	BIC  R5, R0, R6
dloop:
	CMP  R1, R6
	BHS  ddone
	DC   CVAU, R6
	ADD  R3, R6, R6
	B    dloop
ddone:
	DSB  $0xb // ISH

	// Instruction cache lines of 4 << CTR_EL0.IminLine bytes:
	// invalidate to the point of unification.
	AND  $15, R2, R3
	MOVD $4, R4
	LSL  R3, R4, R3
	SUB  $1, R3, R5
	BIC  R5, R0, R6
iloop:
	CMP  R1, R6
	BHS  idone
	WORD $0xd50b7526 // IC IVAU, R6 (the Go assembler has no IC)
	ADD  R3, R6, R6
	B    iloop
idone:
	DSB  $0xb // ISH
	ISB  $15
	RET
