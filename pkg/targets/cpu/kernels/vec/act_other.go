//go:build !amd64 || purego

package vec

// geluVec applies gelu32 in place.
func geluVec(x []float32) {
	for i, v := range x {
		x[i] = gelu32(v)
	}
}
