package targets

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/targets/cpu/cgen"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/qgemm"
	"github.com/rlx-project/rlx/pkg/targets/cpu/native"
	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
	"github.com/rlx-project/rlx/pkg/targets/toolchain"
)

// cpu is the CPU backend: the kernels in pkg/targets/cpu/kernels, weights
// of products packed for the build machine's micro-kernel (cpu_caps.go),
// and, for the CPU levels it is configured with, the steps cgen compiles
// as native code built by clang (one object per level).
type cpu struct {
	levels []native.Level // none: the portable artifact
	// note says why a default build is portable (no clang); err why the
	// levels asked for cannot be built here.
	note string
	err  error
	// clang identifies the compiler (toolchain.ClangIdentity), part of
	// the tag and of each object's cache key; objects, when not nil, is
	// that cache.
	clang   string
	objects ObjectCache
	// int8 runs quantized products as integer products (Options.Int8Products),
	// those summing at least int8MinK terms (tuning.Int8MinK).
	int8     bool
	int8MinK int64
}

// portableLevel is the --cpu value for an artifact without native code.
const portableLevel = "portable"

// defaultCPU is the cpu backend as a build without --cpu gets it: native
// code for the build machine's level where clang and lld are installed.
func defaultCPU() *cpu {
	c, _ := newCPU(nil, nil, nil)
	return c
}

// newCPU configures the cpu backend for the levels named (Options.CPU).
func newCPU(names []string, int8 *bool, objects ObjectCache) (*cpu, error) {
	c, err := configureCPU(names)
	if c != nil {
		kern := int8Kernel(c.levels)
		c.int8, c.int8MinK = tuning.Int8Products(kern), tuning.Int8MinK(kern)
		if int8 != nil {
			// forced (the golden tests): every product, whatever the CPU
			c.int8, c.int8MinK = *int8, 0
		}
	}
	if err == nil && len(c.levels) > 0 {
		c.clang, c.objects = toolchain.ClangIdentity(), objects
	}
	return c, err
}

func configureCPU(names []string) (*cpu, error) {
	c := &cpu{}
	if len(names) == 0 {
		best, ok := native.Best()
		if !ok {
			c.note = "builds portable code only: this machine runs no CPU level native code is built for"
			return c, nil
		}
		if err := toolchain.NativeTools(); err != nil {
			c.note = "builds portable code only here (" + err.Error() + "): the artifact runs the runtime's own kernels"
			return c, nil
		}
		c.levels = []native.Level{best}
		return c, nil
	}
	if len(names) == 1 && names[0] == portableLevel {
		return c, nil
	}
	seen := map[string]bool{}
	for _, n := range names {
		var l native.Level
		switch n {
		case portableLevel:
			return nil, fmt.Errorf("--cpu %s means no native code; it does not combine with levels", portableLevel)
		case "native":
			best, ok := native.Best()
			if !ok {
				return nil, fmt.Errorf("--cpu native: this machine runs none of the CPU levels (%s)", levelNames())
			}
			l = best
		default:
			var err error
			if l, err = native.LookupLevel(n); err != nil {
				return nil, err
			}
		}
		if !seen[l.Name] {
			seen[l.Name] = true
			c.levels = append(c.levels, l)
		}
	}
	for _, l := range c.levels {
		if l.GOARCH != c.levels[0].GOARCH {
			return nil, fmt.Errorf("--cpu %s: levels of one artifact are for one architecture (%s is %s, %s is %s)",
				strings.Join(names, ","), c.levels[0].Name, c.levels[0].GOARCH, l.Name, l.GOARCH)
		}
	}
	if err := toolchain.NativeTools(); err != nil {
		c.err = fmt.Errorf("native code for %s needs clang and lld: %v (or build --cpu %s)", c.levelList(), err, portableLevel)
	}
	return c, nil
}

func levelNames() string {
	var ns []string
	for _, l := range native.Levels() {
		ns = append(ns, l.Name)
	}
	return strings.Join(ns, ", ")
}

func (c *cpu) levelList() string {
	var ns []string
	for _, l := range c.levels {
		ns = append(ns, l.Name)
	}
	return strings.Join(ns, "+")
}

// cross reports whether the artifact is for another architecture than
// this machine's: its weights are then left unpacked, since packing is
// for the build machine's micro-kernel.
func (c *cpu) cross() bool { return len(c.levels) > 0 && c.levels[0].GOARCH != runtime.GOARCH }

func (*cpu) Name() string { return "cpu" }
func (*cpu) About() string {
	return "builds anywhere; fused regions compiled to native code by clang and lld for a CPU level (--cpu " + levelNames() +
		", native), else portable; runs with rlxrun on amd64 (AVX2 kernels) and any other CPU (portable Go kernels)"
}

func (c *cpu) Tools() (string, error) { return c.note, c.err }

func (c *cpu) layout() string {
	if c.cross() {
		return "unpacked"
	}
	return cpuLayout()
}

func (c *cpu) Tag() string {
	tag := "cpu/" + c.layout()
	if c.int8 && !c.cross() {
		tag += "/int8"
		if c.int8MinK > 0 {
			tag += fmt.Sprintf("-k%d", c.int8MinK)
		}
	}
	if len(c.levels) == 0 {
		return tag
	}
	return tag + "/native-" + c.levelList() + "/" + c.clang
}

func (c *cpu) Features() []string {
	fs := []string{c.layout()}
	for _, l := range c.levels {
		fs = append(fs, "native:"+l.Name)
	}
	return fs
}

func (c *cpu) Caps() specialize.Caps {
	if c.cross() {
		return specialize.Caps{StridedAttention: true, InPlaceConcat: true, StridedElementwise: true, SubsampleStrided: tuning.SubsampleStrided1x1,
			TapConv: c.tapConv}
	}
	caps := cpuCaps()
	caps.Int8Products, caps.Int8MinK = c.int8, c.int8MinK
	if len(c.levels) > 0 {
		// Generated code runs convolutions of mostly padding in place,
		// tap-major; the split into rectangles is the portable route.
		caps.SparseTaps, caps.TapConv = nil, c.tapConv
		// Only generated code runs Winograd convolutions fast: the
		// runtime's kernels for them are the plain reference.
		avx512 := cgen.Options{Levels: c.levels}.AllHave("avx512f")
		caps.WinogradTile = func(g lir.ConvGeom, act lir.Activation) int64 {
			if !cgen.WinogradActivation(act) {
				return 0
			}
			return tuning.WinogradTile(tuning.ConvShape{KH: g.KH, KW: g.KW, StrideH: g.StrideH, StrideW: g.StrideW, DilH: g.DilH, DilW: g.DilW,
				Groups: g.Groups, C: g.C, O: g.O, OH: g.OH, OW: g.OW, AVX512: avx512}, g.N)
		}
		caps.WinogradPart = func(g lir.ConvGeom, m, tp int64) int64 { return tuning.WinogradPartTiles(g.C, g.O, m, tp) }
	}
	return caps
}

// tapConv is the rule for conv2d_taps (tuning.NativeTapConv).
func (c *cpu) tapConv(g lir.ConvGeom) bool {
	live, total := specialize.LiveTapPairs(g)
	return tuning.NativeTapConv(tuning.ConvShape{KH: g.KH, KW: g.KW, StrideH: g.StrideH, StrideW: g.StrideW, DilH: g.DilH, DilW: g.DilW,
		Groups: g.Groups, C: g.C, O: g.O, OH: g.OH, OW: g.OW, W: g.W, AVX512: cgen.Options{Levels: c.levels}.AllHave("avx512f")}, live, total)
}

func (c *cpu) NewWeights() *specialize.Weights {
	return specialize.NewWeights("cpu", c.Caps().Packer)
}

func (c *cpu) Generate(plan *specialize.Plan, w *specialize.Weights) (*lir.Program, error) {
	prog, err := specialize.Schedule(plan, w)
	if err != nil || len(c.levels) == 0 {
		return prog, err
	}
	return cgen.Generate(prog, cgen.Options{EwGrain: tuning.NativeEwGrain, Levels: c.levels, Weights: w.Data})
}

// Finish compiles every program's native code for every level: each
// program's functions split into units (cgen.Units), one clang process
// per unit and level, as many at once as Go runs threads, then the units
// of a program and level linked into its object.
func (c *cpu) Finish(progs []*lir.Program) error {
	type unit struct {
		prog, level, index int
		src                string
	}
	objs := make([][][][]byte, len(progs)) // [program][level][unit]
	srcs := make([][]string, len(progs))   // [program][unit]
	var units []unit
	for pi, p := range progs {
		if p.Native == nil || len(c.levels) == 0 {
			continue
		}
		p.Native.Objects = make([]lir.NativeObject, len(c.levels))
		srcs[pi] = cgen.Units(p.Native)
		objs[pi] = make([][][]byte, len(c.levels))
		for li := range c.levels {
			objs[pi][li] = make([][]byte, len(srcs[pi]))
			for ui, src := range srcs[pi] {
				units = append(units, unit{pi, li, ui, src})
			}
		}
	}
	errs := make([]error, len(units))
	parallelJobs(len(units), func(i int) {
		u := units[i]
		l := c.levels[u.level]
		obj, err := c.compile(u.src, l, true)
		if err != nil {
			errs[i] = fmt.Errorf("native code for %s: %v", l.Name, err)
			return
		}
		objs[u.prog][u.level][u.index] = obj
	})
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for pi, p := range progs {
		if objs[pi] == nil {
			continue
		}
		for li, l := range c.levels {
			elf, err := c.link(objs[pi][li], l)
			if err != nil && c.objects != nil {
				// A cached object that does not link (a damaged cache
				// entry) is compiled again, and its entry replaced.
				for ui, src := range srcs[pi] {
					if objs[pi][li][ui], err = c.compile(src, l, false); err != nil {
						break
					}
				}
				if err == nil {
					elf, err = c.link(objs[pi][li], l)
				}
			}
			if err != nil {
				return fmt.Errorf("native code for %s: %v", l.Name, err)
			}
			p.Native.Objects[li] = lir.NativeObject{Level: l.Name, ELF: elf}
		}
	}
	return nil
}

// relocatable reports whether obj reads as an ELF relocatable object for
// goarch: a cache entry that does not is damaged and compiled again
// (Finish also recompiles the units of an object that does not link).
func relocatable(obj []byte, goarch string) bool {
	f, err := elf.NewFile(bytes.NewReader(obj))
	if err != nil {
		return false
	}
	defer f.Close()
	want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[goarch]
	return f.Type == elf.ET_REL && f.Machine == want
}

// link links a program's unit objects for level l and validates the
// result as the runtime will.
func (c *cpu) link(objs [][]byte, l native.Level) ([]byte, error) {
	elf, err := toolchain.LinkELF("kernels", objs, l.Clang)
	if err == nil {
		err = native.Validate(elf, l.GOARCH)
	}
	return elf, err
}

// parallelJobs runs job(0) to job(n-1), as many at once as Go runs
// threads.
func parallelJobs(n int, job func(i int)) {
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(n, max(1, runtime.GOMAXPROCS(0))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				job(i)
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
}

// LevelStatus says whether this machine builds and runs one CPU level's
// native code: nil, or why not.
type LevelStatus struct {
	Name         string
	Default      bool // what a build without --cpu compiles for
	Build, Run   error
	Architecture string
}

// CPULevels lists the CPU levels with what this machine can do with each,
// for `rlxc targets`.
func CPULevels() []LevelStatus {
	tools := toolchain.NativeTools()
	best, haveBest := native.Best()
	var out []LevelStatus
	for _, l := range native.Levels() {
		out = append(out, LevelStatus{Name: l.Name, Default: haveBest && tools == nil && l.Name == best.Name,
			Build: tools, Run: l.Runs(), Architecture: l.GOARCH})
	}
	return out
}

// int8Kernel is the integer kernel an artifact for levels is built for:
// the build machine's (qgemm.Int8Kernel), but no faster than what every
// level's CPUs have (the AVX2 kernel where a level lacks AVX-512, as
// x86-64-v3 does; none where one lacks AVX2, as arm64's levels do: no
// integer kernel is built in for them).
func int8Kernel(levels []native.Level) string {
	k := qgemm.Int8Kernel()
	if len(levels) == 0 {
		return k
	}
	switch have := (cgen.Options{Levels: levels}); {
	case !have.AllHave("avx2"):
		return "go"
	case k == "vnni" && !have.AllHave("avx512f"):
		return "avx2"
	}
	return k
}

// Int8Status says whether cpu builds here run the products of quantized
// models as integer products (tuning.Int8Products), for rlxc targets.
func Int8Status() string {
	switch k := qgemm.Int8Kernel(); {
	case !tuning.Int8Products(k):
		return "quantized products: in f32 (no integer kernel for this CPU: it needs AVX2 or AVX-512 VNNI)"
	case k == "vnni":
		return "quantized products: integer kernels (AVX-512 VNNI here; AVX2 on CPUs without it; not with --cpu armv8.2-a)"
	}
	return "quantized products: integer kernels (AVX2 here, AVX-512 VNNI on CPUs with it; not with --cpu armv8.2-a)"
}

// compile builds one unit's object for level l, or (fromCache) takes the
// object an earlier build stored for the same compiler, flags and source.
func (c *cpu) compile(src string, l native.Level, fromCache bool) ([]byte, error) {
	h := sha256.New()
	for _, part := range append(append([]string{"rlx native unit object 1", c.clang}, l.Clang...), toolchain.CompileFlags...) {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	h.Write([]byte(src))
	digest := hex.EncodeToString(h.Sum(nil))
	if c.objects != nil && fromCache {
		if obj, ok := c.objects.GetObject(digest); ok && relocatable(obj, l.GOARCH) {
			return obj, nil
		}
	}
	obj, err := toolchain.CToObject("kernels", src, l.Clang)
	if err != nil {
		return nil, err
	}
	if c.objects != nil {
		c.objects.PutObject(digest, obj) // best effort: a read-only cache still builds
	}
	return obj, nil
}
