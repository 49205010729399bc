//go:build !amd64 || purego

package vec

// AddWiden computes acc[j] += float64(xs[r·stride+j]) for each of rows rows
// in turn, over len(acc) columns.
func AddWiden(acc []float64, xs []float32, rows, stride int) {
	addWidenGo(acc, xs, rows, stride)
}
