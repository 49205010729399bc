// Package attention is the fused scaled dot-product attention: blocks of
// query rows against key blocks with an online softmax, the scores and the
// weighted values computed by package gemm.
package attention
