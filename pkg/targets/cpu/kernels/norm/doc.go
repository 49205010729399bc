// Package norm holds the row normalizations: Softmax (and log-softmax),
// LayerNorm, AddLayerNorm (a residual add fused in) and RMSNorm, summed in
// float64, with AVX2 row passes and pure-Go twins.
package norm
