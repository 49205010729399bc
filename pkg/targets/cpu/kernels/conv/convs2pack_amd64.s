//go:build amd64 && !purego

#include "textflag.h"

// func convS2Pack16(dst *float32, rows *[convS2MaxRows]uintptr, nrows, off, left int)
//
// For each input row rows[i] (i < nrows), at byte offset off (the middle
// tap of output 0), writes three 16-float panel rows to dst: the left,
// middle and right taps of 16 stride-2 outputs, columns 2j-1, 2j, 2j+1
// from off/4. Even and odd columns of two loads are one VSHUFPS each, in
// lane order [0 1 4 5 | 2 3 6 7], put in order by VPERMPD; the left taps
// are the even columns of the loads one column back, or, when left is
// set, of x[0..7] moved up a lane with the padding zero in lane 0.
TEXT ·convS2Pack16(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ rows+8(FP), SI
	MOVQ nrows+16(FP), CX
	MOVQ off+24(FP), DX
	MOVQ left+32(FP), R8
	VMOVUPS ·laneUp(SB), Y15
	VXORPS  Y14, Y14, Y14

row:
	MOVQ (SI), AX
	ADDQ DX, AX
	// Outputs 8..15: columns 15 .. 31.
	VMOVUPS 64(AX), Y0
	VSHUFPS $0x88, 96(AX), Y0, Y1
	VSHUFPS $0xDD, 96(AX), Y0, Y2
	VMOVUPS 60(AX), Y0
	VSHUFPS $0x88, 92(AX), Y0, Y3
	// Outputs 0..7: columns -1 .. 15.
	VMOVUPS (AX), Y0
	VSHUFPS $0x88, 32(AX), Y0, Y4
	VSHUFPS $0xDD, 32(AX), Y0, Y5
	TESTQ   R8, R8
	JNZ     pad
	VMOVUPS -4(AX), Y6
	JMP     lefttaps

pad:
	VPERMPS  Y0, Y15, Y6
	VBLENDPS $1, Y14, Y6, Y6

lefttaps:
	VSHUFPS $0x88, 28(AX), Y6, Y6
	VPERMPD $0xD8, Y1, Y1
	VPERMPD $0xD8, Y2, Y2
	VPERMPD $0xD8, Y3, Y3
	VPERMPD $0xD8, Y4, Y4
	VPERMPD $0xD8, Y5, Y5
	VPERMPD $0xD8, Y6, Y6
	VMOVUPS Y6, (DI)
	VMOVUPS Y3, 32(DI)
	VMOVUPS Y4, 64(DI)
	VMOVUPS Y1, 96(DI)
	VMOVUPS Y5, 128(DI)
	VMOVUPS Y2, 160(DI)
	ADDQ    $192, DI
	ADDQ    $8, SI
	DECQ    CX
	JNZ     row
	VZEROUPPER
	RET
