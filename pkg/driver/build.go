// Package driver drives rlxc build: HIR in, .rlx artifact out, through the
// AOT cache. It is the one place that knows the order of the stages.
package driver

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/rlx-project/rlx/internal/atomicfile"
	"github.com/rlx-project/rlx/pkg/artifact"
	"github.com/rlx-project/rlx/pkg/artifact/cache"
	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/fusion"
	"github.com/rlx-project/rlx/pkg/hir"
	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/lower"
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/targets"
	"github.com/rlx-project/rlx/pkg/tensor"
	"github.com/rlx-project/rlx/pkg/tensor/safetensors"
)

// Options are everything that shapes an artifact.
type Options struct {
	Target      string               // "cpu"
	CPU         []string             // --cpu: the cpu target's native code levels (targets.Options)
	Precision   string               // --precision: fp32 (default) or tf32 (targets.Options)
	Bindings    []specialize.Binding // one variant each
	Func        string               // entry function; "" means main
	WeightsPath string               // --weights
	// AllowOutsideRefs lets the model's @"file" references be absolute or
	// leave its directory (--allow-outside-refs).
	AllowOutsideRefs bool
	RandomSeed       *uint64                   // --random-weights
	Params           map[string]*tensor.Tensor // params' data in memory (from an ONNX import)
	Compiler         string                    // compiler version, recorded and part of the cache key
	CompilerBuild    string                    // the compiler's build identity: part of the cache key only
	Cache            *cache.Cache              // nil: no cache
	ExplainCache     bool                      // say why the cache missed
	Log              io.Writer                 // progress and the cache line; nil for quiet
	Observer         Observer                  // the build's stages as they end; nil for none
	FusionReport     io.Writer                 // where --fusion-report goes, or nil
}

// Observer watches a build: a progress display, stage timings (rlxc
// build -v). Calls come from the building goroutine, in order.
type Observer interface {
	// Stage says that a stage ended and how long it took: "parse and
	// check", "weights", "lower", "fuse", "generate", "compile native
	// code", "write".
	Stage(name string, d time.Duration)
	// Variant says that variant i (from 1) of n is generated.
	Variant(i, n int, binding string)
}

// stages times a build's stages for its Observer.
type stages struct {
	o    Observer
	last time.Time
}

// done ends the stage name, started where the previous one ended.
func (s *stages) done(name string) {
	now := time.Now()
	if s.o != nil {
		s.o.Stage(name, now.Sub(s.last))
	}
	s.last = now
}

// Targets lists the targets rlxc can build for, with what building for
// each and running its artifacts need.
func Targets() []struct{ Name, Status string } {
	var out []struct{ Name, Status string }
	for _, b := range targets.All() {
		out = append(out, struct{ Name, Status string }{b.Name(), b.About()})
	}
	return out
}

// CPULevels lists the cpu target's native code levels with whether this
// machine builds and runs each.
func CPULevels() []targets.LevelStatus { return targets.CPULevels() }

// Int8Status says whether cpu builds on this machine run quantized
// models' products as integer products, and why.
func Int8Status() string { return targets.Int8Status() }

// cacheStoreWarning is what a build says when it could not store its
// artifact in the cache: a read-only cache (a shared one, mounted
// read-only) is named as such, since its hits still work.
func cacheStoreWarning(dir string, err error) string {
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		return fmt.Sprintf("rlxc: warning: the cache %s is read-only: this build is not stored (hits still work; --no-cache silences this)", dir)
	}
	return fmt.Sprintf("rlxc: warning: could not store the build in the cache: %v", err)
}

// Precisions are the values Options.Precision takes, the default first.
func Precisions() []string { return targets.Precisions() }

// BuildTools says, for a target, whether this machine has what building
// for it runs: "" when it does, else what to install.
func BuildTools(target string) string {
	b, err := targets.Lookup(target, targets.Options{})
	if err != nil {
		return err.Error()
	}
	note, err := b.Tools()
	if err != nil {
		return "cannot build here: " + err.Error()
	}
	return note
}

// ToolError is a build that needs an external tool this machine lacks
// (glslangValidator for vulkan): the CLI exits 5, and the message says
// what to install.
type ToolError struct{ Err error }

func (e *ToolError) Error() string { return e.Err.Error() }
func (e *ToolError) Unwrap() error { return e.Err }

// InputError is an error in what the user gave (source, bindings, weights):
// the CLI exits 1 for it.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

func inputErr(format string, args ...any) error {
	return &InputError{Err: fmt.Errorf(format, args...)}
}

// Result describes a finished build.
type Result struct {
	CacheHit bool
	Variants []artifact.Variant
	Bytes    int64
}

// Build compiles the HIR in src (read from file) to out.
func Build(file string, src []byte, out string, opts Options) (*Result, error) {
	start := time.Now()
	st := &stages{o: opts.Observer, last: start}
	logf := func(format string, args ...any) {
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, format+"\n", args...)
		}
	}
	topts := targets.Options{CPU: opts.CPU, Precision: opts.Precision}
	if opts.Cache != nil {
		topts.Objects = opts.Cache
	}
	backend, err := targets.Lookup(opts.Target, topts)
	if err != nil {
		return nil, &InputError{Err: err}
	}
	note, err := backend.Tools()
	if err != nil {
		return nil, &ToolError{Err: err}
	}
	if note != "" {
		logf("rlxc: note: target %s %s", backend.Name(), note)
	}
	m, err := hir.ParseFile(file, src)
	if err == nil {
		err = hir.Check(m)
	}
	if err != nil {
		return nil, &InputError{Err: err}
	}
	fn := opts.Func
	if fn == "" {
		fn = "main"
	}
	f := m.Func(fn)
	if f == nil {
		return nil, inputErr("%s: module %s has no function %s", file, hir.Quote(m.Name), hir.Quote(fn))
	}
	bindings, err := checkBindings(m, f, opts.Bindings)
	if err != nil {
		return nil, err
	}
	st.done("parse and check")

	// Weights first: their digest is part of the cache key.
	ws := &lower.Weights{Dir: filepath.Dir(file), Named: opts.Params, AllowOutside: opts.AllowOutsideRefs}
	defer ws.Close()
	if opts.WeightsPath != "" {
		wf, err := safetensors.Open(opts.WeightsPath)
		if err != nil {
			return nil, &InputError{Err: err}
		}
		defer wf.Close()
		ws.File = wf
	}
	if opts.RandomSeed != nil {
		ws.Random, ws.Seed = true, *opts.RandomSeed
	}
	params, wdigest, err := loadParams(m, ws)
	if err != nil {
		return nil, &InputError{Err: err}
	}
	st.done("weights")

	canon := hir.Format(m)
	key := cache.Key{
		Model:    m.Name,
		Source:   digest(canon),
		Weights:  wdigest,
		Binding:  bindingsText(bindings),
		Target:   backend.Tag(),
		Compiler: opts.Compiler,
		Build:    opts.CompilerBuild,
		Options:  "func=" + fn,
	}
	if opts.Cache != nil {
		path, ok, err := opts.Cache.Get(key)
		if err == nil && ok {
			if err := copyFile(path, out); err != nil {
				return nil, err
			}
			fi, _ := os.Stat(out)
			logf("rlxc: cache hit: %s (%s, %d bytes) in %s", out, key.Digest()[:12], fi.Size(), time.Since(start).Round(time.Millisecond))
			return &Result{CacheHit: true, Bytes: fi.Size()}, nil
		}
		why := ""
		if err != nil {
			why = ": " + err.Error() // a damaged entry: removed, and rebuilt now
		} else if opts.ExplainCache {
			why = ": " + opts.Cache.Explain(key)
		}
		logf("rlxc: cache miss (%s)%s", key.Digest()[:12], why)
	}

	st.last = time.Now() // the cache lookup is not a stage
	g, err := lower.ToMIR(m, fn, params)
	if err != nil {
		return nil, &InputError{Err: err}
	}
	st.done("lower")
	report, err := fusion.Run(g)
	if err != nil {
		return nil, err
	}
	if opts.FusionReport != nil {
		fmt.Fprintf(opts.FusionReport, "fusion report for %s:\n%s", file, report)
	}
	st.done("fuse")
	sections, variants, err := generate(m, f, g, bindings, canon, wdigest, fn, opts.Compiler, backend, st)
	if err != nil {
		return nil, err
	}
	if err := artifact.WriteFile(out, sections); err != nil {
		return nil, err
	}
	st.done("write")
	fi, err := os.Stat(out)
	if err != nil {
		return nil, err
	}
	for _, v := range variants {
		logf("rlxc: variant %s: %d kernels, arena %s (intermediates %s)", bindingText(v.Binding), v.Steps, bytesText(v.ArenaBytes), bytesText(v.TempBytes))
	}
	logf("rlxc: wrote %s (%d bytes) in %s", out, fi.Size(), time.Since(start).Round(time.Millisecond))
	if opts.Cache != nil {
		if err := opts.Cache.Put(key, out); err != nil {
			logf("%s", cacheStoreWarning(opts.Cache.Dir, err))
		}
	}
	return &Result{Variants: variants, Bytes: fi.Size()}, nil
}

// checkBindings fills the default (no binding for a model without symbolic
// dims), then checks each binding: every dim the entry function uses is
// bound, values are within bounds, deferred relations hold.
func checkBindings(m *hir.Module, f *hir.FuncDecl, bs []specialize.Binding) ([]specialize.Binding, error) {
	used := usedDims(f)
	if len(bs) == 0 {
		bs = []specialize.Binding{{}}
	}
	// Every binding's errors, each once: a name the module lacks is said
	// beside the dim it leaves unbound (a typo of it, often).
	var errs []string
	seen := map[string]bool{}
	add := func(e string) {
		if !seen[e] {
			seen[e] = true
			errs = append(errs, e)
		}
	}
	for _, b := range bs {
		for _, d := range used {
			if _, ok := b[d.name]; !ok {
				add(fmt.Sprintf("%s: missing binding for dim %s (used by %s): pass --bind %s=N", m.File, d.name, d.user, d.name))
			}
		}
		if err := m.CheckBinding(b); err != nil {
			add(err.Error())
		}
	}
	if len(errs) > 0 {
		return nil, inputErr("%s", strings.Join(errs, "\n"))
	}
	return bs, nil
}

type dimUse struct{ name, user string }

// usedDims lists the dims of the function's arguments, results and values,
// each with the first thing that uses it, in order of first use.
func usedDims(f *hir.FuncDecl) []dimUse {
	var out []dimUse
	seen := map[string]bool{}
	note := func(shape []dim.Expr, user string) {
		for _, d := range shape {
			for _, s := range d.Syms() {
				if !seen[s] {
					seen[s] = true
					out = append(out, dimUse{s, user})
				}
			}
		}
	}
	for _, a := range f.Params {
		note(a.Checked.Shape, "input "+hir.Quote(a.Name))
	}
	for _, r := range f.Results {
		note(r.Checked.Shape, "output "+hir.Quote(r.Name))
	}
	for _, s := range f.Body {
		for i, t := range s.Types {
			note(t.Shape, hir.Quote(s.Results[i].Name))
		}
		for _, v := range s.Attr {
			switch v := v.(type) {
			case dim.Expr:
				note([]dim.Expr{v}, hir.Quote(s.Results[0].Name))
			case []dim.Expr:
				note(v, hir.Quote(s.Results[0].Name))
			}
		}
	}
	return out
}

// preloaded serves params already read (so they are read once).
type preloaded map[*hir.ParamDecl]*tensor.Tensor

func (p preloaded) Weight(d *hir.ParamDecl) (*tensor.Tensor, error) { return p[d], nil }

// loadParams reads every param and digests them in declaration order.
func loadParams(m *hir.Module, ws *lower.Weights) (preloaded, string, error) {
	out := preloaded{}
	h := sha256.New()
	for _, d := range m.Decls {
		p, ok := d.(*hir.ParamDecl)
		if !ok {
			continue
		}
		t, err := ws.Weight(p)
		if err != nil {
			return nil, "", err
		}
		out[p] = t
		fmt.Fprintf(h, "%s\x00%s%v\x00%d\x00", p.Name, t.DType, t.Shape, len(t.Data))
		h.Write(t.Data)
	}
	return out, hex.EncodeToString(h.Sum(nil)), nil
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func bindingText(b map[string]int64) string {
	s := specialize.Binding(b).String()
	if s == "" {
		return "(static)"
	}
	return s
}

func bindingsText(bs []specialize.Binding) string {
	parts := make([]string, len(bs))
	for i, b := range bs {
		parts[i] = b.String()
	}
	return strings.Join(parts, ";")
}

func bytesText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// generate specializes the template for each binding and assembles the
// artifact's sections.
func generate(m *hir.Module, f *hir.FuncDecl, g *mir.Graph, bindings []specialize.Binding, canon []byte, wdigest, fn, compiler string, backend targets.Backend, st *stages) ([]artifact.Section, []artifact.Variant, error) {
	weights := backend.NewWeights()
	var sections []artifact.Section
	var variants []artifact.Variant
	progs := make([]*lir.Program, len(bindings))
	plans := make([]*specialize.Plan, len(bindings))
	for i, b := range bindings {
		plan, err := specialize.SpecializeWith(g, b, backend.Caps())
		if err != nil {
			return nil, nil, &InputError{Err: fmt.Errorf("%s: binding %s: %v", m.File, bindingText(b), err)}
		}
		if progs[i], err = backend.Generate(plan, weights); err != nil {
			return nil, nil, &InputError{Err: err}
		}
		plans[i] = plan
		if st.o != nil {
			st.o.Variant(i+1, len(bindings), bindingText(b))
		}
	}
	st.done("generate")
	if err := backend.Finish(progs); err != nil {
		return nil, nil, err
	}
	st.done("compile native code")
	for i, b := range bindings {
		prog, plan := progs[i], plans[i]
		raw, err := artifact.MarshalManifest(prog)
		if err != nil {
			return nil, nil, err
		}
		name := fmt.Sprintf("program/%d", i)
		sections = append(sections, artifact.Section{Name: name, Codec: artifact.CodecZstd, Data: raw})
		variants = append(variants, artifact.Variant{Binding: b, Section: name, ArenaBytes: prog.ArenaBytes, TempBytes: plan.TempBytes, Steps: len(prog.Steps)})
	}
	// Weights: each 64-byte aligned in one raw section the loader maps,
	// but the derived ones, which the loader computes.
	var wdata []byte
	for i, t := range weights.Data {
		if weights.Refs[i].Derive != nil {
			continue
		}
		for len(wdata)%specialize.Align != 0 {
			wdata = append(wdata, 0)
		}
		weights.Refs[i].Offset = int64(len(wdata))
		wdata = append(wdata, t.Data...)
	}
	man := artifact.Manifest{
		Module: m.Name,
		Provenance: artifact.Provenance{
			Compiler: compiler, Target: backend.Name(), Features: backend.Features(), Bindings: strings.Split(bindingsText(bindings), ";"),
			SourceDigest: digest(canon), WeightsDigest: wdigest, Entry: fn,
		},
		Signature: signature(m, f),
		Variants:  variants,
		Weights:   weights.Refs,
	}
	raw, err := artifact.MarshalManifest(man)
	if err != nil {
		return nil, nil, err
	}
	sections = append([]artifact.Section{{Name: "manifest", Codec: artifact.CodecRaw, Data: raw}}, sections...)
	sections = append(sections, artifact.Section{Name: "weights", Codec: artifact.CodecRaw, Align: 4096, Data: wdata})
	return sections, variants, nil
}

func signature(m *hir.Module, f *hir.FuncDecl) artifact.Signature {
	var sig artifact.Signature
	field := func(fd *hir.Field) artifact.SigTensor {
		st := artifact.SigTensor{Name: fd.Name, DType: fd.Checked.DType.String()}
		for _, d := range fd.Checked.Shape {
			st.Shape = append(st.Shape, d.String())
		}
		return st
	}
	for _, a := range f.Params {
		sig.Inputs = append(sig.Inputs, field(a))
	}
	for _, r := range f.Results {
		sig.Outputs = append(sig.Outputs, field(r))
	}
	names := m.DimNames()
	sort.Strings(names)
	for _, n := range names {
		iv := m.Bounds[n]
		sig.Dims = append(sig.Dims, artifact.DimInfo{Name: n, Lo: iv.Lo, Hi: iv.Hi})
	}
	return sig
}

// copyFile copies a cache entry to out atomically.
func copyFile(src, out string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return atomicfile.Write(out, 0o644, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}
