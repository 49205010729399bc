// Package vec holds the CPU kernels' SIMD row primitives: axpy, the exp
// and softmax row passes, the activations (scalar and in place), widening
// sums and the 8×8 transpose, each an AVX2+FMA assembly routine with a
// pure-Go twin (the purego build tag and CPUs without AVX2 run the twins).
// cpu_amd64.go is the one place that asks the CPU which ISA paths are on
// (AVX2FMA); every kernel package reads it from here.
package vec
