package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const testManifest = `{
 "models": {
  "zeta": {"file": "zeta.onnx", "cases": {
    "b1": {"binding": {"seq": 128, "batch": 1}, "gflop": 0.5,
           "inputs": {"x": {"file": "zeta/b1/in_x.npy"}}, "outputs": {"y": {"file": "zeta/b1/out_y.npy", "abs_max": 2}}},
    "alt": {"binding": {"batch": 2, "seq": 64},
           "inputs": {"x": {"file": "zeta/alt/in_x.npy"}}, "outputs": {"y": {"file": "zeta/alt/out_y.npy"}}}}},
  "alpha": {"file": "alpha.onnx", "cases": {
    "b1": {"binding": {"batch": 1},
           "inputs": {"x": {"file": "a/x.npy"}, "m": {"file": "a/m.npy"}}, "outputs": {"y": {"file": "a/y.npy"}}}}}
 },
 "generator": {"torch": "2.x"}
}`

func TestParseManifestKeepsOrder(t *testing.T) {
	m, err := parseManifest([]byte(testManifest))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, mm := range m.Models {
		for _, c := range mm.Cases {
			got = append(got, mm.Name+"/"+c.Name+"/"+c.bindingString())
		}
	}
	want := []string{"zeta/b1/seq=128,batch=1", "zeta/alt/batch=2,seq=64", "alpha/b1/batch=1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cases (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"--bind", "seq=128", "--bind", "batch=1"}, m.Models[0].Cases[0].bindArgs()); diff != "" {
		t.Errorf("bindArgs (-want +got):\n%s", diff)
	}
	if got := m.Models[1].Cases[0].Inputs; len(got) != 2 || got[0].Name != "x" || got[1].Name != "m" {
		t.Errorf("inputs %v, want x then m", got)
	}
	if m.Models[0].Cases[0].GFLOP != 0.5 {
		t.Errorf("gflop %v", m.Models[0].Cases[0].GFLOP)
	}
}

func TestParseManifestErrors(t *testing.T) {
	for _, bad := range []string{
		`{}`,
		`{"models": []}`,
		`{"models": {"m": {"cases": {}}}}`,
		`{"models": {"m": {"file": "m.onnx", "cases": {"c": {"binding": {"b": "x"}, "inputs": {"x": {"file": "x"}}, "outputs": {"y": {"file": "y"}}}}}}}`,
		`{"models": {"m": {"file": "m.onnx", "cases": {"c": {"binding": {}, "inputs": {}, "outputs": {"y": {"file": "y"}}}}}}}`,
	} {
		if _, err := parseManifest([]byte(bad)); err == nil {
			t.Errorf("parseManifest(%s): no error", bad)
		}
	}
}

func TestSelectCases(t *testing.T) {
	m, err := parseManifest([]byte(testManifest))
	if err != nil {
		t.Fatal(err)
	}
	sel, err := selectCases(m, nil, []string{"alt"})
	if err != nil {
		t.Fatal(err)
	}
	if len(sel) != 1 || sel[0].Name != "zeta" || len(sel[0].Cases) != 1 || sel[0].Cases[0].Name != "alt" {
		t.Errorf("--cases alt selected %+v", sel)
	}
	if _, err := selectCases(m, []string{"nope"}, nil); err == nil || !strings.Contains(err.Error(), "zeta, alpha") {
		t.Errorf("unknown model: err %v, want one listing the models", err)
	}
	if _, err := selectCases(m, nil, []string{"b9"}); err == nil {
		t.Error("unknown case: no error")
	}
	if _, err := selectCases(m, []string{"alpha"}, []string{"alt"}); err == nil {
		t.Error("empty selection: no error")
	}
}

func TestParseThreadsAndLists(t *testing.T) {
	got, err := parseThreads(" 1, 2 ,4")
	if err != nil || !cmp.Equal(got, []int{1, 2, 4}) {
		t.Errorf("parseThreads = %v, %v", got, err)
	}
	for _, bad := range []string{"", "0", "1,x", "-1"} {
		if _, err := parseThreads(bad); err == nil {
			t.Errorf("parseThreads(%q): no error", bad)
		}
	}
	if splitList("") != nil {
		t.Error(`splitList("") is not nil`)
	}
}

func TestTolerance(t *testing.T) {
	for _, c := range []struct{ ref, want float64 }{{0.27, 1e-4}, {1, 1e-4}, {5.26, 5.26e-4}} {
		if got := tolerance(c.ref); got < c.want*(1-1e-12) || got > c.want*(1+1e-12) {
			t.Errorf("tolerance(%v) = %v, want %v", c.ref, got, c.want)
		}
	}
}

func TestParseRlxBench(t *testing.T) {
	b, err := parseRlxBench([]byte(`{"p50_ms":2.75,"p90_ms":6.999,"p99_ms":50.614,"runs":197,"threads":1,"throughput_per_s":196.6}` + "\n"))
	if err != nil || b.P50MS != 2.75 || b.Runs != 197 || b.Threads != 1 {
		t.Errorf("parseRlxBench = %+v, %v", b, err)
	}
	// Under rlxrun's 1 us resolution: the mean from the throughput.
	b, err = parseRlxBench([]byte(`{"p50_ms":0,"runs":5000,"throughput_per_s":2e6}`))
	if err != nil || b.P50MS != 5e-4 || b.usPerRun() != 0.5 {
		t.Errorf("sub-microsecond: %+v %v", b, err)
	}
	if b := (rlxBench{P50MS: 0.012, Throughput: 1e5}); b.usPerRun() != 10 {
		t.Errorf("under 20 us: %v, want the mean 10", b.usPerRun())
	}
	if b := (rlxBench{P50MS: 0.5, Throughput: 1e3}); b.usPerRun() != 500 {
		t.Errorf("500 us: %v, want the median", b.usPerRun())
	}
	for _, bad := range []string{"", "p50 2.7", `{"runs":3}`} {
		if _, err := parseRlxBench([]byte(bad)); err == nil {
			t.Errorf("parseRlxBench(%q): no error", bad)
		}
	}
}

func TestParseRlxCheck(t *testing.T) {
	out := `{"ok": false, "outputs": [
	  {"name": "a", "dtype": "f32", "shape": [1]},
	  {"name": "y", "expected": {"file": "y.npy", "ok": false, "max_abs_diff": 0.25, "worst_index": [0, 3]}}]}`
	ok, diff, err := parseRlxCheck([]byte(out), "y")
	if err != nil || ok || diff != 0.25 {
		t.Errorf("parseRlxCheck(y) = %v, %v, %v", ok, diff, err)
	}
	if _, _, err := parseRlxCheck([]byte(out), "a"); err == nil {
		t.Error("output without a comparison: no error")
	}
	if _, _, err := parseRlxCheck([]byte("rlxrun: bad"), "y"); err == nil {
		t.Error("non-JSON: no error")
	}
}

func TestParseORT(t *testing.T) {
	data := `{"ort_version": {"common": "1.30.0", "node": "1.30.0"}, "rows": [
	 {"model": "mlp", "case": "b1", "threads": 1, "median_ms": 0.62, "runs": 300,
	  "outputs": {"y": {"max_abs_diff": 1e-7, "n_outside_tol": 0, "nonfinite": 0, "shape_ok": true}}},
	 {"model": "mlp", "case": "b1", "threads": 2, "median_ms": 0.5, "runs": 300,
	  "outputs": {"y": {"max_abs_diff": 0.3, "n_outside_tol": 12, "nonfinite": 0, "shape_ok": true}}}]}`
	r, ok, diff, ver, err := parseORT([]byte(data), "mlp", "b1", 1)
	if err != nil || !ok || r.MedianMS != 0.62 || diff != 1e-7 || ver != "1.30.0" {
		t.Errorf("T=1: %+v %v %v %q %v", r, ok, diff, ver, err)
	}
	r, ok, diff, _, err = parseORT([]byte(data), "mlp", "b1", 2)
	if err != nil || ok || r.MedianMS != 0.5 || diff != 0.3 {
		t.Errorf("T=2 (outside tolerance): %+v %v %v %v", r, ok, diff, err)
	}
	if _, _, _, _, err := parseORT([]byte(data), "mlp", "alt", 1); err == nil {
		t.Error("missing row: no error")
	}
}

func TestParseGoBenchGemm(t *testing.T) {
	out := `goos: linux
goarch: amd64
pkg: github.com/rlx-project/rlx/pkg/targets/cpu/kernels/gemm
cpu: AMD EPYC
BenchmarkGemm/n=256/threads=1-2         	     100	   5369458 ns/op	         6.249 GFLOP/s
BenchmarkGemm/n=1024/threads=2-2        	       2	 347473366 ns/op	         6.180 GFLOP/s
BenchmarkGemm/n=512/threads=1           	      12	  49806965 ns/op	  0 B/op	  0 allocs/op	  5.390 GFLOP/s
PASS
`
	got, err := parseGoBenchGemm(out)
	if err != nil {
		t.Fatal(err)
	}
	want := map[gemmKey]float64{{256, 1}: 6.249, {1024, 2}: 6.180, {512, 1}: 5.390}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := parseGoBenchGemm("BenchmarkGemm/n=256/threads=1-2  100  5369458 ns/op\n"); err == nil || !strings.Contains(err.Error(), "GFLOP/s") {
		t.Errorf("no metric: err %v", err)
	}
	if _, err := parseGoBenchGemm("PASS\n"); err == nil {
		t.Error("no lines: no error")
	}
}

func TestParseOpenBLAS(t *testing.T) {
	out := `openblas config: OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Zen MAX_THREADS=64
core: Zen  threads: 1
     N  best_GF/s   med_GF/s    calls max_rel_err
   256       89.1       88.5      842   3.64e-08
  2048       74.7       61.5        3   1.70e-08
`
	got, conf, err := parseOpenBLAS(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(conf, "OpenBLAS 0.3.21") {
		t.Errorf("config %q", conf)
	}
	want := map[int]openBLASResult{256: {89.1, 88.5}, 2048: {74.7, 61.5}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, _, err := parseOpenBLAS("core: Zen\n"); err == nil {
		t.Error("no rows: no error")
	}
}

func TestCPUModel(t *testing.T) {
	info := "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel\t\t: 1\nmodel name\t: AMD EPYC 9R14\nprocessor\t: 1\nmodel name\t: AMD EPYC 9R14\n"
	if got := cpuModel(info); got != "AMD EPYC 9R14" {
		t.Errorf("cpuModel = %q", got)
	}
	if got := cpuModel(""); got != "unknown CPU" {
		t.Errorf("cpuModel(\"\") = %q", got)
	}
}

func TestFormatTable(t *testing.T) {
	got := formatTable([]string{"model", "ms", "note"},
		[][]string{{"mlp", "0.620", "ok"}, {"mobilenet_v2", "14.40"}},
		[]bool{false, true})
	want := `| model        |    ms | note |
| ------------ | ----: | ---- |
| mlp          | 0.620 | ok   |
| mobilenet_v2 | 14.40 |      |
`
	if got != want {
		t.Errorf("formatTable:\n%s\nwant:\n%s", got, want)
	}
}

func TestNumberFormats(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{fmtMS(0), "-"}, {fmtMS(0.6234), "0.623"}, {fmtMS(14.404), "14.40"}, {fmtMS(123.45), "123.5"},
		{fmtFixed(0, 2), "-"}, {fmtFixed(1.2345, 2), "1.23"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	if ratio(2, 0) != 0 || ratio(0, 2) != 0 || ratio(3, 2) != 1.5 {
		t.Error("ratio")
	}
	if minPositive(nil) != 0 || minPositive([]float64{0, 3, 2, 5}) != 2 {
		t.Error("minPositive")
	}
	// Rounds pair up by index; a round missing either side is left out.
	if got := pairedRatio([]float64{2, 3, 0, 9}, []float64{1, 2, 5, 3}); got != 2 {
		t.Errorf("pairedRatio odd = %v, want 2 (median of 2, 1.5, 3)", got)
	}
	if got := pairedRatio([]float64{2, 3}, []float64{1, 2, 4}); got != 1.75 {
		t.Errorf("pairedRatio even = %v, want 1.75", got)
	}
	if pairedRatio(nil, []float64{1}) != 0 {
		t.Error("pairedRatio of nothing")
	}
}

func TestRenderMarksFailures(t *testing.T) {
	d := &driver{cfg: config{threads: []int{1}, rounds: 2, warmup: 5, skipGemm: true}}
	d.res.Rows = []row{
		{Model: "mlp", Case: "b1", Binding: "batch=1", Threads: 1, Check: "ok", MaxAbsDiff: 3e-7, RlxMS: 0.5, ORTMS: 0.6, Ratio: 1.2, PairedRatio: 1.15,
			CompileColdMS: 400, CompileHitMS: 80, CacheHit: true},
		{Model: "enc", Case: "b1", Binding: "seq=8", Threads: 1, Check: "FAIL", MaxAbsDiff: 0.5, RlxMS: 0, ORTMS: 4.8,
			CompileColdMS: 900, CompileHitMS: 90, Errors: []string{"output y differs"}},
	}
	out := d.render()
	for _, want := range []string{
		"| mlp   | b1   | batch=1 |       1 | ok    |      3.0e-07 |  0.500 |  0.600 |    1.20 |      1.15 |             400 |             80 |",
		"| enc   | b1   | seq=8   |       1 | FAIL  |      5.0e-01 |   FAIL |  4.800 |    FAIL |      FAIL |             900 |      90 (miss) |",
		"- enc b1: output y differs",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("render lacks %q:\n%s", want, out)
		}
	}
}
