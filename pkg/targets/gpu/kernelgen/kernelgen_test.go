package kernelgen

import (
	"errors"
	"fmt"
	"math"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/gpu/kir"
	"github.com/rlx-project/rlx/pkg/targets/toolchain"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// program is a program of the given steps over n arena buffers of 4 KiB
// each, 64-byte aligned, and one weight buffer (index n).
func program(n int, ops ...lir.Op) *lir.Program {
	p := &lir.Program{ArenaBytes: int64(n) * 4096}
	for i := 0; i < n; i++ {
		p.Buffers = append(p.Buffers, lir.Buffer{Kind: lir.BufArena, Offset: int64(i) * 4096, Bytes: 4096})
	}
	p.Buffers = append(p.Buffers, lir.Buffer{Kind: lir.BufWeight, Bytes: 4096})
	for i, op := range ops {
		p.Steps = append(p.Steps, lir.Step{Op: op, Src: fmt.Sprintf("t.hir:%d:1 %s", i+1, op.Kind())})
	}
	return p
}

// printAll prints every launch's kernel in GLSL and CUDA.
func printAll(t *testing.T, ls []Launch) {
	t.Helper()
	for _, l := range ls {
		for _, lang := range []kir.Language{kir.GLSL, kir.CUDA} {
			if _, err := kir.Print(lang, l.Kernel); err != nil {
				t.Errorf("%s: %s: %v", l.Src, lang, err)
			}
		}
	}
}

// ewCase is the one-instruction program for op: its operands' dtypes, the
// result's, and the instruction's immediate.
func ewCase(op lir.EwOp) (ins []tensor.DType, out tensor.DType, imm float64) {
	switch op {
	case lir.EwIDiv, lir.EwIMod:
		return []tensor.DType{tensor.I64, tensor.I64}, tensor.I64, 0
	case lir.EwNot:
		return []tensor.DType{tensor.Bool}, tensor.Bool, 0
	case lir.EwAnd, lir.EwOr, lir.EwXor:
		return []tensor.DType{tensor.Bool, tensor.U8}, tensor.Bool, 0
	case lir.EwEq, lir.EwNe, lir.EwLt, lir.EwLe, lir.EwGt, lir.EwGe:
		return []tensor.DType{tensor.F32, tensor.F32}, tensor.Bool, 0
	case lir.EwWhere:
		return []tensor.DType{tensor.Bool, tensor.F32, tensor.F32}, tensor.F32, 0
	case lir.EwCast:
		return []tensor.DType{tensor.F32}, tensor.I32, float64(tensor.I32)
	case lir.EwLeakyRelu:
		return []tensor.DType{tensor.F32}, tensor.F32, 0.01
	}
	ins = make([]tensor.DType, op.Info().Arity)
	for i := range ins {
		ins[i] = tensor.F32
	}
	return ins, tensor.F32, 0
}

// computeOps are the elementwise instructions a region computes with: all
// but the bytecode's load, store and imm.
func computeOps() []lir.EwOp {
	var ops []lir.EwOp
	for op := lir.EwLoad; op < lir.NumEwOps; op++ {
		if op != lir.EwLoad && op != lir.EwStore && op != lir.EwImm {
			ops = append(ops, op)
		}
	}
	return ops
}

// ewProgram is a one-instruction elementwise region of op over [3, 4].
func ewProgram(op lir.EwOp) *lir.Program {
	ins, out, imm := ewCase(op)
	ew := &lir.Elementwise{Shape: []int64{3, 4}}
	in := lir.Instr{Op: op, Dst: len(ins), Imm: imm}
	for i, dt := range ins {
		ew.In = append(ew.In, lir.EwIn{Buf: lir.Buf(i), DType: dt, Strides: []int64{4, 1}})
		ew.Code = append(ew.Code, lir.Instr{Op: lir.EwLoad, Dst: i, A: i})
	}
	in.A, in.B, in.C = 0, min(1, len(ins)-1), min(2, len(ins)-1)
	ew.Out = []lir.EwOut{{Buf: lir.Buf(len(ins)), DType: out}}
	ew.Code = append(ew.Code, in, lir.Instr{Op: lir.EwStore, Dst: len(ins), A: 0})
	p := program(len(ins)+1, ew)
	p.Steps[0].Src = "t.hir:1:1 " + op.String()
	return p
}

// TestEwOps lowers a one-instruction elementwise region for every
// instruction a region computes with: an instruction without a GPU
// expression fails here.
func TestEwOps(t *testing.T) {
	for _, op := range computeOps() {
		t.Run(op.String(), func(t *testing.T) {
			if ins, _, _ := ewCase(op); len(ins) == 0 {
				t.Fatalf("%s reads no register", op)
			}
			ls, _, err := Lower(ewProgram(op), Options{})
			var u *UnsupportedError
			if errors.As(err, &u) {
				t.Fatalf("%s has no GPU expression: %v", op, err)
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(ls) != 1 {
				t.Fatalf("%d launches", len(ls))
			}
			printAll(t, ls)
		})
	}
}

// gpuKinds is one small step of every kind a GPU target takes, over
// program(8): buffers 0-7 in the arena, 8 a weight.
func gpuKinds() []lir.Op {
	ep := lir.Epilogue{Bias: 2, Residual: 3, Act: lir.ActGelu}
	conv := lir.ConvGeom{N: 1, C: 4, H: 5, W: 5, O: 4, KH: 3, KW: 3, StrideH: 1, StrideW: 1, PadT: 1, PadL: 1, PadB: 1, PadR: 1,
		DilH: 1, DilW: 1, Groups: 2, OH: 5, OW: 5}
	pool := lir.PoolGeom{N: 1, C: 2, H: 6, W: 6, KH: 3, KW: 3, StrideH: 2, StrideW: 2, PadT: 1, PadL: 1, PadB: 1, PadR: 1,
		DilH: 1, DilW: 1, OH: 3, OW: 3}
	attn := lir.AttnGeom{Batch: []int64{2}, QStrides: []int64{40}, KStrides: []int64{56}, VStrides: []int64{42}, MaskStrides: []int64{0},
		MaskRowStride: 7, MaskColStride: 1, Sq: 5, Sk: 7, D: 8, Dv: 6, Scale: 0.35, Causal: true}
	return []lir.Op{
		&lir.Elementwise{Shape: []int64{3, 4}, In: []lir.EwIn{{Buf: 0, DType: tensor.F32, Strides: []int64{4, 1}}, {Buf: 8, DType: tensor.F16, Strides: []int64{0, 1}}},
			Out: []lir.EwOut{{Buf: 1, DType: tensor.F32}},
			Code: []lir.Instr{{Op: lir.EwLoad, Dst: 0, A: 0}, {Op: lir.EwLoad, Dst: 1, A: 1}, {Op: lir.EwAdd, Dst: 2, A: 0, B: 1},
				{Op: lir.EwStore, Dst: 2, A: 0}}},
		&lir.MatMul{A: 0, B: 8, Out: 1, AShape: []int64{2, 3, 4}, BShape: []int64{4, 5}, Epilogue: ep},
		&lir.Conv2D{X: 0, W: 8, Out: 1, Geom: conv, Epilogue: ep},
		&lir.Pool2D{X: 0, Out: 1, Max: true, Geom: pool},
		&lir.Pool2D{X: 0, Out: 1, Geom: pool, CountIncludePad: true},
		&lir.Reduce{X: 0, Out: 1, Fn: lir.ReduceMean, DType: tensor.F32, Shape: []int64{2, 3, 4}, Axes: []int64{0, 2}},
		&lir.ArgReduce{X: 0, Out: 1, Max: true, Outer: 2, Axis: 3, Inner: 4, DType: tensor.F32},
		&lir.TopK{X: 0, Values: 1, Indices: 2, Outer: 2, Axis: 3, Inner: 4, K: 2, Largest: true, DType: tensor.F32},
		&lir.Scatter{Out: 0, Idx: 1, Upd: 2, N: 10, M: 3, ElemSize: 8, IdxDType: tensor.I64},
		&lir.Softmax{X: 0, Out: 1, Outer: 2, Axis: 30, Inner: 3, Log: true},
		&lir.LayerNorm{X: 0, Scale: 8, Bias: lir.NoBuf, Out: 1, Rows: 3, Cols: 100, Eps: 1e-5},
		&lir.AddLayerNorm{A: 0, B: 2, Scale: 8, Bias: 3, Out: 1, Sum: 4, Rows: 3, Cols: 100, Eps: 1e-5},
		&lir.Attention{Q: 0, K: 2, V: 3, Mask: 4, Out: 1, Geom: attn},
		&lir.Memcpy{Src: 0, Dst: 1},
		&lir.Copy{Src: 0, Dst: 1, ElemSize: 8, Shape: []int64{2, 3}, DstOff: 1, SrcOff: 2, DstStrides: []int64{3, 1}, SrcStrides: []int64{1, 2}},
		&lir.Fill{Dst: 1, DType: tensor.I64, Value: -3},
		&lir.Gather{X: 8, Idx: 0, Out: 1, Outer: 2, AxisLen: 7, Inner: 3, ElemSize: 4, IdxDType: tensor.I64},
		&lir.Iota{Out: 1, N: 17, DType: tensor.I32},
	}
}

// cpuOnly are the kinds no GPU target takes: the CPU's packed, integer,
// channels-last, Winograd and tap-major kernels (the GPU weights table
// has no packing layout, and no GPU Caps asks for Winograd or TapConv),
// the CPU's native calls (its code generator runs after the schedule, on
// the cpu target only) and the GPU's own dispatch, which kernelgen
// produces rather than reads.
var cpuOnly = []lir.Kind{"matmul_packed", "matmul_i8", "conv2d_i8", "conv2d_i8_nhwc", "conv1x1_packed", "dwconv_nhwc_taps", "nchw_to_nhwc", "nhwc_to_nchw",
	"winograd_input", "winograd_product", "winograd_output", "winograd_input_part", "winograd_product_part", "winograd_output_part",
	"conv2d_taps", "native", "native_part", "dispatch", "dispatch_offsets"}

// TestEveryKind lowers one step of every kind a GPU target takes, and
// checks the list covers every lir kind but cpuOnly.
func TestEveryKind(t *testing.T) {
	covered := map[lir.Kind]bool{}
	for _, op := range gpuKinds() {
		covered[op.Kind()] = true
		t.Run(string(op.Kind()), func(t *testing.T) {
			ls, _, err := Lower(program(8, op), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(ls) == 0 {
				t.Fatal("no launches")
			}
			for _, l := range ls {
				if l.Kernel.Name != string(op.Kind()) {
					t.Errorf("kernel named %q", l.Kernel.Name)
				}
				if len(l.Args) != len(l.Kernel.Params) {
					t.Errorf("%d args for %d parameters", len(l.Args), len(l.Kernel.Params))
				}
				for i, g := range l.Groups {
					if g < 1 || g > maxGroups {
						t.Errorf("%d workgroups along axis %d", g, i)
					}
				}
			}
			printAll(t, ls)
		})
	}
	for _, k := range lir.Kinds() {
		if !covered[k] && !slices.Contains(cpuOnly, k) {
			t.Errorf("lir kind %s: no case in gpuKinds (or list it in cpuOnly)", k)
		}
	}
}

// TestCompiles compiles every kernel of TestEveryKind and TestEwOps with
// the external compilers that are installed: glslangValidator (and
// spirv-val) for GLSL, clang for CUDA.
func TestCompiles(t *testing.T) {
	var progs []*lir.Program
	for _, op := range gpuKinds() {
		progs = append(progs, program(8, op))
	}
	for _, op := range computeOps() {
		progs = append(progs, ewProgram(op))
	}
	for _, c := range []struct {
		lang    kir.Language
		tool    toolchain.Tool
		compile func(name, src string) ([]byte, string, error)
	}{{kir.GLSL, toolchain.Glslang, toolchain.GLSLToSPIRV}, {kir.CUDA, toolchain.Clang, toolchain.CUDAToPTX}} {
		t.Run(string(c.lang), func(t *testing.T) {
			if _, err := exec.LookPath(c.tool.Command); err != nil {
				t.Skipf("%s is not installed", c.tool.Command)
			}
			for _, p := range progs {
				t.Run(p.Steps[0].Src, func(t *testing.T) {
					t.Parallel()
					ls, _, err := Lower(p, Options{})
					if err != nil {
						t.Fatal(err)
					}
					for _, l := range ls {
						src, err := kir.Print(c.lang, l.Kernel)
						if err != nil {
							t.Fatal(err)
						}
						if _, _, err := c.compile(l.Kernel.Name, src); err != nil {
							t.Error(err)
						}
					}
				})
			}
		})
	}
}

// TestOperandOrder checks that optional operands become parameters, in
// the kernels' order, only when present.
func TestOperandOrder(t *testing.T) {
	names := func(k *kir.Kernel) string {
		var s []string
		for _, p := range k.Params {
			s = append(s, p.Name)
		}
		return strings.Join(s, " ")
	}
	for _, c := range []struct {
		op    lir.Op
		args  []lir.Buf
		names string
	}{
		{&lir.MatMul{A: 0, B: 8, Out: 1, AShape: []int64{3, 4}, BShape: []int64{4, 5}, Epilogue: lir.NoEpilogue()}, []lir.Buf{0, 8, 1}, "a b out"},
		{&lir.MatMul{A: 0, B: 8, Out: 1, AShape: []int64{3, 4}, BShape: []int64{4, 5}, Epilogue: lir.Epilogue{Bias: lir.NoBuf, Residual: 3}},
			[]lir.Buf{0, 8, 3, 1}, "a b residual out"},
		{&lir.MatMul{A: 0, B: 8, Out: 1, AShape: []int64{3, 4}, BShape: []int64{4, 5}, Epilogue: lir.Epilogue{Bias: 2, Residual: 3}},
			[]lir.Buf{0, 8, 2, 3, 1}, "a b bias residual out"},
		{&lir.LayerNorm{X: 0, Scale: lir.NoBuf, Bias: 3, Out: 1, Rows: 2, Cols: 8, RMS: true}, []lir.Buf{0, 3, 1}, "x bias out"},
		{&lir.AddLayerNorm{A: 0, B: 2, Scale: lir.NoBuf, Bias: lir.NoBuf, Out: 1, Sum: lir.NoBuf, Rows: 2, Cols: 8}, []lir.Buf{0, 2, 1}, "x r out"},
		{&lir.AddLayerNorm{A: 0, B: 2, Scale: 3, Bias: 4, Out: 1, Sum: 5, Rows: 2, Cols: 8}, []lir.Buf{0, 2, 3, 4, 1, 5}, "x r scale bias out sum"},
		{&lir.Attention{Q: 0, K: 2, V: 3, Mask: lir.NoBuf, Out: 1, Geom: lir.AttnGeom{Sq: 2, Sk: 3, D: 4, Dv: 4, Scale: 0.5}},
			[]lir.Buf{0, 2, 3, 1}, "q k v out"},
	} {
		ls, _, err := Lower(program(8, c.op), Options{})
		if err != nil {
			t.Errorf("%s: %v", c.op.Kind(), err)
			continue
		}
		if got := names(ls[0].Kernel); got != c.names || !slices.Equal(ls[0].Args, c.args) {
			t.Errorf("%s: parameters %s bound to %v, want %s bound to %v", c.op.Kind(), got, ls[0].Args, c.names, c.args)
		}
	}
}

// TestActivations lowers a matmul epilogue of every activation; an
// activation without a GPU expression fails here.
func TestActivations(t *testing.T) {
	for a := lir.ActNone; ; a++ {
		if _, ok := lir.ParseActivation(a.String()); !ok {
			break
		}
		ep := lir.Epilogue{Bias: lir.NoBuf, Residual: lir.NoBuf, Act: a, Alpha: 0.1, Min: math.Inf(-1), Max: 6}
		ls, _, err := Lower(program(2, &lir.MatMul{A: 0, B: 2, Out: 1, AShape: []int64{3, 4}, BShape: []int64{4, 5}, Epilogue: ep}), Options{})
		if err != nil {
			t.Errorf("%s: %v", a, err)
			continue
		}
		printAll(t, ls)
	}
}

// TestRejects checks the steps a GPU target has no kernel for (an
// UnsupportedError naming the kind) and malformed steps (an error, never
// a panic).
func TestRejects(t *testing.T) {
	mm := func(f func(m *lir.MatMul)) lir.Op {
		m := &lir.MatMul{A: 0, B: 2, Out: 1, AShape: []int64{3, 4}, BShape: []int64{4, 5}, Epilogue: lir.NoEpilogue()}
		f(m)
		return m
	}
	ew := func(f func(e *lir.Elementwise)) lir.Op {
		e := &lir.Elementwise{Shape: []int64{4}, In: []lir.EwIn{{Buf: 0, DType: tensor.F32, Strides: []int64{1}}},
			Out:  []lir.EwOut{{Buf: 1, DType: tensor.F32}},
			Code: []lir.Instr{{Op: lir.EwLoad, Dst: 0, A: 0}, {Op: lir.EwExp, Dst: 1, A: 0}, {Op: lir.EwStore, Dst: 1, A: 0}}}
		f(e)
		return e
	}
	unsupported := []lir.Op{
		&lir.PackedMatMul{A: 0, B: 2, Out: 1, M: 3, N: 4, K: 5, Epilogue: lir.NoEpilogue()},
		&lir.PackedConv1x1{X: 0, W: 2, Out: 1, N: 1, C: 2, HW: 3, O: 4, Epilogue: lir.NoEpilogue()},
		&lir.DepthwiseNHWC{X: 0, W: 2, Out: 1, Epilogue: lir.NoEpilogue()},
		&lir.Relayout{Src: 0, Dst: 1, N: 1, C: 2, HW: 3, ToNHWC: true},
		&lir.Dispatch{Args: []lir.Buf{0}},
		&lir.Attention{Q: 0, K: 0, V: 0, Mask: lir.NoBuf, Out: 1, Geom: lir.AttnGeom{Sq: 2, Sk: 2, D: 4, Dv: 4, QRow: 12}},
		&lir.Reduce{X: 0, Out: 1, DType: tensor.Bool, Shape: []int64{4}, Axes: []int64{0}},
		&lir.Fill{Dst: 1, DType: tensor.F64},
	}
	for _, op := range unsupported {
		_, _, err := Lower(program(2, op), Options{})
		var u *UnsupportedError
		if !errors.As(err, &u) || u.Kernel != string(op.Kind()) {
			t.Errorf("%s: error %v, want an UnsupportedError for it", op.Kind(), err)
		}
	}
	for _, c := range []struct {
		name string
		op   lir.Op
		want string
	}{
		{"missing buffer", mm(func(m *lir.MatMul) { m.Out = 9 }), "missing buffer 9"},
		{"absent operand", mm(func(m *lir.MatMul) { m.A = lir.NoBuf }), "missing buffer -1"},
		{"writes a weight", mm(func(m *lir.MatMul) { m.Out = 2 }), "read-only weight"},
		{"matmul rank", mm(func(m *lir.MatMul) { m.AShape = []int64{4} }), "malformed matmul"},
		{"matmul inner", mm(func(m *lir.MatMul) { m.BShape = []int64{3, 5} }), "inner dims differ"},
		{"activation", mm(func(m *lir.MatMul) { m.Epilogue.Act = 200 }), "unknown epilogue activation"},
		{"ew strides", ew(func(e *lir.Elementwise) { e.In[0].Strides = nil }), "0 strides for 1 dims"},
		{"ew register", ew(func(e *lir.Elementwise) { e.Code[1].A = 7 }), "r7 read before"},
		{"ew load", ew(func(e *lir.Elementwise) { e.Code[0].A = 3 }), "load of operand 3"},
		{"ew store", ew(func(e *lir.Elementwise) { e.Code[2].A = 3 }), "store to result 3"},
		{"ew op", ew(func(e *lir.Elementwise) { e.Code[1].Op = 250 }), "unknown elementwise instruction"},
		{"reduce fn", &lir.Reduce{X: 0, Out: 1, Fn: 9, DType: tensor.F32, Shape: []int64{4}, Axes: []int64{0}}, "ReduceFn(9)"},
		{"reduce axis", &lir.Reduce{X: 0, Out: 1, DType: tensor.F32, Shape: []int64{4}, Axes: []int64{1}}, "axis 1 of rank 1"},
		{"copy strides", &lir.Copy{Src: 0, Dst: 1, ElemSize: 4, Shape: []int64{2}, DstStrides: []int64{1}}, "malformed copy"},
		{"copy size", &lir.Copy{Src: 0, Dst: 1, ElemSize: 3, Shape: []int64{2}, DstStrides: []int64{1}, SrcStrides: []int64{1}}, "3-byte elements"},
		{"attention strides", &lir.Attention{Q: 0, K: 0, V: 0, Mask: lir.NoBuf, Out: 1, Geom: lir.AttnGeom{Batch: []int64{2}, Sq: 2, Sk: 2, D: 4, Dv: 4}},
			"0 batch strides for 1 batch dims"},
		{"conv groups", &lir.Conv2D{X: 0, W: 2, Out: 1, Geom: lir.ConvGeom{N: 1, C: 3, O: 2, Groups: 2}, Epilogue: lir.NoEpilogue()}, "2 groups"},
	} {
		p := program(2, c.op)
		_, _, err := Lower(p, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
	if _, _, err := Lower(&lir.Program{Steps: []lir.Step{{Src: "t.hir:1:1"}}}, Options{}); err == nil || !strings.Contains(err.Error(), "no operation") {
		t.Errorf("step without an operation: %v", err)
	}
}

// TestOffsetsAtLaunch: a kernel takes its tensors' offsets at launch, so
// its text does not depend on them; one with more parameters than launch
// offsets fit (kir.MaxOffsets) has them compiled in.
func TestOffsetsAtLaunch(t *testing.T) {
	// sum of n inputs, input k in arena buffer k (at byte 4096k), the
	// result in buffer n.
	sum := func(n int) *lir.Elementwise {
		op := &lir.Elementwise{Shape: []int64{4}, Out: []lir.EwOut{{Buf: lir.Buf(n), DType: tensor.F32}}}
		for k := 0; k < n; k++ {
			op.In = append(op.In, lir.EwIn{Buf: lir.Buf(k), DType: tensor.F32, Strides: []int64{1}})
			op.Code = append(op.Code, lir.Instr{Op: lir.EwLoad, Dst: k, A: k})
		}
		acc := 0
		for k := 1; k < n; k++ {
			op.Code = append(op.Code, lir.Instr{Op: lir.EwAdd, Dst: n + k, A: acc, B: k})
			acc = n + k
		}
		op.Code = append(op.Code, lir.Instr{Op: lir.EwStore, Dst: acc, A: 0})
		return op
	}
	for _, tc := range []struct {
		inputs int
		launch bool
	}{{2, true}, {kir.MaxOffsets - 1, true}, {kir.MaxOffsets, false}} {
		ls, _, err := Lower(program(tc.inputs+1, sum(tc.inputs)), Options{})
		if err != nil {
			t.Fatal(err)
		}
		l := ls[0]
		src, err := kir.Print(kir.GLSL, l.Kernel)
		if err != nil {
			t.Fatal(err)
		}
		last := fmt.Sprint(int64(tc.inputs) * 4096 / 4) // the result's element offset
		switch {
		case l.Kernel.Offsets != tc.launch:
			t.Errorf("%d inputs: kernel takes launch offsets %v", tc.inputs, l.Kernel.Offsets)
		case tc.launch && (len(l.Offsets) != tc.inputs+1 || l.Offsets[tc.inputs] != int64(tc.inputs)*1024 || strings.Contains(src, last)):
			t.Errorf("%d inputs: launch offsets %v; source:\n%s", tc.inputs, l.Offsets, src)
		case !tc.launch && (l.Offsets != nil || !strings.Contains(src, "p"+fmt.Sprint(tc.inputs)+".v[("+last+" + ")):
			t.Errorf("%d inputs: offsets %v, want them compiled in; source:\n%s", tc.inputs, l.Offsets, src)
		}
	}
}
