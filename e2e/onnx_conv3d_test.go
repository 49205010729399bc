package e2e

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// conv3DRef is a direct 3-D convolution of x [N, C, D0, D1, D2] by w [O,
// C/g, K0, K1, K2], plus bias (nil: none), in float64.
func conv3DRef(x []float32, xs [5]int64, w []float32, ws [5]int64, bias []float32, st, dl [3]int64, pd [6]int64, g int64) ([]float64, [5]int64) {
	var os [5]int64
	os[0], os[1] = xs[0], ws[0]
	for i := range 3 {
		os[2+i] = (xs[2+i]+pd[i]+pd[3+i]-dl[i]*(ws[2+i]-1)-1)/st[i] + 1
	}
	out := make([]float64, os[0]*os[1]*os[2]*os[3]*os[4])
	cpg, opg := xs[1]/g, ws[0]/g
	at := 0
	for n := range os[0] {
		for o := range os[1] {
			grp := o / opg
			for a := range os[2] {
				for b := range os[3] {
					for c := range os[4] {
						s := 0.0
						if bias != nil {
							s = float64(bias[o])
						}
						for ci := range cpg {
							for k0 := range ws[2] {
								i0 := a*st[0] + k0*dl[0] - pd[0]
								for k1 := range ws[3] {
									i1 := b*st[1] + k1*dl[1] - pd[1]
									for k2 := range ws[4] {
										i2 := c*st[2] + k2*dl[2] - pd[2]
										if i0 < 0 || i0 >= xs[2] || i1 < 0 || i1 >= xs[3] || i2 < 0 || i2 >= xs[4] {
											continue
										}
										xv := x[(((n*xs[1]+grp*cpg+ci)*xs[2]+i0)*xs[3]+i1)*xs[4]+i2]
										wv := w[(((o*cpg+ci)*ws[2]+k0)*ws[3]+k1)*ws[4]+k2]
										s += float64(xv) * float64(wv)
									}
								}
							}
						}
						out[at] = s
						at++
					}
				}
			}
		}
	}
	return out, os
}

// TestONNXConv3D: a 3-D Conv (a video model's) imports as 2-D
// convolutions over the frames and computes the direct convolution, for
// random kernels, strides, dilations, padding and groups, at two frame
// counts of a symbolic T.
func TestONNXConv3D(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 9))
	for i := range 12 {
		var k, st, dl [3]int64
		var pd [6]int64
		for j := range 3 {
			k[j] = 1 + r.Int64N(3)
			st[j] = 1 + r.Int64N(2)
			dl[j] = 1 + r.Int64N(2)
			pd[j], pd[3+j] = r.Int64N(2), r.Int64N(2)
		}
		g := int64(1)
		if i%3 == 2 {
			g = 2
		}
		c, o := int64(4), int64(6)
		ws := [5]int64{o, c / g, k[0], k[1], k[2]}
		wv := seq(int(ws[0]*ws[1]*ws[2]*ws[3]*ws[4]), 0.5)
		bias := seq(int(o), 1)
		gr := &graph{outs: []string{"y"}}
		gr.input("x", 2, int(c), "t", 5, 6)
		gr.init("w", ws[:], wv)
		ins := []string{"x", "w"}
		if i%2 == 0 {
			gr.init("b", []int64{o}, bias)
			ins = append(ins, "b")
		} else {
			bias = nil
		}
		gr.node("Conv", ins, []string{"y"}, ais("kernel_shape", k[:]...), ais("strides", st[:]...), ais("dilations", dl[:]...),
			ais("pads", pd[:]...), ai("group", g))
		for _, frames := range []int64{4, 7} {
			if frames+pd[0]+pd[3] < dl[0]*(k[0]-1)+1 {
				continue
			}
			xs := [5]int64{2, c, frames, 5, 6}
			x := seq(int(xs[0]*xs[1]*xs[2]*xs[3]*xs[4]), 1)
			want, os := conv3DRef(x, xs, wv, ws, bias, st, dl, pd, g)
			out, _ := runONNX(t, gr, specialize.Binding{"t": frames}, map[string]*tensor.Tensor{"x": tensor.FromF32(xs[:], x)})
			shapeIs(t, "Conv3D", out[0], int(os[0]), int(os[1]), int(os[2]), int(os[3]), int(os[4]))
			near(t, fmt.Sprintf("Conv3D case %d k=%v s=%v d=%v p=%v g=%d T=%d", i, k, st, dl, pd, g, frames), out[0].F32(), want)
		}
	}
}
