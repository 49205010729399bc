package cgen

import "github.com/rlx-project/rlx/pkg/lir"

// conv2d generates the function of a 2-D convolution step; not yet.
func conv2d(prog *lir.Program, op *lir.Conv2D, opts Options) (function, bool) {
	return function{}, false
}
