// Package conv holds the 2-D convolutions: Conv2D as implicit GEMM (its
// im2col matrix packed straight from the input through gemm.BSource,
// stride-2 panels from column phases or built in registers), the direct
// and depthwise 3×3 paths (NCHW rows, in place, small planes), and
// DepthwiseNHWC with its channels-last layout changes (ToNHWC, ToNCHW).
package conv
