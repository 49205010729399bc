//go:build amd64 && !purego

#include "textflag.h"

// func addWidenAVX(acc *float64, xs *float32, n, rows, stride int)
// acc[j] += float64(xs[r*stride+j]) for r in [0, rows), j in [0, n); rows > 0.
// Column blocks of 16, then 4, then 1, each held in registers across the
// rows and stored once.
TEXT ·addWidenAVX(SB), NOSPLIT, $0-40
	MOVQ acc+0(FP), DI
	MOVQ xs+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ rows+24(FP), R8
	MOVQ stride+32(FP), R9
	SHLQ $2, R9

block16:
	CMPQ CX, $16
	JL   block4
	VMOVUPD (DI), Y0
	VMOVUPD 32(DI), Y1
	VMOVUPD 64(DI), Y2
	VMOVUPD 96(DI), Y3
	MOVQ SI, R10
	MOVQ R8, R11

rows16:
	VCVTPS2PD (R10), Y4
	VCVTPS2PD 16(R10), Y5
	VCVTPS2PD 32(R10), Y6
	VCVTPS2PD 48(R10), Y7
	VADDPD    Y4, Y0, Y0
	VADDPD    Y5, Y1, Y1
	VADDPD    Y6, Y2, Y2
	VADDPD    Y7, Y3, Y3
	ADDQ R9, R10
	DECQ R11
	JNZ  rows16
	VMOVUPD Y0, (DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	ADDQ $64, SI
	ADDQ $128, DI
	SUBQ $16, CX
	JMP  block16

block4:
	CMPQ CX, $4
	JL   block1
	VMOVUPD (DI), Y0
	MOVQ SI, R10
	MOVQ R8, R11

rows4:
	VCVTPS2PD (R10), Y4
	VADDPD    Y4, Y0, Y0
	ADDQ R9, R10
	DECQ R11
	JNZ  rows4
	VMOVUPD Y0, (DI)
	ADDQ $16, SI
	ADDQ $32, DI
	SUBQ $4, CX
	JMP  block4

block1:
	TESTQ CX, CX
	JZ    done
	VMOVSD (DI), X0
	MOVQ SI, R10
	MOVQ R8, R11

rows1:
	VCVTSS2SD (R10), X4, X4
	VADDSD    X4, X0, X0
	ADDQ R9, R10
	DECQ R11
	JNZ  rows1
	VMOVSD X0, (DI)
	ADDQ $4, SI
	ADDQ $8, DI
	DECQ CX
	JMP  block1

done:
	VZEROUPPER
	RET
