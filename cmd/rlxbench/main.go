// Command rlxbench measures rlx against ONNX Runtime in the same run on this
// machine and prints one table: for every model and case of
// ../shared/models/manifest.json and each thread count, rlx's latency
// (rlxrun bench), ORT's (../shared/bench/ort/run_ort.mjs), their ratio, the
// correctness check of rlx's outputs against the PyTorch reference, and the
// cold and cache-hit compile time; then GEMM GFLOP/s of rlx's kernel next to
// OpenBLAS. `make bench` runs it.
//
// rlx and ORT measurements alternate per case (rlx, ORT, rlx, ORT, ...) and
// each side reports its lowest round median, so a burst of outside load on a
// shared machine hits one round rather than one side. Since one quiet round
// for either side then decides the ratio, the table also gives the median
// over rounds of each round's own ratio (ORT's median over the rlx median
// measured just before it): a burst that spans a whole round moves both
// sides of that round's ratio.
//
// With --ops (`make bench-ops`) it times single-operator ONNX models
// instead, written in Go (opsgrid.go: a grid per operator family, weights
// and inputs seeded random) and run by rlx and by ONNX Runtime on the same
// files; ORT's outputs are checked against rlx's, and the report gives the
// ten worst ORT/rlx ratios, each family's worst and geometric mean, and
// every grid point with rlx's GFLOP/s or GB/s (ops.go). --ops-filter
// narrows the grid, --quick shrinks it to a smoke, --no-ort runs rlx only.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rlx-project/rlx/internal/atomicfile"
	"github.com/rlx-project/rlx/pkg/tensor"
	"github.com/rlx-project/rlx/pkg/tensor/npy"
)

type config struct {
	manifest, benchDir, ortDir, binDir, jsonPath string
	cpu                                          string // rlxc build --cpu, "" for its default
	models, cases                                []string
	threads, gemmSizes                           []int
	runs, rounds, warmup                         int
	dur, gemmTime                                time.Duration
	skipGemm, skipORT, keep, noInstall           bool
	// --ops: single-operator models (ops.go).
	ops, quick bool
	opsFilter  *regexp.Regexp
	qdq        []string // --qdq: manifest models quantized (qdq.go), timed as grid points
}

// row is one line of the table: a case at a thread count.
type row struct {
	Model         string    `json:"model"`
	Case          string    `json:"case"`
	Binding       string    `json:"binding"`
	GFLOP         float64   `json:"gflop,omitempty"`
	Threads       int       `json:"threads"`
	Check         string    `json:"check"` // ok, FAIL (wrong answer), ERR (no answer)
	MaxAbsDiff    float64   `json:"max_abs_diff"`
	Atol          float64   `json:"atol"`
	RlxMS         float64   `json:"rlx_ms,omitempty"`
	RlxRoundsMS   []float64 `json:"rlx_round_p50_ms,omitempty"`
	ORTMS         float64   `json:"ort_ms,omitempty"`
	ORTRoundsMS   []float64 `json:"ort_round_median_ms,omitempty"`
	ORTCheck      string    `json:"ort_check,omitempty"`
	ORTMaxAbsDiff float64   `json:"ort_max_abs_diff,omitempty"`
	Ratio         float64   `json:"ort_over_rlx,omitempty"`
	PairedRatio   float64   `json:"ort_over_rlx_round_median,omitempty"`
	CompileColdMS float64   `json:"compile_cold_ms,omitempty"`
	CompileHitMS  float64   `json:"compile_hit_ms,omitempty"`
	CacheHit      bool      `json:"cache_hit"`
	Errors        []string  `json:"errors,omitempty"`
}

type gemmRow struct {
	N              int     `json:"n"`
	Threads        int     `json:"threads"`
	RlxGFLOPS      float64 `json:"rlx_gflops,omitempty"`
	OpenBLASGFLOPS float64 `json:"openblas_median_gflops,omitempty"`
	OpenBLASBest   float64 `json:"openblas_best_gflops,omitempty"`
	Ratio          float64 `json:"rlx_over_openblas,omitempty"`
}

type machine struct {
	CPU            string `json:"cpu"`
	NCPU           int    `json:"ncpu"`
	OSArch         string `json:"os_arch"`
	LoadAvg        string `json:"load_average_at_start"`
	LoadAvgEnd     string `json:"load_average_at_end"`
	Go             string `json:"go"`
	RlxCommit      string `json:"rlx_commit"`
	ORT            string `json:"ort,omitempty"`
	Node           string `json:"node,omitempty"`
	OpenBLASConfig string `json:"openblas,omitempty"`
}

type results struct {
	Date      string    `json:"date"`
	Machine   machine   `json:"machine"`
	Settings  any       `json:"settings"`
	Rows      []row     `json:"rows"`
	Gemm      []gemmRow `json:"gemm,omitempty"`
	GemmNotes []string  `json:"gemm_notes,omitempty"`
	WallS     float64   `json:"wall_s"`
}

type driver struct {
	cfg      config
	ctx      context.Context
	repo     string // module root, for go build / go test
	tmp      string
	rlxc     string
	rlxrun   string
	mroot    string // directory of the manifest
	start    time.Time
	res      results
	openblas string // built sgemm_openblas, "" if unavailable
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "rlxbench:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	d := &driver{cfg: cfg, ctx: ctx, start: time.Now()}
	var code int
	if cfg.ops {
		code = d.mainOps(stdout, stderr)
	} else {
		code = d.main(stdout, stderr)
	}
	if d.tmp != "" {
		if cfg.keep {
			fmt.Fprintln(stderr, "rlxbench: kept", d.tmp)
		} else {
			os.RemoveAll(d.tmp)
		}
	}
	return code
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("rlxbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	var models, cases, threads, sizes string
	fs.StringVar(&c.manifest, "manifest", "", "models manifest (default: ../shared/models/manifest.json from the repo root)")
	fs.StringVar(&c.benchDir, "bench-dir", "", "peer benchmark scripts (default: ../bench next to the manifest's directory)")
	fs.StringVar(&c.ortDir, "ort-dir", "/tmp/rlx-ort", "onnxruntime-node install (installed there with bench/ort/install.sh if missing)")
	fs.StringVar(&c.binDir, "bin", "", "directory with built rlxc and rlxrun (default: go build them into the temp dir)")
	fs.StringVar(&c.jsonPath, "json", "", "also write the results as JSON to this file")
	fs.StringVar(&c.cpu, "cpu", "", "rlxc build --cpu: the CPU levels rlx compiles native code for, or portable (default: rlxc's default, this machine's level where clang is installed)")
	fs.StringVar(&models, "models", "", "comma-separated models (default: all in the manifest)")
	fs.StringVar(&cases, "cases", "", "comma-separated cases (default: all)")
	fs.StringVar(&threads, "threads", "1,2", "comma-separated thread counts")
	fs.IntVar(&c.runs, "runs", 0, "timed runs per measurement (default: run for --time)")
	fs.DurationVar(&c.dur, "time", time.Second, "how long each measurement runs when --runs is not given")
	fs.IntVar(&c.rounds, "rounds", 5, "interleaved rounds per case (rlx, ORT, rlx, ORT, ...); the lowest round median counts")
	fs.IntVar(&c.warmup, "warmup", 5, "untimed runs before each measurement")
	fs.StringVar(&sizes, "gemm-sizes", "256,512,1024,2048", "square GEMM sizes")
	fs.DurationVar(&c.gemmTime, "gemm-time", 500*time.Millisecond, "time per GEMM size and thread count")
	fs.BoolVar(&c.skipGemm, "skip-gemm", false, "skip the GEMM comparison")
	fs.BoolVar(&c.skipORT, "skip-ort", false, "skip ONNX Runtime (rlx only)")
	fs.BoolVar(&c.skipORT, "no-ort", false, "the same as --skip-ort")
	fs.BoolVar(&c.ops, "ops", false, "time single-operator ONNX models over a grid per operator family instead of the manifest's models (--time defaults to 200ms and --rounds to 2 here)")
	fs.BoolVar(&c.quick, "quick", false, "with --ops: a small grid, for a smoke test")
	var filter string
	fs.StringVar(&filter, "ops-filter", "", "with --ops: only the grid points whose family, ONNX op name or attributes match this regular expression (case-insensitive)")
	var qdq string
	fs.StringVar(&qdq, "qdq", "", "with --ops: comma-separated manifest models (resnet18,mobilenet_v2) quantized to QDQ form here (every Conv, MatMul and Gemm with initializer weights: int8 per output channel, uint8 activations calibrated on the b1 input), timed as grid points of family qdq, rlx's outputs checked against ORT's")
	fs.BoolVar(&c.keep, "keep", false, "keep the temp dir (artifacts, logs)")
	fs.BoolVar(&c.noInstall, "no-install", false, "never install missing dependencies (onnxruntime-node, libopenblas-dev)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: rlxbench [flags]\n\nMeasures rlx against ONNX Runtime and OpenBLAS on this machine and prints one table.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var err error
	if c.threads, err = parseThreads(threads); err != nil {
		return c, err
	}
	if c.gemmSizes, err = parseThreads(sizes); err != nil {
		return c, fmt.Errorf("--gemm-sizes: %q", sizes)
	}
	c.models, c.cases, c.qdq = splitList(models), splitList(cases), splitList(qdq)
	if filter != "" {
		if c.opsFilter, err = regexp.Compile("(?i)" + filter); err != nil {
			return c, fmt.Errorf("--ops-filter: %v", err)
		}
	}
	if c.ops {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if !set["time"] {
			c.dur = 200 * time.Millisecond
		}
		if !set["rounds"] {
			c.rounds = 2
		}
		if !set["warmup"] {
			c.warmup = 3
		}
		c.skipGemm = true
	} else if c.quick || c.opsFilter != nil || len(c.qdq) > 0 {
		return c, fmt.Errorf("--quick, --ops-filter and --qdq go with --ops")
	}
	if c.runs < 0 || c.rounds < 1 || c.warmup < 0 || c.dur <= 0 || c.gemmTime <= 0 {
		return c, fmt.Errorf("--runs, --warmup must be >= 0, --rounds >= 1, --time and --gemm-time > 0")
	}
	return c, nil
}

func (d *driver) logf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "[%5.1fs] %s\n", time.Since(d.start).Seconds(), fmt.Sprintf(format, a...))
}

// exec runs a command in dir and returns its stdout and stderr; err is
// non-nil if it could not start or exited non-zero (see exitCode).
func (d *driver) exec(dir string, env []string, name string, args ...string) (string, string, error) {
	cmd := exec.CommandContext(d.ctx, name, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if d.ctx.Err() != nil {
		err = d.ctx.Err()
	}
	return out.String(), errb.String(), err
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

func (d *driver) main(stdout, stderr io.Writer) int {
	cfg := &d.cfg
	problems := d.findRepo()
	if cfg.manifest == "" {
		for _, base := range []string{d.repo, "."} {
			for _, rel := range []string{"../shared/models/manifest.json", "shared/models/manifest.json"} {
				p := filepath.Join(base, rel)
				if _, err := os.Stat(p); err == nil && cfg.manifest == "" {
					cfg.manifest = p
				}
			}
		}
		if cfg.manifest == "" {
			problems = append(problems, "no models manifest: ../shared/models/manifest.json not found; pass --manifest")
		}
	}
	var sel []modelSpec
	if cfg.manifest != "" {
		cfg.manifest, _ = filepath.Abs(cfg.manifest)
		d.mroot = filepath.Dir(cfg.manifest)
		if cfg.benchDir == "" {
			cfg.benchDir = filepath.Join(d.mroot, "..", "bench")
		}
		data, err := os.ReadFile(cfg.manifest)
		var m *manifest
		if err == nil {
			m, err = parseManifest(data)
		}
		if err == nil {
			sel, err = selectCases(m, cfg.models, cfg.cases)
		}
		if err != nil {
			problems = append(problems, err.Error())
		}
		for _, mm := range sel {
			files := []string{mm.File}
			for _, c := range mm.Cases {
				for _, t := range append(append([]tensorSpec(nil), c.Inputs...), c.Outputs...) {
					files = append(files, t.File)
				}
			}
			for _, f := range files {
				if _, err := os.Stat(filepath.Join(d.mroot, f)); err != nil {
					problems = append(problems, fmt.Sprintf("model %s: %v", mm.Name, err))
				}
			}
		}
	}
	if cfg.benchDir != "" {
		cfg.benchDir, _ = filepath.Abs(cfg.benchDir)
	} else if !cfg.skipORT || !cfg.skipGemm {
		problems = append(problems, "no peer benchmark scripts (../shared/bench): pass --bench-dir, or --skip-ort and --skip-gemm")
		cfg.skipORT, cfg.skipGemm = true, true // nothing more to check there
	}
	if cfg.binDir != "" {
		for _, t := range []string{"rlxc", "rlxrun"} {
			if _, err := os.Stat(filepath.Join(cfg.binDir, t)); err != nil {
				problems = append(problems, fmt.Sprintf("--bin %s has no %s (make build)", cfg.binDir, t))
			}
		}
	}
	needORTInstall := d.checkORT(&problems)
	if !cfg.skipGemm {
		if _, err := exec.LookPath("gcc"); err != nil {
			problems = append(problems, "gcc is not on PATH: the OpenBLAS GEMM timer is C (apt-get install -y gcc libopenblas-dev), or pass --skip-gemm")
		}
		if _, err := os.Stat(filepath.Join(cfg.benchDir, "gemm", "sgemm_openblas.c")); err != nil {
			problems = append(problems, fmt.Sprintf("no %s (pass --bench-dir or --skip-gemm)", filepath.Join(cfg.benchDir, "gemm", "sgemm_openblas.c")))
		}
	}
	if len(problems) > 0 {
		fmt.Fprintln(stderr, "rlxbench: cannot run:")
		for _, p := range problems {
			fmt.Fprintln(stderr, "  -", p)
		}
		return 2
	}

	var err error
	if d.tmp, err = os.MkdirTemp("", "rlxbench-"); err != nil {
		fmt.Fprintln(stderr, "rlxbench:", err)
		return 2
	}
	d.res.Date = time.Now().Format(time.RFC3339)
	d.res.Machine = d.machineInfo()
	d.res.Settings = map[string]any{
		"manifest": cfg.manifest, "threads": cfg.threads, "rounds": cfg.rounds, "warmup": cfg.warmup,
		"runs": cfg.runs, "time": cfg.dur.String(), "gemm_sizes": cfg.gemmSizes, "gemm_time": cfg.gemmTime.String(),
		"skip_ort": cfg.skipORT, "skip_gemm": cfg.skipGemm, "cpu": cfg.cpu,
	}

	if err := d.setupTools(needORTInstall); err != nil {
		fmt.Fprintln(stderr, "rlxbench:", err)
		return 2
	}
	for _, mm := range sel {
		for _, c := range mm.Cases {
			if d.ctx.Err() != nil {
				fmt.Fprintln(stderr, "rlxbench: interrupted")
				return 130
			}
			d.res.Rows = append(d.res.Rows, d.runCase(mm, c)...)
		}
	}
	if !cfg.skipGemm {
		d.runGemm()
	}
	if d.ctx.Err() != nil {
		fmt.Fprintln(stderr, "rlxbench: interrupted")
		return 130
	}
	d.res.WallS = time.Since(d.start).Seconds()
	d.res.Machine.LoadAvgEnd = loadAvg()
	fmt.Fprint(stdout, d.render())
	code := 0
	for _, r := range d.res.Rows {
		if r.Check != "ok" || len(r.Errors) > 0 {
			code = 1
		}
	}
	if cfg.jsonPath != "" {
		if err := writeJSON(cfg.jsonPath, &d.res); err != nil {
			fmt.Fprintln(stderr, "rlxbench:", err)
			code = 1
		} else {
			fmt.Fprintln(stderr, "rlxbench: wrote", cfg.jsonPath)
		}
	}
	return code
}

// findRepo sets d.repo, the module root (for go build of the tools and go
// test of the GEMM kernel), or says why it cannot.
func (d *driver) findRepo() []string {
	if out, _, err := d.exec("", nil, "go", "env", "GOMOD"); err == nil && strings.TrimSpace(out) != "" && strings.TrimSpace(out) != os.DevNull {
		d.repo = filepath.Dir(strings.TrimSpace(out))
		return nil
	} else if _, lerr := exec.LookPath("go"); lerr != nil {
		return []string{"go is not on PATH (needed to build rlxc/rlxrun and for the GEMM benchmark)"}
	}
	return []string{"not inside the rlx module: run rlxbench from the repo (make bench)"}
}

// checkORT adds to problems what keeps ONNX Runtime from running (unless
// --skip-ort) and says whether onnxruntime-node is to be installed.
func (d *driver) checkORT(problems *[]string) bool {
	cfg := &d.cfg
	if cfg.skipORT {
		return false
	}
	needORTInstall := false
	if _, err := exec.LookPath("node"); err != nil {
		*problems = append(*problems, "node is not on PATH: ONNX Runtime runs under Node.js >= 18 (apt-get install -y nodejs npm), or pass --skip-ort")
	}
	if _, err := os.Stat(filepath.Join(cfg.ortDir, "node_modules", "onnxruntime-node")); err != nil {
		needORTInstall = true
		script := filepath.Join(cfg.benchDir, "ort", "install.sh")
		switch {
		case cfg.noInstall:
			*problems = append(*problems, fmt.Sprintf("onnxruntime-node is not installed in %s: run %s %s (or drop --no-install, or pass --skip-ort)", cfg.ortDir, script, cfg.ortDir))
		default:
			if _, err := exec.LookPath("npm"); err != nil {
				*problems = append(*problems, fmt.Sprintf("onnxruntime-node is not installed in %s and npm is not on PATH to install it (apt-get install -y npm), or pass --skip-ort", cfg.ortDir))
			}
			if _, err := os.Stat(script); err != nil {
				*problems = append(*problems, fmt.Sprintf("onnxruntime-node is not installed in %s and its installer %s is missing (pass --bench-dir or --skip-ort)", cfg.ortDir, script))
			}
		}
	}
	return needORTInstall
}

func (d *driver) machineInfo() machine {
	m := machine{NCPU: runtime.NumCPU(), OSArch: runtime.GOOS + "/" + runtime.GOARCH, CPU: "unknown CPU"}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		m.CPU = cpuModel(string(b))
	}
	m.LoadAvg = loadAvg()
	if out, _, err := d.exec(d.repo, nil, "go", "env", "GOVERSION"); err == nil {
		m.Go = strings.TrimSpace(out)
	}
	if out, _, err := d.exec(d.repo, nil, "git", "rev-parse", "--short", "HEAD"); err == nil {
		m.RlxCommit = strings.TrimSpace(out)
		if st, _, err := d.exec(d.repo, nil, "git", "status", "--porcelain", "--untracked-files=no"); err == nil && strings.TrimSpace(st) != "" {
			m.RlxCommit += " + uncommitted changes"
		}
	}
	if !d.cfg.skipORT {
		if out, _, err := d.exec("", nil, "node", "--version"); err == nil {
			m.Node = strings.TrimSpace(out)
		}
	}
	return m
}

// setupTools builds rlxc/rlxrun (unless --bin), installs onnxruntime-node
// if missing, and builds the OpenBLAS GEMM timer (installing
// libopenblas-dev if it is missing and this is root on a Debian machine).
func (d *driver) setupTools(needORTInstall bool) error {
	cfg := &d.cfg
	if cfg.binDir != "" {
		d.rlxc, _ = filepath.Abs(filepath.Join(cfg.binDir, "rlxc"))
		d.rlxrun, _ = filepath.Abs(filepath.Join(cfg.binDir, "rlxrun"))
	} else {
		d.logf("building rlxc and rlxrun")
		bin := filepath.Join(d.tmp, "bin")
		if _, e, err := d.exec(d.repo, nil, "go", "build", "-o", bin+"/", "./cmd/rlxc", "./cmd/rlxrun"); err != nil {
			return fmt.Errorf("go build ./cmd/rlxc ./cmd/rlxrun: %v\n%s", err, e)
		}
		d.rlxc, d.rlxrun = filepath.Join(bin, "rlxc"), filepath.Join(bin, "rlxrun")
	}
	if !cfg.skipORT && needORTInstall {
		script := filepath.Join(cfg.benchDir, "ort", "install.sh")
		d.logf("installing onnxruntime-node into %s (%s)", cfg.ortDir, script)
		if o, e, err := d.exec("", nil, "bash", script, cfg.ortDir); err != nil {
			return fmt.Errorf("%s %s failed (%v); is the npm registry reachable? Or pass --skip-ort\n%s%s", script, cfg.ortDir, err, o, e)
		}
	}
	if !cfg.skipORT {
		if _, err := os.Stat(filepath.Join(cfg.ortDir, "run_ort.mjs")); err != nil {
			return fmt.Errorf("no run_ort.mjs in %s: run %s %s", cfg.ortDir, filepath.Join(cfg.benchDir, "ort", "install.sh"), cfg.ortDir)
		}
	}
	if !cfg.skipGemm {
		if err := d.buildOpenBLAS(); err != nil {
			d.res.GemmNotes = append(d.res.GemmNotes, "OpenBLAS: "+err.Error())
			d.logf("OpenBLAS unavailable: %v", err)
		}
	}
	return nil
}

// buildOpenBLAS compiles bench/gemm/sgemm_openblas.c as run_gemm.sh does.
func (d *driver) buildOpenBLAS() error {
	src := filepath.Join(d.cfg.benchDir, "gemm", "sgemm_openblas.c")
	out := filepath.Join(d.tmp, "sgemm_openblas")
	compile := func() (string, error) {
		_, e, err := d.exec("", nil, "gcc", "-O2", "-Wall", "-o", out, src, "-lopenblas", "-lm")
		return e, err
	}
	e, err := compile()
	if err == nil {
		d.openblas = out
		return nil
	}
	missing := strings.Contains(e, "cblas.h") || strings.Contains(e, "lopenblas")
	if !missing {
		return fmt.Errorf("gcc %s: %v\n%s", src, err, e)
	}
	_, aptErr := exec.LookPath("apt-get")
	if d.cfg.noInstall || os.Geteuid() != 0 || aptErr != nil {
		return fmt.Errorf("OpenBLAS headers/library are missing (gcc: %s): install them with `apt-get install -y libopenblas-dev`, or pass --skip-gemm", clip(firstLine(e), 160))
	}
	d.logf("OpenBLAS missing; apt-get install -y libopenblas-dev")
	env := []string{"DEBIAN_FRONTEND=noninteractive"}
	if _, e2, err := d.exec("", env, "apt-get", "install", "-y", "libopenblas-dev"); err != nil {
		d.logf("apt-get install failed (%s); apt-get update and retry", clip(firstLine(e2), 120))
		d.exec("", env, "apt-get", "update")
		if _, e3, err := d.exec("", env, "apt-get", "install", "-y", "libopenblas-dev"); err != nil {
			return fmt.Errorf("apt-get install -y libopenblas-dev failed: %s", clip(e3, 300))
		}
	}
	if e, err = compile(); err != nil {
		return fmt.Errorf("gcc %s after installing libopenblas-dev: %v\n%s", src, err, e)
	}
	d.openblas = out
	return nil
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "error") {
			return strings.TrimSpace(l)
		}
	}
	return strings.TrimSpace(s)
}

// runCase builds, checks and times one case at every thread count.
func (d *driver) runCase(mm modelSpec, c caseSpec) []row {
	cfg := &d.cfg
	rows := make([]row, len(cfg.threads))
	for i, t := range cfg.threads {
		rows[i] = row{Model: mm.Name, Case: c.Name, Binding: c.bindingString(), GFLOP: c.GFLOP, Threads: t}
	}
	var caseErrs []string
	fail := func(format string, a ...any) {
		msg := fmt.Sprintf(format, a...)
		caseErrs = append(caseErrs, msg)
		d.logf("%s %s: %s", mm.Name, c.Name, msg)
	}
	tag := mm.Name + "-" + c.Name
	art := filepath.Join(d.tmp, tag+".rlx")
	model := filepath.Join(d.mroot, mm.File)

	// Tolerances from the references.
	atols := map[string]float64{}
	caseAtol := math.Inf(1)
	for _, o := range c.Outputs {
		m, err := refAbsMax(filepath.Join(d.mroot, o.File))
		if err != nil {
			fail("reference %s: %v", o.File, err)
			m = 0
		}
		atols[o.Name] = tolerance(m)
		caseAtol = math.Min(caseAtol, atols[o.Name])
	}
	var inputArgs []string
	for _, in := range c.Inputs {
		inputArgs = append(inputArgs, "--input", in.Name+"=@"+filepath.Join(d.mroot, in.File))
	}

	// Compile: cold into an empty cache dir, then a hit from the same dir.
	d.logf("%s %s (%s): rlxc build, cold and cache hit", mm.Name, c.Name, c.bindingString())
	cache := filepath.Join(d.tmp, "cache-"+tag)
	build := func(out string) (float64, string, error) {
		args := append([]string{"build", model, "-o", out, "--cache-dir", cache}, c.bindArgs()...)
		if d.cfg.cpu != "" {
			args = append(args, "--cpu", d.cfg.cpu)
		}
		t0 := time.Now()
		_, e, err := d.exec(d.tmp, nil, d.rlxc, args...)
		return float64(time.Since(t0).Microseconds()) / 1e3, e, err
	}
	cold, e, err := build(art)
	built := err == nil
	var hit float64
	cacheHit := false
	if err != nil {
		fail("rlxc build: %v: %s", err, clip(e, 600))
	} else {
		var e2 string
		hit, e2, err = build(filepath.Join(d.tmp, tag+".hit.rlx"))
		if err != nil {
			fail("rlxc build (second, cached): %v: %s", err, clip(e2, 600))
			hit = 0
		} else if cacheHit = strings.Contains(e2, "cache hit"); !cacheHit {
			fail("the second build was not a cache hit: %s", clip(e2, 300))
		}
		os.Remove(filepath.Join(d.tmp, tag+".hit.rlx"))
	}

	// Correctness: every output against its reference.
	check, maxDiff := "ERR", 0.0
	if built {
		check = "ok"
		for _, o := range c.Outputs {
			args := append([]string{art}, inputArgs...)
			args = append(args, "--expect", o.Name+"=@"+filepath.Join(d.mroot, o.File),
				"--rtol", "0", "--atol", strconv.FormatFloat(atols[o.Name], 'g', -1, 64), "--json")
			out, e, err := d.exec(d.tmp, nil, d.rlxrun, args...)
			switch code := exitCode(err); code {
			case 0, 1:
				ok, diff, perr := parseRlxCheck([]byte(out), o.Name)
				if perr != nil {
					fail("check %s: %v", o.Name, perr)
					check = "ERR"
					continue
				}
				maxDiff = math.Max(maxDiff, diff)
				if !ok || code == 1 {
					fail("output %s differs from the reference: max |got-ref| %.3g > atol %.3g", o.Name, diff, atols[o.Name])
					if check == "ok" {
						check = "FAIL"
					}
				}
			default:
				fail("rlxrun --expect %s: %v: %s", o.Name, err, clip(e, 600))
				check = "ERR"
			}
		}
		d.logf("%s %s: check %s (max |got-ref| %.3g)", mm.Name, c.Name, check, maxDiff)
	}

	// Timing: rounds of (rlx, ORT) per thread count.
	ortVersion := ""
	for r := 0; r < cfg.rounds; r++ {
		for i, t := range cfg.threads {
			if d.ctx.Err() != nil {
				return rows
			}
			if check == "ok" {
				args := append([]string{"bench", art}, inputArgs...)
				args = append(args, "--threads", strconv.Itoa(t), "--warmup", strconv.Itoa(cfg.warmup), "--json")
				if cfg.runs > 0 {
					args = append(args, "--runs", strconv.Itoa(cfg.runs))
				} else {
					args = append(args, "--time", cfg.dur.String())
				}
				out, e, err := d.exec(d.tmp, nil, d.rlxrun, args...)
				if err != nil {
					rows[i].Errors = append(rows[i].Errors, fmt.Sprintf("rlxrun bench: %v: %s", err, clip(e, 400)))
				} else if b, err := parseRlxBench([]byte(out)); err != nil {
					rows[i].Errors = append(rows[i].Errors, err.Error())
				} else {
					rows[i].RlxRoundsMS = append(rows[i].RlxRoundsMS, b.P50MS)
				}
			}
			if !cfg.skipORT {
				jf := filepath.Join(d.tmp, fmt.Sprintf("ort-%s-%d-%d.json", tag, t, r))
				args := []string{filepath.Join(cfg.ortDir, "run_ort.mjs"), "--manifest", cfg.manifest,
					"--models", mm.Name, "--cases", c.Name, "--threads", strconv.Itoa(t), "--rounds", "1",
					"--warmup", strconv.Itoa(cfg.warmup), "--rtol", "0",
					"--atol", strconv.FormatFloat(caseAtol, 'g', -1, 64), "--json", jf}
				if cfg.runs > 0 {
					args = append(args, "--min-runs", strconv.Itoa(cfg.runs), "--max-runs", strconv.Itoa(cfg.runs), "--budget-ms", "0")
				} else {
					args = append(args, "--min-runs", "10", "--max-runs", "1000000", "--budget-ms", strconv.FormatInt(cfg.dur.Milliseconds(), 10))
				}
				_, e, err := d.exec(d.tmp, nil, "node", args...)
				var data []byte
				if err == nil {
					data, err = os.ReadFile(jf)
				}
				if err != nil {
					rows[i].Errors = append(rows[i].Errors, fmt.Sprintf("run_ort.mjs: %v: %s", err, clip(e, 400)))
					continue
				}
				res, ok, diff, ver, perr := parseORT(data, mm.Name, c.Name, t)
				if perr != nil {
					rows[i].Errors = append(rows[i].Errors, perr.Error())
					continue
				}
				ortVersion = ver
				rows[i].ORTRoundsMS = append(rows[i].ORTRoundsMS, res.MedianMS)
				rows[i].ORTMaxAbsDiff = math.Max(rows[i].ORTMaxAbsDiff, diff)
				if !ok {
					rows[i].ORTCheck = "FAIL"
				} else if rows[i].ORTCheck == "" {
					rows[i].ORTCheck = "ok"
				}
			}
			d.logf("%s %s T=%d round %d/%d: rlx %s ms, ORT %s ms", mm.Name, c.Name, t, r+1, cfg.rounds,
				fmtMS(last(rows[i].RlxRoundsMS)), fmtMS(last(rows[i].ORTRoundsMS)))
		}
	}
	if ortVersion != "" {
		d.res.Machine.ORT = "onnxruntime-node " + ortVersion
	}
	for i := range rows {
		r := &rows[i]
		r.Check, r.MaxAbsDiff, r.Atol = check, maxDiff, caseAtol
		r.CompileColdMS, r.CompileHitMS, r.CacheHit = cold, hit, cacheHit
		if !built {
			r.CompileColdMS = 0
		}
		r.Errors = append(append([]string(nil), caseErrs...), r.Errors...)
		r.RlxMS = minPositive(r.RlxRoundsMS)
		r.ORTMS = minPositive(r.ORTRoundsMS)
		if check == "ok" {
			r.Ratio = ratio(r.ORTMS, r.RlxMS)
			r.PairedRatio = pairedRatio(r.ORTRoundsMS, r.RlxRoundsMS)
		}
	}
	return rows
}

// loadAvg is the 1, 5 and 15 minute load averages ("" off Linux): other
// work on a shared machine shows here, and most in the 2-thread numbers.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	if f := strings.Fields(string(b)); len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return ""
}

func last(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return xs[len(xs)-1]
}

// refAbsMax is max |x| over a reference .npy.
func refAbsMax(path string) (float64, error) {
	t, err := npy.ReadFile(path)
	if err != nil {
		return 0, err
	}
	m := 0.0
	switch t.DType {
	case tensor.F32:
		for _, v := range t.F32() {
			m = math.Max(m, math.Abs(float64(v)))
		}
	case tensor.F64:
		for _, v := range t.F64() {
			m = math.Max(m, math.Abs(v))
		}
	case tensor.I64:
		for _, v := range t.I64() {
			m = math.Max(m, math.Abs(float64(v)))
		}
	case tensor.I32:
		for _, v := range t.I32() {
			m = math.Max(m, math.Abs(float64(v)))
		}
	default:
		return 0, fmt.Errorf("dtype %s not supported for the tolerance", t.DType)
	}
	return m, nil
}

// runGemm times rlx's GEMM kernel (go test -bench BenchmarkGemm) and
// OpenBLAS's cblas_sgemm at each size and thread count, interleaved.
func (d *driver) runGemm() {
	cfg := &d.cfg
	var sizes, threads []string
	for _, n := range cfg.gemmSizes {
		sizes = append(sizes, strconv.Itoa(n))
	}
	for _, t := range cfg.threads {
		threads = append(threads, strconv.Itoa(t))
	}
	pattern := fmt.Sprintf("^BenchmarkGemm$/^n=(%s)$/^threads=(%s)$", strings.Join(sizes, "|"), strings.Join(threads, "|"))
	rlx := map[gemmKey]float64{}
	blas := map[gemmKey]openBLASResult{}
	rlxFailed := false
	for r := 0; r < cfg.rounds && d.ctx.Err() == nil; r++ {
		if !rlxFailed {
			d.logf("GEMM round %d/%d: rlx (go test -bench BenchmarkGemm ./pkg/targets/cpu/kernels/gemm)", r+1, cfg.rounds)
			out, e, err := d.exec(d.repo, nil, "go", "test", "./pkg/targets/cpu/kernels/gemm", "-run", "^$",
				"-bench", pattern, "-benchtime", cfg.gemmTime.String(), "-count", "1")
			var got map[gemmKey]float64
			if err == nil {
				got, err = parseGoBenchGemm(out)
			}
			if err != nil {
				d.res.GemmNotes = append(d.res.GemmNotes, fmt.Sprintf("rlx: go test -bench BenchmarkGemm: %v %s", err, clip(e+out, 400)))
				rlxFailed = true
			}
			for k, v := range got {
				rlx[k] = math.Max(rlx[k], v)
			}
		}
		if d.openblas != "" {
			for _, t := range cfg.threads {
				d.logf("GEMM round %d/%d: OpenBLAS, %d thread(s)", r+1, cfg.rounds, t)
				args := append([]string{strconv.Itoa(t), strconv.FormatFloat(cfg.gemmTime.Seconds(), 'g', -1, 64)}, sizes...)
				out, e, err := d.exec("", nil, d.openblas, args...)
				var got map[int]openBLASResult
				var conf string
				if err == nil {
					got, conf, err = parseOpenBLAS(out)
				}
				if err != nil {
					d.res.GemmNotes = append(d.res.GemmNotes, fmt.Sprintf("OpenBLAS %d thread(s): %v %s", t, err, clip(e, 300)))
					continue
				}
				d.res.Machine.OpenBLASConfig = conf
				for n, v := range got {
					k := gemmKey{n, t}
					b := blas[k]
					blas[k] = openBLASResult{Best: math.Max(b.Best, v.Best), Median: math.Max(b.Median, v.Median)}
				}
			}
		}
	}
	var missing []string
	for _, n := range cfg.gemmSizes {
		for _, t := range cfg.threads {
			k := gemmKey{n, t}
			g := gemmRow{N: n, Threads: t, RlxGFLOPS: rlx[k], OpenBLASGFLOPS: blas[k].Median, OpenBLASBest: blas[k].Best}
			g.Ratio = ratio(g.RlxGFLOPS, g.OpenBLASGFLOPS)
			d.res.Gemm = append(d.res.Gemm, g)
			if !rlxFailed && rlx[k] == 0 {
				missing = append(missing, fmt.Sprintf("n=%d/threads=%d", n, t))
			}
		}
	}
	if len(missing) > 0 {
		d.res.GemmNotes = append(d.res.GemmNotes, "rlx: BenchmarkGemm (pkg/targets/cpu/kernels/gemm/gemm_test.go) has no case "+strings.Join(missing, ", "))
	}
}

// reportHeader writes a report's title and the lines both modes share
// (machine, rlx, ORT), and returns how long each timed run lasts.
func reportHeader(b *strings.Builder, title string, m machine, cfg *config) (how string) {
	fmt.Fprintf(b, "%s\n\n", title)
	fmt.Fprintf(b, "machine: %s, %d CPUs, %s; load average %s at start, %s at end\n", m.CPU, m.NCPU, m.OSArch, orDash(m.LoadAvg), orDash(m.LoadAvgEnd))
	code := "rlxc build's default CPU code"
	if cfg.cpu != "" {
		code = "rlxc build --cpu " + cfg.cpu
	}
	fmt.Fprintf(b, "rlx:     commit %s, %s, %s\n", orDash(m.RlxCommit), orDash(m.Go), code)
	if !cfg.skipORT {
		fmt.Fprintf(b, "ORT:     %s, node %s, CPU EP, graph optimizations all\n", orDash(m.ORT), orDash(m.Node))
	}
	if cfg.runs > 0 {
		return fmt.Sprintf("%d runs", cfg.runs)
	}
	return fmt.Sprintf("for %s", cfg.dur)
}

// render is the report: machine, the model table, notes, the GEMM table.
func (d *driver) render() string {
	var b strings.Builder
	m := d.res.Machine
	cfg := &d.cfg
	how := reportHeader(&b, "# rlx vs ONNX Runtime, "+d.res.Date, m, cfg)
	fmt.Fprintf(&b, "timing:  per case and thread count, %d interleaved round(s) of (rlxrun bench, run_ort.mjs), each %d warm-up runs then %s; the value is the lowest round median (ms); \"per round\" is the median over rounds of that round's ORT/rlx\n", cfg.rounds, cfg.warmup, how)
	fmt.Fprintf(&b, "check:   rlxrun --expect against the PyTorch reference, --rtol 0 --atol 1e-4*max(1,max|ref|); FAIL/ERR rows get no rlx time\n")
	fmt.Fprintf(&b, "compile: wall ms of rlxc build into an empty cache dir (cold), then again into the same dir (hit)\n\n")

	header := []string{"model", "case", "binding", "threads", "check", "max abs diff", "rlx ms", "ORT ms", "ORT/rlx", "per round", "compile cold ms", "compile hit ms"}
	right := []bool{false, false, false, true, false, true, true, true, true, true, true, true}
	var rows [][]string
	var notes []string
	for _, r := range d.res.Rows {
		check := r.Check
		diff := "-"
		if r.Check != "ERR" {
			diff = strconv.FormatFloat(r.MaxAbsDiff, 'e', 1, 64)
		}
		rlxMS, ratioS, pairedS := fmtMS(r.RlxMS), fmtFixed(r.Ratio, 2), fmtFixed(r.PairedRatio, 2)
		if r.Check != "ok" {
			rlxMS, ratioS, pairedS = r.Check, r.Check, r.Check
		}
		ortMS := fmtMS(r.ORTMS)
		if r.ORTCheck == "FAIL" {
			ortMS += " (wrong)"
		}
		hit := fmtFixed(r.CompileHitMS, 0)
		if r.CompileHitMS > 0 && !r.CacheHit {
			hit += " (miss)"
		}
		rows = append(rows, []string{r.Model, r.Case, r.Binding, strconv.Itoa(r.Threads), check, diff,
			rlxMS, ortMS, ratioS, pairedS, fmtFixed(r.CompileColdMS, 0), hit})
		for _, e := range r.Errors {
			n := fmt.Sprintf("%s %s: %s", r.Model, r.Case, e)
			if !contains(notes, n) {
				notes = append(notes, n)
			}
		}
		if r.ORTCheck == "FAIL" {
			notes = append(notes, fmt.Sprintf("%s %s T=%d: ORT's outputs are outside the same tolerance (max |diff| %.3g)", r.Model, r.Case, r.Threads, r.ORTMaxAbsDiff))
		}
	}
	b.WriteString(formatTable(header, rows, right))
	b.WriteString("\nORT/rlx > 1 (in either column) means rlx is faster.\n")
	if len(notes) > 0 {
		b.WriteString("\nProblems:\n")
		for _, n := range notes {
			b.WriteString("- " + strings.ReplaceAll(n, "\n", " ") + "\n")
		}
	}
	if !cfg.skipGemm {
		fmt.Fprintf(&b, "\n## GEMM, square f32, GFLOP/s (rlx: go test -bench BenchmarkGemm, median call, best of %d rounds; OpenBLAS: cblas_sgemm median call, best of %d rounds)\n", cfg.rounds, cfg.rounds)
		if m.OpenBLASConfig != "" {
			fmt.Fprintf(&b, "OpenBLAS: %s\n", m.OpenBLASConfig)
		}
		b.WriteString("\n")
		var grows [][]string
		for _, g := range d.res.Gemm {
			grows = append(grows, []string{strconv.Itoa(g.N), strconv.Itoa(g.Threads), fmtFixed(g.RlxGFLOPS, 1),
				fmtFixed(g.OpenBLASGFLOPS, 1), fmtFixed(g.Ratio, 3)})
		}
		b.WriteString(formatTable([]string{"N", "threads", "rlx GFLOP/s", "OpenBLAS GFLOP/s", "rlx/OpenBLAS"}, grows,
			[]bool{true, true, true, true, true}))
		for _, n := range d.res.GemmNotes {
			b.WriteString("- " + strings.ReplaceAll(n, "\n", " ") + "\n")
		}
	}
	fmt.Fprintf(&b, "\nwall time: %s\n", time.Duration(d.res.WallS*float64(time.Second)).Round(time.Second))
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// writeJSON writes v through a temp file and a rename (internal/atomicfile).
func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	return atomicfile.Write(path, 0o644, func(f *os.File) error {
		_, err := f.Write(append(data, '\n'))
		return err
	})
}
