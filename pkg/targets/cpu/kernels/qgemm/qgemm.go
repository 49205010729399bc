package qgemm

import (
	"encoding/binary"
	"fmt"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
)

// The tile: the micro-kernels compute up to 12 rows by two panels of 16
// columns at a time.
const (
	panelCols = 16
	tileRows  = 12
	groupK    = 4
	groupB    = panelCols * groupK // bytes of one 4-row group of a panel
)

// Geometry of a packed B of k rows and n columns.
func panels(n int) int    { return (n + panelCols - 1) / panelCols }
func groups(k int) int    { return (k + groupK - 1) / groupK }
func sumPanels(n int) int { return (panels(n) + 1) &^ 1 } // column sums cover whole pairs of panels

// PackedLen is the length in bytes of B [k, n] packed: the panels, then
// the column sums (int32) of every pair of panels.
func PackedLen(k, n int) int {
	return panels(n)*groups(k)*groupB + sumPanels(n)*panelCols*4
}

// Pack lays out the row-major int8 matrix b [k, n] (row stride ldb) for
// Gemm.
func Pack(k, n int, b []int8, ldb int) []byte {
	if k < 0 || n < 0 || ldb < n || (k > 0 && len(b) < (k-1)*ldb+n) {
		panic(fmt.Sprintf("qgemm.Pack: b of %d elements is not [%d, %d] with row stride %d", len(b), k, n, ldb))
	}
	np, g := panels(n), groups(k)
	out := make([]byte, PackedLen(k, n))
	sums := out[np*g*groupB:]
	for p := range np {
		for j := range panelCols {
			col := p*panelCols + j
			if col >= n {
				break
			}
			var sum int32
			for r := range k {
				v := b[r*ldb+col]
				sum += int32(v)
				out[(p*g+r/groupK)*groupB+j*groupK+r%groupK] = byte(v)
			}
			binary.LittleEndian.PutUint32(sums[col*4:], uint32(sum))
		}
	}
	return out
}

// Gemm computes out[i, j] = float32(Σ_k (a[i, k] − zero)·b[k, j]) for i <
// m, j < n, with a uint8 (signed: int8, as bytes) in rows lda apart, b
// packed by Pack for [k, n], and out rows ldo apart. The sums are exact
// for k ≤ MaxK (each term is at most 255·128 in magnitude; partial sums
// wrap in int32 and the result does not); the conversion to float32
// rounds to nearest even as ONNX Runtime's does. A whose rows are not a multiple of 4 bytes long, or
// int8 A, is first copied (the one allocation of a call).
func Gemm(pool *parallel.Pool, m, n, k int, a []byte, lda int, signed bool, zero int32, b []byte, out []float32, ldo int) {
	gemmWith(kernel(), pool, m, n, k, a, lda, signed, zero, b, out, ldo)
}

// gemmWith is Gemm on the tiles of kern.
func gemmWith(kern func(tile), pool *parallel.Pool, m, n, k int, a []byte, lda int, signed bool, zero int32, b []byte, out []float32, ldo int) {
	if m <= 0 || n <= 0 {
		return
	}
	if lda < k || ldo < n || len(a) < (m-1)*lda+k || len(out) < (m-1)*ldo+n || len(b) != PackedLen(k, n) {
		panic(fmt.Sprintf("qgemm.Gemm: operands do not fit m=%d n=%d k=%d (a %d bytes lda %d, b %d bytes, out %d lda %d)",
			m, n, k, len(a), lda, len(b), len(out), ldo))
	}
	g := groups(k)
	if signed || k%groupK != 0 {
		// The kernels read whole groups of four bytes of a row, unsigned:
		// a copy with rows of 4·g bytes, zeros past k (B's rows there are
		// zero too), int8 shifted to uint8 by 128 and the zero point with
		// it.
		w := g * groupK
		c := make([]byte, m*w)
		for i := range m {
			row := c[i*w : i*w+k]
			copy(row, a[i*lda:i*lda+k])
			if signed {
				for j := range row {
					row[j] ^= 0x80
				}
			}
		}
		if signed {
			zero += 128
		}
		a, lda = c, w
	}
	np := panels(n)
	sums := b[np*g*groupB:]
	pairs := (np + 1) / 2
	rowBlocks := (m + blockRows - 1) / blockRows
	pool.For(pairs*rowBlocks, 1, func(lo, hi int) {
		for t := lo; t < hi; t++ {
			pr, rb := t/rowBlocks, t%rowBlocks
			p0 := 2 * pr
			p1 := p0 + 1
			cols := min(2*panelCols, n-p0*panelCols)
			if p1 >= np {
				p1 = p0 // read, never stored: the mask keeps its columns out
			}
			r0, r1 := rb*blockRows, min(m, (rb+1)*blockRows)
			kern(tile{g: g, a: a[r0*lda:], lda: lda, b0: b[p0*g*groupB:], b1: b[p1*g*groupB:],
				sums: sums[p0*panelCols*4:], zero: zero, out: out[r0*ldo+p0*panelCols:], ldo: ldo, rows: r1 - r0, cols: cols})
		}
	})
}

// MaxK is the longest sum Gemm computes exactly in int32.
const MaxK = (1<<31 - 1) / (255 * 128)

// blockRows is the rows one task computes against one pair of panels:
// four 12-row tiles, which reuse the pair's 128·g bytes from L1 and leave
// enough tasks for the threads on the sweep's smallest products (M = 128).
const blockRows = 4 * tileRows

// tile is rows ≤ blockRows by cols ≤ 32 of out against a pair of panels.
type tile struct {
	g      int    // groups of 4 rows of B (and of 4 bytes of each row of a)
	a      []byte // the first row
	lda    int
	b0, b1 []byte // the two panels (b1 == b0 where only one exists)
	sums   []byte // the pair's column sums, 32 int32
	zero   int32
	out    []float32
	ldo    int
	rows   int
	cols   int // valid columns, 1..32
}

// tileGo is the pure-Go twin of the assembly kernels: the same sums.
func tileGo(t tile) {
	var acc [2 * panelCols]int32
	for i := range t.rows {
		acc = [2 * panelCols]int32{}
		row := t.a[i*t.lda:]
		for gi := range t.g {
			av := row[gi*groupK : gi*groupK+groupK]
			for h, pb := range [2][]byte{t.b0, t.b1} {
				pg := pb[gi*groupB : gi*groupB+groupB]
				for j := range panelCols {
					s := acc[h*panelCols+j]
					for q := range groupK {
						s += int32(av[q]) * int32(int8(pg[j*groupK+q]))
					}
					acc[h*panelCols+j] = s
				}
			}
		}
		o := t.out[i*t.ldo:]
		for j := range t.cols {
			sum := int32(binary.LittleEndian.Uint32(t.sums[j*4:]))
			o[j] = float32(acc[j] - t.zero*sum)
		}
	}
}
