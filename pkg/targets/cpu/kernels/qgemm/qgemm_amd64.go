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

// The VNNI micro-kernels (qgemm_amd64.s): rows of A (g groups of four
// bytes each, rows lda apart) against two 16-column panels, sums in int32
// accumulators, then acc − zero·sums converted to float32 and stored
// under the column mask (bit j: column j of the 32).
//
//go:noescape
func qdot12(n int, a *byte, lda int, b0, b1 *byte, sums *byte, zero int32, out *float32, ldo int, mask uint32)

//go:noescape
func qdot4(n int, a *byte, lda int, b0, b1 *byte, sums *byte, zero int32, out *float32, ldo int, mask uint32)

//go:noescape
func qdot1(n int, a *byte, lda int, b0, b1 *byte, sums *byte, zero int32, out *float32, ldo int, mask uint32)

func kernel() func(tile) {
	if vnni {
		return tileVNNI
	}
	return tileGo
}

func kernels() map[string]func(tile) {
	ks := map[string]func(tile){"go": tileGo}
	if vnni {
		ks["vnni"] = tileVNNI
	}
	return ks
}

// tileVNNI runs the tile as 12-row, then 4-row, then single-row calls,
// after checking every byte they read and write lies in the slices.
func tileVNNI(t tile) {
	if t.rows <= 0 || t.g <= 0 {
		tileGo(t)
		return
	}
	_ = t.a[(t.rows-1)*t.lda+t.g*groupK-1]
	_ = t.b0[t.g*groupB-1]
	_ = t.b1[t.g*groupB-1]
	_ = t.sums[2*panelCols*4-1]
	_ = t.out[(t.rows-1)*t.ldo+t.cols-1]
	mask := uint32(1)<<t.cols - 1
	if t.cols == 32 {
		mask = ^uint32(0)
	}
	a, b0, b1, s := unsafe.SliceData(t.a), unsafe.SliceData(t.b0), unsafe.SliceData(t.b1), unsafe.SliceData(t.sums)
	o := unsafe.SliceData(t.out)
	i := 0
	for ; i+tileRows <= t.rows; i += tileRows {
		qdot12(t.g, (*byte)(unsafe.Add(unsafe.Pointer(a), i*t.lda)), t.lda, b0, b1, s, t.zero, (*float32)(unsafe.Add(unsafe.Pointer(o), 4*i*t.ldo)), t.ldo, mask)
	}
	for ; i+4 <= t.rows; i += 4 {
		qdot4(t.g, (*byte)(unsafe.Add(unsafe.Pointer(a), i*t.lda)), t.lda, b0, b1, s, t.zero, (*float32)(unsafe.Add(unsafe.Pointer(o), 4*i*t.ldo)), t.ldo, mask)
	}
	for ; i < t.rows; i++ {
		qdot1(t.g, (*byte)(unsafe.Add(unsafe.Pointer(a), i*t.lda)), t.lda, b0, b1, s, t.zero, (*float32)(unsafe.Add(unsafe.Pointer(o), 4*i*t.ldo)), t.ldo, mask)
	}
}
