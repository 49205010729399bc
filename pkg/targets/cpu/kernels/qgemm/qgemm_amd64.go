//go:build amd64 && !purego

package qgemm

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

// The VNNI micro-kernels (qgemm_amd64.s): rows of A against two 16-column
// panels, for each tap n groups of four bytes of each row from offs[t]
// bytes past a (rows lda apart), sums in int32 accumulators, then acc −
// corr converted to float32 and stored under the column mask (bit j:
// column j of the 32).
//
//go:noescape
func qdot12(taps int, offs *int, n int, a *byte, lda int, b0, b1 *byte, corr *int32, out *float32, ldo int, mask uint32)

//go:noescape
func qdot4(taps int, offs *int, n int, a *byte, lda int, b0, b1 *byte, corr *int32, out *float32, ldo int, mask uint32)

//go:noescape
func qdot1(taps int, offs *int, n int, a *byte, lda int, b0, b1 *byte, corr *int32, out *float32, ldo int, mask uint32)

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

// tileVNNI runs the tile as 12-row, then 4-row, then single-row calls,
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
	i := 0
	for ; i+tileRows <= t.rows; i += tileRows {
		qdot12(taps, offs, t.n, (*byte)(unsafe.Add(a, i*t.lda)), t.lda, b0, b1, corr, (*float32)(unsafe.Add(o, 4*i*t.ldo)), t.ldo, mask)
	}
	for ; i+4 <= t.rows; i += 4 {
		qdot4(taps, offs, t.n, (*byte)(unsafe.Add(a, i*t.lda)), t.lda, b0, b1, corr, (*float32)(unsafe.Add(o, 4*i*t.ldo)), t.ldo, mask)
	}
	for ; i < t.rows; i++ {
		qdot1(taps, offs, t.n, (*byte)(unsafe.Add(a, i*t.lda)), t.lda, b0, b1, corr, (*float32)(unsafe.Add(o, 4*i*t.ldo)), t.ldo, mask)
	}
}
