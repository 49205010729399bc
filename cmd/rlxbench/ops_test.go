package main

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// TestOpsGridModels: every grid point (the full grid and --quick) encodes
// to a model that decodes again, with its inputs and weights in the
// shapes declared, and the full grid covers the families.
func TestOpsGridModels(t *testing.T) {
	fams := map[string]int{}
	for _, quick := range []bool{true, false} {
		for i, c := range opsGrid(quick) {
			m, ins, err := c.model(uint64(i) + 1)
			if err != nil {
				t.Fatalf("%s %s: %v", c.Op, c.Shape, err)
			}
			b, err := onnxpb.Encode(m)
			if err != nil {
				t.Fatalf("%s %s: %v", c.Op, c.Shape, err)
			}
			dm, err := onnxpb.Decode(b)
			if err != nil {
				t.Fatalf("%s %s: %v", c.Op, c.Shape, err)
			}
			nodes := dm.Graph.Nodes
			if len(nodes) != len(c.pre)+1 || nodes[len(nodes)-1].OpType != c.node.OpType {
				t.Errorf("%s %s: %d nodes, the last %s", c.Op, c.Shape, len(nodes), nodes[len(nodes)-1].OpType)
			}
			for _, vi := range dm.Graph.Inputs {
				in := ins[vi.Name]
				if in == nil || len(in.Shape) != len(vi.Shape) {
					t.Errorf("%s %s: input %s: %v, declared %v", c.Op, c.Shape, vi.Name, in, vi.Shape)
				}
			}
			for _, it := range dm.Graph.Initializers {
				if _, err := it.ToTensor(); err != nil {
					t.Errorf("%s %s: %v", c.Op, c.Shape, err)
				}
			}
			if !quick {
				fams[c.Family]++
			}
		}
	}
	for _, f := range []string{"conv", "convtranspose", "pool", "globalpool", "matmul", "unary", "binary", "reduce",
		"softmax", "norm", "gather", "transpose", "concat", "slice", "resize"} {
		if fams[f] == 0 {
			t.Errorf("the grid has no %s point", f)
		}
	}
}

func TestSummarize(t *testing.T) {
	rows := []opRow{
		{Family: "conv", Op: "Conv", Shape: "a", Threads: 1, Ratio: 2},
		{Family: "conv", Op: "Conv", Shape: "b", Threads: 1, Ratio: 0.5},
		{Family: "conv", Op: "Conv", Shape: "c", Threads: 1}, // no ratio: left out
		{Family: "conv", Op: "Conv", Shape: "a", Threads: 2, Ratio: 4},
		{Family: "pool", Op: "MaxPool", Shape: "p", Threads: 1, Ratio: 3},
	}
	s := summarize(rows, []int{1, 2})
	if len(s) != 3 {
		t.Fatalf("summary %+v", s)
	}
	if s[0].N != 2 || s[0].Worst != 0.5 || s[0].WorstAt != "Conv b" || math.Abs(s[0].Geomean-1) > 1e-12 {
		t.Errorf("conv T=1: %+v", s[0])
	}
	if s[1].Threads != 2 || s[1].Geomean != 4 || s[2].Family != "pool" {
		t.Errorf("%+v", s[1:])
	}
	if w := worstRows(rows, 2); len(w) != 2 || w[0].Ratio != 0.5 || w[1].Ratio != 2 {
		t.Errorf("worst %+v", w)
	}
}

func TestParseORTOps(t *testing.T) {
	data := `{"ort_version": {"node": "1.30.0"}, "rows": [
	 {"model": "op001", "threads": 1, "median_ms": 0.5, "outputs": {"y": {"max_abs_diff": 1e-6, "ref_abs_max": 3, "nonfinite": 0, "shape_ok": true}}},
	 {"model": "op001", "threads": 2, "median_ms": 0.3, "outputs": {"y": {"max_abs_diff": 1e-6, "ref_abs_max": 3, "nonfinite": 0, "shape_ok": false}}}]}`
	var m machine
	res, err := parseORTOps([]byte(data), &m)
	if err != nil {
		t.Fatal(err)
	}
	if r := res[ortKey{"op001", 1}]; !r.ok || r.MedianMS != 0.5 || r.maxAbsDiff != 1e-6 || r.refAbsMax != 3 {
		t.Errorf("T=1: %+v", r)
	}
	if r := res[ortKey{"op001", 2}]; r.ok {
		t.Errorf("T=2: a wrong shape is not ok: %+v", r)
	}
	if m.ORT != "onnxruntime-node 1.30.0" {
		t.Errorf("version %q", m.ORT)
	}
}

func TestOpsFlags(t *testing.T) {
	var errb strings.Builder
	if _, err := parseFlags([]string{"--quick"}, &errb); err == nil {
		t.Error("--quick without --ops: no error")
	}
	if _, err := parseFlags([]string{"--ops", "--ops-filter", "("}, &errb); err == nil {
		t.Error("a bad --ops-filter: no error")
	}
	c, err := parseFlags([]string{"--ops", "--ops-filter", "CONV", "--no-ort"}, &errb)
	if err != nil {
		t.Fatal(err)
	}
	if !c.skipORT || !c.skipGemm || c.rounds != 2 || c.dur.Milliseconds() != 200 || !c.opsFilter.MatchString("Conv") {
		t.Errorf("%+v", c)
	}
}

// TestOpsQuickNoORT is the smoke of --ops: a filtered --quick grid, rlx
// only (--no-ort), so it needs neither node nor ONNX Runtime; rlxbench
// builds rlxc and rlxrun itself.
func TestOpsQuickNoORT(t *testing.T) {
	if testing.Short() {
		t.Skip("builds rlxc and rlxrun and compiles models: not in -short")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not on PATH: rlxbench builds rlxc and rlxrun with it")
	}
	jf := filepath.Join(t.TempDir(), "ops.json")
	var out, errb strings.Builder
	code := run([]string{"--ops", "--quick", "--ops-filter", "relu|softmax|pool", "--no-ort", "--threads", "1",
		"--time", "20ms", "--rounds", "1", "--json", jf}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	data, err := os.ReadFile(jf)
	if err != nil {
		t.Fatal(err)
	}
	var res opsResults
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	ops := map[string]bool{}
	for _, r := range res.Rows {
		ops[r.Op] = true
		if r.Check != "-" || r.RlxUS <= 0 || r.ORTUS != 0 || r.Ratio != 0 || r.Rate <= 0 || r.RateUnit != "GB/s" {
			t.Errorf("row %+v", r)
		}
	}
	if !ops["Relu"] || !ops["Softmax"] || !ops["MaxPool"] || len(ops) != 3 {
		t.Errorf("ops %v", ops)
	}
	txt := out.String()
	if !strings.Contains(txt, "| Relu ") || strings.Contains(txt, "worst") || strings.Contains(txt, "ORT:") {
		t.Errorf("table:\n%s", txt)
	}
}

// TestQDQModel: a convolution quantized by qdqModel is a QDQ group
// (DequantizeLinear of its input, weights and bias, QuantizeLinear and
// DequantizeLinear of its result) with int8 weights within one scale step
// of the f32 ones, and a second convolution reads the first's
// DequantizeLinear without quantizing it again.
func TestQDQModel(t *testing.T) {
	w := make([]float32, 4*3*3*3)
	for i := range w {
		w[i] = float32(i%11-5) * 0.01
	}
	w2 := make([]float32, 4*4)
	for i := range w2 {
		w2[i] = float32(i%5-2) * 0.1
	}
	f := func(name string, dims []int64, v []float32) *onnxpb.Tensor {
		raw := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x))
		}
		return &onnxpb.Tensor{Name: name, DataType: onnxpb.DTFloat, Dims: dims, RawData: raw}
	}
	m := &onnxpb.Model{IRVersion: 8, Opsets: map[string]int64{"": 13}, Graph: &onnxpb.Graph{
		Nodes: []*onnxpb.Node{
			{OpType: "Conv", Inputs: []string{"x", "w", "b"}, Outputs: []string{"y"}, Attrs: []*onnxpb.Attr{{Name: "pads", Type: onnxpb.AttrInts, Ints: []int64{1, 1, 1, 1}}}},
			{OpType: "Conv", Inputs: []string{"y", "w2"}, Outputs: []string{"z"}},
		},
		Initializers: []*onnxpb.Tensor{f("w", []int64{4, 3, 3, 3}, w), f("b", []int64{4}, []float32{0.1, -0.2, 0, 0.3}), f("w2", []int64{4, 4, 1, 1}, w2)},
		Inputs:       []*onnxpb.ValueInfo{{Name: "x", ElemType: onnxpb.DTFloat, HasShape: true, Shape: []onnxpb.Dim{{Value: 1, Known: true}, {Value: 3, Known: true}, {Value: 5, Known: true}, {Value: 5, Known: true}}}},
		Outputs:      []*onnxpb.ValueInfo{{Name: "z", ElemType: onnxpb.DTFloat}},
	}}
	if got := calibrationNames(m.Graph); !slices.Equal(got, []string{"x", "y", "z"}) {
		t.Fatalf("calibration names %v", got)
	}
	q, err := qdqModel(m, map[string][2]float32{"x": {-1, 2}, "y": {-3, 3}, "z": {0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := onnxpb.Encode(q)
	if err != nil {
		t.Fatal(err)
	}
	if q, err = onnxpb.Decode(b); err != nil {
		t.Fatal(err)
	}
	producer := map[string]*onnxpb.Node{}
	count := map[string]int{}
	for _, n := range q.Graph.Nodes {
		producer[n.Outputs[0]] = n
		count[n.OpType]++
	}
	if count["Conv"] != 2 || count["QuantizeLinear"] != 3 || count["DequantizeLinear"] != 3+3 {
		t.Errorf("op counts %v, want 2 Conv, 3 QuantizeLinear (x, y, z), 6 DequantizeLinear (x, y, z, two weights, a bias)", count)
	}
	for _, n := range q.Graph.Nodes {
		if n.OpType != "Conv" {
			continue
		}
		for _, in := range n.Inputs {
			if p := producer[in]; p == nil || p.OpType != "DequantizeLinear" {
				t.Errorf("conv input %s is not dequantized", in)
			}
		}
		for _, r := range q.Graph.Nodes {
			if slices.Contains(r.Inputs, n.Outputs[0]) && r.OpType != "QuantizeLinear" {
				t.Errorf("conv output %s is read by %s", n.Outputs[0], r.OpType)
			}
		}
	}
	var wq, ws *onnxpb.Tensor
	for _, it := range q.Graph.Initializers {
		switch it.Name {
		case "w_q":
			wq = it
		case "w_s":
			ws = it
		}
	}
	qt, _ := wq.ToTensor()
	st, _ := ws.ToTensor()
	per := len(w) / 4
	for i, v := range w {
		s := st.F32()[i/per]
		if d := math.Abs(float64(v - float32(int8(qt.Data[i]))*s)); d > float64(s)/2+1e-7 {
			t.Fatalf("weight %d: %v quantized %d x %v", i, v, int8(qt.Data[i]), s)
		}
	}
}

// TestQDQModelMatMul: a product with an initializer weight is quantized
// per column (DequantizeLinear along axis 1 of [K, N]).
func TestQDQModelMatMul(t *testing.T) {
	w := []float32{0.5, -1, 0.25, 2, 0.1, -0.3, 0, 4, -2, 1, 1, 1}
	raw := make([]byte, 4*len(w))
	for i, x := range w {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x))
	}
	m := &onnxpb.Model{IRVersion: 8, Opsets: map[string]int64{"": 13}, Graph: &onnxpb.Graph{
		Nodes:        []*onnxpb.Node{{OpType: "MatMul", Inputs: []string{"x", "w"}, Outputs: []string{"y"}}},
		Initializers: []*onnxpb.Tensor{{Name: "w", DataType: onnxpb.DTFloat, Dims: []int64{4, 3}, RawData: raw}},
		Inputs:       []*onnxpb.ValueInfo{{Name: "x", ElemType: onnxpb.DTFloat}},
		Outputs:      []*onnxpb.ValueInfo{{Name: "y", ElemType: onnxpb.DTFloat}},
	}}
	q, err := qdqModel(m, map[string][2]float32{"x": {-1, 1}, "y": {-5, 5}})
	if err != nil {
		t.Fatal(err)
	}
	var dq *onnxpb.Node
	for _, n := range q.Graph.Nodes {
		if n.OpType == "DequantizeLinear" && n.Inputs[0] == "w_q" {
			dq = n
		}
	}
	if dq == nil || dq.Attr("axis") == nil || dq.Attr("axis").I != 1 {
		t.Fatalf("weights' DequantizeLinear %+v, want axis 1", dq)
	}
	var wq, ws *tensor.Tensor
	for _, it := range q.Graph.Initializers {
		switch it.Name {
		case "w_q":
			wq, _ = it.ToTensor()
		case "w_s":
			ws, _ = it.ToTensor()
		}
	}
	for i, v := range w {
		s := ws.F32()[i%3] // column i%3 of [4, 3]
		if d := math.Abs(float64(v - float32(int8(wq.Data[i]))*s)); d > float64(s)/2+1e-7 {
			t.Fatalf("weight %d: %v quantized %d x %v", i, v, int8(wq.Data[i]), s)
		}
	}
}
