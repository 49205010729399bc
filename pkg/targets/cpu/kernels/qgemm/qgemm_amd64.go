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

// VNNI reports whether this CPU runs the VNNI kernels (the compiler asks,
// to choose integer products where they pay: tuning.Int8Products).
func VNNI() bool { return vnni }

// The VNNI micro-kernels (qgemm_amd64.s): N rows of A against two
// 16-column panels, for each tap n groups of four bytes of each row from
// offs[t] bytes past a (rows lda apart), sums in int32 accumulators, then
// acc − corr converted to float32 and stored under the column mask (bit j:
// column j of the 32).
//
//go:noescape
func qdot1(taps int, offs *int, n int, a *byte, lda int, b0, b1 *byte, corr *int32, out *float32, ldo int, mask uint32)

//
//go:noescape
func qdot2(taps int, offs *int, n int, a *byte, lda int, b0, b1 *byte, corr *int32, out *float32, ldo int, mask uint32)

//
//go:noescape
func qdot3(taps int, offs *int, n int, a *byte, lda int, b0, b1 *byte, corr *int32, out *float32, ldo int, mask uint32)

//
//go:noescape
func qdot4(taps int, offs *int, n int, a *byte, lda int, b0, b1 *byte, corr *int32, out *float32, ldo int, mask uint32)

//
//go:noescape
func qdot5(taps int, offs *int, n int, a *byte, lda int, b0, b1 *byte, corr *int32, out *float32, ldo int, mask uint32)

//
//go:noescape
func qdot6(taps int, offs *int, n int, a *byte, lda int, b0, b1 *byte, corr *int32, out *float32, ldo int, mask uint32)

//
//go:noescape
func qdot7(taps int, offs *int, n int, a *byte, lda int, b0, b1 *byte, corr *int32, out *float32, ldo int, mask uint32)

//
//go:noescape
func qdot8(taps int, offs *int, n int, a *byte, lda int, b0, b1 *byte, corr *int32, out *float32, ldo int, mask uint32)

//
//go:noescape
func qdot9(taps int, offs *int, n int, a *byte, lda int, b0, b1 *byte, corr *int32, out *float32, ldo int, mask uint32)

//
//go:noescape
func qdot10(taps int, offs *int, n int, a *byte, lda int, b0, b1 *byte, corr *int32, out *float32, ldo int, mask uint32)

//
//go:noescape
func qdot11(taps int, offs *int, n int, a *byte, lda int, b0, b1 *byte, corr *int32, out *float32, ldo int, mask uint32)

//
//go:noescape
func qdot12(taps int, offs *int, n int, a *byte, lda int, b0, b1 *byte, corr *int32, out *float32, ldo int, mask uint32)

// qdots are the kernels by their rows.
var qdots = [tileRows + 1]func(taps int, offs *int, n int, a *byte, lda int, b0, b1 *byte, corr *int32, out *float32, ldo int, mask uint32){
	nil, qdot1, qdot2, qdot3, qdot4, qdot5, qdot6, qdot7, qdot8, qdot9, qdot10, qdot11, qdot12}

func kernel() func(*tile) {
	if vnni {
		return tileVNNI
	}
	return tileGo
}

func kernels() map[string]func(*tile) {
	ks := map[string]func(*tile){"go": tileGo}
	if vnni {
		ks["vnni"] = tileVNNI
	}
	return ks
}

// tileVNNI runs the tile as 12-row calls and one call for the rows left,
// after checking every byte they read and write lies in the slices.
func tileVNNI(t *tile) {
	if t.rows <= 0 || t.n <= 0 || len(t.offs) == 0 {
		tileGo(t)
		return
	}
	hi := 0
	for _, off := range t.offs {
		if off < 0 {
			panic("qgemm: negative tap offset")
		}
		hi = max(hi, off)
	}
	_ = t.a[hi+(t.rows-1)*t.lda+t.n*groupK-1]
	_ = t.b0[len(t.offs)*t.n*groupB-1]
	_ = t.b1[len(t.offs)*t.n*groupB-1]
	_ = t.out[(t.rows-1)*t.ldo+t.cols-1]
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

// transpose16 transposes blocks 16×16-byte blocks along a row: block b
// reads 16 rows lds apart from src+16b and writes 16 rows ldd apart from
// dst+16b·ldd (qgemm_amd64.s).
//
//go:noescape
func transpose16(dst *byte, ldd int, src *byte, lds int, blocks int)

// transposeBytes is transposeBytesGo in 16×16 blocks through xmm
// registers where the CPU runs the VNNI kernels (AVX-512BW and VL), the
// last block of each dimension overlapping the one before.
func transposeBytes(dst []byte, ldd int, src []byte, lds, rows, cols int) {
	if !vnni || rows < 16 || cols < 16 {
		transposeBytesGo(dst, ldd, src, lds, rows, cols)
		return
	}
	_ = src[(rows-1)*lds+cols-1]
	_ = dst[(cols-1)*ldd+rows-1]
	for c0 := 0; c0 < rows; c0 += 16 {
		c := min(c0, rows-16)
		transpose16(&dst[c], ldd, &src[c*lds], lds, cols/16)
		if cols%16 != 0 {
			w := cols - 16
			transpose16(&dst[w*ldd+c], ldd, &src[c*lds+w], lds, 1)
		}
	}
}
