//go:build ignore

// gen_amd64.go writes qgemm_amd64.s and the kernels' Go declarations,
// kernels_amd64.go (go generate, from qgemm_amd64.go):
// the VNNI micro-kernels for 1 to 12 rows and the AVX2 ones for 1 to 6,
// one loop unrolled over the rows, and the 16×16 byte transpose, unrolled
// over its rounds.
package main

import (
	"fmt"
	"go/format"
	"log"
	"os"
	"strings"
)

// header is the file's preamble after the build tag: the macros the
// kernels share.
const header = `#include "textflag.h"

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
`

const transposeComment = `// The byte transpose of the relayout: blocks of 16×16 bytes through four
// rounds of unpacking pairs of xmm registers (bytes, words, dwords,
// qwords), which leaves column k in register k when row i was loaded into
// register bitrev4(i). The rounds alternate between X0-X15 and X16-X31
// (AVX-512VL encodings).

`

type out struct{ strings.Builder }

func (w *out) p(format string, a ...any) { fmt.Fprintf(w, format+"\n", a...) }

// addr is element r of rows laid out per bases: per rows each base, at
// base, base+idx, base+2·idx and (four a base) base+three.
func addr(bases []string, per int, idx, three string, r int) string {
	b := "(" + bases[r/per] + ")"
	switch r % per {
	case 0:
		return b
	case 1:
		return b + "(" + idx + "*1)"
	case 2:
		return b + "(" + idx + "*2)"
	}
	return b + "(" + three + "*1)"
}

// tapLoop writes a kernel's loops: for each of the BX taps at (CX)
// (rows sets its rows' pointers), n+16(FP) groups (body accumulates one
// and steps the pointers), then the label name_done.
func (w *out) tapLoop(name string, rows, body func()) {
	w.p("\tTESTQ BX, BX")
	w.p("\tJEQ %s_done", name)
	w.p("%s_tap:", name)
	rows()
	w.p("\tMOVQ n+16(FP), AX")
	w.p("\tTESTQ AX, AX")
	w.p("\tJEQ %s_next", name)
	w.p("%s_loop:", name)
	body()
	w.p("\tDECQ AX")
	w.p("\tJNE %s_loop", name)
	w.p("%s_next:", name)
	w.p("\tADDQ $8, CX")
	w.p("\tDECQ BX")
	w.p("\tJNE %s_tap", name)
	w.p("%s_done:", name)
}

// kernel writes qdotN for N = rows: rows 0-2 from R8, 3-5 from R10, 6-8
// from R11, 9-11 from R12, each base plus 0, 1 or 2 times lda (R9).
func (w *out) kernel(rows int) {
	name := fmt.Sprintf("qdot%d", rows)
	w.p("\n// func %s(taps int, offs *int, n int, a *byte, lda int, b0, b1 *byte, corr *int32, out *float32, ldo int, mask uint32)", name)
	w.p("TEXT ·%s(SB), NOSPLIT, $0-84", name)
	w.p("\tPROLOGUE")
	for i := range 2 * rows {
		w.p("\tVPXORD Z%d, Z%d, Z%d", i, i, i)
	}
	w.tapLoop(name, func() { w.p("\tTAP_ROWS") }, func() {
		w.p("\tVMOVDQU32 (SI), Z24")
		w.p("\tVMOVDQU32 (DI), Z25")
		bases := []string{"R8", "R10", "R11", "R12"}
		for r := range rows {
			w.p("\tROW(%s, Z%d, Z%d, Z%d)", addr(bases, 3, "R9", "", r), 26+r%2, 2*r, 2*r+1)
		}
		w.p("\tADDQ $64, SI")
		w.p("\tADDQ $64, DI")
		for i, b := range bases {
			if rows > 3*i {
				w.p("\tADDQ $4, %s", b)
			}
		}
	})
	w.p("\tEPILOGUE_SETUP")
	for r := range rows {
		w.p("\tSTORE(Z%d, Z%d)", 2*r, 2*r+1)
	}
	w.p("\tVZEROUPPER")
	w.p("\tRET")
}

const avx2Comment = `// The AVX2 micro-kernels qwdotN, N rows of 1 to 6 against 8 columns (half
// a panel) for machines without VNNI. AVX2 has no u8·s8 product that is
// exact (vpmaddubsw saturates its int16 pair sums), so both operands are
// widened to int16 and vpmaddwd sums pairs of them exactly into int32:
// each 16 bytes of a group (4 columns × 4 rows of B) widen to a register
// whose dword lanes hold (column c, rows 0-1) and (column c, rows 2-3);
// a row's four bytes of A, broadcast and widened, line up with them. Row
// i's sums of columns 0-3 and 4-7 are in Y(2i) and Y(2i+1), two lanes a
// column; vphaddd adds the lanes of a column and vpermq puts the columns
// in order before the correction, the conversion and the store of all 8
// (the caller stores partial chunks through a buffer). Registers: Y12,
// Y13 the group, Y14 the row of A, Y15 the product.

`

// kernelAVX2 writes qwdotN for N = rows: rows 0-2 from R8, 3-5 from R10.
func (w *out) kernelAVX2(rows int) {
	name := fmt.Sprintf("qwdot%d", rows)
	w.p("\n// func %s(taps int, offs *int, n int, a *byte, lda int, b *byte, corr *int32, out *float32, ldo int)", name)
	w.p("TEXT ·%s(SB), NOSPLIT, $0-72", name)
	w.p("\tMOVQ taps+0(FP), BX")
	w.p("\tMOVQ offs+8(FP), CX")
	w.p("\tMOVQ a+24(FP), DX")
	w.p("\tMOVQ lda+32(FP), R9")
	w.p("\tMOVQ b+40(FP), SI")
	for i := range 2 * rows {
		w.p("\tVPXOR Y%d, Y%d, Y%d", i, i, i)
	}
	w.tapLoop(name, func() {
		w.p("\tMOVQ (CX), R8")
		w.p("\tADDQ DX, R8")
		if rows > 3 {
			w.p("\tLEAQ (R8)(R9*2), R10")
			w.p("\tADDQ R9, R10")
		}
	}, func() {
		w.p("\tVPMOVSXBW (SI), Y12")
		w.p("\tVPMOVSXBW 16(SI), Y13")
		bases := []string{"R8", "R10"}
		for r := range rows {
			w.p("\tVPBROADCASTQ %s, Y14", addr(bases, 3, "R9", "", r))
			w.p("\tVPMADDWD Y12, Y14, Y15")
			w.p("\tVPADDD Y15, Y%d, Y%d", 2*r, 2*r)
			w.p("\tVPMADDWD Y13, Y14, Y15")
			w.p("\tVPADDD Y15, Y%d, Y%d", 2*r+1, 2*r+1)
		}
		w.p("\tADDQ $64, SI")
		w.p("\tADDQ $8, R8")
		if rows > 3 {
			w.p("\tADDQ $8, R10")
		}
	})
	w.p("\tMOVQ corr+48(FP), BX")
	w.p("\tVMOVDQU (BX), Y15")
	w.p("\tMOVQ out+56(FP), CX")
	w.p("\tMOVQ ldo+64(FP), DX")
	w.p("\tSHLQ $2, DX")
	for r := range rows {
		w.p("\tVPHADDD Y%d, Y%d, Y%d", 2*r+1, 2*r, 2*r)
		w.p("\tVPERMQ $0xD8, Y%d, Y%d", 2*r, 2*r)
		w.p("\tVPSUBD Y15, Y%d, Y%d", 2*r, 2*r)
		w.p("\tVCVTDQ2PS Y%d, Y%d", 2*r, 2*r)
		w.p("\tVMOVUPS Y%d, (CX)", 2*r)
		if r < rows-1 {
			w.p("\tADDQ DX, CX")
		}
	}
	w.p("\tVZEROUPPER")
	w.p("\tRET")
}

// transpose writes transpose16: rows loaded in bit-reversed order, four
// rounds of unpacking (j with j+8 into 2j and 2j+1) alternating between
// X0-X15 and X16-X31, columns stored in order.
func (w *out) transpose() {
	w.p("\n%s", transposeComment[:len(transposeComment)-1])
	w.transposeHead("transpose16", "t16")
	bitrev := func(i int) int { return (i&1)<<3 | (i&2)<<1 | (i&4)>>1 | (i&8)>>3 }
	for i := range 16 {
		w.p("\tVMOVDQU %s, X%d", addr([]string{"SI", "R10", "R11", "R12"}, 4, "BX", "CX", bitrev(i)), i)
	}
	ops := []string{"VPUNPCKLBW", "VPUNPCKHBW", "VPUNPCKLWD", "VPUNPCKHWD", "VPUNPCKLDQ", "VPUNPCKHDQ", "VPUNPCKLQDQ", "VPUNPCKHQDQ"}
	a, b := 0, 16
	for s := range 4 {
		for j := range 8 {
			w.p("\t%s X%d, X%d, X%d", ops[2*s], a+j+8, a+j, b+2*j)
			w.p("\t%s X%d, X%d, X%d", ops[2*s+1], a+j+8, a+j, b+2*j+1)
		}
		a, b = b, a
	}
	w.p("\tLEAQ (DI)(DX*4), R10")
	w.p("\tLEAQ (R10)(DX*4), R11")
	w.p("\tLEAQ (R11)(DX*4), R12")
	for k := range 16 {
		w.p("\tVMOVDQU X%d, %s", a+k, addr([]string{"DI", "R10", "R11", "R12"}, 4, "DX", "R13", k))
	}
	w.transposeTail("t16", false)
}

// transposeHead writes the start of a byte transpose's function name
// (label its labels' prefix): the operands in registers (src rows lds
// apart from SI, rows 0-3 of each 4 at SI, +BX, +2BX, +CX; dst columns
// ldd apart from DI, likewise with DX and R13), the loop over the blocks
// and its four groups of source rows in SI and R10-R12.
func (w *out) transposeHead(name, label string) {
	w.p("// func %s(dst *byte, ldd int, src *byte, lds int, blocks int)", name)
	w.p(`TEXT ·%s(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), DX
	MOVQ src+16(FP), SI
	MOVQ lds+24(FP), BX
	MOVQ blocks+32(FP), AX
	LEAQ (BX)(BX*2), CX
	LEAQ (DX)(DX*2), R13
	TESTQ AX, AX
	JEQ %s_done
%s_loop:
	LEAQ (SI)(BX*4), R10
	LEAQ (R10)(BX*4), R11
	LEAQ (R11)(BX*4), R12`, name, label, label)
}

// transposeTail steps to the next block and ends the function (clearing
// the ymm registers' upper halves where vzero).
func (w *out) transposeTail(label string, vzero bool) {
	w.p(`	ADDQ $16, SI
	MOVQ DX, R10
	SHLQ $4, R10
	ADDQ R10, DI
	DECQ AX
	JNE %s_loop
%s_done:`, label, label)
	if vzero {
		w.p("\tVZEROUPPER")
	}
	w.p("\tRET")
}

// transposeAVX2 writes transpose16y, transpose16 in ymm registers for
// CPUs with AVX2 alone (16 registers, no AVX-512VL encodings): register i
// holds rows i and i+8 (one a lane), three rounds of unpacking within the
// lanes (bytes, words, dwords) alternating between Y0-Y7 and Y8-Y15 leave
// two columns a register, rows 0-7 in the low lane and 8-15 in the high;
// vpermq joins each column's halves, and the two lanes are stored.
func (w *out) transposeAVX2() {
	w.p("")
	w.transposeHead("transpose16y", "t16y")
	rows := []string{"SI", "R10", "R11", "R12"}
	for i := range 8 {
		w.p("\tVMOVDQU %s, X%d", addr(rows, 4, "BX", "CX", i), i)
		w.p("\tVINSERTI128 $1, %s, Y%d, Y%d", addr(rows, 4, "BX", "CX", i+8), i, i)
	}
	// round 1: rows (2j, 2j+1) -> bytes interleaved, t(2j) low half, t(2j+1) high
	for j := range 4 {
		w.p("\tVPUNPCKLBW Y%d, Y%d, Y%d", 2*j+1, 2*j, 8+2*j)
		w.p("\tVPUNPCKHBW Y%d, Y%d, Y%d", 2*j+1, 2*j, 8+2*j+1)
	}
	// round 2: words of (t0, t2), (t1, t3), (t4, t6), (t5, t7)
	pairs := [][2]int{{0, 2}, {1, 3}, {4, 6}, {5, 7}}
	for i, pr := range pairs {
		w.p("\tVPUNPCKLWD Y%d, Y%d, Y%d", 8+pr[1], 8+pr[0], 2*i)
		w.p("\tVPUNPCKHWD Y%d, Y%d, Y%d", 8+pr[1], 8+pr[0], 2*i+1)
	}
	// now Y0..Y3 hold rows 0-3 of columns 0-3, 4-7, 8-11, 12-15 and
	// Y4..Y7 rows 4-7 of the same; round 3: dwords of (Y k, Y k+4)
	for k := range 4 {
		w.p("\tVPUNPCKLDQ Y%d, Y%d, Y%d", k+4, k, 8+2*k)
		w.p("\tVPUNPCKHDQ Y%d, Y%d, Y%d", k+4, k, 8+2*k+1)
	}
	// Y(8+m) holds columns 2m and 2m+1
	w.p("\tLEAQ (DI)(DX*4), R10")
	w.p("\tLEAQ (R10)(DX*4), R11")
	w.p("\tLEAQ (R11)(DX*4), R12")
	dst := []string{"DI", "R10", "R11", "R12"}
	for m := range 8 {
		w.p("\tVPERMQ $0xD8, Y%d, Y%d", 8+m, 8+m)
		w.p("\tVMOVDQU X%d, %s", 8+m, addr(dst, 4, "DX", "R13", 2*m))
		w.p("\tVEXTRACTI128 $1, Y%d, %s", 8+m, addr(dst, 4, "DX", "R13", 2*m+1))
	}
	w.transposeTail("t16y", true)
}

// declarations is kernels_amd64.go: the Go declarations of the kernels
// main writes, and their tables by row count.
func declarations() string {
	var w out
	w.p("// Code generated by gen_amd64.go; DO NOT EDIT.\n")
	w.p("//go:build amd64 && !purego\n")
	w.p("package qgemm\n")
	const qdot = "func(taps int, offs *int, n int, a *byte, lda int, b0, b1 *byte, corr *int32, out *float32, ldo int, mask uint32)"
	const qwdot = "func(taps int, offs *int, n int, a *byte, lda int, b *byte, corr *int32, out *float32, ldo int)"
	decls := func(name, sig, table, size string, rows int, doc string) {
		w.WriteString(doc)
		var names []string
		for r := 1; r <= rows; r++ {
			if r > 1 {
				w.p("//")
			}
			w.p("//go:noescape")
			w.p("func %s%d%s\n", name, r, sig[len("func"):])
			names = append(names, fmt.Sprintf("%s%d", name, r))
		}
		w.p("// %s are the kernels by their rows.", table)
		w.p("var %s = [%s + 1]%s{\n\tnil, %s}\n", table, size, sig, strings.Join(names, ", "))
	}
	decls("qdot", qdot, "qdots", "tileRows", 12, `// The VNNI micro-kernels (qgemm_amd64.s): N rows of A against two
// 16-column panels, for each tap n groups of four bytes of each row from
// offs[t] bytes past a (rows lda apart), sums in int32 accumulators, then
// acc − corr converted to float32 and stored under the column mask (bit j:
// column j of the 32).
//
`)
	decls("qwdot", qwdot, "qwdots", "avx2Rows", 6, `// The AVX2 micro-kernels (qgemm_amd64.s): N rows of A against 8 columns
// of a panel (b points at the columns' first byte in its first group),
// the same taps and groups as qdotN, all 8 columns stored.
//
`)
	return w.String()
}

func main() {
	var w out
	w.p("// Code generated by gen_amd64.go; DO NOT EDIT.\n")
	w.p("//go:build amd64 && !purego\n")
	w.WriteString(header + "\n")
	for rows := 12; rows >= 1; rows-- {
		w.kernel(rows)
	}
	w.WriteString("\n" + avx2Comment[:len(avx2Comment)-1])
	for rows := 6; rows >= 1; rows-- {
		w.kernelAVX2(rows)
	}
	w.transpose()
	w.transposeAVX2()
	w.p(`
// Widening of A for the AVX2 kernels: blocks of 16 bytes, each xored
// with flip (0x80 turns int8 into uint8 + 128), zero-extended to 16
// uint16.

// func widen16(dst *uint16, src *byte, blocks int, flip byte)
TEXT ·widen16(SB), NOSPLIT, $0-25
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ blocks+16(FP), AX
	MOVBLZX flip+24(FP), BX
	MOVL BX, X1
	VPBROADCASTB X1, X1
	TESTQ AX, AX
	JEQ w16_done
w16_loop:
	VPXOR (SI), X1, X0
	VPMOVZXBW X0, Y0
	VMOVDQU Y0, (DI)
	ADDQ $16, SI
	ADDQ $32, DI
	DECQ AX
	JNE w16_loop
w16_done:
	VZEROUPPER
	RET`)
	if err := os.WriteFile("qgemm_amd64.s", []byte(w.String()), 0o644); err != nil {
		log.Fatal(err)
	}
	decls, err := format.Source([]byte(declarations()))
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile("kernels_amd64.go", decls, 0o644); err != nil {
		log.Fatal(err)
	}
}
