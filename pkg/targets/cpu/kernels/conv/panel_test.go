package conv

import (
	"fmt"
	"testing"
)

// TestCopyRows16 checks the panel-row copy against plain copies, and that
// nothing between or after the runs is written.
func TestCopyRows16(t *testing.T) {
	r := newRand(32)
	for _, n := range []int{1, 2, 7} {
		src := randSlice(r, n*16)
		got, want := poison(n*19+4), poison(n*19+4)
		copyRows16(got, 19, src, n)
		copyRows16Go(want, 19, src, n)
		checkEqual(t, fmt.Sprintf("copyRows16 n=%d", n), got, want)
	}
}

// TestCopyRows checks the strided row copy against plain copies, and that
// nothing between or after the rows is written.
func TestCopyRows(t *testing.T) {
	r := newRand(33)
	for _, rows := range []int{1, 2, 5} {
		for _, n := range []int{1, 7, 8, 9, 14, 31} {
			src := randSlice(r, rows*(n+5))
			got, want := poison(rows*(n+3)+4), poison(rows*(n+3)+4)
			copyRows(got, n+3, src, n+5, rows, n)
			copyRowsGo(want, n+3, src, n+5, rows, n)
			checkEqual(t, fmt.Sprintf("copyRows %dx%d", rows, n), got, want)
		}
	}
}
