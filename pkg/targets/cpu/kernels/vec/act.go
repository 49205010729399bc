package vec

// GeluInPlace applies Gelu32 to every element, vectorized where the CPU
// allows (within 3 float32 ulps of the exact function).
func GeluInPlace(x []float32) { geluVec(x) }
