//go:build !amd64 || purego

package vec

func ExpSub32(x []float32, m, scale float32) float64 { return expSub32Go(x, m, scale) }

func MaxNaN32(x []float32) float32 { return maxNaN32Go(x) }
