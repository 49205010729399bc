package onnx

import (
	"fmt"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Shape arithmetic used as data. A model may use a dim as a number: the
// positions of a rotary embedding are Range(0, float(seq)), a mask is built
// from seq. Such a value stays symbolic at import (so Range becomes an iota
// of a symbolic length), and where it is data at run time the importer
// computes it there from the dims, exactly, in HIR.

// symRuntime materializes a symbolic value (v.sym, possibly float-tagged)
// as a HIR value named after the ONNX value: each symbolic element is a
// run-time i64 scalar (dimScalar), constant elements are constants, a 1-D
// list is their concatenation, and a float-tagged value is cast to its
// float dtype.
func (im *importer) symRuntime(name string, v *val) string {
	var parts []string
	for i, d := range v.sym {
		var p string
		if c, ok := d.Const(); ok {
			p = im.emitTmp(fmt.Sprintf("%s_%d", name, i), "const", nil, fmt.Sprint(c), "i64[]")
		} else {
			p = im.dimScalar(d)
		}
		parts = append(parts, p)
	}
	var out string
	switch {
	case v.scal && len(parts) == 1:
		out = parts[0]
	case len(parts) == 0:
		out = im.emitTmp(name+"_empty", "const", nil, "[]", "i64[0]")
	default:
		ups := make([]string, len(parts))
		for i, p := range parts {
			ups[i] = im.emitTmp(p+"_1", "unsqueeze", []string{p}, "axes=[0]")
		}
		if len(ups) == 1 {
			out = ups[0]
		} else {
			out = im.emitTmp(name+"_list", "concat", ups, "axis=0")
		}
	}
	if v.nd != nil {
		out = im.emitTmp(name+"_nd", "reshape", []string{out}, "shape="+intList(v.nd))
	}
	if v.fdt != tensor.InvalidDType {
		out = im.emitTmp(name+"_"+v.fdt.String(), "cast", []string{out}, "to="+v.fdt.String())
	}
	v.name = out
	return out
}

// dimScalar returns a run-time i64 scalar holding the value of the dim
// expression d, for any expression: dim.Build hands its structure to
// dimHIR, which writes the HIR statements. Each symbol and expression is
// computed once.
func (im *importer) dimScalar(d dim.Expr) string {
	key := d.String()
	if im.dimData == nil {
		im.dimData = map[string]string{}
	}
	if s, ok := im.dimData[key]; ok {
		return s
	}
	s := dim.Build[string](d, dimHIR{im})
	im.dimData[key] = s
	return s
}

// dimHIR computes a dim expression in HIR at run time, as i64 scalars:
// each symbol s is the sum of s ones (exact, O(s): a dim is a sequence
// length or a batch, not a data size), floor division is spelled exactly
// as (a - mod(a, b)) / b (mod is floored).
type dimHIR struct{ im *importer }

func (h dimHIR) Const(v int64) string {
	return h.im.emitTmp("dim_const", "const", nil, fmt.Sprint(v), "i64[]")
}
func (h dimHIR) Sym(name string) string { return h.im.symScalar(name) }
func (h dimHIR) Add(a, b string) string { return h.im.emitTmp("dim_value", "add", []string{a, b}) }
func (h dimHIR) Mul(a, b string) string { return h.im.emitTmp("dim_value", "mul", []string{a, b}) }
func (h dimHIR) FloorDiv(num, den string) string {
	r := h.im.emitTmp("dim_value", "mod", []string{num, den})
	x := h.im.emitTmp("dim_value", "sub", []string{num, r})
	return h.im.emitTmp("dim_value", "div", []string{x, den})
}

// symScalar returns a run-time i64 scalar holding the dim symbol name
// (never negative): the sum of that many ones.
func (im *importer) symScalar(name string) string {
	if s, ok := im.dimData[name]; ok {
		return s
	}
	one := im.emitTmp("dim_one", "const", nil, "1", "i64[]")
	ones := im.emitTmp("dim_ones", "expand", []string{one}, "shape=["+name+"]")
	s := im.emitTmp("dim_"+name, "reduce_sum", []string{ones}, "axes=[0]")
	im.dimData[name] = s
	return s
}
