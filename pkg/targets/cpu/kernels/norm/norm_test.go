package norm

import (
	"fmt"
	"math"
	"testing"
)

func refSoftmax(x []float32, outer, axis, inner int, log bool) []float64 {
	want := make([]float64, len(x))
	for o := 0; o < outer; o++ {
		for j := 0; j < inner; j++ {
			at := func(a int) int { return (o*axis+a)*inner + j }
			m := math.Inf(-1)
			for a := 0; a < axis; a++ {
				m = math.Max(m, float64(x[at(a)]))
			}
			var s float64
			for a := 0; a < axis; a++ {
				s += math.Exp(float64(x[at(a)]) - m)
			}
			for a := 0; a < axis; a++ {
				if log {
					want[at(a)] = float64(x[at(a)]) - m - math.Log(s)
				} else {
					want[at(a)] = math.Exp(float64(x[at(a)])-m) / s
				}
			}
		}
	}
	return want
}

func TestSoftmax(t *testing.T) {
	ps := pools(t)
	shapes := [][3]int{{1, 1, 1}, {3, 1, 5}, {1, 17, 1}, {5, 63, 1}, {2, 129, 1}, {2, 7, 3}, {3, 65, 17},
		{1, 5, 300}, {4, 1000, 1}, {0, 3, 4}, {2, 3, 0}}
	for i, s := range shapes {
		for _, log := range []bool{false, true} {
			r := newRand(uint64(800 + i))
			x := randSlice(r, s[0]*s[1]*s[2])
			for j := range x {
				x[j] *= 30 // wide range: stability matters
			}
			if len(x) > 4 {
				x[1] = float32(math.Inf(-1)) // a masked entry
			}
			want := refSoftmax(x, s[0], s[1], s[2], log)
			for _, p := range ps {
				tag := fmt.Sprintf("Softmax %v log=%v threads=%d", s, log, p.Threads())
				out := poison(len(x))
				Softmax(p, out, x, s[0], s[1], s[2], log)
				// exp and the float64 sum are accurate to a few 1e-8; log
				// outputs are compared with an absolute floor because a
				// log-probability near 0 has no relative precision.
				if log {
					checkClose(t, tag, out, want, nil, 1e-6, 1e-6)
				} else {
					checkClose(t, tag, out, want, nil, 1e-5, 1e-9)
				}
				in := append([]float32(nil), x...)
				Softmax(p, in, in, s[0], s[1], s[2], log)
				checkEqual(t, tag+" in place", in, out)
			}
		}
	}
}

func TestSoftmaxSpecial(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	for _, log := range []bool{false, true} {
		for _, inner := range []int{1, 2} {
			// Rows (or columns): huge values, all -Inf, a NaN, a +Inf.
			rows := [][]float32{{1e30, 1e30 - 1e24, -1e30}, {-inf, -inf, -inf}, {1, nan, 2}, {1, inf, 2}}
			for _, row := range rows {
				x := make([]float32, 3*inner)
				for a, v := range row {
					for j := 0; j < inner; j++ {
						x[a*inner+j] = v
					}
				}
				out := make([]float32, len(x))
				Softmax(nil, out, x, 1, 3, inner, log)
				want := refSoftmax(x, 1, 3, inner, log)
				checkClose(t, fmt.Sprintf("Softmax %v inner=%d log=%v", row, inner, log), out, want, nil, 1e-6, 1e-6)
			}
		}
	}
}

func refLayerNorm(x, scale, bias []float32, rows, cols int, eps float64) []float64 {
	want := make([]float64, rows*cols)
	for i := 0; i < rows; i++ {
		var m, v float64
		for _, e := range x[i*cols : (i+1)*cols] {
			m += float64(e)
		}
		m /= float64(cols)
		for _, e := range x[i*cols : (i+1)*cols] {
			v += (float64(e) - m) * (float64(e) - m)
		}
		v /= float64(cols)
		for j := 0; j < cols; j++ {
			y := (float64(x[i*cols+j]) - m) / math.Sqrt(v+eps)
			if scale != nil {
				y *= float64(scale[j])
			}
			if bias != nil {
				y += float64(bias[j])
			}
			want[i*cols+j] = y
		}
	}
	return want
}

func TestLayerNorm(t *testing.T) {
	ps := pools(t)
	for _, rc := range [][2]int{{1, 1}, {3, 5}, {17, 63}, {5, 768}, {129, 17}, {0, 4}, {3, 0}} {
		rows, cols := rc[0], rc[1]
		for _, affine := range []bool{false, true} {
			r := newRand(uint64(rows*1000 + cols))
			x := randSlice(r, rows*cols)
			for i := range x {
				x[i] = x[i]*4 + 100 // a large mean: a one-pass variance would lose digits
			}
			var scale, bias []float32
			if affine {
				scale, bias = randSlice(r, cols), randSlice(r, cols)
			}
			want := refLayerNorm(x, scale, bias, rows, cols, 1e-5)
			for _, p := range ps {
				tag := fmt.Sprintf("LayerNorm %d×%d affine=%v threads=%d", rows, cols, affine, p.Threads())
				out := poison(rows * cols)
				LayerNorm(p, out, x, scale, bias, rows, cols, 1e-5)
				// The reference reads the same float32 inputs in float64,
				// so only the kernel's rounding of O(1) outputs shows.
				checkClose(t, tag, out, want, nil, 1e-5, 1e-5)
				in := append([]float32(nil), x...)
				LayerNorm(p, in, in, scale, bias, rows, cols, 1e-5)
				checkEqual(t, tag+" in place", in, out)
			}
		}
	}
}

func TestAddLayerNorm(t *testing.T) {
	ps := pools(t)
	for _, rc := range [][2]int{{1, 1}, {3, 5}, {17, 63}, {4, 768}} {
		rows, cols := rc[0], rc[1]
		r := newRand(uint64(rows*77 + cols))
		x, res := randSlice(r, rows*cols), randSlice(r, rows*cols)
		scale, bias := randSlice(r, cols), randSlice(r, cols)
		s := make([]float32, rows*cols)
		for i := range s {
			s[i] = x[i] + res[i]
		}
		want := refLayerNorm(s, scale, bias, rows, cols, 1e-6)
		for _, p := range ps {
			tag := fmt.Sprintf("AddLayerNorm %d×%d threads=%d", rows, cols, p.Threads())
			out, sum := poison(rows*cols), poison(rows*cols)
			AddLayerNorm(p, out, sum, x, res, scale, bias, rows, cols, 1e-6)
			checkClose(t, tag, out, want, nil, 1e-5, 1e-5)
			checkEqual(t, tag+" sum", sum, s)
			out2 := poison(rows * cols)
			AddLayerNorm(p, out2, nil, x, res, scale, bias, rows, cols, 1e-6)
			checkEqual(t, tag+" without sum", out2, out)
			// In place: the sum over x, the output over r.
			xi, ri := append([]float32(nil), x...), append([]float32(nil), res...)
			AddLayerNorm(p, ri, xi, xi, ri, scale, bias, rows, cols, 1e-6)
			checkEqual(t, tag+" in place out", ri, out)
			checkEqual(t, tag+" in place sum", xi, s)
		}
	}
}

func TestRMSNorm(t *testing.T) {
	ps := pools(t)
	for _, rc := range [][2]int{{1, 1}, {3, 5}, {17, 63}, {5, 4096}, {0, 3}} {
		rows, cols := rc[0], rc[1]
		for _, withScale := range []bool{false, true} {
			r := newRand(uint64(rows*31 + cols))
			x := randSlice(r, rows*cols)
			var scale []float32
			if withScale {
				scale = randSlice(r, cols)
			}
			want := make([]float64, rows*cols)
			for i := 0; i < rows; i++ {
				var ss float64
				for _, v := range x[i*cols : (i+1)*cols] {
					ss += float64(v) * float64(v)
				}
				rms := math.Sqrt(ss/float64(cols) + 1e-6)
				for j := 0; j < cols; j++ {
					want[i*cols+j] = float64(x[i*cols+j]) / rms
					if scale != nil {
						want[i*cols+j] *= float64(scale[j])
					}
				}
			}
			for _, p := range ps {
				tag := fmt.Sprintf("RMSNorm %d×%d scale=%v threads=%d", rows, cols, withScale, p.Threads())
				out := poison(rows * cols)
				RMSNorm(p, out, x, scale, rows, cols, 1e-6)
				checkClose(t, tag, out, want, nil, 1e-6, 1e-7)
			}
		}
	}
}

// TestLayerNormRowTwins checks the vector row kernel against its Go twin,
// bit for bit: lengths around the 4-lane blocks, with and without scale and
// bias, large offsets (cancellation), and NaN and Inf passing through.
func TestLayerNormRowTwins(t *testing.T) {
	r := newRand(7)
	for n := 1; n <= 70; n++ {
		for _, c := range []struct {
			affine bool
			offset float32
			bad    float32
		}{{true, 0, 0}, {false, 0, 0}, {true, 1e4, 0}, {true, 0, float32(math.NaN())}, {true, 0, float32(math.Inf(1))}} {
			x := randSlice(r, n)
			for i := range x {
				x[i] += c.offset
			}
			if c.bad != 0 {
				x[n/2] = c.bad
			}
			var scale, bias []float32
			if c.affine {
				scale, bias = randSlice(r, n), randSlice(r, n)
			}
			got, want := make([]float32, n), make([]float32, n)
			layerNormRow(got, x, scale, bias, 1e-5)
			layerNormRowGo(want, x, scale, bias, 1e-5)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("n=%d %+v: element %d = %g, Go twin %g", n, c, i, got[i], want[i])
				}
			}
		}
	}
}

// TestRMSNormRowTwins checks the vector RMSNorm row against its Go twin,
// bit for bit: lengths around the 4-lane blocks, with and without scale,
// and NaN and Inf passing through.
func TestRMSNormRowTwins(t *testing.T) {
	r := newRand(8)
	for n := 1; n <= 70; n++ {
		for _, c := range []struct {
			scaled bool
			bad    float32
		}{{true, 0}, {false, 0}, {true, float32(math.NaN())}, {true, float32(math.Inf(-1))}} {
			x := randSlice(r, n)
			if c.bad != 0 {
				x[n/2] = c.bad
			}
			var scale []float32
			if c.scaled {
				scale = randSlice(r, n)
			}
			got, want := make([]float32, n), make([]float32, n)
			rmsNormRow(got, x, scale, 1e-6)
			rmsNormRowGo(want, x, scale, 1e-6)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("n=%d %+v: element %d = %g, Go twin %g", n, c, i, got[i], want[i])
				}
			}
		}
	}
}

// BenchmarkRMSNorm normalizes 128 rows of 4096 (a LLaMA-7B prefill's
// hidden states), scaled.
func BenchmarkRMSNorm(b *testing.B) {
	r := newRand(1)
	const rows, cols = 128, 4096
	x, scale := randSlice(r, rows*cols), randSlice(r, cols)
	out := make([]float32, rows*cols)
	b.SetBytes(2 * rows * cols * 4)
	for b.Loop() {
		RMSNorm(nil, out, x, scale, rows, cols, 1e-6)
	}
}

func BenchmarkLayerNorm(b *testing.B) {
	r := newRand(1)
	const rows, cols = 128, 256
	x, scale, bias := randSlice(r, rows*cols), randSlice(r, cols), randSlice(r, cols)
	out := make([]float32, rows*cols)
	for b.Loop() {
		LayerNorm(nil, out, x, scale, bias, rows, cols, 1e-5)
	}
}

// BenchmarkLayerNormPlanes normalizes 64 rows of 112x112 without scale
// and bias: an instance norm's layernorm (its affine is per channel).
func BenchmarkLayerNormPlanes(b *testing.B) {
	r := newRand(1)
	const rows, cols = 64, 112 * 112
	x := randSlice(r, rows*cols)
	out := make([]float32, rows*cols)
	for b.Loop() {
		LayerNorm(nil, out, x, nil, nil, rows, cols, 1e-5)
	}
}

// BenchmarkAddLayerNorm is BenchmarkLayerNorm with the residual add before
// it and the sum kept (the encoder's add_layernorm).
func BenchmarkAddLayerNorm(b *testing.B) {
	r := newRand(1)
	const rows, cols = 128, 256
	x, res, scale, bias := randSlice(r, rows*cols), randSlice(r, rows*cols), randSlice(r, cols), randSlice(r, cols)
	out, sum := make([]float32, rows*cols), make([]float32, rows*cols)
	for b.Loop() {
		AddLayerNorm(nil, out, sum, x, res, scale, bias, rows, cols, 1e-5)
	}
}
