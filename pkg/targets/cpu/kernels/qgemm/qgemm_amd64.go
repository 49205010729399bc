//go:build amd64 && !purego

package qgemm

//go:generate go run gen_amd64.go

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// vnni reports AVX-512 VNNI (vpdpbusd on zmm) with the byte/word and
// vector-length extensions the kernels' masked stores use; x/sys/cpu's
// AVX-512 flags include the OS saving the zmm and opmask state.
var vnni = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512VNNI

// avx2 reports AVX2, which the qwdot kernels need (x/sys/cpu's flag
// includes the OS saving the ymm state).
var avx2 = cpu.X86.HasAVX2

// avx2Rows and avx2Cols are the AVX2 kernels' largest tile: 6 rows by 8
// columns take 12 of the 16 ymm registers as accumulators.
const (
	avx2Rows = 6
	avx2Cols = 8
)

// kernel is the fastest kernel this CPU runs.
func kernel() microKernel {
	switch {
	case vnni:
		return microKernel{run: tileVNNI}
	case avx2:
		return microKernel{run: tileAVX2, wide: true}
	}
	return microKernel{run: tileGo}
}

// kernels lists the kernels this CPU runs, for the tests.
func kernels() map[string]microKernel {
	ks := map[string]microKernel{"go": {run: tileGo}, "go-wide": {run: tileGo, wide: true}}
	if vnni {
		ks["vnni"] = microKernel{run: tileVNNI}
	}
	if avx2 {
		ks["avx2"] = microKernel{run: tileAVX2, wide: true}
	}
	return ks
}

// Int8Kernel names the integer kernel this CPU runs: "vnni", "avx2" or
// "go" (rlxc targets, and the compiler's choice of integer products).
func Int8Kernel() string {
	switch {
	case vnni:
		return "vnni"
	case avx2:
		return "avx2"
	}
	return "go"
}

// checkTile panics unless every byte t's kernels read and write lies in
// its slices (the assembly indexes without bounds checks).
func checkTile(t *tile) {
	hi := 0
	for _, off := range t.offs {
		if off < 0 {
			panic("qgemm: negative tap offset")
		}
		hi = max(hi, off)
	}
	_ = t.a[hi+(t.rows-1)*t.lda+t.n*t.groupA-1]
	_ = t.b0[len(t.offs)*t.n*groupB-1]
	_ = t.b1[len(t.offs)*t.n*groupB-1]
	_ = t.out[(t.rows-1)*t.ldo+t.cols-1]
}

// tileAVX2 runs the tile as calls of up to 6 rows, each against the
// tile's chunks of 8 columns in turn (the rows' bytes of A stay in L1
// across the chunks); a chunk with fewer valid columns stores through a
// buffer.
func tileAVX2(t *tile) {
	if t.rows <= 0 || t.n <= 0 || len(t.offs) == 0 {
		tileGo(t)
		return
	}
	checkTile(t)
	var buf [avx2Rows * avx2Cols]float32
	a := unsafe.Pointer(unsafe.SliceData(t.a))
	taps, offs := len(t.offs), unsafe.SliceData(t.offs)
	for c := 0; c*avx2Cols < t.cols; c++ {
		panel := t.b0
		if c >= panelCols/avx2Cols {
			panel = t.b1
		}
		b := &panel[(c%(panelCols/avx2Cols))*avx2Cols*groupK]
		col := c * avx2Cols
		for i := 0; i < t.rows; i += avx2Rows {
			rows := min(avx2Rows, t.rows-i)
			ai := (*byte)(unsafe.Add(a, i*t.lda))
			if t.cols-col >= avx2Cols {
				qwdots[rows](taps, offs, t.n, ai, t.lda, b, &t.corr[col], &t.out[i*t.ldo+col], t.ldo)
				continue
			}
			qwdots[rows](taps, offs, t.n, ai, t.lda, b, &t.corr[col], &buf[0], avx2Cols)
			for r := range rows {
				copy(t.out[(i+r)*t.ldo+col:(i+r)*t.ldo+t.cols], buf[r*avx2Cols:])
			}
		}
	}
}

// tileVNNI runs the tile as 12-row calls and one call for the rows left,
// after checking every byte they read and write lies in the slices.
func tileVNNI(t *tile) {
	if t.rows <= 0 || t.n <= 0 || len(t.offs) == 0 {
		tileGo(t)
		return
	}
	checkTile(t)
	mask := uint32(1)<<t.cols - 1
	if t.cols == 32 {
		mask = ^uint32(0)
	}
	a, b0, b1 := unsafe.Pointer(unsafe.SliceData(t.a)), unsafe.SliceData(t.b0), unsafe.SliceData(t.b1)
	o := unsafe.Pointer(unsafe.SliceData(t.out))
	taps, offs, corr := len(t.offs), unsafe.SliceData(t.offs), &t.corr[0]
	for i := 0; i < t.rows; i += tileRows {
		qdots[min(tileRows, t.rows-i)](taps, offs, t.n, (*byte)(unsafe.Add(a, i*t.lda)), t.lda, b0, b1, corr, (*float32)(unsafe.Add(o, 4*i*t.ldo)), t.ldo, mask)
	}
}

// widen16 widens blocks of 16 bytes of src into dst, each xored with flip
// (qgemm_amd64.s).
//
//go:noescape
func widen16(dst *uint16, src *byte, blocks int, flip byte)

// widenBytes is widen through AVX2 registers where the CPU has them.
func widenBytes(dst []uint16, src []byte, flip byte) {
	dst = dst[:len(src)]
	n := len(src) &^ 15
	if avx2 && n > 0 {
		widen16(&dst[0], &src[0], n/16, flip)
	}
	for i := n; i < len(src); i++ {
		dst[i] = uint16(src[i] ^ flip)
	}
}

// transpose16 transposes blocks 16×16-byte blocks along a row: block b
// reads 16 rows lds apart from src+16b and writes 16 rows ldd apart from
// dst+16b·ldd (qgemm_amd64.s).
//
//go:noescape
func transpose16(dst *byte, ldd int, src *byte, lds int, blocks int)

// transpose16y is transpose16 in ymm registers, for AVX2 alone
// (qgemm_amd64.s).
//
//go:noescape
func transpose16y(dst *byte, ldd int, src *byte, lds int, blocks int)

// transposeBytes is transposeBytesGo in 16×16 blocks through registers
// where the CPU has AVX2 (xmm with AVX-512VL's 32 registers where it runs
// the VNNI kernels).
func transposeBytes(dst []byte, ldd int, src []byte, lds, rows, cols int) {
	switch {
	case vnni:
		transposeBlocks(transpose16, dst, ldd, src, lds, rows, cols)
	case avx2:
		transposeBlocks(transpose16y, dst, ldd, src, lds, rows, cols)
	default:
		transposeBytesGo(dst, ldd, src, lds, rows, cols)
	}
}

// transposers lists the byte transposes this CPU runs, for the tests.
func transposers() map[string]func(dst []byte, ldd int, src []byte, lds, rows, cols int) {
	ts := map[string]func(dst []byte, ldd int, src []byte, lds, rows, cols int){"go": transposeBytesGo}
	if vnni {
		ts["vnni"] = func(dst []byte, ldd int, src []byte, lds, rows, cols int) {
			transposeBlocks(transpose16, dst, ldd, src, lds, rows, cols)
		}
	}
	if avx2 {
		ts["avx2"] = func(dst []byte, ldd int, src []byte, lds, rows, cols int) {
			transposeBlocks(transpose16y, dst, ldd, src, lds, rows, cols)
		}
	}
	return ts
}

// transposeBlocks is transposeBytesGo in 16×16 blocks of block, the last
// block of each dimension overlapping the one before.
func transposeBlocks(block func(dst *byte, ldd int, src *byte, lds int, blocks int), dst []byte, ldd int, src []byte, lds, rows, cols int) {
	if rows < 16 || cols < 16 {
		transposeBytesGo(dst, ldd, src, lds, rows, cols)
		return
	}
	_ = src[(rows-1)*lds+cols-1]
	_ = dst[(cols-1)*ldd+rows-1]
	for c0 := 0; c0 < rows; c0 += 16 {
		c := min(c0, rows-16)
		block(&dst[c], ldd, &src[c*lds], lds, cols/16)
		if cols%16 != 0 {
			w := cols - 16
			block(&dst[w*ldd+c], ldd, &src[c*lds+w], lds, 1)
		}
	}
}
