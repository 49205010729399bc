package gemm

import (
	"fmt"
	"strings"
	"testing"
)

// TestContractPanics: a size that breaks a kernel's contract panics with a
// message naming the kernel, before anything is read out of bounds.
func TestContractPanics(t *testing.T) {
	f := make([]float32, 8)
	cases := []struct {
		kernel string
		call   func()
	}{
		{"Gemm", func() { gemmDense(nil, 3, 3, 3, f, 3, f, 3, f, 3, Epilogue{}) }},
		{"Gemm", func() { gemmDense(nil, 2, 2, 2, f, 1, f, 2, f, 2, Epilogue{}) }},
		{"Gemm", func() { gemmDense(nil, 2, 2, 2, f, 2, f, 2, f, 2, Epilogue{Bias: f[:1]}) }},
		{"Gemm", func() { gemmDense(nil, 2, 2, 2, f, 2, f, 2, f, 2, Epilogue{Residual: f[:3]}) }},
		{"BatchMatMul", func() { BatchMatMul(nil, f, f, []int{2}, f, []int{2, 2}, Epilogue{}) }},
		{"BatchMatMul", func() { BatchMatMul(nil, f, f, []int{2, 2}, f, []int{3, 2}, Epilogue{}) }},
		{"BatchMatMul", func() { BatchMatMul(nil, f, f, []int{2, 1, 2}, f, []int{3, 2, 1}, Epilogue{}) }},
		{"BatchMatMul", func() { BatchMatMul(nil, f, f, []int{4, 2}, f, []int{2, 4}, Epilogue{}) }},
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
