package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rlx-project/rlx/internal/buildinfo"
	"github.com/rlx-project/rlx/internal/bytesize"
	"github.com/rlx-project/rlx/pkg/artifact"
	"github.com/rlx-project/rlx/pkg/loader"
	"github.com/rlx-project/rlx/pkg/tensor"
	"github.com/rlx-project/rlx/pkg/tensor/npy"
	"github.com/spf13/cobra"
)

var version = "0.1.0-dev"

type runFlags struct {
	inputs, outputs, expects []string
	fill                     string
	bind                     []string
	seed                     uint64
	outDir                   string
	atol, rtol               float64
	asJSON                   bool
	threads                  int
	maxMemory                string
}

func (f *runFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringArrayVar(&f.inputs, "input", nil, "an input: `NAME=@file.npy`, or @file.npz for every input it holds (repeatable)")
	fl.StringVar(&f.fill, "fill", "", "generate inputs not given: random or zeros")
	fl.Uint64Var(&f.seed, "seed", 0, "seed for --fill random")
	fl.StringSliceVar(&f.bind, "bind", nil, "the variant whose shapes --fill uses: `NAME=V`, repeatable or comma-separated; the dims named select it (default: the first variant)")
	fl.IntVar(&f.threads, "threads", 0, "worker threads (default 0: one per CPU)")
	fl.StringVar(&f.maxMemory, "max-memory", "", "host memory one run may allocate, e.g. `8GiB` or none (default: 3/4 of physical memory)")
}

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	var f runFlags
	root := &cobra.Command{
		Use:   "rlxrun FILE.rlx [--input NAME=@x.npy]... [--expect NAME=@ref.npy]...",
		Short: "Run a .rlx artifact",
		Long: `rlxrun maps an artifact built by rlxc, checks every section's digest,
picks the variant whose shapes match the inputs, and runs it.

Inputs: --input NAME=@file.npy (or @file.npz for all of its arrays), or
--fill random|zeros to generate the ones not given (in the shapes of the
first variant, or the one whose dims agree with --bind seq=128; random uses --seed). Outputs are summarized on stdout; write
them with --output NAME=@out.npy or --output-dir DIR, compare them with
--expect NAME=@ref.npy (|got-ref| <= atol + rtol*|ref| everywhere), and get
machine-readable results with --json.

Exit codes: 0 ok, 1 outputs differ from --expect, 3 file unreadable or
artifact corrupt, 4 internal error, 5 inputs do not fit the model, 6 the
artifact's device is not available here (no Vulkan or CUDA driver, or a
metal artifact off macOS), 7 a run needs more memory than --max-memory
allows, 64 bad command line (2 is a crash of the Go runtime).`,
		Example: `  rlxrun mlp.rlx --fill random
  rlxrun mlp.rlx --input x=@x.npy --expect y=@y.npy --atol 1e-5
  rlxrun enc.rlx --input @inputs.npz --output-dir out/ --json`,
		Version:       buildinfo.Describe(version),
		Args:          cobra.ExactArgs(1),
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runModel(cmd, args[0], &f)
		},
	}
	f.add(root)
	fl := root.Flags()
	fl.StringArrayVar(&f.outputs, "output", nil, "write an output: `NAME=@out.npy` (repeatable)")
	fl.StringVar(&f.outDir, "output-dir", "", "write every output to DIR/NAME.npy (NAME made a safe file name)")
	fl.StringArrayVar(&f.expects, "expect", nil, "compare an output with a reference: `NAME=@ref.npy` (repeatable)")
	fl.Float64Var(&f.atol, "atol", 1e-5, "absolute tolerance for --expect")
	fl.Float64Var(&f.rtol, "rtol", 1e-4, "relative tolerance for --expect")
	fl.BoolVar(&f.asJSON, "json", false, "print results as JSON")
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &exitError{code: exitUsage, err: err} })
	root.AddCommand(newInspectCmd(), newCheckCmd(), newBenchCmd(),
		&cobra.Command{Use: "version", Short: "Print the version and what this binary was built from", Args: cobra.NoArgs,
			Run: func(c *cobra.Command, _ []string) {
				fmt.Fprintln(c.OutOrStdout(), "rlxrun version", buildinfo.Describe(version))
			}})
	return root
}

// outputFiles names each output's file in --output-dir: its name with
// every character but letters, digits, '-', '_' and '.' replaced by '_'
// and a leading '.' escaped, so a name from the artifact ("../../x")
// never leaves the directory; names that collide get ~2, ~3, ....
func outputFiles(outs []loader.Named) map[string]string {
	files := map[string]string{}
	taken := map[string]bool{}
	for _, o := range outs {
		b := []byte(o.Name)
		for i, c := range b {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
				b[i] = '_'
			}
		}
		base := string(b)
		if base == "" || base[0] == '.' {
			base = "_" + base
		}
		name := base + ".npy"
		for k := 2; taken[name]; k++ {
			name = fmt.Sprintf("%s~%d.npy", base, k)
		}
		taken[name] = true
		files[o.Name] = name
	}
	return files
}

// runFailed gives a failed run its exit code: inputs that do not fit the
// model 5, a run past --max-memory 7, anything else (a kernel failing on a
// verified program) 4, a bug in rlx.
func runFailed(err error) error {
	var ie *loader.InputsError
	var me *loader.MemoryError
	switch {
	case errors.As(err, &ie):
		return fail(exitInputs, "%v", err)
	case errors.As(err, &me):
		return fail(exitMemory, "%v", err)
	}
	return fail(exitInternal, "%v", err)
}

// memoryLimit reads --max-memory: "" is the loader's default, "none" no limit.
func memoryLimit(s string) (int64, error) {
	switch s {
	case "":
		return 0, nil
	case "none":
		return -1, nil
	}
	n, err := bytesize.Parse(s)
	if err != nil {
		return 0, fail(exitUsage, "--max-memory: %v", err)
	}
	if n == 0 {
		return 0, fail(exitUsage, "--max-memory: 0 bytes would refuse every run")
	}
	return n, nil
}

func openModel(path string, threads int, maxMemory string) (*loader.Model, error) {
	if threads < 0 {
		return nil, fail(exitUsage, "--threads %d: want a count of worker threads, or 0 for one per CPU", threads)
	}
	limit, err := memoryLimit(maxMemory)
	if err != nil {
		return nil, err
	}
	m, err := loader.Open(path, loader.Options{Threads: threads, MaxMemory: limit})
	if err != nil {
		var de *loader.DeviceError
		var me *loader.MemoryError
		switch {
		case errors.As(err, &de):
			return nil, fail(exitDevice, "%v", err)
		case errors.As(err, &me):
			return nil, fail(exitMemory, "%v", err)
		case errors.Is(err, artifact.ErrNotArtifact) && (strings.HasSuffix(path, ".onnx") || strings.HasSuffix(path, ".hir")):
			return nil, fail(exitIO, "%v: rlxrun runs artifacts; build one first: rlxc build %s --bind NAME=V -o MODEL.rlx", err, path)
		}
		return nil, fail(exitIO, "%v", err)
	}
	return m, nil
}

// splitRef parses NAME=@path; name may be empty for @file.npz.
func splitRef(flag, s string) (name, path string, err error) {
	name, path, ok := strings.Cut(s, "=")
	if !ok {
		name, path = "", s
	}
	if !strings.HasPrefix(path, "@") || len(path) == 1 {
		return "", "", fail(exitUsage, "%s %q: want NAME=@file.npy", flag, s)
	}
	return name, path[1:], nil
}

// gatherInputs reads --input files and fills the rest per --fill.
func gatherInputs(m *loader.Model, f *runFlags) (map[string]*tensor.Tensor, error) {
	inputs := map[string]*tensor.Tensor{}
	for _, s := range f.inputs {
		name, path, err := splitRef("--input", s)
		if err != nil {
			return nil, err
		}
		if strings.HasSuffix(path, ".npz") {
			ts, names, err := npy.ReadNPZLimit(path, m.MaxMemory())
			if err != nil {
				return nil, fail(exitIO, "%v", err)
			}
			for _, n := range names {
				if name == "" || name == n {
					inputs[n] = ts[n]
				}
			}
			continue
		}
		if name == "" {
			return nil, fail(exitUsage, "--input %q: name the input: NAME=@%s", s, path)
		}
		t, err := npy.ReadFile(path)
		if err != nil {
			return nil, fail(exitIO, "%v", err)
		}
		inputs[name] = t
	}
	if f.fill == "" {
		return inputs, nil
	}
	if f.fill != "random" && f.fill != "zeros" {
		return nil, fail(exitUsage, "--fill %q: want random or zeros", f.fill)
	}
	var binding map[string]int64
	if len(f.bind) > 0 {
		binding = map[string]int64{}
		last := ""
		for _, kv := range f.bind {
			name, val, ok := strings.Cut(kv, "=")
			if !ok && last != "" {
				// rlxc build --bind seq=16,128 builds two variants; a run
				// picks one.
				return nil, fail(exitUsage, "--bind %s=...,%s: a run uses one variant; give one value for %s", last, kv, last)
			}
			v, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
			if !ok || err != nil || strings.TrimSpace(name) == "" {
				return nil, fail(exitUsage, "--bind %q: want NAME=V (e.g. --bind batch=1,seq=128)", kv)
			}
			last = strings.TrimSpace(name)
			binding[last] = v
		}
	}
	slots, err := m.Inputs(binding)
	if err != nil {
		var me *loader.MemoryError
		if errors.As(err, &me) {
			return nil, fail(exitMemory, "%v", err)
		}
		return nil, fail(exitInputs, "%v", err)
	}
	rng := rand.New(rand.NewPCG(f.seed, 0x726c78))
	for _, s := range slots {
		if _, ok := inputs[s.Name]; ok {
			continue
		}
		dt, _ := tensor.ParseDType(s.DType)
		t := tensor.New(dt, s.Shape...)
		if f.fill == "random" {
			fillRandom(t, rng)
		}
		inputs[s.Name] = t
	}
	return inputs, nil
}

// fillRandom fills floats with N(0,1)-ish values and integers with small
// non-negative ones (valid indices for small tables).
func fillRandom(t *tensor.Tensor, rng *rand.Rand) {
	switch t.DType {
	case tensor.F32:
		for i := range t.F32() {
			t.F32()[i] = float32(rng.NormFloat64())
		}
	case tensor.F64:
		for i := range t.F64() {
			t.F64()[i] = rng.NormFloat64()
		}
	case tensor.I64:
		for i := range t.I64() {
			t.I64()[i] = int64(rng.IntN(8))
		}
	case tensor.I32:
		for i := range t.I32() {
			t.I32()[i] = int32(rng.IntN(8))
		}
	default:
		for i := range t.Data {
			t.Data[i] = byte(rng.IntN(2))
		}
	}
}

type outputReport struct {
	Name     string    `json:"name"`
	DType    string    `json:"dtype"`
	Shape    []int64   `json:"shape"`
	Min      float64   `json:"min"`
	Max      float64   `json:"max"`
	Mean     float64   `json:"mean"`
	First    []float64 `json:"first"`
	Expected *compare  `json:"expected,omitempty"`
}

type compare struct {
	File      string  `json:"file"`
	OK        bool    `json:"ok"`
	MaxAbs    float64 `json:"max_abs_diff"`
	MaxRel    float64 `json:"max_rel_diff"`
	WorstAt   []int64 `json:"worst_index"`
	Got, Want float64 `json:"-"`
	Detail    string  `json:"detail,omitempty"`
}

func runModel(cmd *cobra.Command, path string, f *runFlags) error {
	m, err := openModel(path, f.threads, f.maxMemory)
	if err != nil {
		return err
	}
	defer m.Close()
	inputs, err := gatherInputs(m, f)
	if err != nil {
		return err
	}
	info, err := m.Info(inputs)
	if err != nil {
		return runFailed(err)
	}
	outs, err := m.Run(inputs)
	if err != nil {
		return runFailed(err)
	}
	expect := map[string]string{}
	for _, s := range f.expects {
		name, p, err := splitRef("--expect", s)
		if err != nil || name == "" {
			return fail(exitUsage, "--expect %q: want NAME=@ref.npy", s)
		}
		expect[name] = p
	}
	for _, s := range f.outputs {
		name, p, err := splitRef("--output", s)
		if err != nil || name == "" {
			return fail(exitUsage, "--output %q: want NAME=@out.npy", s)
		}
		if !hasOutput(outs, name) {
			return fail(exitUsage, "--output %s: the model has no output %s (it has %s)", name, name, outputNames(outs))
		}
		expect["\x00out:"+name] = p
	}
	var reports []outputReport
	mismatch := false
	files := outputFiles(outs)
	for _, o := range outs {
		r := summarize(o)
		if p, ok := expect["\x00out:"+o.Name]; ok {
			if err := npy.WriteFile(p, o.Tensor); err != nil {
				return fail(exitIO, "%v", err)
			}
		}
		if f.outDir != "" {
			if err := os.MkdirAll(f.outDir, 0o755); err != nil {
				return fail(exitIO, "%v", err)
			}
			if err := npy.WriteFile(filepath.Join(f.outDir, files[o.Name]), o.Tensor); err != nil {
				return fail(exitIO, "%v", err)
			}
		}
		if p, ok := expect[o.Name]; ok {
			ref, err := npy.ReadFile(p)
			if err != nil {
				return fail(exitIO, "%v", err)
			}
			c := compareTensors(o.Tensor, ref, f.atol, f.rtol)
			c.File = p
			r.Expected = c
			if !c.OK {
				mismatch = true
			}
			delete(expect, o.Name)
		}
		reports = append(reports, r)
	}
	for name := range expect {
		if !strings.HasPrefix(name, "\x00") {
			return fail(exitUsage, "--expect %s: the model has no output %s (it has %s)", name, name, outputNames(outs))
		}
	}
	w := cmd.OutOrStdout()
	if f.asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(runJSON{runHeader: header(runSchema, path, info), OK: !mismatch, Outputs: reports}); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(w, "%s: %s\n", path, describe(info))
		for _, r := range reports {
			fmt.Fprintf(w, "%s: %s%s  min %.6g  max %.6g  mean %.6g  first %v\n", r.Name, r.DType, tensor.ShapeString(r.Shape), r.Min, r.Max, r.Mean, short(r.First))
			if c := r.Expected; c != nil {
				status := "ok"
				if !c.OK {
					status = "MISMATCH"
				}
				fmt.Fprintf(w, "  vs %s: %s, max |diff| %.3g, max rel %.3g%s\n", c.File, status, c.MaxAbs, c.MaxRel, c.Detail)
			}
		}
	}
	if mismatch {
		for _, r := range reports {
			if c := r.Expected; c != nil && !c.OK {
				fmt.Fprintf(cmd.ErrOrStderr(), "rlxrun: output %s differs from %s: %s\n", r.Name, c.File, strings.TrimPrefix(c.Detail, ", "))
			}
		}
		return &exitError{code: exitMismatch}
	}
	return nil
}

func hasOutput(outs []loader.Named, name string) bool {
	for _, o := range outs {
		if o.Name == name {
			return true
		}
	}
	return false
}

func outputNames(outs []loader.Named) string {
	var n []string
	for _, o := range outs {
		n = append(n, o.Name)
	}
	return strings.Join(n, ", ")
}

func short(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf("%.5g", x)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func summarize(o loader.Named) outputReport {
	v := o.Tensor.Float64s()
	r := outputReport{Name: o.Name, DType: o.Tensor.DType.String(), Shape: o.Tensor.Shape}
	if len(v) > 0 {
		r.Min, r.Max = math.Inf(1), math.Inf(-1)
		sum := 0.0
		for _, x := range v {
			r.Min, r.Max = math.Min(r.Min, x), math.Max(r.Max, x)
			sum += x
		}
		r.Mean = sum / float64(len(v))
	}
	r.First = v[:min(len(v), 5)]
	return r
}

// compareTensors checks |got-ref| <= atol + rtol*|ref| elementwise (NaN
// matches NaN, infinities match themselves) and reports the worst element.
func compareTensors(got, ref *tensor.Tensor, atol, rtol float64) *compare {
	c := &compare{}
	if len(got.Shape) != len(ref.Shape) || tensor.NumElements(got.Shape) != tensor.NumElements(ref.Shape) {
		c.Detail = fmt.Sprintf(", shape %s vs reference %s", tensor.ShapeString(got.Shape), tensor.ShapeString(ref.Shape))
		return c
	}
	for i := range got.Shape {
		if got.Shape[i] != ref.Shape[i] {
			c.Detail = fmt.Sprintf(", shape %s vs reference %s", tensor.ShapeString(got.Shape), tensor.ShapeString(ref.Shape))
			return c
		}
	}
	g, r := got.Float64s(), ref.Float64s()
	worst, worstExcess := -1, 0.0
	for i := range g {
		a, b := g[i], r[i]
		if math.IsNaN(a) && math.IsNaN(b) || a == b {
			continue
		}
		d := math.Abs(a - b)
		if math.IsNaN(d) {
			d = math.Inf(1)
		}
		c.MaxAbs = math.Max(c.MaxAbs, d)
		if b != 0 {
			c.MaxRel = math.Max(c.MaxRel, d/math.Abs(b))
		}
		if excess := d - (atol + rtol*math.Abs(b)); excess > 0 && (worst < 0 || excess > worstExcess) {
			worst, worstExcess = i, excess
		}
	}
	c.OK = worst < 0
	if !c.OK {
		idx := make([]int64, len(got.Shape))
		rem := int64(worst)
		for d := len(got.Shape) - 1; d >= 0; d-- {
			idx[d] = rem % got.Shape[d]
			rem /= got.Shape[d]
		}
		c.WorstAt, c.Got, c.Want = idx, g[worst], r[worst]
		c.Detail = fmt.Sprintf(", worst at %v: got %.7g, want %.7g (|diff| %.3g > atol %g + rtol %g x |want|)", idx, g[worst], r[worst], math.Abs(g[worst]-r[worst]), atol, rtol)
	}
	return c
}

// The JSON documents rlxrun prints, versioned: a reader checks "schema"
// (docs/cli.md, "JSON output"). A new field is a compatible change; a
// field removed or changed in meaning is a new version.
const (
	runSchema   = "rlxrun.run/1"
	benchSchema = "rlxrun.bench/1"
)

// runHeader is what every document starts with: what ran, where.
type runHeader struct {
	Schema   string `json:"schema"`
	Artifact string `json:"artifact"`
	Variant  string `json:"variant"`
	Device   string `json:"device"`
	Threads  int    `json:"threads,omitempty"`
	Code     string `json:"code,omitempty"`
}

func header(schema, path string, info loader.RunInfo) runHeader {
	return runHeader{Schema: schema, Artifact: path, Variant: info.Variant, Device: info.Device, Threads: info.Threads, Code: info.Code}
}

// describe is RunInfo as text: "variant batch=1,seq=16 on cpu (native
// x86-64-v4, 2 threads)".
func describe(info loader.RunInfo) string {
	var what []string
	if info.Code != "" {
		what = append(what, info.Code)
	}
	if info.Threads > 0 {
		what = append(what, fmt.Sprintf("%d threads", info.Threads))
	}
	s := "variant " + info.Variant + " on " + info.Device
	if len(what) > 0 {
		s += " (" + strings.Join(what, ", ") + ")"
	}
	return s
}

// runJSON is rlxrun --json.
type runJSON struct {
	runHeader
	OK      bool           `json:"ok"`
	Outputs []outputReport `json:"outputs"`
}
