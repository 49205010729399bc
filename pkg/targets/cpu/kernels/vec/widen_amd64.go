//go:build amd64 && !purego

package vec

//go:noescape
func addWidenAVX(acc *float64, xs *float32, n, rows, stride int)

// AddWiden computes acc[j] += float64(xs[r·stride+j]) for each of rows rows
// in turn, over len(acc) columns: each sum is rounded in float64 in the same
// order as in the Go twin, so the two agree bit for bit.
func AddWiden(acc []float64, xs []float32, rows, stride int) {
	if len(acc) == 0 || rows == 0 {
		return
	}
	if !AVX2FMA {
		addWidenGo(acc, xs, rows, stride)
		return
	}
	_ = xs[(rows-1)*stride+len(acc)-1]
	addWidenAVX(&acc[0], &xs[0], len(acc), rows, stride)
}
