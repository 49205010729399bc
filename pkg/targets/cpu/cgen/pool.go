package cgen

import "github.com/rlx-project/rlx/pkg/lir"

// pool2d generates the function of a 2-D pooling step; not yet.
func pool2d(prog *lir.Program, op *lir.Pool2D, opts Options) (function, bool) {
	return function{}, false
}
