package data

import (
	"fmt"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
)

// Copy copies an N-d strided view: element idx of shape goes from
// src[srcOff + Σ idx[d]·srcStrides[d]] to dst[dstOff + Σ idx[d]·dstStrides[d]].
// Strides may be negative (reversed views) or 0 (broadcast; a 0 destination
// stride leaves the last write). This one kernel serves transpose, slice,
// expand, concat (copy into a window of dst) and pad (copy into the
// interior). An empty shape copies one element. Every reachable index is
// bounds-checked up front. dst and src must not overlap unless they are the
// same view.
func Copy[T any](dst []T, dstOff int, dstStrides []int, src []T, srcOff int, srcStrides []int, shape []int) {
	r := len(shape)
	if len(dstStrides) != r || len(srcStrides) != r {
		panic(fmt.Sprintf("kernels: Copy: shape %v with strides %v and %v", shape, dstStrides, srcStrides))
	}
	for _, d := range shape {
		if d < 0 {
			panic(fmt.Sprintf("kernels: Copy: bad shape %v", shape))
		}
		if d == 0 {
			return
		}
	}
	checkView("Copy dst", len(dst), dstOff, dstStrides, shape)
	checkView("Copy src", len(src), srcOff, srcStrides, shape)
	// Coalesce: drop 1s, merge a dim into the next when both views step
	// through it contiguously.
	var sh, ds, ss []int
	for i := 0; i < r; i++ {
		if shape[i] == 1 {
			continue
		}
		if n := len(sh); n > 0 && ds[n-1] == dstStrides[i]*shape[i] && ss[n-1] == srcStrides[i]*shape[i] {
			sh[n-1] *= shape[i]
			ds[n-1], ss[n-1] = dstStrides[i], srcStrides[i]
			continue
		}
		sh, ds, ss = append(sh, shape[i]), append(ds, dstStrides[i]), append(ss, srcStrides[i])
	}
	if len(sh) == 0 {
		dst[dstOff] = src[srcOff]
		return
	}
	n := len(sh) - 1
	inner, di, si := sh[n], ds[n], ss[n]
	outer := prod(sh[:n])
	idx := make([]int, n)
	do, so := dstOff, srcOff
	for o := 0; o < outer; o++ {
		switch {
		case di == 1 && si == 1:
			copy(dst[do:do+inner], src[so:so+inner])
		case si == 0:
			v := src[so]
			for j, d := 0, do; j < inner; j, d = j+1, d+di {
				dst[d] = v
			}
		default:
			for j, d, s := 0, do, so; j < inner; j, d, s = j+1, d+di, s+si {
				dst[d] = src[s]
			}
		}
		for d := n - 1; d >= 0; d-- {
			idx[d]++
			do += ds[d]
			so += ss[d]
			if idx[d] < sh[d] {
				break
			}
			do -= idx[d] * ds[d]
			so -= idx[d] * ss[d]
			idx[d] = 0
		}
	}
}

// checkView panics unless every index of the view lies in [0, n).
func checkView(what string, n, off int, strides, shape []int) {
	lo, hi := off, off
	for d, st := range strides {
		if st < 0 {
			lo += (shape[d] - 1) * st
		} else {
			hi += (shape[d] - 1) * st
		}
	}
	if lo < 0 || hi >= n {
		panic(fmt.Sprintf("kernels: %s: view offset %d strides %v shape %v reaches [%d, %d] of %d elements",
			what, off, strides, shape, lo, hi, n))
	}
}

// Gather writes out [outer, len(idx), inner] with out[o, i, :] = x[o,
// idx[i], :] for x [outer, axisLen, inner]. Negative indices count from the
// end. Every index is checked before anything is written: one outside
// [-axisLen, axisLen) returns an error naming it and the bound.
func Gather[T any](p *parallel.Pool, out, x []T, outer, axisLen, inner int, idx []int64) error {
	if outer < 0 || axisLen < 0 || inner < 0 || len(x) < outer*axisLen*inner || len(out) < outer*len(idx)*inner {
		return fmt.Errorf("kernels: Gather: slices of %d, %d elements for [%d, %d, %d] and %d indices",
			len(out), len(x), outer, axisLen, inner, len(idx))
	}
	for i, v := range idx {
		if v < -int64(axisLen) || v >= int64(axisLen) {
			return fmt.Errorf("kernels: Gather: index %d (position %d) out of range [-%d, %d)", v, i, axisLen, axisLen)
		}
	}
	ni := len(idx)
	if outer*ni*inner == 0 {
		return nil
	}
	p.For(outer*ni, max(1, tuning.GrainWork/inner), func(lo, hi int) {
		for t := lo; t < hi; t++ {
			o, i := t/ni, t%ni
			j := int(idx[i])
			if j < 0 {
				j += axisLen
			}
			s := (o*axisLen + j) * inner
			copy(out[t*inner:(t+1)*inner], x[s:s+inner])
		}
	})
	return nil
}

func prod(s []int) int {
	n := 1
	for _, v := range s {
		n *= v
	}
	return n
}
