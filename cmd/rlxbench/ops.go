package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rlx-project/rlx/internal/atomicfile"
	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/tensor"
	"github.com/rlx-project/rlx/pkg/tensor/npy"
)

// opsChunk is how many grid points share one run_ort.mjs process per
// round: its start-up is paid once per chunk, and its sessions (weights
// included) stay few enough to keep memory small.
const opsChunk = 12

// opRow is one line of the --ops table: a grid point at a thread count.
type opRow struct {
	ID         string  `json:"id"`
	Family     string  `json:"family"`
	Op         string  `json:"op"`
	Shape      string  `json:"shape"`
	Attrs      string  `json:"attrs,omitempty"`
	Threads    int     `json:"threads"`
	GFLOP      float64 `json:"gflop,omitempty"`
	MB         float64 `json:"mb,omitempty"` // inputs and output, for GB/s
	Check      string  `json:"check"`        // ok, DIFF (rlx and ORT disagree), ERR (rlx failed), ORT-ERR, - (no ORT)
	MaxAbsDiff float64 `json:"max_abs_diff,omitempty"`
	Atol       float64 `json:"atol,omitempty"`
	RlxUS      float64 `json:"rlx_us,omitempty"`
	ORTUS      float64 `json:"ort_us,omitempty"`
	Ratio      float64 `json:"ort_over_rlx,omitempty"`
	Rate       float64 `json:"rlx_rate,omitempty"` // GFLOP/s with GFLOP, else GB/s
	RateUnit   string  `json:"rlx_rate_unit,omitempty"`
	RlxCode    string  `json:"rlx_code,omitempty"` // rlxrun bench's code: native x86-64-v4, portable

	Errors []string `json:"errors,omitempty"`

	rlxRounds, ortRounds []float64
}

// familySummary is the worst and the geometric mean ORT/rlx of a family
// at a thread count, over its rows with a ratio.
type familySummary struct {
	Family  string  `json:"family"`
	Threads int     `json:"threads"`
	N       int     `json:"n"`
	Worst   float64 `json:"worst"`
	WorstAt string  `json:"worst_at"`
	Geomean float64 `json:"geomean"`
}

type opsResults struct {
	Date     string          `json:"date"`
	Machine  machine         `json:"machine"`
	Settings any             `json:"settings"`
	Rows     []opRow         `json:"rows"`
	Summary  []familySummary `json:"summary,omitempty"`
	WallS    float64         `json:"wall_s"`
}

// opPrep is a grid point made ready to run: its files and artifact.
type opPrep struct {
	c         *opCase
	id, dir   string
	art       string
	inputArgs []string
	outFiles  map[string]string // output name -> rlx's output .npy
	mb        float64
	err       string // rlx could not build or run it
	ortErr    string // ORT could not run it
}

func (d *driver) mainOps(stdout, stderr io.Writer) int {
	cfg := &d.cfg
	problems := d.findRepo()
	if cfg.benchDir == "" && d.repo != "" {
		if p := filepath.Join(d.repo, "..", "shared", "bench"); dirExists(p) {
			cfg.benchDir = p
		}
	}
	if cfg.benchDir != "" {
		cfg.benchDir, _ = filepath.Abs(cfg.benchDir)
	} else if !cfg.skipORT {
		problems = append(problems, "no peer benchmark scripts (../shared/bench): pass --bench-dir, or --no-ort")
		cfg.skipORT = true
	}
	if cfg.binDir != "" {
		for _, t := range []string{"rlxc", "rlxrun"} {
			if _, err := os.Stat(filepath.Join(cfg.binDir, t)); err != nil {
				problems = append(problems, fmt.Sprintf("--bin %s has no %s (make build)", cfg.binDir, t))
			}
		}
	}
	needORTInstall := d.checkORT(&problems)
	var grid []*opCase
	for _, c := range opsGrid(cfg.quick) {
		if cfg.opsFilter == nil || cfg.opsFilter.MatchString(c.Family) || cfg.opsFilter.MatchString(c.Op) || cfg.opsFilter.MatchString(c.Attrs) {
			grid = append(grid, &c)
		}
	}
	if len(grid) == 0 && len(cfg.qdq) == 0 {
		problems = append(problems, "--ops-filter selects no grid point")
	}
	if len(problems) > 0 {
		fmt.Fprintln(stderr, "rlxbench: cannot run:")
		for _, p := range problems {
			fmt.Fprintln(stderr, "  -", p)
		}
		return 2
	}
	var err error
	if d.tmp, err = os.MkdirTemp("", "rlxbench-ops-"); err != nil {
		fmt.Fprintln(stderr, "rlxbench:", err)
		return 2
	}
	res := opsResults{Date: time.Now().Format(time.RFC3339), Machine: d.machineInfo()}
	filter := ""
	if cfg.opsFilter != nil {
		filter = cfg.opsFilter.String()
	}
	res.Settings = map[string]any{"threads": cfg.threads, "rounds": cfg.rounds, "warmup": cfg.warmup, "runs": cfg.runs,
		"time": cfg.dur.String(), "quick": cfg.quick, "ops_filter": filter, "no_ort": cfg.skipORT, "cpu": cfg.cpu}
	if err := d.setupTools(needORTInstall); err != nil {
		fmt.Fprintln(stderr, "rlxbench:", err)
		return 2
	}
	if len(cfg.qdq) > 0 {
		// quantized models, alone when no --ops-filter asks for the grid
		if cfg.opsFilter == nil {
			grid = nil
		}
		for _, name := range cfg.qdq {
			c, err := d.qdqCase(name)
			if err != nil {
				fmt.Fprintln(stderr, "rlxbench:", err)
				return 2
			}
			grid = append(grid, c)
		}
	}
	d.logf("%d grid points, threads %v", len(grid), cfg.threads)
	for i := 0; i < len(grid); i += opsChunk {
		rows := d.runOpsChunk(grid[i:min(i+opsChunk, len(grid))], i)
		res.Rows = append(res.Rows, rows...)
		if d.ctx.Err() != nil {
			fmt.Fprintln(stderr, "rlxbench: interrupted")
			return 130
		}
	}
	res.Machine.ORT = d.res.Machine.ORT
	res.Summary = summarize(res.Rows, cfg.threads)
	res.WallS = time.Since(d.start).Seconds()
	res.Machine.LoadAvgEnd = loadAvg()
	fmt.Fprint(stdout, renderOps(&res, cfg))
	code := 0
	for _, r := range res.Rows {
		if r.Check == "DIFF" || r.Check == "ERR" {
			code = 1
		}
	}
	if cfg.jsonPath != "" {
		if err := writeJSON(cfg.jsonPath, &res); err != nil {
			fmt.Fprintln(stderr, "rlxbench:", err)
			code = 1
		} else {
			fmt.Fprintln(stderr, "rlxbench: wrote", cfg.jsonPath)
		}
	}
	return code
}

// writeFile writes data through a temp file and a rename.
func writeFile(path string, data []byte) error {
	return atomicfile.Write(path, 0o644, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

func dirExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// prepareOp writes a grid point's model and inputs, builds it with rlxc
// and runs it once for its outputs (the reference ORT's are compared to).
func (d *driver) prepareOp(c *opCase, index int) *opPrep {
	p := &opPrep{c: c, id: fmt.Sprintf("op%03d", index), outFiles: map[string]string{}}
	p.dir = filepath.Join(d.tmp, "ops", p.id)
	fail := func(format string, a ...any) *opPrep {
		p.err = fmt.Sprintf(format, a...)
		d.logf("%s %s %s: %s", c.Op, c.Shape, c.Attrs, p.err)
		return p
	}
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		return fail("%v", err)
	}
	m, ins, err := c.model(uint64(index) + 1)
	if err != nil {
		return fail("%v", err)
	}
	b, err := onnxpb.Encode(m)
	if err != nil {
		return fail("%v", err)
	}
	if err := writeFile(filepath.Join(p.dir, "model.onnx"), b); err != nil {
		return fail("%v", err)
	}
	for _, in := range c.inputs {
		f := filepath.Join(p.dir, "in_"+in.name+".npy")
		if err := npy.WriteFile(f, ins[in.name]); err != nil {
			return fail("%v", err)
		}
		p.inputArgs = append(p.inputArgs, "--input", in.name+"=@"+f)
		p.mb += in.bytes() / 1e6
	}
	p.art = filepath.Join(p.dir, "model.rlx")
	args := []string{"build", filepath.Join(p.dir, "model.onnx"), "-o", p.art, "--no-cache"}
	if d.cfg.cpu != "" {
		args = append(args, "--cpu", d.cfg.cpu)
	}
	if _, e, err := d.exec(p.dir, nil, d.rlxc, args...); err != nil {
		return fail("rlxc build: %v: %s", err, clip(e, 300))
	}
	outDir := filepath.Join(p.dir, "out")
	args = append(append([]string{p.art}, p.inputArgs...), "--output-dir", outDir, "--threads", "1")
	if _, e, err := d.exec(p.dir, nil, d.rlxrun, args...); err != nil {
		return fail("rlxrun: %v: %s", err, clip(e, 300))
	}
	for _, o := range c.node.Outputs {
		f := filepath.Join(outDir, o+".npy")
		t, err := npy.ReadFile(f)
		if err != nil {
			return fail("rlx output %s: %v", o, err)
		}
		p.outFiles[o] = f
		p.mb += float64(tensor.NumElements(t.Shape)*int64(t.DType.Size())) / 1e6
	}
	return p
}

// runOpsChunk prepares a chunk of grid points, then times them in rounds:
// rlxrun bench for each point and thread count, then one run_ort.mjs
// over the chunk.
func (d *driver) runOpsChunk(cases []*opCase, first int) []opRow {
	cfg := &d.cfg
	preps := make([]*opPrep, len(cases))
	for i, c := range cases {
		d.logf("[%d] %s %s %s %s: build", first+i, c.Family, c.Op, c.Shape, c.Attrs)
		preps[i] = d.prepareOp(c, first+i)
	}
	rows := make([][]opRow, len(preps))
	for i, p := range preps {
		rows[i] = make([]opRow, len(cfg.threads))
		for j, t := range cfg.threads {
			rows[i][j] = opRow{ID: p.id, Family: p.c.Family, Op: p.c.Op, Shape: p.c.Shape, Attrs: p.c.Attrs, Threads: t,
				GFLOP: p.c.flop / 1e9, MB: p.mb}
		}
	}
	checked := make([]bool, len(preps))
	for r := 0; r < cfg.rounds && d.ctx.Err() == nil; r++ {
		for i, p := range preps {
			if p.err != "" {
				continue
			}
			for j, t := range cfg.threads {
				args := append(append([]string{"bench", p.art}, p.inputArgs...), "--threads", strconv.Itoa(t),
					"--warmup", strconv.Itoa(cfg.warmup), "--json")
				if cfg.runs > 0 {
					args = append(args, "--runs", strconv.Itoa(cfg.runs))
				} else {
					args = append(args, "--time", cfg.dur.String())
				}
				out, e, err := d.exec(p.dir, nil, d.rlxrun, args...)
				if err != nil {
					rows[i][j].Errors = append(rows[i][j].Errors, fmt.Sprintf("rlxrun bench: %v: %s", err, clip(e, 300)))
				} else if b, err := parseRlxBench([]byte(out)); err != nil {
					rows[i][j].Errors = append(rows[i][j].Errors, err.Error())
				} else {
					rows[i][j].rlxRounds = append(rows[i][j].rlxRounds, b.usPerRun())
					rows[i][j].RlxCode = b.Code
				}
			}
		}
		if cfg.skipORT {
			continue
		}
		var run []*opPrep
		for _, p := range preps {
			if p.ortErr == "" {
				run = append(run, p)
			}
		}
		if len(run) == 0 {
			continue
		}
		res, err := d.runORTOps(run, r)
		if err != nil && len(run) > 1 {
			// One model ORT refuses stops the whole process: run each alone.
			d.logf("run_ort.mjs over the chunk failed (%v); one model at a time", clip(err.Error(), 200))
			res = map[ortKey]ortOpResult{}
			for _, p := range run {
				one, err := d.runORTOps([]*opPrep{p}, r)
				if err != nil {
					p.ortErr = clip(err.Error(), 300)
					continue
				}
				for k, v := range one {
					res[k] = v
				}
			}
		} else if err != nil {
			for _, p := range run {
				p.ortErr = clip(err.Error(), 300)
			}
		}
		for i, p := range preps {
			for j, t := range cfg.threads {
				o, ok := res[ortKey{p.id, t}]
				if !ok {
					continue
				}
				rows[i][j].ortRounds = append(rows[i][j].ortRounds, o.MedianMS*1e3)
				if !checked[i] && p.err == "" {
					checked[i] = true
					rows[i][0].MaxAbsDiff, rows[i][0].Atol = o.maxAbsDiff, tolerance(o.refAbsMax)
					rows[i][0].Check = "ok"
					if !o.ok || !(o.maxAbsDiff <= rows[i][0].Atol) {
						rows[i][0].Check = "DIFF"
					}
				}
			}
		}
		for i := range preps {
			d.logf("[%s] %s %s round %d/%d: rlx %s us, ORT %s us", preps[i].id, preps[i].c.Op, preps[i].c.Shape, r+1, cfg.rounds,
				fmtUS(last(rows[i][0].rlxRounds)), fmtUS(last(rows[i][0].ortRounds)))
		}
	}
	var out []opRow
	for i, p := range preps {
		for j := range rows[i] {
			row := &rows[i][j]
			row.Check, row.MaxAbsDiff, row.Atol = rows[i][0].Check, rows[i][0].MaxAbsDiff, rows[i][0].Atol
			switch {
			case p.err != "":
				row.Check = "ERR"
				row.Errors = append([]string{p.err}, row.Errors...)
			case cfg.skipORT:
				row.Check = "-"
			case p.ortErr != "" || row.Check == "":
				row.Check = "ORT-ERR"
				if p.ortErr != "" {
					row.Errors = append(row.Errors, "ORT: "+p.ortErr)
				}
			}
			row.RlxUS, row.ORTUS = minPositive(row.rlxRounds), minPositive(row.ortRounds)
			if row.Check == "ok" {
				row.Ratio = ratio(row.ORTUS, row.RlxUS)
			}
			if row.RlxUS > 0 {
				// A whole model's rate is its FLOPs' (from its manifest);
				// without them, the bytes of its inputs and outputs say
				// nothing of its speed, so it has none.
				if row.GFLOP > 0 {
					row.Rate, row.RateUnit = row.GFLOP/(row.RlxUS*1e-6), "GFLOP/s"
				} else if row.MB > 0 && row.Family != "qdq" {
					row.Rate, row.RateUnit = row.MB/1e3/(row.RlxUS*1e-6), "GB/s"
				}
			}
			out = append(out, *row)
		}
	}
	return out
}

type ortKey struct {
	id      string
	threads int
}

type ortOpResult struct {
	MedianMS              float64
	ok                    bool
	maxAbsDiff, refAbsMax float64
}

// runORTOps writes a manifest of the grid points (rlx's outputs as the
// references) and runs run_ort.mjs over it for one round.
func (d *driver) runORTOps(preps []*opPrep, round int) (map[ortKey]ortOpResult, error) {
	cfg := &d.cfg
	type tfile struct {
		File string `json:"file"`
	}
	type mcase struct {
		Binding map[string]int64 `json:"binding"`
		GFLOP   float64          `json:"gflop,omitempty"`
		Inputs  map[string]tfile `json:"inputs"`
		Outputs map[string]tfile `json:"outputs"`
	}
	type mmodel struct {
		File  string           `json:"file"`
		Cases map[string]mcase `json:"cases"`
	}
	// run_ort.mjs joins the files to the manifest's directory.
	root := filepath.Join(d.tmp, "ops")
	rel := func(f string) string {
		if r, err := filepath.Rel(root, f); err == nil {
			return r
		}
		return f
	}
	models := map[string]mmodel{}
	for _, p := range preps {
		c := mcase{Binding: map[string]int64{}, GFLOP: p.c.flop / 1e9, Inputs: map[string]tfile{}, Outputs: map[string]tfile{}}
		for _, in := range p.c.inputs {
			c.Inputs[in.name] = tfile{rel(filepath.Join(p.dir, "in_"+in.name+".npy"))}
		}
		for o, f := range p.outFiles {
			c.Outputs[o] = tfile{rel(f)}
		}
		models[p.id] = mmodel{File: rel(filepath.Join(p.dir, "model.onnx")), Cases: map[string]mcase{"c": c}}
	}
	data, err := json.Marshal(map[string]any{"models": models})
	if err != nil {
		return nil, err
	}
	man := filepath.Join(root, fmt.Sprintf("manifest-%s-%d.json", preps[0].id, round))
	if err := writeFile(man, data); err != nil {
		return nil, err
	}
	var threads []string
	for _, t := range cfg.threads {
		threads = append(threads, strconv.Itoa(t))
	}
	jf := strings.TrimSuffix(man, ".json") + "-ort.json"
	args := []string{filepath.Join(cfg.ortDir, "run_ort.mjs"), "--manifest", man, "--threads", strings.Join(threads, ","),
		"--rounds", "1", "--warmup", strconv.Itoa(cfg.warmup), "--rtol", "0", "--atol", "0", "--json", jf}
	if cfg.runs > 0 {
		args = append(args, "--min-runs", strconv.Itoa(cfg.runs), "--max-runs", strconv.Itoa(cfg.runs), "--budget-ms", "0")
	} else {
		args = append(args, "--min-runs", "3", "--max-runs", "1000000", "--budget-ms", strconv.FormatInt(cfg.dur.Milliseconds(), 10))
	}
	if _, e, err := d.exec(d.tmp, nil, "node", args...); err != nil {
		return nil, fmt.Errorf("run_ort.mjs: %v: %s", err, ortError(e))
	}
	if data, err = os.ReadFile(jf); err != nil {
		return nil, err
	}
	return parseORTOps(data, &d.res.Machine)
}

// parseORTOps reads every row of run_ort.mjs --json. Its outputs' check
// ran with --atol 0 --rtol 0; the driver applies the tolerance itself
// from max|diff| and max|ref|.
func parseORTOps(data []byte, m *machine) (map[ortKey]ortOpResult, error) {
	var f struct {
		ORTVersion map[string]string `json:"ort_version"`
		Node       string            `json:"node"`
		Rows       []struct {
			Model    string  `json:"model"`
			Threads  int     `json:"threads"`
			MedianMS float64 `json:"median_ms"`
			Outputs  map[string]struct {
				MaxAbsDiff *float64 `json:"max_abs_diff"`
				RefAbsMax  float64  `json:"ref_abs_max"`
				Nonfinite  int      `json:"nonfinite"`
				ShapeOK    bool     `json:"shape_ok"`
				Error      string   `json:"error"`
			} `json:"outputs"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("run_ort.mjs --json: %w", err)
	}
	if v := f.ORTVersion["node"]; v != "" {
		m.ORT = "onnxruntime-node " + v
	}
	res := map[ortKey]ortOpResult{}
	for _, r := range f.Rows {
		o := ortOpResult{MedianMS: r.MedianMS, ok: len(r.Outputs) > 0 && r.MedianMS > 0}
		for _, out := range r.Outputs {
			if out.Error != "" || !out.ShapeOK || out.Nonfinite > 0 || out.MaxAbsDiff == nil {
				o.ok = false
				continue
			}
			o.maxAbsDiff = math.Max(o.maxAbsDiff, *out.MaxAbsDiff)
			o.refAbsMax = math.Max(o.refAbsMax, out.RefAbsMax)
		}
		res[ortKey{r.Model, r.Threads}] = o
	}
	return res, nil
}

// ortError is the message of node's stack trace: its first line that is
// not a source line or a frame.
func ortError(stderr string) string {
	for _, l := range strings.Split(stderr, "\n") {
		if l = strings.TrimSpace(l); strings.Contains(l, "Error") && !strings.HasPrefix(l, "at ") {
			return l
		}
	}
	return clip(stderr, 300)
}

// summarize gives each family's worst and geometric-mean ORT/rlx per
// thread count, over the rows that have a ratio (checked and timed).
func summarize(rows []opRow, threads []int) []familySummary {
	var fams []string
	for _, r := range rows {
		if !contains(fams, r.Family) {
			fams = append(fams, r.Family)
		}
	}
	var out []familySummary
	for _, f := range fams {
		for _, t := range threads {
			s := familySummary{Family: f, Threads: t}
			logSum := 0.0
			for _, r := range rows {
				if r.Family != f || r.Threads != t || r.Ratio <= 0 {
					continue
				}
				s.N++
				logSum += math.Log(r.Ratio)
				if s.Worst == 0 || r.Ratio < s.Worst {
					s.Worst, s.WorstAt = r.Ratio, strings.TrimSpace(r.Op+" "+r.Shape+" "+r.Attrs)
				}
			}
			if s.N > 0 {
				s.Geomean = math.Exp(logSum / float64(s.N))
				out = append(out, s)
			}
		}
	}
	return out
}

// worstRows are the n rows with the lowest ORT/rlx.
func worstRows(rows []opRow, n int) []opRow {
	var rs []opRow
	for _, r := range rows {
		if r.Ratio > 0 {
			rs = append(rs, r)
		}
	}
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Ratio < rs[j].Ratio })
	return rs[:min(n, len(rs))]
}

func fmtUS(us float64) string {
	switch {
	case us <= 0 || math.IsNaN(us):
		return "-"
	case us < 100:
		return strconv.FormatFloat(us, 'f', 1, 64)
	default:
		return strconv.FormatFloat(us, 'f', 0, 64)
	}
}

func fmtRate(r opRow) string {
	if r.Rate <= 0 {
		return "-"
	}
	return strconv.FormatFloat(r.Rate, 'f', 1, 64) + " " + r.RateUnit
}

func opRowCells(r opRow) []string {
	diff := "-"
	if r.Check == "ok" || r.Check == "DIFF" {
		diff = strconv.FormatFloat(r.MaxAbsDiff, 'e', 1, 64)
	}
	return []string{r.Family, r.Op, r.Shape, r.Attrs, strconv.Itoa(r.Threads), r.Check, diff,
		fmtUS(r.RlxUS), fmtUS(r.ORTUS), fmtFixed(r.Ratio, 2), fmtRate(r)}
}

var opHeader = []string{"family", "op", "shape", "attributes", "threads", "check", "max abs diff", "rlx us", "ORT us", "ORT/rlx", "rlx rate"}
var opRight = []bool{false, false, false, false, true, false, true, true, true, true, true}

// renderOps is the --ops report: machine, the 10 worst ratios, the
// per-family summary, the full table and the problems.
func renderOps(res *opsResults, cfg *config) string {
	var b strings.Builder
	m := res.Machine
	how := reportHeader(&b, "# rlx vs ONNX Runtime, single operators, "+res.Date, m, cfg)
	if cfg.skipORT {
		fmt.Fprintf(&b, "timing:  per grid point and thread count, %d round(s) of rlxrun bench, each %d warm-up runs then %s; the value is the lowest round median (us; under 20 us the mean, rlxrun's median having 1 us steps)\n", cfg.rounds, cfg.warmup, how)
		fmt.Fprintf(&b, "check:   none (--no-ort); ERR: rlx could not build or run it\n")
	} else {
		fmt.Fprintf(&b, "timing:  per grid point and thread count, %d round(s) of (rlxrun bench, run_ort.mjs), each %d warm-up runs then %s; the value is the lowest round median (us; rlx's under 20 us is the mean, rlxrun's median having 1 us steps); ORT's includes node's hand-off to the native session (several us)\n", cfg.rounds, cfg.warmup, how)
		fmt.Fprintf(&b, "check:   ORT's output against rlx's on the same random inputs: max|diff| <= 1e-4*max(1,max|ref|), else DIFF; ERR: rlx could not build or run it\n")
	}
	fmt.Fprintf(&b, "rate:    rlx's GFLOP/s for conv and matmul, GB/s (inputs and output, once) for the rest\n\n")
	if !cfg.skipORT {
		if w := worstRows(res.Rows, 10); len(w) > 0 {
			b.WriteString("## The 10 worst ORT/rlx (below 1: ORT is faster)\n\n")
			var rows [][]string
			for _, r := range w {
				rows = append(rows, opRowCells(r))
			}
			b.WriteString(formatTable(opHeader, rows, opRight))
			b.WriteString("\n")
		}
		if len(res.Summary) > 0 {
			b.WriteString("## Per family: worst and geometric mean ORT/rlx\n\n")
			var rows [][]string
			for _, s := range res.Summary {
				rows = append(rows, []string{s.Family, strconv.Itoa(s.Threads), strconv.Itoa(s.N), fmtFixed(s.Worst, 2), s.WorstAt, fmtFixed(s.Geomean, 2)})
			}
			b.WriteString(formatTable([]string{"family", "threads", "points", "worst", "worst at", "geomean"}, rows,
				[]bool{false, true, true, true, false, true}))
			b.WriteString("\n")
		}
	}
	b.WriteString("## Every grid point\n\n")
	var rows [][]string
	var notes []string
	for _, r := range res.Rows {
		rows = append(rows, opRowCells(r))
		for _, e := range r.Errors {
			n := fmt.Sprintf("%s %s %s %s: %s", r.Op, r.Shape, r.Attrs, r.ID, e)
			if !contains(notes, n) {
				notes = append(notes, n)
			}
		}
	}
	b.WriteString(formatTable(opHeader, rows, opRight))
	b.WriteString("\nORT/rlx > 1 means rlx is faster.\n")
	if len(notes) > 0 {
		b.WriteString("\nProblems:\n")
		for _, n := range notes {
			b.WriteString("- " + strings.ReplaceAll(n, "\n", " ") + "\n")
		}
	}
	fmt.Fprintf(&b, "\nwall time: %s\n", time.Duration(res.WallS*float64(time.Second)).Round(time.Second))
	return b.String()
}
