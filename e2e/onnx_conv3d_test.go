package e2e

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
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
// counts of a symbolic T; the last cases have kernels along T alone
// (kt x 1 x 1, one 2-D convolution over the [T, H·W] plane).
func TestONNXConv3D(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 9))
	for i := range 16 {
		var k, st, dl [3]int64
		var pd [6]int64
		for j := range 3 {
			k[j] = 1 + r.Int64N(3)
			st[j] = 1 + r.Int64N(2)
			dl[j] = 1 + r.Int64N(2)
			pd[j], pd[3+j] = r.Int64N(2), r.Int64N(2)
			if i >= 12 && j > 0 {
				k[j], st[j], pd[j], pd[3+j] = 1, 1, 0, 0
			}
		}
		if i == 15 {
			k[0] = 1 // 1 x 1 x 1
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

// pool3DRef is a direct 3-D max or average pool of x [N, C, D0, D1, D2]
// (ONNX semantics: padding never wins a maximum; an average divides by
// the window's cells inside the padded input with count_include_pad,
// else by those inside the input; ceil_mode windows start inside the
// input or its leading padding).
func pool3DRef(x []float32, xs [5]int64, k, st, dl [3]int64, pd [6]int64, isMax, ceil, includePad bool) ([]float64, [5]int64) {
	var os [5]int64
	os[0], os[1] = xs[0], xs[1]
	for i := range 3 {
		span := dl[i]*(k[i]-1) + 1
		num := xs[2+i] + pd[i] + pd[3+i] - span
		o := num/st[i] + 1
		if ceil {
			o = (num+st[i]-1)/st[i] + 1
			if (o-1)*st[i] >= xs[2+i]+pd[i] {
				o--
			}
		}
		os[2+i] = o
	}
	out := make([]float64, os[0]*os[1]*os[2]*os[3]*os[4])
	at := 0
	for n := range os[0] {
		for c := range os[1] {
			for a := range os[2] {
				for b := range os[3] {
					for e := range os[4] {
						pos := [3]int64{a, b, e}
						best, sum, cells := math.Inf(-1), 0.0, int64(1)
						for i := range 3 {
							// cells of the window inside the padded input
							lo := pos[i]*st[i] - pd[i]
							cnt := int64(0)
							for t := range k[i] {
								if p := lo + t*dl[i]; p < xs[2+i]+pd[3+i] {
									cnt++
								}
							}
							cells *= cnt
						}
						inside := int64(0)
						for t0 := range k[0] {
							i0 := pos[0]*st[0] + t0*dl[0] - pd[0]
							for t1 := range k[1] {
								i1 := pos[1]*st[1] + t1*dl[1] - pd[1]
								for t2 := range k[2] {
									i2 := pos[2]*st[2] + t2*dl[2] - pd[2]
									if i0 < 0 || i0 >= xs[2] || i1 < 0 || i1 >= xs[3] || i2 < 0 || i2 >= xs[4] {
										continue
									}
									v := float64(x[(((n*xs[1]+c)*xs[2]+i0)*xs[3]+i1)*xs[4]+i2])
									best = math.Max(best, v)
									sum += v
									inside++
								}
							}
						}
						switch {
						case isMax:
							out[at] = best
						case includePad:
							out[at] = sum / float64(cells)
						default:
							out[at] = sum / float64(inside)
						}
						at++
					}
				}
			}
		}
	}
	return out, os
}

// TestONNXPool3D: 3-D MaxPool and AveragePool (video models' MaxPool3d
// and AvgPool3d) import as a spatial and a temporal 2-D pool and compute
// the direct pool, over random windows, strides, dilations, padding,
// ceil_mode and count_include_pad, at two frame counts of a symbolic T.
func TestONNXPool3D(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 3))
	for i := range 16 {
		var k, st, dl [3]int64
		var pd [6]int64
		for j := range 3 {
			k[j] = 1 + r.Int64N(3)
			st[j] = 1 + r.Int64N(2)
			if i%4 == 3 {
				dl[j] = 1 + r.Int64N(2)
			} else {
				dl[j] = 1
			}
			pd[j], pd[3+j] = r.Int64N(k[j]), r.Int64N(k[j])
		}
		isMax := i%2 == 0
		ceil := i%3 == 1
		includePad := i%4 == 1
		if !isMax {
			dl = [3]int64{1, 1, 1} // AveragePool's dilations are opset 19
		}
		op := "AveragePool"
		attrs := []*onnxpb.Attr{ais("kernel_shape", k[:]...), ais("strides", st[:]...), ais("pads", pd[:]...), ai("ceil_mode", b2i(ceil))}
		if isMax {
			op = "MaxPool"
			attrs = append(attrs, ais("dilations", dl[:]...))
		} else {
			attrs = append(attrs, ai("count_include_pad", b2i(includePad)))
		}
		// ceil_mode over a symbolic T is taken where no window can start
		// in the trailing padding; elsewhere T is static.
		symbolic := !ceil || st[0] <= dl[0]*(k[0]-1)+1-pd[3]
		for _, frames := range []int64{5, 8} {
			gr := &graph{outs: []string{"y"}}
			if symbolic {
				gr.input("x", 2, 3, "t", 5, 6)
			} else {
				gr.input("x", 2, 3, int(frames), 5, 6)
			}
			gr.node(op, []string{"x"}, []string{"y"}, attrs...)
			xs := [5]int64{2, 3, frames, 5, 6}
			x := seq(int(xs[0]*xs[1]*xs[2]*xs[3]*xs[4]), 1)
			want, os := pool3DRef(x, xs, k, st, dl, pd, isMax, ceil, includePad)
			bind := specialize.Binding{}
			if symbolic {
				bind["t"] = frames
			}
			out, _ := runONNX(t, gr, bind, map[string]*tensor.Tensor{"x": tensor.FromF32(xs[:], x)})
			what := fmt.Sprintf("%s 3-D case %d k=%v s=%v d=%v p=%v ceil=%v include_pad=%v T=%d", op, i, k, st, dl, pd, ceil, includePad, frames)
			shapeIs(t, what, out[0], int(os[0]), int(os[1]), int(os[2]), int(os[3]), int(os[4]))
			near(t, what, out[0].F32(), want)
		}
	}
}
