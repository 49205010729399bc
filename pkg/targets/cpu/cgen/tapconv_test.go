package cgen

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/parallel"
	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// tapSweep is the geometries the tap-major tests compile: DeepLabV3's
// atrous pyramid (dilation 12 over 14x14, every kernel row and column
// live somewhere, most positions the centre tap alone) and its small
// twins, output channels that fill no tile (5, 17, 80: AVX-512's last
// item one vector), strides 1 to 3, uneven padding, a column that reads
// only padding, 1x1 and 1xK kernels (through a padded copy of the row
// where rowTilesOf has it; with rows of padding alone, at stride 2), batch
// 2, every epilogue, and inputs that AVX2 takes in channel blocks.
func tapSweep() []convCase {
	type c = convCase
	return []c{
		{geom(1, 96, 14, 14, 64, 3, 3, 1, 1, 12, 12, 12, 12, 12, 12), epiBiasRelu},
		{geom(2, 24, 14, 14, 80, 3, 3, 1, 1, 12, 12, 12, 12, 12, 12), epiBiasResRelu},
		{geom(1, 16, 9, 11, 17, 3, 3, 1, 1, 6, 6, 6, 6, 6, 6), epiBiasRes},
		{geom(1, 8, 7, 7, 5, 3, 3, 1, 1, 4, 4, 4, 4, 5, 5), epiLeaky},
		{geom(2, 32, 10, 13, 48, 3, 3, 2, 2, 3, 3, 3, 3, 4, 4), epiClamp},
		{geom(1, 16, 12, 12, 33, 3, 3, 3, 3, 1, 0, 2, 1, 1, 1), epiBias},
		{geom(1, 20, 6, 8, 16, 3, 3, 1, 1, 1, 5, 1, 5, 1, 2), epiNone},
		{geom(1, 12, 5, 5, 128, 5, 5, 1, 1, 6, 6, 6, 6, 3, 3), epiBiasRelu},
		{geom(1, 64, 7, 7, 96, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), epiBias},
		{geom(2, 16, 9, 9, 40, 1, 7, 1, 1, 0, 6, 0, 6, 1, 2), epiBiasRes},
		{geom(1, 24, 17, 17, 80, 1, 7, 1, 1, 0, 3, 0, 3, 1, 1), epiBiasRelu},
		{geom(1, 8, 6, 11, 20, 1, 5, 2, 2, 1, 2, 1, 3, 1, 1), epiBias},
		{sq(1, 40, 14, 72, 3, 2, 1), epiBiasResRelu},
		{sq(1, 3, 1, 20, 3, 1, 1), epiBiasRelu},
		{sq(1, 40, 14, 72, 3, 2, 1), epiReluLast},
		{geom(1, 8, 7, 7, 5, 3, 3, 1, 1, 4, 4, 4, 4, 5, 5), epiLeakyLast},
		{geom(1, 24, 17, 17, 80, 1, 7, 1, 1, 0, 3, 0, 3, 1, 1), epiClampLast},
		// Input rows past tuning.TapConvBlockMinInput: AVX2 runs them in
		// channel blocks (tapChannelBlock), the last one short.
		{sq(1, 290, 14, 72, 3, 2, 1), epiBiasResRelu},
		{sq(2, 74, 20, 40, 7, 1, 3), epiReluLast},
		{geom(1, 122, 14, 14, 24, 3, 3, 1, 1, 12, 12, 12, 12, 12, 12), epiBiasRes}, // too sparse to block
		{geom(1, 262, 12, 12, 24, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2), epiBiasRes},
		// Narrow rows another width than the input's (tuning's
		// narrowRows): ConvTranspose k4 s2 p1's 2x2 phase convolution
		// (padded by 1: rows of 9 from 8), an unpadded 3x3.
		{sq(1, 64, 8, 40, 2, 1, 1), epiBiasRes},
		{sq(2, 70, 5, 24, 2, 1, 1), epiBiasRelu},
		{sq(1, 66, 9, 20, 3, 1, 0), epiBias},
	}
}

// tapProgram is convProgram's convolution as conv2d_taps: the same
// inputs, the weights laid out tap-major by the caller.
func tapProgram(g lir.ConvGeom, e convEpi) *lir.Program {
	p := convProgram(g, e)
	c := p.Steps[0].Op.(*lir.Conv2D)
	p.Buffers[c.W].Bytes = g.KH * g.KW * g.C * lir.TapConvOP(g.O) * 4
	p.Inputs[1].Shape = []int64{g.KH * g.KW * g.C * lir.TapConvOP(g.O)}
	p.Steps[0].Op = &lir.TapConv2D{X: c.X, W: c.W, Out: c.Out, Geom: c.Geom, Epilogue: c.Epilogue}
	return p
}

// tapInputs is a test convolution's inputs with its weights (input 1)
// laid out tap-major.
func tapInputs(g lir.ConvGeom, ins []*tensor.Tensor) []*tensor.Tensor {
	out := append([]*tensor.Tensor(nil), ins...)
	out[1] = tensor.FromF32([]int64{g.KH * g.KW * g.C * lir.TapConvOP(g.O)}, lir.TapMajor(ins[1].F32(), g.O, g.C, g.KH*g.KW))
	return out
}

// TestTapConv compiles every geometry of tapSweep for every level this
// CPU runs (and NEON's code on x86-64, as TestNativeConv does) and
// compares it, and the runtime's fallback for the step, with the
// runtime's Conv2D on the weights as they were.
func TestTapConv(t *testing.T) {
	needToolchain(t)
	sweep := tapSweep()
	taps := make([]*lir.Program, len(sweep))
	progs := make([]*lir.Program, len(sweep))
	for i, c := range sweep {
		taps[i] = tapProgram(c.g, c.e)
		prog, err := Generate(taps[i], Options{})
		if err != nil || prog.Native == nil {
			t.Fatalf("%+v: the generator does not handle it (%v)", c.g, err)
		}
		progs[i] = prog
	}
	u := newConvUnit(t, progs)
	pool := parallel.NewPool(3)
	defer pool.Close()
	r := rand.New(rand.NewPCG(5, 6))
	for i, c := range sweep {
		g := c.g
		name := fmt.Sprintf("n%d_c%d_%dx%d_o%d_k%dx%d_s%dx%d_p%d%d%d%d_d%dx%d_%s", g.N, g.C, g.H, g.W, g.O, g.KH, g.KW, g.StrideH, g.StrideW,
			g.PadT, g.PadL, g.PadB, g.PadR, g.DilH, g.DilW, c.e.name)
		t.Run(name, func(t *testing.T) {
			interp := convProgram(g, c.e)
			ins := convInputs(r, interp)
			want := run(t, pool, interp, ins)
			tapIns := tapInputs(g, ins)
			if err := taps[i].Verify(); err != nil {
				t.Fatal(err)
			}
			compareConv(t, "runtime conv2d_taps", run(t, pool, taps[i], tapIns)[0], want[0])
			u.check(t, pool, progs[i], tapIns, want[0])
		})
	}
}

// TestTapTiles: the tiles of a row cover its positions once, in order,
// at most np each, with the kernel columns each position reads the input
// through.
func TestTapTiles(t *testing.T) {
	for _, c := range tapSweep() {
		g := normConv(c.g)
		for _, np := range []int64{1, 5, 6} {
			next := int64(0)
			for _, tl := range tapTiles(g, np) {
				if tl.ox != next || tl.n < 1 || tl.n > np {
					t.Fatalf("%+v np %d: tile %+v after position %d", g, np, tl, next)
				}
				for ox := tl.ox; ox < tl.ox+tl.n; ox++ {
					for kx := range g.KW {
						iw := ox*g.StrideW + kx*g.DilW - g.PadL
						if live, in := iw >= 0 && iw < g.W, kx >= tl.kx0 && kx < tl.kx1; live != in {
							t.Fatalf("%+v np %d: tile %+v: column %d tap %d live %v, in the tile's taps %v", g, np, tl, ox, kx, live, in)
						}
					}
				}
				next += tl.n
			}
			if next != g.OW {
				t.Fatalf("%+v np %d: tiles cover %d of %d positions", g, np, next, g.OW)
			}
		}
	}
}

// TestRowCopy: the sweep's row kernels that a padding splits into more
// tiles than a padded copy does take the copy, at every level's tile.
func TestRowCopy(t *testing.T) {
	inception := geom(1, 24, 17, 17, 80, 1, 7, 1, 1, 0, 3, 0, 3, 1, 1)
	for _, isa := range tapISAs {
		if _, padded := rowTilesOf(normConv(inception), isa.np); !padded {
			t.Errorf("np %d: a 1x7 over 17x17 does not take the row copy", isa.np)
		}
	}
	if _, padded := rowTilesOf(normConv(geom(1, 96, 14, 14, 64, 3, 3, 1, 1, 12, 12, 12, 12, 12, 12)), 6); padded {
		t.Error("a 3x3 kernel takes the row copy")
	}
}

// TestTapChannelBlock: the blocked cases of tapSweep are blocked, with a
// short last block, and the others are not.
func TestTapChannelBlock(t *testing.T) {
	blocked := 0
	for _, c := range tapSweep() {
		g := normConv(c.g)
		_, padded := rowTilesOf(g, 6)
		cn := tapChannelBlock(g, 16, padded)
		rows := g.KH * rowCopyWidth(g) * 4
		if padded {
			rows = rowCopyWidth(g) * 4
		}
		want := g.C*rows > tuning.TapConvBlockMinInput && g.KH*g.KW > 1 && g.DilH < 12 // not the sparse ASPP twin
		if want != (cn > 0) {
			t.Errorf("%+v: blocks of %d channels for %d bytes of input rows", g, cn, g.C*rows)
		}
		if cn > 0 {
			blocked++
			if cn%4 != 0 || cn >= g.C || g.C%cn == 0 {
				t.Errorf("%+v: blocks of %d channels, want a multiple of 4 below %d with a short last block", g, cn, g.C)
			}
		}
	}
	if blocked != 3 {
		t.Errorf("%d blocked cases, want 3", blocked)
	}
}
