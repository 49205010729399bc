package lower

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"

	"github.com/rlx-project/rlx/pkg/hir"
	"github.com/rlx-project/rlx/pkg/tensor"
	"github.com/rlx-project/rlx/pkg/tensor/safetensors"
)

// Weights resolves params in the order a user expects: an inline literal,
// then the param's own file reference (@"w.safetensors", relative to the
// .hir file), then the --weights file, then --random-weights. A param with
// none of these is an error that says how to give it data.
type Weights struct {
	Dir string // directory of the .hir file, for @"..." references
	// AllowOutside lets @"..." references be absolute or leave Dir.
	AllowOutside bool
	Named        map[string]*tensor.Tensor // data given in memory (an imported ONNX model's initializers)
	File         *safetensors.File         // --weights, or nil
	Random       bool                      // --random-weights
	Seed         uint64

	files map[string]*safetensors.File
}

// Close releases the files opened for references.
func (w *Weights) Close() {
	for _, f := range w.files {
		f.Close()
	}
}

// refPath resolves a file reference: relative to the model's directory,
// and inside it unless AllowOutside (a model is input that may come from
// anyone; its references must not reach any file the builder can read).
func (w *Weights) refPath(ref string) (string, error) {
	if w.AllowOutside {
		if filepath.IsAbs(ref) {
			return ref, nil
		}
		return filepath.Join(w.Dir, ref), nil
	}
	clean := filepath.Clean(ref)
	if filepath.IsAbs(ref) || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("file reference @%q leaves the model's directory; references resolve inside it (rlxc build --allow-outside-refs lifts this)", ref)
	}
	return filepath.Join(w.Dir, clean), nil
}

// Weight implements WeightSource.
func (w *Weights) Weight(p *hir.ParamDecl) (*tensor.Tensor, error) {
	where := fmt.Sprintf("param %s", hir.Quote(p.Name))
	switch {
	case p.Init != nil:
		return literalTensor(p.Init, p.Checked)
	case p.File != nil:
		path, err := w.refPath(p.File.Path)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", where, err)
		}
		f := w.files[path]
		if f == nil {
			var err error
			if f, err = safetensors.Open(path); err != nil {
				return nil, fmt.Errorf("%s: %v", where, err)
			}
			if w.files == nil {
				w.files = map[string]*safetensors.File{}
			}
			w.files[path] = f
		}
		t, err := f.Tensor(p.Name)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", where, err)
		}
		return t, nil
	case w.Named[p.Name] != nil:
		return w.Named[p.Name], nil
	case w.File != nil:
		t, err := w.File.Tensor(p.Name)
		if err == nil || !w.Random {
			return t, err
		}
	}
	if w.Random {
		return randomTensor(p, w.Seed), nil
	}
	return nil, fmt.Errorf("%s has no data: give --weights FILE.safetensors, an inline literal, a file reference (= @\"w.safetensors\"), or --random-weights SEED", where)
}

// randomTensor makes deterministic weights for trying a model without
// trained ones: uniform in ±1/sqrt(fan-in) for matrices and kernels, and in
// [0.5, 1.5] for vectors, so norm scales and variances stay positive.
// The stream depends only on the seed and the param's name.
func randomTensor(p *hir.ParamDecl, seed uint64) *tensor.Tensor {
	t := p.Checked
	shape := make([]int64, t.Rank())
	for i, d := range t.Shape {
		shape[i], _ = d.Const()
	}
	out := tensor.New(t.DType, shape...)
	h := fnv.New64a()
	h.Write([]byte(p.Name))
	rng := rand.New(rand.NewPCG(seed, h.Sum64()))
	n := out.Len()
	lo, hi := 0.5, 1.5
	if len(shape) >= 2 {
		fan := float64(tensor.NumElements(shape) / shape[len(shape)-1])
		if len(shape) == 4 { // conv kernel [O, I, kh, kw]: fan-in I*kh*kw
			fan = float64(shape[1] * shape[2] * shape[3])
		}
		a := 1 / max(1, math.Sqrt(fan))
		lo, hi = -a, a
	}
	for i := 0; i < n; i++ {
		v := lo + (hi-lo)*rng.Float64()
		if !t.DType.IsFloat() {
			v = float64(rng.IntN(4))
		}
		setElem(out, i, v)
	}
	return out
}
