package specialize

import (
	"fmt"

	"github.com/rlx-project/rlx/pkg/artifact"
	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Weights collects the constants that programs reference, once each, across
// all the variants of one artifact, and the forms of them that the
// backend's Packer lays out at build time or the loader derives (Data nil:
// no bytes in the artifact).
type Weights struct {
	Refs     []artifact.WeightRef
	Data     []*tensor.Tensor
	index    map[*mir.Value]int
	packed   map[*mir.Value]int
	packedT  map[*mir.Value]int
	int8     map[*mir.Value]int
	taps     map[*mir.Value]int
	tapMajor map[*mir.Value]int
	wino     map[winoKey]int
	// byParam is the first value registered under each weight name:
	// variants that derive a weight alike (a cropped kernel, taps.go)
	// each make their own value of it, and share one copy.
	byParam map[string]*mir.Value

	// Packer lays out packed weights (the backend's, the same as its
	// Caps.Packer); nil packs nothing.
	Packer Packer

	// Target names the target in errors.
	Target string
}

// NewWeights returns an empty table for target that packs weights with
// packer (nil: none).
func NewWeights(target string, packer Packer) *Weights {
	return &Weights{index: map[*mir.Value]int{}, packed: map[*mir.Value]int{}, packedT: map[*mir.Value]int{}, int8: map[*mir.Value]int{}, taps: map[*mir.Value]int{}, tapMajor: map[*mir.Value]int{},
		wino: map[winoKey]int{}, byParam: map[string]*mir.Value{}, Packer: packer, Target: target}
}

// AddPacked registers a [K, N] weight packed into the micro-kernel's panel
// layout and returns its index.
func (w *Weights) AddPacked(v *mir.Value) (int, error) {
	v = w.canonical(v)
	if i, ok := w.packed[v]; ok {
		return i, nil
	}
	k, n := v.Const.Shape[0], v.Const.Shape[1]
	return w.addPacked(v, w.packed, "#", k, n, v.Const.F32())
}

// AddInt8 registers the int8 [K, N] weight of an integer product packed
// by Packer.PackInt8, and returns its index.
func (w *Weights) AddInt8(v *mir.Value) (int, error) {
	return w.addInt8(v, "#qgemm", func(b []int8) []byte {
		return w.Packer.PackInt8(int(v.Const.Shape[0]), int(v.Const.Shape[1]), b)
	})
}

// AddInt8Conv registers the int8 [O, C, KH, KW] weight of an integer
// convolution of geometry g packed by Packer.PackInt8Conv, and returns its
// index. The packing depends on the weight alone (the geometry's O, C, KH
// and KW are its shape).
func (w *Weights) AddInt8Conv(v *mir.Value, g lir.ConvGeom) (int, error) {
	return w.addInt8(v, "#qconv", func(b []int8) []byte { return w.Packer.PackInt8Conv(b, g) })
}

// addInt8 registers the int8 constant v packed by pack under v's name
// plus tag.
func (w *Weights) addInt8(v *mir.Value, tag string, pack func([]int8) []byte) (int, error) {
	v = w.canonical(v)
	if i, ok := w.int8[v]; ok {
		return i, nil
	}
	if w.Packer == nil {
		return 0, fmt.Errorf("internal: target %s packs no weights", w.Target)
	}
	b := make([]int8, len(v.Const.Data))
	for i, x := range v.Const.Data {
		b[i] = int8(x)
	}
	t := &tensor.Tensor{DType: tensor.U8, Data: pack(b)}
	t.Shape = []int64{int64(len(t.Data))}
	name := v.Param
	if name == "" {
		name = fmt.Sprintf("const/%d:%s", len(w.Refs), v.Name)
	}
	w.int8[v] = len(w.Refs)
	w.Refs = append(w.Refs, artifact.WeightRef{Name: name + tag, DType: "u8", Shape: t.Shape, Bytes: int64(len(t.Data))})
	w.Data = append(w.Data, t)
	return len(w.Refs) - 1, nil
}

// AddPackedT registers the [O, C, 1, 1] weight of a 1x1 convolution packed
// as the [C, O] matrix Wᵀ, and returns its index.
func (w *Weights) AddPackedT(v *mir.Value, c, o int64) (int, error) {
	v = w.canonical(v)
	if i, ok := w.packedT[v]; ok {
		return i, nil
	}
	src := v.Const.F32()
	wt := make([]float32, c*o)
	for oc := int64(0); oc < o; oc++ {
		for ic := int64(0); ic < c; ic++ {
			wt[ic*o+oc] = src[oc*c+ic]
		}
	}
	return w.addPacked(v, w.packedT, "#T#", c, o, wt)
}

// addPacked packs the row-major [k, n] matrix b with the table's packer
// and registers it under v's name plus tag and the layout.
func (w *Weights) addPacked(v *mir.Value, seen map[*mir.Value]int, tag string, k, n int64, b []float32) (int, error) {
	if w.Packer == nil {
		return 0, fmt.Errorf("internal: target %s packs no weights", w.Target)
	}
	data, err := w.Packer.PackB(int(k), int(n), b)
	if err != nil {
		return 0, err
	}
	return w.addDerived(v, seen, tag+w.Packer.Layout(), data), nil
}

// AddTaps registers the [C, 1, KH, KW] weight of a depthwise convolution
// tap-major, as [KH·KW, C] (Packer.DepthwiseTaps), and returns its index.
func (w *Weights) AddTaps(v *mir.Value) (int, error) {
	v = w.canonical(v)
	if i, ok := w.taps[v]; ok {
		return i, nil
	}
	if w.Packer == nil {
		return 0, fmt.Errorf("internal: target %s packs no weights", w.Target)
	}
	s := v.Const.Shape
	return w.addDerived(v, w.taps, "#taps", w.Packer.DepthwiseTaps(v.Const.F32(), int(s[0]), int(s[2]*s[3]))), nil
}

// AddTapMajor registers the [O, C, KH, KW] weight of a convolution laid
// out tap-major, as conv2d_taps reads it (lir.TapMajor), and returns its
// index. The layout is the same on every CPU, so it needs no packer.
func (w *Weights) AddTapMajor(v *mir.Value) int {
	v = w.canonical(v)
	if i, ok := w.tapMajor[v]; ok {
		return i
	}
	s := v.Const.Shape
	return w.addDerived(v, w.tapMajor, "#tapmajor", lir.TapMajor(v.Const.F32(), s[0], s[1], s[2]*s[3]))
}

// AddWinograd registers the [O, C, 3, 3] weight of a convolution run as
// F(m×m, 3×3) transformed into U [(m+2)², O, C] (in the packer's blocks),
// and returns its index: one per weight and m, which variants whose planes
// differ may not share. U is derived, not stored: the artifact holds the
// weight itself and the loader transforms it (artifact.DeriveWinograd),
// since U is up to 4x the weight's size.
func (w *Weights) AddWinograd(v *mir.Value, m int64) (int, error) {
	v = w.canonical(v)
	key := winoKey{v, m}
	if i, ok := w.wino[key]; ok {
		return i, nil
	}
	if w.Packer == nil {
		return 0, fmt.Errorf("internal: target %s packs no weights", w.Target)
	}
	s := v.Const.Shape
	n, err := w.Packer.WinogradLen(int(s[0]), int(s[1]), int(m))
	if err != nil {
		return 0, err
	}
	src := w.Add(v)
	w.wino[key] = len(w.Refs)
	w.Refs = append(w.Refs, artifact.WeightRef{Name: w.Refs[src].Name + fmt.Sprintf("#winograd%d", m), DType: "f32", Shape: []int64{int64(n)}, Bytes: int64(n) * 4,
		Derive: &artifact.Derivation{From: src, Kind: artifact.DeriveWinograd, Args: []int64{s[0], s[1], m}}})
	w.Data = append(w.Data, nil)
	return len(w.Refs) - 1, nil
}

// winoKey is a weight transformed for F(m×m, 3×3).
type winoKey struct {
	v *mir.Value
	m int64
}

// addDerived registers data, computed from the constant v, as a flat f32
// weight under v's name plus tag.
func (w *Weights) addDerived(v *mir.Value, seen map[*mir.Value]int, tag string, data []float32) int {
	t := tensor.FromF32([]int64{int64(len(data))}, data)
	name := v.Param
	if name == "" {
		name = fmt.Sprintf("const/%d:%s", len(w.Refs), v.Name)
	}
	seen[v] = len(w.Refs)
	w.Refs = append(w.Refs, artifact.WeightRef{Name: name + tag, DType: "f32", Shape: t.Shape, Bytes: int64(len(t.Data))})
	w.Data = append(w.Data, t)
	return len(w.Refs) - 1
}

// canonical is the value registered first under v's weight name, or v
// (a named weight's value is its data: the same name, the same bytes).
func (w *Weights) canonical(v *mir.Value) *mir.Value {
	if v.Param == "" {
		return v
	}
	if c, ok := w.byParam[v.Param]; ok {
		return c
	}
	w.byParam[v.Param] = v
	return v
}

// Add registers a constant and returns its index.
func (w *Weights) Add(v *mir.Value) int {
	v = w.canonical(v)
	if i, ok := w.index[v]; ok {
		return i
	}
	name := v.Param
	if name == "" {
		name = fmt.Sprintf("const/%d:%s", len(w.Refs), v.Name)
	}
	w.index[v] = len(w.Refs)
	w.Refs = append(w.Refs, artifact.WeightRef{Name: name, DType: v.Const.DType.String(), Shape: v.Const.Shape, Bytes: int64(len(v.Const.Data))})
	w.Data = append(w.Data, v.Const)
	return len(w.Refs) - 1
}
