// Package codegen turns a specialized LIR program into a GPU program: it
// lowers each launch to kernel IR (kernelgen), prints every kernel in the
// target's language, compiles it where a compiler is present, and fills
// the program's kernel table with one entry per distinct kernel.
package codegen

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"runtime"
	"sync"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/gpu/kernelgen"
	"github.com/rlx-project/rlx/pkg/targets/gpu/kir"
)

// Compiler compiles one printed kernel; it returns the binary and its
// kind ("spirv", "ptx"), or nil when the target leaves compiling to load
// time.
type Compiler func(name, src string) (bin []byte, kind string, err error)

// Target is one GPU target.
type Target struct {
	Name    string
	Lang    kir.Language
	Compile Compiler // nil: sources only
	// Precision is what products multiply in (kernelgen.Options): "" or
	// "fp32", or tensor cores with "tf32" or "bf16" operands, CUDA only.
	Precision string
}

// Generate rewrites the LIR program in (as the CPU code generator made it,
// with unpacked weights) for target t: same buffers and arena (plus
// scratch after the arena where a kernel needs it), its steps replaced by
// lir.Dispatch launches of the kernels in Kernels.
func Generate(in *lir.Program, t Target) (*lir.Program, error) {
	if t.Precision != "" && t.Precision != "fp32" && t.Lang != kir.CUDA {
		return nil, fmt.Errorf("target %s has no %s products: only cuda multiplies on tensor cores", t.Name, t.Precision)
	}
	launches, in, err := kernelgen.Lower(in, kernelgen.Options{Precision: t.Precision})
	if err != nil {
		if u, ok := err.(*kernelgen.UnsupportedError); ok {
			return nil, fmt.Errorf("%s: target %s has no kernel for this operation (%s)", u.Src, t.Name, u.Why)
		}
		return nil, err
	}
	prog := &lir.Program{Inputs: in.Inputs, Outputs: in.Outputs, Buffers: in.Buffers, ArenaBytes: in.ArenaBytes}
	index := map[string]int{}
	var pending []*pendingKernel
	for _, l := range launches {
		k := l.Kernel
		// A kernel is named by what it computes, so equal kernels of
		// different steps share one entry (and one compile). Tensor
		// offsets are launch data, not part of the text, so launches on
		// tensors at different places share a kernel too; what the
		// offsets' alignment chose (the word type of a memcpy) is in the
		// parameters' types, hence in the text: a kernel is only shared
		// by launches whose offsets are whole elements of its types.
		// The text is GLSL's, whatever the target, so that a kernel has
		// one name on every target; a tensor-core product prints only as
		// CUDA, so its kernel is named by that.
		lang := kir.GLSL
		if kir.HasMMA(k) {
			lang = kir.CUDA
		}
		text, err := kir.Print(lang, k)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", l.Src, err)
		}
		sum := sha256.Sum256([]byte(text))
		k.Name = k.Name + "_" + hex.EncodeToString(sum[:6])
		i, ok := index[k.Name]
		if !ok {
			src, err := kir.Print(t.Lang, k)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", l.Src, err)
			}
			i = len(prog.Kernels)
			index[k.Name] = i
			ak := lir.Kernel{Name: k.Name, Lang: string(t.Lang), Entry: t.Lang.Entry(k), Source: src,
				Local: [3]int64{int64(k.Local[0]), int64(k.Local[1]), int64(k.Local[2])}, Offsets: k.Offsets}
			for _, s := range k.Shared {
				ak.Shared += int64(s.Len) * int64(s.Elem.Size())
			}
			for _, p := range k.Params {
				ak.Params = append(ak.Params, lir.KernelParam{Name: p.Name, DType: p.Elem.String(), Write: p.Write})
			}
			prog.Kernels = append(prog.Kernels, ak)
			pending = append(pending, &pendingKernel{index: i, src: src, name: k.Name, step: l.Src})
		}
		prog.Steps = append(prog.Steps, lir.Step{
			Op: &lir.Dispatch{Kernel: i, Groups: [3]int64{int64(l.Groups[0]), int64(l.Groups[1]), int64(l.Groups[2])},
				Args: l.Args, Offsets: l.Offsets},
			Src: l.Src,
		})
	}
	if t.Compile != nil {
		if err := compileAll(prog, pending, t.Compile); err != nil {
			return nil, err
		}
	}
	return prog, nil
}

type pendingKernel struct {
	index     int
	src, name string
	step      string
	bin       []byte
	kind      string
	err       error
}

// compileAll runs the compiler over the kernels, a few at a time (each is
// an external process).
func compileAll(prog *lir.Program, ks []*pendingKernel, c Compiler) error {
	work := make(chan *pendingKernel)
	var wg sync.WaitGroup
	for w := 0; w < max(1, runtime.GOMAXPROCS(0)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range work {
				k.bin, k.kind, k.err = c(k.name, k.src)
			}
		}()
	}
	for _, k := range ks {
		work <- k
	}
	close(work)
	wg.Wait()
	for _, k := range ks {
		if k.err != nil {
			return fmt.Errorf("%s: kernel %s: %v", k.step, k.name, k.err)
		}
		prog.Kernels[k.index].Binary = k.bin
		prog.Kernels[k.index].BinaryKind = k.kind
	}
	return nil
}
