package kernels

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/attention"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/conv"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/gemm"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/data"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/norm"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/reduce"
)

// TestContractPanics: a size that breaks a kernel's contract panics with a
// message naming the kernel, before anything is read out of bounds.
func TestContractPanics(t *testing.T) {
	f := make([]float32, 8)
	cases := []struct {
		kernel string
		call   func()
	}{
		{"Conv2D", func() {
			conv.Conv2D(nil, f, f, f, conv.ConvGeom{N: 1, C: 3, H: 1, W: 1, O: 2, KH: 1, KW: 1, Groups: 2, OH: 1, OW: 1}, gemm.Epilogue{})
		}},
		{"Conv2D", func() {
			conv.Conv2D(nil, f, f, f, conv.ConvGeom{N: 1, C: 3, H: 3, W: 3, O: 1, KH: 1, KW: 1, OH: 3, OW: 3}, gemm.Epilogue{})
		}},
		{"MaxPool2D", func() {
			reduce.MaxPool2D(nil, f, f, reduce.PoolGeom{N: 1, C: 1, H: 3, W: 3, KH: 1, KW: 1, OH: 3, OW: 3})
		}},
		{"AvgPool2D", func() { reduce.AvgPool2D(nil, f, f, reduce.PoolGeom{N: 1, C: -1}, false) }},
		{"Softmax", func() { norm.Softmax(nil, f, f, 3, 3, 1, false) }},
		{"LayerNorm", func() { norm.LayerNorm(nil, f, f, nil, f[:2], 2, 4, 1e-5) }},
		{"AddLayerNorm", func() { norm.AddLayerNorm(nil, f, nil, f, f[:4], nil, nil, 2, 4, 1e-5) }},
		{"RMSNorm", func() { norm.RMSNorm(nil, f, f, nil, -1, 4, 1e-5) }},
		{"Attention", func() {
			attention.Attention(nil, f, f, f, f, nil, attention.AttnGeom{Batch: []int{2}, QStrides: []int{4}, KStrides: []int{4}, VStrides: []int{4}, Sq: 1, Sk: 3, D: 2, Dv: 2})
		}},
		{"Attention", func() {
			attention.Attention(nil, f, f, f, f, nil, attention.AttnGeom{Batch: []int{2}, QStrides: []int{4}, KStrides: []int{4}, Sq: 1, Sk: 1, D: 1, Dv: 1})
		}},
		{"Attention", func() {
			attention.Attention(nil, f, f, f, f, f, attention.AttnGeom{Sq: 2, Sk: 2, D: 2, Dv: 2, MaskRowStride: 8, MaskColStride: 1})
		}},
		{"Reduce", func() { reduce.Reduce(nil, f, f, []int{2, 4}, []int{1, 0}, reduce.ReduceSum) }},
		{"Reduce", func() { reduce.Reduce(nil, f, f, []int{3, 4}, []int{1}, reduce.ReduceSum) }},
		{"ArgReduce", func() { reduce.ArgReduce(nil, make([]int64, 2), f, 3, 3, 1, true) }},
		{"Copy", func() { data.Copy(nil, f, 0, []int{1}, f, 0, []int{1}, []int{-1}) }},
	}
	for i, c := range cases {
		func() {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(fmt.Sprint(r), "kernels: "+c.kernel) {
					t.Errorf("case %d: recovered %v, want a %s panic", i, r, c.kernel)
				}
			}()
			c.call()
		}()
	}
}
