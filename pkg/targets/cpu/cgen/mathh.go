package cgen

import _ "embed"

// mathHeader is rlx_math.h: the freestanding, branch-free float32 math
// (exp, log, tanh, sigmoid, silu, erf, gelu, gelu_tanh, sin, cos,
// softsign, pow, floor mod) that generated kernels include, so a fused
// elementwise loop vectorizes and links with no libc or libm. Its accuracy
// against Go's float64 math is in its opening comment, measured by
// mathh_test.go.
//
//go:embed rlx_math.h
var mathHeader string
