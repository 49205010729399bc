package vec

// addWidenGo is AddWiden's portable twin.
func addWidenGo(acc []float64, xs []float32, rows, stride int) {
	for r := 0; r < rows; r++ {
		for j, v := range xs[r*stride : r*stride+len(acc)] {
			acc[j] += float64(v)
		}
	}
}
