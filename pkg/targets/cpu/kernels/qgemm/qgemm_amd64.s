//go:build amd64 && !purego

#include "textflag.h"

// The AVX-512 VNNI micro-kernels of qgemm (declared in qgemm_amd64.go),
// qdotN for N rows, 1 to 12: a tile's rows past its 12-row calls go in
// one call, however many there are (a 7x7 plane's rows in one qdot7).
// Row i's sums against the two panels are in Z(2i) and Z(2i+1). For each
// tap (offs[t] bytes past a: a product has one tap at 0, a convolution
// one per kernel position) and each of its n groups of four rows of B,
// the group is loaded once into Z24 and Z25 (16 columns × 4 int8 each),
// each row's four bytes of A are broadcast to every lane, and vpdpbusd
// adds the four products u8·s8 of each lane to its int32 accumulator.
// B's groups follow one another across the taps. The epilogue subtracts
// the correction corr (32 int32: zero·column sum − bias), converts to
// float32 (round to nearest even, MXCSR's default) and stores under K1
// (columns 0-15) and K2 (16-31).

// One row: broadcast its group at addr into t and accumulate both panels.
#define ROW(addr, t, z0, z1) \
	VPBROADCASTD addr, t; \
	VPDPBUSD Z24, t, z0; \
	VPDPBUSD Z25, t, z1

// Row z0, z1's epilogue: subtract the correction (Z28, Z29), convert,
// store the masked columns at (CX) and step CX to the next row.
#define STORE(z0, z1) \
	VPSUBD Z28, z0, z0; \
	VPSUBD Z29, z1, z1; \
	VCVTDQ2PS z0, z0; \
	VCVTDQ2PS z1, z1; \
	VMOVUPS z0, K1, (CX); \
	VMOVUPS z1, K2, 64(CX); \
	ADDQ DX, CX

// The epilogue's operands: the correction in Z28, Z29, the output
// pointer in CX and its row stride in bytes in DX, the masks in K1, K2.
#define EPILOGUE_SETUP \
	MOVQ corr+56(FP), BX; \
	VMOVDQU32 (BX), Z28; \
	VMOVDQU32 64(BX), Z29; \
	MOVQ out+64(FP), CX; \
	MOVQ ldo+72(FP), DX; \
	SHLQ $2, DX; \
	MOVL mask+80(FP), BX; \
	KMOVW BX, K1; \
	SHRL $16, BX; \
	KMOVW BX, K2

// The operands: taps in BX, the tap offsets at (CX), a in DX, lda in R9,
// the panels in SI and DI.
#define PROLOGUE \
	MOVQ taps+0(FP), BX; \
	MOVQ offs+8(FP), CX; \
	MOVQ a+24(FP), DX; \
	MOVQ lda+32(FP), R9; \
	MOVQ b0+40(FP), SI; \
	MOVQ b1+48(FP), DI

// The rows of the tap at (CX): row 0 in R8, rows 3, 6 and 9 in R10-R12.
#define TAP_ROWS \
	MOVQ (CX), R8; \
	ADDQ DX, R8; \
	LEAQ (R8)(R9*2), R10; \
	ADDQ R9, R10; \
	LEAQ (R10)(R9*2), R11; \
	ADDQ R9, R11; \
	LEAQ (R11)(R9*2), R12; \
	ADDQ R9, R12


// func qdot12(taps int, offs *int, n int, a *byte, lda int, b0, b1 *byte, corr *int32, out *float32, ldo int, mask uint32)
TEXT ·qdot12(SB), NOSPLIT, $0-84
	PROLOGUE
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	TESTQ BX, BX
	JEQ qdot12_done
qdot12_tap:
	TAP_ROWS
	MOVQ n+16(FP), AX
	TESTQ AX, AX
	JEQ qdot12_next
qdot12_loop:
	VMOVDQU32 (SI), Z24
	VMOVDQU32 (DI), Z25
	ROW((R8), Z26, Z0, Z1)
	ROW((R8)(R9*1), Z27, Z2, Z3)
	ROW((R8)(R9*2), Z26, Z4, Z5)
	ROW((R10), Z27, Z6, Z7)
	ROW((R10)(R9*1), Z26, Z8, Z9)
	ROW((R10)(R9*2), Z27, Z10, Z11)
	ROW((R11), Z26, Z12, Z13)
	ROW((R11)(R9*1), Z27, Z14, Z15)
	ROW((R11)(R9*2), Z26, Z16, Z17)
	ROW((R12), Z27, Z18, Z19)
	ROW((R12)(R9*1), Z26, Z20, Z21)
	ROW((R12)(R9*2), Z27, Z22, Z23)
	ADDQ $64, SI
	ADDQ $64, DI
	ADDQ $4, R8
	ADDQ $4, R10
	ADDQ $4, R11
	ADDQ $4, R12
	DECQ AX
	JNE qdot12_loop
qdot12_next:
	ADDQ $8, CX
	DECQ BX
	JNE qdot12_tap
qdot12_done:
	EPILOGUE_SETUP
	STORE(Z0, Z1)
	STORE(Z2, Z3)
	STORE(Z4, Z5)
	STORE(Z6, Z7)
	STORE(Z8, Z9)
	STORE(Z10, Z11)
	STORE(Z12, Z13)
	STORE(Z14, Z15)
	STORE(Z16, Z17)
	STORE(Z18, Z19)
	STORE(Z20, Z21)
	STORE(Z22, Z23)
	VZEROUPPER
	RET

// func qdot11(taps int, offs *int, n int, a *byte, lda int, b0, b1 *byte, corr *int32, out *float32, ldo int, mask uint32)
TEXT ·qdot11(SB), NOSPLIT, $0-84
	PROLOGUE
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	TESTQ BX, BX
	JEQ qdot11_done
qdot11_tap:
	TAP_ROWS
	MOVQ n+16(FP), AX
	TESTQ AX, AX
	JEQ qdot11_next
qdot11_loop:
	VMOVDQU32 (SI), Z24
	VMOVDQU32 (DI), Z25
	ROW((R8), Z26, Z0, Z1)
	ROW((R8)(R9*1), Z27, Z2, Z3)
	ROW((R8)(R9*2), Z26, Z4, Z5)
	ROW((R10), Z27, Z6, Z7)
	ROW((R10)(R9*1), Z26, Z8, Z9)
	ROW((R10)(R9*2), Z27, Z10, Z11)
	ROW((R11), Z26, Z12, Z13)
	ROW((R11)(R9*1), Z27, Z14, Z15)
	ROW((R11)(R9*2), Z26, Z16, Z17)
	ROW((R12), Z27, Z18, Z19)
	ROW((R12)(R9*1), Z26, Z20, Z21)
	ADDQ $64, SI
	ADDQ $64, DI
	ADDQ $4, R8
	ADDQ $4, R10
	ADDQ $4, R11
	ADDQ $4, R12
	DECQ AX
	JNE qdot11_loop
qdot11_next:
	ADDQ $8, CX
	DECQ BX
	JNE qdot11_tap
qdot11_done:
	EPILOGUE_SETUP
	STORE(Z0, Z1)
	STORE(Z2, Z3)
	STORE(Z4, Z5)
	STORE(Z6, Z7)
	STORE(Z8, Z9)
	STORE(Z10, Z11)
	STORE(Z12, Z13)
	STORE(Z14, Z15)
	STORE(Z16, Z17)
	STORE(Z18, Z19)
	STORE(Z20, Z21)
	VZEROUPPER
	RET

// func qdot10(taps int, offs *int, n int, a *byte, lda int, b0, b1 *byte, corr *int32, out *float32, ldo int, mask uint32)
TEXT ·qdot10(SB), NOSPLIT, $0-84
	PROLOGUE
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	TESTQ BX, BX
	JEQ qdot10_done
qdot10_tap:
	TAP_ROWS
	MOVQ n+16(FP), AX
	TESTQ AX, AX
	JEQ qdot10_next
qdot10_loop:
	VMOVDQU32 (SI), Z24
	VMOVDQU32 (DI), Z25
	ROW((R8), Z26, Z0, Z1)
	ROW((R8)(R9*1), Z27, Z2, Z3)
	ROW((R8)(R9*2), Z26, Z4, Z5)
	ROW((R10), Z27, Z6, Z7)
	ROW((R10)(R9*1), Z26, Z8, Z9)
	ROW((R10)(R9*2), Z27, Z10, Z11)
	ROW((R11), Z26, Z12, Z13)
	ROW((R11)(R9*1), Z27, Z14, Z15)
	ROW((R11)(R9*2), Z26, Z16, Z17)
	ROW((R12), Z27, Z18, Z19)
	ADDQ $64, SI
	ADDQ $64, DI
	ADDQ $4, R8
	ADDQ $4, R10
	ADDQ $4, R11
	ADDQ $4, R12
	DECQ AX
	JNE qdot10_loop
qdot10_next:
	ADDQ $8, CX
	DECQ BX
	JNE qdot10_tap
qdot10_done:
	EPILOGUE_SETUP
	STORE(Z0, Z1)
	STORE(Z2, Z3)
	STORE(Z4, Z5)
	STORE(Z6, Z7)
	STORE(Z8, Z9)
	STORE(Z10, Z11)
	STORE(Z12, Z13)
	STORE(Z14, Z15)
	STORE(Z16, Z17)
	STORE(Z18, Z19)
	VZEROUPPER
	RET

// func qdot9(taps int, offs *int, n int, a *byte, lda int, b0, b1 *byte, corr *int32, out *float32, ldo int, mask uint32)
TEXT ·qdot9(SB), NOSPLIT, $0-84
	PROLOGUE
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	TESTQ BX, BX
	JEQ qdot9_done
qdot9_tap:
	TAP_ROWS
	MOVQ n+16(FP), AX
	TESTQ AX, AX
	JEQ qdot9_next
qdot9_loop:
	VMOVDQU32 (SI), Z24
	VMOVDQU32 (DI), Z25
	ROW((R8), Z26, Z0, Z1)
	ROW((R8)(R9*1), Z27, Z2, Z3)
	ROW((R8)(R9*2), Z26, Z4, Z5)
	ROW((R10), Z27, Z6, Z7)
	ROW((R10)(R9*1), Z26, Z8, Z9)
	ROW((R10)(R9*2), Z27, Z10, Z11)
	ROW((R11), Z26, Z12, Z13)
	ROW((R11)(R9*1), Z27, Z14, Z15)
	ROW((R11)(R9*2), Z26, Z16, Z17)
	ADDQ $64, SI
	ADDQ $64, DI
	ADDQ $4, R8
	ADDQ $4, R10
	ADDQ $4, R11
	DECQ AX
	JNE qdot9_loop
qdot9_next:
	ADDQ $8, CX
	DECQ BX
	JNE qdot9_tap
qdot9_done:
	EPILOGUE_SETUP
	STORE(Z0, Z1)
	STORE(Z2, Z3)
	STORE(Z4, Z5)
	STORE(Z6, Z7)
	STORE(Z8, Z9)
	STORE(Z10, Z11)
	STORE(Z12, Z13)
	STORE(Z14, Z15)
	STORE(Z16, Z17)
	VZEROUPPER
	RET

// func qdot8(taps int, offs *int, n int, a *byte, lda int, b0, b1 *byte, corr *int32, out *float32, ldo int, mask uint32)
TEXT ·qdot8(SB), NOSPLIT, $0-84
	PROLOGUE
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	TESTQ BX, BX
	JEQ qdot8_done
qdot8_tap:
	TAP_ROWS
	MOVQ n+16(FP), AX
	TESTQ AX, AX
	JEQ qdot8_next
qdot8_loop:
	VMOVDQU32 (SI), Z24
	VMOVDQU32 (DI), Z25
	ROW((R8), Z26, Z0, Z1)
	ROW((R8)(R9*1), Z27, Z2, Z3)
	ROW((R8)(R9*2), Z26, Z4, Z5)
	ROW((R10), Z27, Z6, Z7)
	ROW((R10)(R9*1), Z26, Z8, Z9)
	ROW((R10)(R9*2), Z27, Z10, Z11)
	ROW((R11), Z26, Z12, Z13)
	ROW((R11)(R9*1), Z27, Z14, Z15)
	ADDQ $64, SI
	ADDQ $64, DI
	ADDQ $4, R8
	ADDQ $4, R10
	ADDQ $4, R11
	DECQ AX
	JNE qdot8_loop
qdot8_next:
	ADDQ $8, CX
	DECQ BX
	JNE qdot8_tap
qdot8_done:
	EPILOGUE_SETUP
	STORE(Z0, Z1)
	STORE(Z2, Z3)
	STORE(Z4, Z5)
	STORE(Z6, Z7)
	STORE(Z8, Z9)
	STORE(Z10, Z11)
	STORE(Z12, Z13)
	STORE(Z14, Z15)
	VZEROUPPER
	RET

// func qdot7(taps int, offs *int, n int, a *byte, lda int, b0, b1 *byte, corr *int32, out *float32, ldo int, mask uint32)
TEXT ·qdot7(SB), NOSPLIT, $0-84
	PROLOGUE
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	TESTQ BX, BX
	JEQ qdot7_done
qdot7_tap:
	TAP_ROWS
	MOVQ n+16(FP), AX
	TESTQ AX, AX
	JEQ qdot7_next
qdot7_loop:
	VMOVDQU32 (SI), Z24
	VMOVDQU32 (DI), Z25
	ROW((R8), Z26, Z0, Z1)
	ROW((R8)(R9*1), Z27, Z2, Z3)
	ROW((R8)(R9*2), Z26, Z4, Z5)
	ROW((R10), Z27, Z6, Z7)
	ROW((R10)(R9*1), Z26, Z8, Z9)
	ROW((R10)(R9*2), Z27, Z10, Z11)
	ROW((R11), Z26, Z12, Z13)
	ADDQ $64, SI
	ADDQ $64, DI
	ADDQ $4, R8
	ADDQ $4, R10
	ADDQ $4, R11
	DECQ AX
	JNE qdot7_loop
qdot7_next:
	ADDQ $8, CX
	DECQ BX
	JNE qdot7_tap
qdot7_done:
	EPILOGUE_SETUP
	STORE(Z0, Z1)
	STORE(Z2, Z3)
	STORE(Z4, Z5)
	STORE(Z6, Z7)
	STORE(Z8, Z9)
	STORE(Z10, Z11)
	STORE(Z12, Z13)
	VZEROUPPER
	RET

// func qdot6(taps int, offs *int, n int, a *byte, lda int, b0, b1 *byte, corr *int32, out *float32, ldo int, mask uint32)
TEXT ·qdot6(SB), NOSPLIT, $0-84
	PROLOGUE
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	TESTQ BX, BX
	JEQ qdot6_done
qdot6_tap:
	TAP_ROWS
	MOVQ n+16(FP), AX
	TESTQ AX, AX
	JEQ qdot6_next
qdot6_loop:
	VMOVDQU32 (SI), Z24
	VMOVDQU32 (DI), Z25
	ROW((R8), Z26, Z0, Z1)
	ROW((R8)(R9*1), Z27, Z2, Z3)
	ROW((R8)(R9*2), Z26, Z4, Z5)
	ROW((R10), Z27, Z6, Z7)
	ROW((R10)(R9*1), Z26, Z8, Z9)
	ROW((R10)(R9*2), Z27, Z10, Z11)
	ADDQ $64, SI
	ADDQ $64, DI
	ADDQ $4, R8
	ADDQ $4, R10
	DECQ AX
	JNE qdot6_loop
qdot6_next:
	ADDQ $8, CX
	DECQ BX
	JNE qdot6_tap
qdot6_done:
	EPILOGUE_SETUP
	STORE(Z0, Z1)
	STORE(Z2, Z3)
	STORE(Z4, Z5)
	STORE(Z6, Z7)
	STORE(Z8, Z9)
	STORE(Z10, Z11)
	VZEROUPPER
	RET

// func qdot5(taps int, offs *int, n int, a *byte, lda int, b0, b1 *byte, corr *int32, out *float32, ldo int, mask uint32)
TEXT ·qdot5(SB), NOSPLIT, $0-84
	PROLOGUE
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	TESTQ BX, BX
	JEQ qdot5_done
qdot5_tap:
	TAP_ROWS
	MOVQ n+16(FP), AX
	TESTQ AX, AX
	JEQ qdot5_next
qdot5_loop:
	VMOVDQU32 (SI), Z24
	VMOVDQU32 (DI), Z25
	ROW((R8), Z26, Z0, Z1)
	ROW((R8)(R9*1), Z27, Z2, Z3)
	ROW((R8)(R9*2), Z26, Z4, Z5)
	ROW((R10), Z27, Z6, Z7)
	ROW((R10)(R9*1), Z26, Z8, Z9)
	ADDQ $64, SI
	ADDQ $64, DI
	ADDQ $4, R8
	ADDQ $4, R10
	DECQ AX
	JNE qdot5_loop
qdot5_next:
	ADDQ $8, CX
	DECQ BX
	JNE qdot5_tap
qdot5_done:
	EPILOGUE_SETUP
	STORE(Z0, Z1)
	STORE(Z2, Z3)
	STORE(Z4, Z5)
	STORE(Z6, Z7)
	STORE(Z8, Z9)
	VZEROUPPER
	RET

// func qdot4(taps int, offs *int, n int, a *byte, lda int, b0, b1 *byte, corr *int32, out *float32, ldo int, mask uint32)
TEXT ·qdot4(SB), NOSPLIT, $0-84
	PROLOGUE
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	TESTQ BX, BX
	JEQ qdot4_done
qdot4_tap:
	TAP_ROWS
	MOVQ n+16(FP), AX
	TESTQ AX, AX
	JEQ qdot4_next
qdot4_loop:
	VMOVDQU32 (SI), Z24
	VMOVDQU32 (DI), Z25
	ROW((R8), Z26, Z0, Z1)
	ROW((R8)(R9*1), Z27, Z2, Z3)
	ROW((R8)(R9*2), Z26, Z4, Z5)
	ROW((R10), Z27, Z6, Z7)
	ADDQ $64, SI
	ADDQ $64, DI
	ADDQ $4, R8
	ADDQ $4, R10
	DECQ AX
	JNE qdot4_loop
qdot4_next:
	ADDQ $8, CX
	DECQ BX
	JNE qdot4_tap
qdot4_done:
	EPILOGUE_SETUP
	STORE(Z0, Z1)
	STORE(Z2, Z3)
	STORE(Z4, Z5)
	STORE(Z6, Z7)
	VZEROUPPER
	RET

// func qdot3(taps int, offs *int, n int, a *byte, lda int, b0, b1 *byte, corr *int32, out *float32, ldo int, mask uint32)
TEXT ·qdot3(SB), NOSPLIT, $0-84
	PROLOGUE
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	TESTQ BX, BX
	JEQ qdot3_done
qdot3_tap:
	TAP_ROWS
	MOVQ n+16(FP), AX
	TESTQ AX, AX
	JEQ qdot3_next
qdot3_loop:
	VMOVDQU32 (SI), Z24
	VMOVDQU32 (DI), Z25
	ROW((R8), Z26, Z0, Z1)
	ROW((R8)(R9*1), Z27, Z2, Z3)
	ROW((R8)(R9*2), Z26, Z4, Z5)
	ADDQ $64, SI
	ADDQ $64, DI
	ADDQ $4, R8
	DECQ AX
	JNE qdot3_loop
qdot3_next:
	ADDQ $8, CX
	DECQ BX
	JNE qdot3_tap
qdot3_done:
	EPILOGUE_SETUP
	STORE(Z0, Z1)
	STORE(Z2, Z3)
	STORE(Z4, Z5)
	VZEROUPPER
	RET

// func qdot2(taps int, offs *int, n int, a *byte, lda int, b0, b1 *byte, corr *int32, out *float32, ldo int, mask uint32)
TEXT ·qdot2(SB), NOSPLIT, $0-84
	PROLOGUE
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	TESTQ BX, BX
	JEQ qdot2_done
qdot2_tap:
	TAP_ROWS
	MOVQ n+16(FP), AX
	TESTQ AX, AX
	JEQ qdot2_next
qdot2_loop:
	VMOVDQU32 (SI), Z24
	VMOVDQU32 (DI), Z25
	ROW((R8), Z26, Z0, Z1)
	ROW((R8)(R9*1), Z27, Z2, Z3)
	ADDQ $64, SI
	ADDQ $64, DI
	ADDQ $4, R8
	DECQ AX
	JNE qdot2_loop
qdot2_next:
	ADDQ $8, CX
	DECQ BX
	JNE qdot2_tap
qdot2_done:
	EPILOGUE_SETUP
	STORE(Z0, Z1)
	STORE(Z2, Z3)
	VZEROUPPER
	RET

// func qdot1(taps int, offs *int, n int, a *byte, lda int, b0, b1 *byte, corr *int32, out *float32, ldo int, mask uint32)
TEXT ·qdot1(SB), NOSPLIT, $0-84
	PROLOGUE
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	TESTQ BX, BX
	JEQ qdot1_done
qdot1_tap:
	TAP_ROWS
	MOVQ n+16(FP), AX
	TESTQ AX, AX
	JEQ qdot1_next
qdot1_loop:
	VMOVDQU32 (SI), Z24
	VMOVDQU32 (DI), Z25
	ROW((R8), Z26, Z0, Z1)
	ADDQ $64, SI
	ADDQ $64, DI
	ADDQ $4, R8
	DECQ AX
	JNE qdot1_loop
qdot1_next:
	ADDQ $8, CX
	DECQ BX
	JNE qdot1_tap
qdot1_done:
	EPILOGUE_SETUP
	STORE(Z0, Z1)
	VZEROUPPER
	RET

// The byte transpose of the relayout: blocks of 16×16 bytes through four
// rounds of unpacking pairs of xmm registers (bytes, words, dwords,
// qwords), which leaves column k in register k when row i was loaded into
// register bitrev4(i). The rounds alternate between X0-X15 and X16-X31
// (AVX-512VL encodings).

// func transpose16(dst *byte, ldd int, src *byte, lds int, blocks int)
TEXT ·transpose16(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), DX
	MOVQ src+16(FP), SI
	MOVQ lds+24(FP), BX
	MOVQ blocks+32(FP), AX
	LEAQ (BX)(BX*2), CX
	LEAQ (DX)(DX*2), R13
	TESTQ AX, AX
	JEQ t16_done
t16_loop:
	LEAQ (SI)(BX*4), R10
	LEAQ (R10)(BX*4), R11
	LEAQ (R11)(BX*4), R12
	VMOVDQU (SI), X0
	VMOVDQU (R11), X1
	VMOVDQU (R10), X2
	VMOVDQU (R12), X3
	VMOVDQU (SI)(BX*2), X4
	VMOVDQU (R11)(BX*2), X5
	VMOVDQU (R10)(BX*2), X6
	VMOVDQU (R12)(BX*2), X7
	VMOVDQU (SI)(BX*1), X8
	VMOVDQU (R11)(BX*1), X9
	VMOVDQU (R10)(BX*1), X10
	VMOVDQU (R12)(BX*1), X11
	VMOVDQU (SI)(CX*1), X12
	VMOVDQU (R11)(CX*1), X13
	VMOVDQU (R10)(CX*1), X14
	VMOVDQU (R12)(CX*1), X15
	VPUNPCKLBW X8, X0, X16
	VPUNPCKHBW X8, X0, X17
	VPUNPCKLBW X9, X1, X18
	VPUNPCKHBW X9, X1, X19
	VPUNPCKLBW X10, X2, X20
	VPUNPCKHBW X10, X2, X21
	VPUNPCKLBW X11, X3, X22
	VPUNPCKHBW X11, X3, X23
	VPUNPCKLBW X12, X4, X24
	VPUNPCKHBW X12, X4, X25
	VPUNPCKLBW X13, X5, X26
	VPUNPCKHBW X13, X5, X27
	VPUNPCKLBW X14, X6, X28
	VPUNPCKHBW X14, X6, X29
	VPUNPCKLBW X15, X7, X30
	VPUNPCKHBW X15, X7, X31
	VPUNPCKLWD X24, X16, X0
	VPUNPCKHWD X24, X16, X1
	VPUNPCKLWD X25, X17, X2
	VPUNPCKHWD X25, X17, X3
	VPUNPCKLWD X26, X18, X4
	VPUNPCKHWD X26, X18, X5
	VPUNPCKLWD X27, X19, X6
	VPUNPCKHWD X27, X19, X7
	VPUNPCKLWD X28, X20, X8
	VPUNPCKHWD X28, X20, X9
	VPUNPCKLWD X29, X21, X10
	VPUNPCKHWD X29, X21, X11
	VPUNPCKLWD X30, X22, X12
	VPUNPCKHWD X30, X22, X13
	VPUNPCKLWD X31, X23, X14
	VPUNPCKHWD X31, X23, X15
	VPUNPCKLDQ X8, X0, X16
	VPUNPCKHDQ X8, X0, X17
	VPUNPCKLDQ X9, X1, X18
	VPUNPCKHDQ X9, X1, X19
	VPUNPCKLDQ X10, X2, X20
	VPUNPCKHDQ X10, X2, X21
	VPUNPCKLDQ X11, X3, X22
	VPUNPCKHDQ X11, X3, X23
	VPUNPCKLDQ X12, X4, X24
	VPUNPCKHDQ X12, X4, X25
	VPUNPCKLDQ X13, X5, X26
	VPUNPCKHDQ X13, X5, X27
	VPUNPCKLDQ X14, X6, X28
	VPUNPCKHDQ X14, X6, X29
	VPUNPCKLDQ X15, X7, X30
	VPUNPCKHDQ X15, X7, X31
	VPUNPCKLQDQ X24, X16, X0
	VPUNPCKHQDQ X24, X16, X1
	VPUNPCKLQDQ X25, X17, X2
	VPUNPCKHQDQ X25, X17, X3
	VPUNPCKLQDQ X26, X18, X4
	VPUNPCKHQDQ X26, X18, X5
	VPUNPCKLQDQ X27, X19, X6
	VPUNPCKHQDQ X27, X19, X7
	VPUNPCKLQDQ X28, X20, X8
	VPUNPCKHQDQ X28, X20, X9
	VPUNPCKLQDQ X29, X21, X10
	VPUNPCKHQDQ X29, X21, X11
	VPUNPCKLQDQ X30, X22, X12
	VPUNPCKHQDQ X30, X22, X13
	VPUNPCKLQDQ X31, X23, X14
	VPUNPCKHQDQ X31, X23, X15
	LEAQ (DI)(DX*4), R10
	LEAQ (R10)(DX*4), R11
	LEAQ (R11)(DX*4), R12
	VMOVDQU X0, (DI)
	VMOVDQU X1, (DI)(DX*1)
	VMOVDQU X2, (DI)(DX*2)
	VMOVDQU X3, (DI)(R13*1)
	VMOVDQU X4, (R10)
	VMOVDQU X5, (R10)(DX*1)
	VMOVDQU X6, (R10)(DX*2)
	VMOVDQU X7, (R10)(R13*1)
	VMOVDQU X8, (R11)
	VMOVDQU X9, (R11)(DX*1)
	VMOVDQU X10, (R11)(DX*2)
	VMOVDQU X11, (R11)(R13*1)
	VMOVDQU X12, (R12)
	VMOVDQU X13, (R12)(DX*1)
	VMOVDQU X14, (R12)(DX*2)
	VMOVDQU X15, (R12)(R13*1)
	ADDQ $16, SI
	MOVQ DX, R10
	SHLQ $4, R10
	ADDQ R10, DI
	DECQ AX
	JNE t16_loop
t16_done:
	RET
