package artifact

import (
	"sort"
	"strconv"
	"strings"
)

// This file defines what an artifact means: the manifest. Each variant's
// program is a lir.Program (pkg/lir) in the section the variant names.
// The compiler writes these; the runtime reads them. They are the contract
// between the two, so every field is plain data (msgpack).

// Manifest is the "manifest" section.
type Manifest struct {
	Module     string      `msgpack:"module"`
	Provenance Provenance  `msgpack:"provenance"`
	Signature  Signature   `msgpack:"signature"`
	Variants   []Variant   `msgpack:"variants"`
	Weights    []WeightRef `msgpack:"weights"`
}

// Provenance records how the artifact was built.
type Provenance struct {
	Compiler      string   `msgpack:"compiler"`       // rlxc version
	Target        string   `msgpack:"target"`         // "cpu"
	Features      []string `msgpack:"features"`       // CPU features the kernels rely on
	Options       []string `msgpack:"options"`        // build options that change the output
	Bindings      []string `msgpack:"bindings"`       // "batch=1,seq=128" per variant
	SourceDigest  string   `msgpack:"source_digest"`  // sha256 of the canonical HIR
	WeightsDigest string   `msgpack:"weights_digest"` // sha256 over the weights
	Entry         string   `msgpack:"entry"`          // the function compiled
}

// Signature is the entry function's interface with symbolic dims as text.
type Signature struct {
	Inputs  []SigTensor `msgpack:"inputs"`
	Outputs []SigTensor `msgpack:"outputs"`
	Dims    []DimInfo   `msgpack:"dims"`
}

// SigTensor is one input or output: name, dtype name and dims ("batch", "512").
type SigTensor struct {
	Name  string   `msgpack:"name"`
	DType string   `msgpack:"dtype"`
	Shape []string `msgpack:"shape"`
}

// DimInfo is a symbolic dim and its bounds.
type DimInfo struct {
	Name string `msgpack:"name"`
	Lo   int64  `msgpack:"lo"`
	Hi   int64  `msgpack:"hi"`
}

// Variant is the program specialized for one binding.
type Variant struct {
	Binding    map[string]int64 `msgpack:"binding"`
	Section    string           `msgpack:"section"`     // the section holding its lir.Program
	ArenaBytes int64            `msgpack:"arena_bytes"` // scratch memory per run
	TempBytes  int64            `msgpack:"temp_bytes"`  // sum of all intermediate tensors, for comparison
	Steps      int              `msgpack:"steps"`
}

// BindingText prints a variant's binding as rlxc build --bind takes it,
// names sorted: "batch=1,seq=128"; "(static)" for a model without dims.
func BindingText(b map[string]int64) string {
	names := make([]string, 0, len(b))
	for n := range b {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + strconv.FormatInt(b[n], 10)
	}
	if len(parts) == 0 {
		return "(static)"
	}
	return strings.Join(parts, ",")
}

// WeightRef locates one weight (or folded constant) in the "weights"
// section, or says how the loader derives it from another (Derive): then
// it has no bytes in the section (Offset 0) and Bytes is the size of what
// the derivation makes.
type WeightRef struct {
	Name   string      `msgpack:"name"`
	DType  string      `msgpack:"dtype"`
	Shape  []int64     `msgpack:"shape"`
	Offset int64       `msgpack:"offset"` // within the section, 64-byte aligned
	Bytes  int64       `msgpack:"bytes"`
	Derive *Derivation `msgpack:"derive,omitempty"`
}

// Derivation is a weight the loader computes from an earlier stored one
// instead of reading it: a form that is larger than its source and cheap
// to compute, so the artifact stays the size of the model's own weights.
type Derivation struct {
	From int     `msgpack:"from"` // the index of the source weight, stored (not derived)
	Kind string  `msgpack:"kind"` // DeriveWinograd
	Args []int64 `msgpack:"args"` // the kind's arguments
}

// DeriveWinograd is the weights of a 3x3 convolution transformed for
// Winograd's F(m×m, 3×3) (pkg/targets/cpu/kernels/winograd.Weights):
// Args are O, C and m; the source is the f32 [O, C, 3, 3] weight.
const DeriveWinograd = "winograd"
