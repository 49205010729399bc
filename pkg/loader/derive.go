package loader

import (
	"fmt"

	"github.com/rlx-project/rlx/pkg/artifact"
	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/winograd"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// derive computes weight i of the table from the stored weight it names
// (artifact.Derivation), checking everything the manifest says of both
// against what the derivation makes. weights holds every stored weight.
func derive(refs []artifact.WeightRef, i int, weights [][]byte) ([]byte, error) {
	w := refs[i]
	d := w.Derive
	if d.From < 0 || d.From >= len(refs) || d.From == i || refs[d.From].Derive != nil {
		return nil, fmt.Errorf("weight %s: derived from weight %d, which is not a stored weight", w.Name, d.From)
	}
	src := refs[d.From]
	switch d.Kind {
	case artifact.DeriveWinograd:
		if len(d.Args) != 3 {
			return nil, fmt.Errorf("weight %s: %s derivation has %d arguments, want 3 (O, C, m)", w.Name, d.Kind, len(d.Args))
		}
		o, c, m := d.Args[0], d.Args[1], d.Args[2]
		if o < 1 || c < 1 || o > 1<<20 || c > 1<<20 || src.DType != "f32" || w.DType != "f32" || src.Bytes != o*c*9*4 {
			return nil, fmt.Errorf("weight %s: %s derivation of %d x %d x 3 x 3 from weight %s (%s, %d bytes) does not fit", w.Name, d.Kind, o, c, src.Name, src.DType, src.Bytes)
		}
		t, err := winograd.For(int(m))
		if err != nil {
			return nil, fmt.Errorf("weight %s: %v", w.Name, err)
		}
		n := int64(winograd.ULen(t.Points(), int(o), int(c)))
		if w.Bytes != n*4 || len(w.Shape) != 1 || w.Shape[0] != n {
			return nil, fmt.Errorf("weight %s: %s derivation makes %d bytes, the table says %d (shape %v)", w.Name, d.Kind, n*4, w.Bytes, w.Shape)
		}
		out := make([]byte, n*4)
		if err := winograd.WeightsInto(tensor.AsF32(out), tensor.AsF32(weights[d.From]), int(o), int(c), int(m)); err != nil {
			return nil, fmt.Errorf("weight %s: %v", w.Name, err)
		}
		return out, nil
	}
	return nil, fmt.Errorf("weight %s: unknown derivation %q (an artifact from a newer rlxc?)", w.Name, d.Kind)
}
