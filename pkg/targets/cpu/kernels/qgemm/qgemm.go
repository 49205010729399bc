package qgemm

import (
	"encoding/binary"
	"fmt"
	"unsafe"

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

// MaxK is the longest sum Gemm and Conv compute exactly in int32: each
// term is at most 255·128 in magnitude.
const MaxK = (1<<31 - 1) / (255 * 128)

// Pack lays out the row-major int8 matrix b [k, n] (row stride ldb) for
// Gemm.
func Pack(k, n int, b []int8, ldb int) []byte {
	if k < 0 || n < 0 || ldb < n || (k > 0 && len(b) < (k-1)*ldb+n) {
		panic(fmt.Sprintf("qgemm.Pack: b of %d elements is not [%d, %d] with row stride %d", len(b), k, n, ldb))
	}
	return pack(k, n, func(r, col int) int8 { return b[r*ldb+col] })
}

// pack lays out the [k, n] matrix whose element (r, col) is at(r, col).
func pack(k, n int, at func(r, col int) int8) []byte {
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
				v := at(r, col)
				sum += int32(v)
				out[(p*g+r/groupK)*groupB+j*groupK+r%groupK] = byte(v)
			}
			binary.LittleEndian.PutUint32(sums[col*4:], uint32(sum))
		}
	}
	return out
}

// Gemm computes out[i, j] = float32(Σ_k (a[i, k] − zero)·b[k, j] +
// bias[j]) for i < m, j < n (bias nil: none), with a uint8 (signed:
// int8, as bytes) in rows lda apart, b packed by Pack for [k, n], and out
// rows ldo apart. The sums are exact for k ≤ MaxK (partial sums wrap in
// int32 and the result does not); the conversion to float32 rounds to
// nearest even as ONNX Runtime's does. A whose rows are not a multiple of
// 4 bytes long, or int8 A, or any A for the AVX2 kernel (which reads it
// widened to uint16) is first copied into scratch, of at least
// GemmScratch(m, k) bytes (nil: allocated).
func Gemm(pool *parallel.Pool, m, n, k int, a []byte, lda int, signed bool, zero int32, b []byte, bias []int32, out []float32, ldo int, scratch []byte) {
	gemmWith(kernel(), pool, m, n, k, a, lda, signed, zero, b, bias, out, ldo, scratch)
}

// GemmScratch is the bytes of Gemm's scratch for A [m, k]: m rows of k
// rounded up to 4, as uint16 (lir.QMatMulScratch).
func GemmScratch(m, k int) int { return m * groups(k) * groupK * 2 }

// microKernel is a tile kernel and the form of A it reads.
type microKernel struct {
	run func(*tile)
	// wide: A widened to uint16, offsets and row strides in bytes of the
	// widened copy. AVX2's exact integer product (vpmaddwd) takes int16
	// operands: widening A once costs less than widening each row of it
	// for every chunk of columns.
	wide bool
}

// groupA is the bytes of a row of A the kernel reads for a group of 4.
func (k microKernel) groupA() int {
	if k.wide {
		return 2 * groupK
	}
	return groupK
}

// widen writes src into dst as uint16, int8 shifted into uint8 (x + 128)
// where signed.
func widen(dst []uint16, src []byte, signed bool) {
	var flip byte
	if signed {
		flip = 0x80
	}
	widenBytes(dst, src, flip)
}

// uint16s is b as uint16 (len(b)/2 of them; b 2-byte aligned, as arena
// buffers and Go's allocations are).
func uint16s(b []byte) []uint16 {
	return unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/2)
}

// gemmWith is Gemm on the tiles of kern.
func gemmWith(kern microKernel, pool *parallel.Pool, m, n, k int, a []byte, lda int, signed bool, zero int32, b []byte, bias []int32, out []float32, ldo int, scratch []byte) {
	if m <= 0 || n <= 0 {
		return
	}
	if lda < k || ldo < n || len(a) < (m-1)*lda+k || len(out) < (m-1)*ldo+n || len(b) != PackedLen(k, n) || bias != nil && len(bias) < n {
		panic(fmt.Sprintf("qgemm.Gemm: operands do not fit m=%d n=%d k=%d (a %d bytes lda %d, b %d bytes, out %d lda %d)",
			m, n, k, len(a), lda, len(b), len(out), ldo))
	}
	g := groups(k)
	if w := g * groupK; kern.wide || signed || k%groupK != 0 {
		// The kernels read whole groups of four elements of a row,
		// unsigned: a copy with rows of 4·g bytes (or uint16, where the
		// kernel reads A widened), zeros past k (B's rows there are zero
		// too), int8 shifted to uint8 by 128 and the zero point with it.
		if len(scratch) < GemmScratch(m, k) {
			scratch = make([]byte, GemmScratch(m, k))
		}
		elem := 1
		if kern.wide {
			elem = 2
		}
		c := scratch[:m*w*elem]
		pool.For(m, max(1, 16384/max(w, 1)), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				row := c[i*w*elem : (i+1)*w*elem]
				clear(row[k*elem:])
				if kern.wide {
					widen(uint16s(row), a[i*lda:i*lda+k], signed)
					continue
				}
				copy(row, a[i*lda:i*lda+k])
				if signed {
					flip(row[:k])
				}
			}
		})
		if signed {
			zero += 128
		}
		a, lda = c, w*elem
	}
	np := panels(n)
	sums := b[np*g*groupB:]
	pairs := (np + 1) / 2
	rowBlocks := (m + blockRows - 1) / blockRows
	offs := []int{0}
	pool.For(pairs*rowBlocks, 1, func(lo, hi int) {
		var t tile
		for task := lo; task < hi; task++ {
			pr, rb := task/rowBlocks, task%rowBlocks
			r0, r1 := rb*blockRows, min(m, (rb+1)*blockRows)
			t.set(b, g, np, 2*pr, n, sums, zero, bias)
			t.offs, t.n, t.a, t.lda, t.groupA, t.out, t.ldo, t.rows = offs, g, a[r0*lda:], lda, kern.groupA(), out[r0*ldo+2*pr*panelCols:], ldo, r1-r0
			kern.run(&t)
		}
	})
}

// flip shifts int8 bytes into uint8 (x + 128).
func flip(b []byte) {
	for i := range b {
		b[i] ^= 0x80
	}
}

// blockRows is the rows one task computes against one pair of panels:
// four 12-row tiles, which reuse the pair's 128·g bytes from L1 and leave
// enough tasks for the threads on the sweep's smallest products (M = 128).
const blockRows = 4 * tileRows

// tile is rows by cols ≤ 32 of out against a pair of panels: for each
// tap t, n groups of four bytes of each row of a from offs[t] on, rows
// lda apart (groupA bytes a group: 4 bytes, or 4 uint16 where the
// kernel reads A widened), against the panels' next n groups.
type tile struct {
	offs   []int
	n      int
	a      []byte
	lda    int
	groupA int
	b0, b1 []byte // the two panels (b1 == b0 where only one exists)
	corr   [2 * panelCols]int32
	out    []float32
	ldo    int
	rows   int
	cols   int // valid columns, 1..32
}

// set points t at panels p0 and p0+1 of b (g groups each, np in all, n
// columns), with the correction zero·sum − bias of their columns.
func (t *tile) set(b []byte, g, np, p0, n int, sums []byte, zero int32, bias []int32) {
	p1 := p0 + 1
	if p1 >= np {
		p1 = p0 // read, never stored: the mask keeps its columns out
	}
	t.b0, t.b1 = b[p0*g*groupB:(p0+1)*g*groupB], b[p1*g*groupB:(p1+1)*g*groupB]
	t.cols = min(2*panelCols, n-p0*panelCols)
	for j := range t.corr {
		col := p0*panelCols + j
		t.corr[j] = zero * int32(binary.LittleEndian.Uint32(sums[col*4:]))
		if bias != nil && j < t.cols {
			t.corr[j] -= bias[col]
		}
	}
}

// tileGo is the pure-Go twin of the assembly kernels: the same sums.
func tileGo(t *tile) {
	var acc [2 * panelCols]int32
	for i := range t.rows {
		acc = [2 * panelCols]int32{}
		gb := 0 // B's group, across the taps
		for _, off := range t.offs {
			row := t.a[off+i*t.lda:]
			step := t.groupA / groupK // A's bytes an element (the low byte of a uint16 where wide)
			for gi := range t.n {
				var av [groupK]byte
				for q := range av {
					av[q] = row[(gi*groupK+q)*step]
				}
				for h, pb := range [2][]byte{t.b0, t.b1} {
					pg := pb[gb*groupB : gb*groupB+groupB]
					for j := range panelCols {
						s := acc[h*panelCols+j]
						for q := range groupK {
							s += int32(av[q]) * int32(int8(pg[j*groupK+q]))
						}
						acc[h*panelCols+j] = s
					}
				}
				gb++
			}
		}
		o := t.out[i*t.ldo:]
		for j := range t.cols {
			o[j] = float32(acc[j] - t.corr[j])
		}
	}
}
