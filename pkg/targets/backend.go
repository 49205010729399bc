// Package targets is the compiler's table of backends: for each target
// rlxc builds for, how a specialized plan becomes that target's LIR
// program and what the build needs from this machine. The driver and the
// CLIs go through this table; none of them switches on a target's name.
package targets

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/specialize"
	gpucodegen "github.com/rlx-project/rlx/pkg/targets/gpu/codegen"
	"github.com/rlx-project/rlx/pkg/targets/gpu/kir"
	"github.com/rlx-project/rlx/pkg/targets/toolchain"
)

// Backend compiles specialized plans for one target.
type Backend interface {
	// Name is the target's name (--target).
	Name() string
	// About says what building for the target and running its artifacts
	// need, for `rlxc targets`.
	About() string
	// Tools checks this machine's build tools: an error when the target
	// cannot be built here, else a note when it builds in a reduced form
	// ("" when it builds fully).
	Tools() (note string, err error)
	// Tag names what the kernels are built for and with: part of the cache
	// key and the artifact's features.
	Tag() string
	// Features are what the artifact records its kernels rely on.
	Features() []string
	// Caps are what the target's kernels can do, which gates
	// specialization's shape-dependent decisions (specialize.Passes).
	Caps() specialize.Caps
	// NewWeights returns the weight table the variants of one artifact
	// share, packed (or not) the way the target's kernels read them.
	NewWeights() *specialize.Weights
	// Generate turns one specialized plan into the target's program:
	// the schedule (specialize.Schedule), rewritten where the target
	// needs it.
	Generate(plan *specialize.Plan, w *specialize.Weights) (*lir.Program, error)
	// Finish completes the programs of one artifact, every variant's,
	// once all are generated: the cpu target compiles their native code
	// here, all of it at once. A no-op for the other targets.
	Finish(progs []*lir.Program) error
}

// All lists the backends, the default (cpu) first.
func All() []Backend {
	return []Backend{
		defaultCPU(),
		&gpu{name: "vulkan", lang: kir.GLSL, compile: toolchain.GLSLToSPIRV, tool: &toolchain.Glslang, required: true,
			about: "kernels in GLSL compiled to SPIR-V at build time (needs glslangValidator: apt-get install glslang-tools); " +
				"runs with rlxrun on any Vulkan 1.1 device through libvulkan.so.1 (a GPU's driver, or Mesa's llvmpipe on the CPU: apt-get install libvulkan1 mesa-vulkan-drivers)",
			tag: "vulkan/spirv-1.3"},
		&gpu{name: "cuda", lang: kir.CUDA, compile: toolchain.CUDAToPTX, tool: &toolchain.Clang,
			about: "kernels in CUDA C, compiled to PTX at build time when clang is installed (else by NVRTC when loaded); " +
				"runs with rlxrun on an NVIDIA GPU through libcuda.so.1 (the driver); --precision tf32 or bf16 multiplies on tensor cores (compute capability 8.0+)",
			tag: "cuda/ptx-" + toolchain.PTXArch, sourceTag: "cuda/source"},
		&gpu{name: "metal", lang: kir.MSL,
			about: "kernels in Metal Shading Language (sources in the artifact); no runtime yet: running needs macOS",
			tag:   "metal/source"},
	}
}

// Options configure the backends for one build.
type Options struct {
	// CPU names the CPU levels the cpu target compiles native code for
	// (x86-64-v3, x86-64-v4, armv8.2-a; "native" is the build machine's),
	// or "portable" alone for none: the runtime's own kernels only. Empty:
	// the build machine's level where clang and lld are installed, else
	// portable.
	CPU []string
	// Int8Products, when not nil, says whether the cpu target runs the
	// products of quantized values as integer products (lir.QMatMul), all
	// of them however short their sums; nil: where the build machine's
	// CPU has the integer kernels (tuning.Int8Products, Int8MinK), as for
	// the packed layout.
	Int8Products *bool
	// Objects, when not nil, keeps compiled native code by the digest of
	// what it was compiled from (the AOT cache's objects).
	Objects ObjectCache
	// Precision is what products may compute in: "fp32" (or empty, the
	// default) exactly in f32; "tf32" or "bf16" let the cuda target
	// multiply on tensor cores with operands rounded to tf32 (10
	// fraction bits) or bf16 (7) and sums in f32. Other targets compute
	// fp32 only and refuse the others.
	Precision string
}

// Precisions are the values Options.Precision takes, the default first.
func Precisions() []string { return []string{"fp32", "tf32", "bf16"} }

// ObjectCache stores compiled objects by content digest.
type ObjectCache interface {
	GetObject(digest string) ([]byte, bool)
	PutObject(digest string, data []byte) error
}

// Lookup returns the backend named name configured by opts, or an error
// that lists the backends or says what is wrong with opts.
func Lookup(name string, opts Options) (Backend, error) {
	var names []string
	reduced := opts.Precision != "" && opts.Precision != "fp32"
	if opts.Precision != "" && !slices.Contains(Precisions(), opts.Precision) {
		return nil, fmt.Errorf("unknown precision %q (want one of %s)", opts.Precision, strings.Join(Precisions(), ", "))
	}
	for _, b := range All() {
		if b.Name() == name {
			g, isGPU := b.(*gpu)
			if reduced && (!isGPU || g.lang != kir.CUDA) {
				return nil, fmt.Errorf("--precision %s is for the cuda target's tensor cores; target %s computes in fp32 only", opts.Precision, name)
			}
			if _, ok := b.(*cpu); ok {
				return newCPU(opts.CPU, opts.Int8Products, opts.Objects)
			}
			if len(opts.CPU) > 0 {
				return nil, fmt.Errorf("--cpu selects the cpu target's code; target %s does not take it", name)
			}
			if isGPU && reduced {
				g.precision = opts.Precision
			}
			return b, nil
		}
		names = append(names, b.Name())
	}
	return nil, fmt.Errorf("unknown target %q (rlxc targets lists them: %s)", name, strings.Join(names, ", "))
}

// gpu is a GPU backend: the schedule's program with unpacked weights,
// each step lowered to kernels in the target's language and compiled
// where the compiler is installed.
type gpu struct {
	name, about string
	lang        kir.Language
	compile     gpucodegen.Compiler
	tool        *toolchain.Tool // the compiler compile runs, or nil
	required    bool            // without tool the target cannot build
	tag         string          // with the compiled form
	sourceTag   string          // sources only (tool missing)
	precision   string          // products on tensor cores (Options.Precision "tf32", "bf16"), or ""
}

func (g *gpu) Name() string  { return g.name }
func (g *gpu) About() string { return g.about }

func (g *gpu) Tools() (string, error) {
	if g.tool == nil {
		return "", nil
	}
	if _, err := g.tool.Path(); err != nil {
		if g.required {
			return "", fmt.Errorf("target %s compiles its kernels at build time: %v", g.name, err)
		}
		return "builds CUDA C only here (" + err.Error() + "): kernels compile with NVRTC when loaded", nil
	}
	return "", nil
}

// compiled reports whether this build compiles the kernels.
func (g *gpu) compiled() bool {
	if g.compile == nil || g.tool == nil {
		return false
	}
	_, err := g.tool.Path()
	return err == nil
}

// Tag is the kernels' form, and "+tf32" or "+bf16" where products round
// their operands so: such artifacts compute differently, so they have
// their own cache entries, and their features say so.
func (g *gpu) Tag() string {
	tag := g.tag
	if g.sourceTag != "" && !g.compiled() {
		tag = g.sourceTag
	}
	if g.precision != "" {
		tag += "+" + g.precision
	}
	return tag
}

func (g *gpu) Features() []string { return []string{g.Tag()} }

// GPU kernels read attention's operands contiguous and weights as they
// are (no packer), and every value NCHW: no capability is asked for.
func (g *gpu) Caps() specialize.Caps { return specialize.Caps{} }

// GPU kernels read weights as they are: nothing is packed.
func (g *gpu) NewWeights() *specialize.Weights {
	return specialize.NewWeights(g.name, nil)
}

func (*gpu) Finish([]*lir.Program) error { return nil }

func (g *gpu) Generate(plan *specialize.Plan, w *specialize.Weights) (*lir.Program, error) {
	prog, err := specialize.Schedule(plan, w)
	if err != nil {
		return nil, err
	}
	t := gpucodegen.Target{Name: g.name, Lang: g.lang, Precision: g.precision}
	if g.compiled() {
		t.Compile = g.compile
	}
	return gpucodegen.Generate(prog, t)
}
