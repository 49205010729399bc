package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// The manifest of ../shared/models: models, each with cases (a dim binding,
// input files and reference output files).
type manifest struct {
	Models []modelSpec
}

type modelSpec struct {
	Name  string
	File  string
	Cases []caseSpec
}

type caseSpec struct {
	Name    string
	Binding []dimBind
	GFLOP   float64
	Inputs  []tensorSpec
	Outputs []tensorSpec
}

type dimBind struct {
	Name  string
	Value int64
}

type tensorSpec struct {
	Name string
	File string
}

// parseManifest reads manifest.json keeping the order of its objects' keys
// (the table follows the manifest's order).
func parseManifest(data []byte) (*manifest, error) {
	var top struct {
		Models json.RawMessage `json:"models"`
	}
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	if len(top.Models) == 0 {
		return nil, fmt.Errorf("manifest: no \"models\"")
	}
	var m manifest
	err := eachKey(top.Models, func(name string, raw json.RawMessage) error {
		var mm struct {
			File  string          `json:"file"`
			Cases json.RawMessage `json:"cases"`
		}
		if err := json.Unmarshal(raw, &mm); err != nil {
			return fmt.Errorf("model %s: %w", name, err)
		}
		if mm.File == "" {
			return fmt.Errorf("model %s: no \"file\"", name)
		}
		ms := modelSpec{Name: name, File: mm.File}
		err := eachKey(mm.Cases, func(cname string, raw json.RawMessage) error {
			var cc struct {
				Binding json.RawMessage `json:"binding"`
				GFLOP   float64         `json:"gflop"`
				Inputs  json.RawMessage `json:"inputs"`
				Outputs json.RawMessage `json:"outputs"`
			}
			if err := json.Unmarshal(raw, &cc); err != nil {
				return fmt.Errorf("model %s case %s: %w", name, cname, err)
			}
			cs := caseSpec{Name: cname, GFLOP: cc.GFLOP}
			if err := eachKey(cc.Binding, func(d string, raw json.RawMessage) error {
				var v int64
				if err := json.Unmarshal(raw, &v); err != nil {
					return fmt.Errorf("binding %s: %w", d, err)
				}
				cs.Binding = append(cs.Binding, dimBind{d, v})
				return nil
			}); err != nil {
				return fmt.Errorf("model %s case %s: %w", name, cname, err)
			}
			for _, io := range []struct {
				raw json.RawMessage
				dst *[]tensorSpec
			}{{cc.Inputs, &cs.Inputs}, {cc.Outputs, &cs.Outputs}} {
				if err := eachKey(io.raw, func(t string, raw json.RawMessage) error {
					var ts struct {
						File string `json:"file"`
					}
					if err := json.Unmarshal(raw, &ts); err != nil || ts.File == "" {
						return fmt.Errorf("tensor %s: no \"file\"", t)
					}
					*io.dst = append(*io.dst, tensorSpec{t, ts.File})
					return nil
				}); err != nil {
					return fmt.Errorf("model %s case %s: %w", name, cname, err)
				}
			}
			if len(cs.Inputs) == 0 || len(cs.Outputs) == 0 {
				return fmt.Errorf("model %s case %s: needs inputs and outputs", name, cname)
			}
			ms.Cases = append(ms.Cases, cs)
			return nil
		})
		if err != nil {
			return err
		}
		m.Models = append(m.Models, ms)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	return &m, nil
}

// eachKey calls fn for each member of a JSON object, in the order written.
// A missing (empty or null) object has no members.
func eachKey(raw json.RawMessage, fn func(string, json.RawMessage) error) error {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("want a JSON object, got %v", tok)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return err
		}
		if err := fn(key, val); err != nil {
			return err
		}
	}
	return nil
}

// bindArgs is the rlxc --bind flags for a case.
func (c caseSpec) bindArgs() []string {
	var args []string
	for _, b := range c.Binding {
		args = append(args, "--bind", fmt.Sprintf("%s=%d", b.Name, b.Value))
	}
	return args
}

// bindingString is "batch=1,seq=128".
func (c caseSpec) bindingString() string {
	var parts []string
	for _, b := range c.Binding {
		parts = append(parts, fmt.Sprintf("%s=%d", b.Name, b.Value))
	}
	return strings.Join(parts, ",")
}

// selectCases filters the manifest by model and case names (nil: all) and
// reports names that match nothing.
func selectCases(m *manifest, models, cases []string) ([]modelSpec, error) {
	known := map[string]bool{}
	knownCases := map[string]bool{}
	var allModels []string
	for _, mm := range m.Models {
		known[mm.Name] = true
		allModels = append(allModels, mm.Name)
		for _, c := range mm.Cases {
			knownCases[c.Name] = true
		}
	}
	for _, n := range models {
		if !known[n] {
			return nil, fmt.Errorf("no model %q in the manifest (it has %s)", n, strings.Join(allModels, ", "))
		}
	}
	for _, n := range cases {
		if !knownCases[n] {
			var all []string
			for k := range knownCases {
				all = append(all, k)
			}
			sort.Strings(all)
			return nil, fmt.Errorf("no case %q in the manifest (it has %s)", n, strings.Join(all, ", "))
		}
	}
	in := func(list []string, s string) bool {
		if list == nil {
			return true
		}
		for _, x := range list {
			if x == s {
				return true
			}
		}
		return false
	}
	var out []modelSpec
	for _, mm := range m.Models {
		if !in(models, mm.Name) {
			continue
		}
		sel := mm
		sel.Cases = nil
		for _, c := range mm.Cases {
			if in(cases, c.Name) {
				sel.Cases = append(sel.Cases, c)
			}
		}
		if len(sel.Cases) > 0 {
			out = append(out, sel)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--models/--cases select nothing")
	}
	return out, nil
}

// splitList splits "a,b" into its non-empty parts; "" is nil (everything).
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// parseThreads parses "1,2" into positive thread counts.
func parseThreads(s string) ([]int, error) {
	var out []int
	for _, p := range splitList(s) {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--threads: %q is not a positive integer", p)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--threads: empty")
	}
	return out, nil
}

// tolerance is the --atol of the correctness check: 1e-4 * max(1, max|ref|).
func tolerance(refAbsMax float64) float64 {
	return 1e-4 * math.Max(1, refAbsMax)
}

// rlxBench is what `rlxrun bench --json` prints.
type rlxBench struct {
	P50MS      float64 `json:"p50_ms"`
	P90MS      float64 `json:"p90_ms"`
	P99MS      float64 `json:"p99_ms"`
	Runs       int     `json:"runs"`
	Threads    int     `json:"threads"`
	Throughput float64 `json:"throughput_per_s"`
	Code       string  `json:"code"` // native x86-64-v4, portable, ...
}

// usPerRun is a run's time in microseconds: the median, or where that is
// under 20 us (rlxrun bench reports whole microseconds), the mean over the
// timed runs, 1/throughput.
func (b rlxBench) usPerRun() float64 {
	if b.P50MS < 0.02 && b.Throughput > 0 {
		return 1e6 / b.Throughput
	}
	return b.P50MS * 1e3
}

func parseRlxBench(out []byte) (rlxBench, error) {
	var b rlxBench
	if err := json.Unmarshal(bytes.TrimSpace(out), &b); err != nil {
		return b, fmt.Errorf("rlxrun bench --json: %w (output %q)", err, clip(string(out), 200))
	}
	if b.P50MS <= 0 && b.Throughput > 0 && b.Runs > 0 {
		b.P50MS = 1e3 / b.Throughput // a run under rlxrun's 1 us resolution
	}
	if b.P50MS <= 0 || b.Runs <= 0 {
		return b, fmt.Errorf("rlxrun bench --json: no p50_ms/runs in %q", clip(string(out), 200))
	}
	return b, nil
}

// rlxCheck is the part of `rlxrun --json --expect` the driver reads.
type rlxCheck struct {
	OK      bool `json:"ok"`
	Outputs []struct {
		Name     string `json:"name"`
		Expected *struct {
			OK         bool    `json:"ok"`
			MaxAbsDiff float64 `json:"max_abs_diff"`
		} `json:"expected"`
	} `json:"outputs"`
}

// parseRlxCheck returns whether output name matched and its max |got-ref|.
func parseRlxCheck(out []byte, name string) (ok bool, maxAbsDiff float64, err error) {
	var c rlxCheck
	if err := json.Unmarshal(bytes.TrimSpace(out), &c); err != nil {
		return false, 0, fmt.Errorf("rlxrun --json: %w (output %q)", err, clip(string(out), 200))
	}
	for _, o := range c.Outputs {
		if o.Name == name && o.Expected != nil {
			return o.Expected.OK, o.Expected.MaxAbsDiff, nil
		}
	}
	return false, 0, fmt.Errorf("rlxrun --json: no comparison for output %q", name)
}

// ortResult is one row of run_ort.mjs --json.
type ortResult struct {
	MedianMS float64 `json:"median_ms"`
	Runs     int     `json:"runs"`
	Outputs  map[string]struct {
		MaxAbsDiff  *float64 `json:"max_abs_diff"`
		NOutsideTol int      `json:"n_outside_tol"`
		Nonfinite   int      `json:"nonfinite"`
		ShapeOK     bool     `json:"shape_ok"`
		Error       string   `json:"error"`
	} `json:"outputs"`
}

type ortFile struct {
	ORTVersion map[string]string `json:"ort_version"`
	Node       string            `json:"node"`
	Rows       []struct {
		Model   string `json:"model"`
		Case    string `json:"case"`
		Threads int    `json:"threads"`
		ortResult
	} `json:"rows"`
}

// parseORT finds (model, case, threads) in run_ort.mjs's JSON, and says
// whether ORT's outputs are within the tolerance it was given.
func parseORT(data []byte, model, cas string, threads int) (r ortResult, ok bool, maxAbsDiff float64, version string, err error) {
	var f ortFile
	if err := json.Unmarshal(data, &f); err != nil {
		return r, false, 0, "", fmt.Errorf("run_ort.mjs --json: %w", err)
	}
	version = f.ORTVersion["node"]
	for _, row := range f.Rows {
		if row.Model != model || row.Case != cas || row.Threads != threads {
			continue
		}
		if row.MedianMS <= 0 {
			return r, false, 0, version, fmt.Errorf("run_ort.mjs: no median for %s %s T=%d", model, cas, threads)
		}
		ok = len(row.Outputs) > 0
		for _, o := range row.Outputs {
			if o.Error != "" || !o.ShapeOK || o.Nonfinite > 0 || o.NOutsideTol > 0 || o.MaxAbsDiff == nil {
				ok = false
			}
			if o.MaxAbsDiff != nil {
				maxAbsDiff = math.Max(maxAbsDiff, *o.MaxAbsDiff)
			}
		}
		return row.ortResult, ok, maxAbsDiff, version, nil
	}
	return r, false, 0, version, fmt.Errorf("run_ort.mjs: no row for %s %s T=%d", model, cas, threads)
}

// gemmKey is a square GEMM size at a thread count.
type gemmKey struct{ N, Threads int }

var goBenchGemmLine = regexp.MustCompile(`^BenchmarkGemm/n=(\d+)/threads=(\d+)(?:-\d+)?\s+\d+\s+(.*)$`)

// parseGoBenchGemm reads GFLOP/s per (n, threads) from `go test -bench
// BenchmarkGemm` output.
func parseGoBenchGemm(out string) (map[gemmKey]float64, error) {
	res := map[gemmKey]float64{}
	sawLine := false
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		m := goBenchGemmLine.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		sawLine = true
		n, _ := strconv.Atoi(m[1])
		t, _ := strconv.Atoi(m[2])
		f := strings.Fields(m[3])
		for i := 1; i < len(f); i++ {
			if f[i] == "GFLOP/s" {
				v, err := strconv.ParseFloat(f[i-1], 64)
				if err == nil {
					res[gemmKey{n, t}] = v
				}
			}
		}
	}
	if !sawLine {
		return nil, fmt.Errorf("no BenchmarkGemm/n=N/threads=T lines in the go test output")
	}
	if len(res) == 0 {
		return nil, fmt.Errorf("BenchmarkGemm reports no GFLOP/s metric")
	}
	return res, nil
}

// openBLASResult is one size of sgemm_openblas's output.
type openBLASResult struct {
	Best, Median float64
}

// parseOpenBLAS reads sgemm_openblas's table (N best_GF/s med_GF/s calls
// max_rel_err) and its config line.
func parseOpenBLAS(out string) (map[int]openBLASResult, string, error) {
	res := map[int]openBLASResult{}
	config := ""
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if c, ok := strings.CutPrefix(line, "openblas config:"); ok {
			config = strings.TrimSpace(c)
			continue
		}
		f := strings.Fields(line)
		if len(f) != 5 {
			continue
		}
		n, err1 := strconv.Atoi(f[0])
		best, err2 := strconv.ParseFloat(f[1], 64)
		med, err3 := strconv.ParseFloat(f[2], 64)
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		res[n] = openBLASResult{best, med}
	}
	if len(res) == 0 {
		return nil, config, fmt.Errorf("no results in sgemm_openblas output %q", clip(out, 300))
	}
	return res, config, nil
}

// cpuModel reads the first "model name" of /proc/cpuinfo's text.
func cpuModel(cpuinfo string) string {
	sc := bufio.NewScanner(strings.NewReader(cpuinfo))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

// formatTable renders a Markdown table with padded columns; right[i] right-
// aligns column i (numbers).
func formatTable(header []string, rows [][]string, right []bool) string {
	w := make([]int, len(header))
	for i, h := range header {
		w[i] = len(h)
	}
	for _, r := range rows {
		for i := range header {
			if i < len(r) && len(r[i]) > w[i] {
				w[i] = len(r[i])
			}
		}
	}
	var b strings.Builder
	line := func(cells []string) {
		b.WriteString("|")
		for i := range header {
			c := ""
			if i < len(cells) {
				c = cells[i]
			}
			pad := strings.Repeat(" ", w[i]-len(c))
			if i < len(right) && right[i] {
				b.WriteString(" " + pad + c + " |")
			} else {
				b.WriteString(" " + c + pad + " |")
			}
		}
		b.WriteString("\n")
	}
	line(header)
	b.WriteString("|")
	for i := range header {
		dash := strings.Repeat("-", w[i])
		if i < len(right) && right[i] {
			dash = dash[:w[i]-1] + ":"
		}
		b.WriteString(" " + dash + " |")
	}
	b.WriteString("\n")
	for _, r := range rows {
		line(r)
	}
	return b.String()
}

// fmtMS prints a latency with about four significant digits; 0 is "-".
func fmtMS(ms float64) string {
	switch {
	case ms <= 0 || math.IsNaN(ms):
		return "-"
	case ms < 10:
		return strconv.FormatFloat(ms, 'f', 3, 64)
	case ms < 100:
		return strconv.FormatFloat(ms, 'f', 2, 64)
	default:
		return strconv.FormatFloat(ms, 'f', 1, 64)
	}
}

// fmtFixed prints v with d decimals; 0 is "-".
func fmtFixed(v float64, d int) string {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', d, 64)
}

// ratio is a/b, or 0 when either is missing.
func ratio(a, b float64) float64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	return a / b
}

// pairedRatio is the median over rounds of a[i]/b[i], the rounds where
// both were measured, or 0 if there are none.
func pairedRatio(a, b []float64) float64 {
	var rs []float64
	for i := range min(len(a), len(b)) {
		if r := ratio(a[i], b[i]); r > 0 {
			rs = append(rs, r)
		}
	}
	if len(rs) == 0 {
		return 0
	}
	slices.Sort(rs)
	if n := len(rs); n%2 == 0 {
		return (rs[n/2-1] + rs[n/2]) / 2
	}
	return rs[len(rs)/2]
}

// minPositive is the smallest positive value, or 0 if there is none.
func minPositive(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		if x > 0 && (m == 0 || x < m) {
			m = x
		}
	}
	return m
}

func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
