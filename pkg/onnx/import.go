// Package onnx imports ONNX models as HIR modules.
//
// Shape arithmetic that PyTorch exports (Shape -> Gather -> Unsqueeze ->
// Concat -> Reshape, Slice with computed ends, Range over a dim) is
// evaluated at import time over symbolic dims, so the HIR has symbolic
// attributes and nothing about shapes is computed at run time. Every other
// node becomes one or a few HIR statements; constants become params (in
// the weights file) or inline consts when small, and rlxc's constant folding
// computes weight-only subgraphs at build time.
package onnx

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/rlx-project/rlx/pkg/dim"
	"github.com/rlx-project/rlx/pkg/hir"
	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// Options control an import.
type Options struct {
	Module      string // module name; default from the graph or file
	Source      string // the model's file name, for messages and the header comment
	WeightsFile string // params reference this file (= @"..."); "" leaves them without a source
	InlineMax   int    // constants with at most this many elements are written inline; default 16
}

// Result is an imported model.
type Result struct {
	HIR      []byte                    // the module, in canonical form
	Weights  map[string]*tensor.Tensor // every param's data, by name
	Names    []string                  // param names in declaration order
	Warnings []string
}

// Error is an import error about one node.
type Error struct {
	Node, OpType string
	Index        int
	Opset        int64
	Msg          string
}

func (e *Error) Error() string {
	return fmt.Sprintf("onnx: node %d %q (%s, opset %d): %s", e.Index, e.Node, e.OpType, e.Opset, e.Msg)
}

// Import converts a decoded model.
func Import(m *onnxpb.Model, opts Options) (*Result, error) {
	if m.Graph == nil {
		return nil, fmt.Errorf("onnx: %s has no graph", opts.Source)
	}
	opset, ok := m.Opsets[""]
	if !ok {
		opset = m.Opsets["ai.onnx"]
	}
	if opset < 7 {
		return nil, fmt.Errorf("onnx: %s uses opset %d; rlxc imports opset 7 and newer (13 to 20 are tested)", opts.Source, opset)
	}
	if opts.InlineMax == 0 {
		opts.InlineMax = 16
	}
	im := &importer{
		m: m, opts: opts, opset: opset,
		vals:    map[string]*val{},
		used:    map[string]bool{},
		dimSeen: map[string]bool{},
		weights: map[string]*tensor.Tensor{},
	}
	return im.runSafe()
}

// runSafe turns a panic on a malformed model into an error that names the
// node being imported: a model file is user input.
func (im *importer) runSafe() (res *Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			res = nil
			if im.node != nil {
				err = im.errf("malformed node: %v", r)
			} else {
				err = fmt.Errorf("onnx: %s: malformed model: %v", im.opts.Source, r)
			}
		}
	}()
	return im.run()
}

// val is what an ONNX value is at import time.
type val struct {
	name  string         // its HIR name once it exists in HIR ("" before)
	konst *tensor.Tensor // data known at import (initializer, Constant)
	sym   []dim.Expr     // integer values known symbolically (shape arithmetic)
	scal  bool           // sym is a scalar (rank 0) rather than 1-D
	nd    []int64        // sym's shape where it has two dims or more (symnd.go), row-major; nil: scal says
	fdt   tensor.DType   // a float dtype when sym was cast to it (Cast(seq, FLOAT)); 0 for integers
	typ   *hir.Type      // known type (inputs); otherwise asked of the checker
}

type importer struct {
	m     *onnxpb.Model
	opts  Options
	opset int64
	vals  map[string]*val
	used  map[string]bool // HIR names taken

	read map[string]bool // the values some node reads or the graph returns (isRead), once asked

	dims    []string
	dimSeen map[string]bool
	params  []string // declaration lines
	weights map[string]*tensor.Tensor
	pnames  []string
	stmts   []string
	// stmtNode[i] is the index of the ONNX node whose import wrote stmts[i],
	// for the statements of nodes already imported; those after it belong
	// to the node being imported.
	stmtNode  []int
	firstStmt int // the line of stmts[0] in text's output
	args      []string
	results   []string
	warnings  []string

	// node being imported, for errors
	node  *onnxpb.Node
	index int

	checked   *hir.Module // the module as of checkedAt statements
	checkedAt int
	// typed is the type of every HIR name checked so far (the inputs,
	// params and the results of stmts[:checkedAt]): checkNew types the
	// statements after it from these, not the whole module again.
	typed map[string]hir.Type

	dimData map[string]string // a symbolic dim materialized as an i64 scalar, by its text

	producers map[string]*onnxpb.Node // node by output name, built on first use
}

func (im *importer) errf(format string, args ...any) error {
	n := im.node
	return &Error{Node: n.Name, OpType: n.OpType, Index: im.index, Opset: im.opset, Msg: fmt.Sprintf(format, args...)}
}

var nameJunk = regexp.MustCompile(`_output_\d+`)

// hirName makes a readable, unique HIR name from an ONNX name:
// "/layers.0/attn/MatMul_output_0" becomes layers.0.attn.MatMul.
func (im *importer) hirName(onnxName string) string {
	s := strings.TrimPrefix(onnxName, "/")
	s = nameJunk.ReplaceAllString(s, "")
	s = strings.ReplaceAll(s, "/", ".")
	if s == "" {
		s = "v"
	}
	if !im.used[s] {
		im.used[s] = true
		return s
	}
	for i := 1; ; i++ {
		c := fmt.Sprintf("%s_%d", s, i)
		if !im.used[c] {
			im.used[c] = true
			return c
		}
	}
}

func (im *importer) run() (*Result, error) {
	g := im.m.Graph
	inits := map[string]bool{}
	consts := map[string]*tensor.Tensor{}
	for _, t := range g.Initializers {
		data, err := t.ToTensor()
		if err != nil {
			return nil, fmt.Errorf("onnx: initializer %q: %v", t.Name, err)
		}
		im.vals[t.Name] = &val{konst: data}
		inits[t.Name] = true
		consts[t.Name] = data
	}
	if nodes, added := fuseQDQ(g, consts); added != nil {
		// QDQ groups as their integer operators (qdq.go), on copies: the
		// caller's model stays as it was.
		gc, mc := *g, *im.m
		gc.Nodes, mc.Graph = nodes, &gc
		im.m, g = &mc, &gc
		for name, t := range added {
			im.vals[name] = &val{konst: t}
		}
	}
	for _, in := range g.Inputs {
		if inits[in.Name] {
			continue // old exporters list initializers as inputs too
		}
		t, err := im.inputType(in)
		if err != nil {
			return nil, err
		}
		name := in.Name
		im.used[name] = true
		im.vals[in.Name] = &val{name: name, typ: &t}
		im.args = append(im.args, fmt.Sprintf("%s: %s", hir.Quote(name), t))
		im.setTyped(name, t)
	}
	for i, n := range g.Nodes {
		im.node, im.index = n, i
		if len(n.Outputs) == 0 {
			return nil, im.errf("node has no outputs")
		}
		if n.Domain != "" && n.Domain != "ai.onnx" && !(n.Domain == msDomain && msOps[n.OpType]) {
			return nil, im.errf("operator domain %q is not supported (only the default ai.onnx domain, and com.microsoft's QGemm)", n.Domain)
		}
		if err := im.importNode(n); err != nil {
			if _, ok := err.(*Error); ok {
				return nil, err
			}
			return nil, im.errf("%v", err)
		}
		for len(im.stmtNode) < len(im.stmts) {
			im.stmtNode = append(im.stmtNode, i)
		}
	}
	im.node = &onnxpb.Node{Name: "(graph outputs)", OpType: "return"}
	var rets []string
	for _, out := range g.Outputs {
		v := im.vals[out.Name]
		if v == nil {
			return nil, fmt.Errorf("onnx: graph output %q is not produced by any node", out.Name)
		}
		name, err := im.runtime(out.Name)
		if err != nil {
			return nil, err
		}
		t, err := im.typeOf(out.Name)
		if err != nil {
			return nil, err
		}
		rname := out.Name
		if name != rname {
			// Results carry the ONNX output names, so rlxrun --expect y=@... matches.
			if im.used[rname] {
				rname = im.hirName(out.Name + "_out")
			}
			im.used[rname] = true
			im.stmts = append(im.stmts, fmt.Sprintf("%s = reshape(%s, shape=%s)", hir.Quote(rname), hir.Quote(name), dimList(t.Shape)))
		}
		im.results = append(im.results, fmt.Sprintf("%s: %s", hir.Quote(rname), t))
		rets = append(rets, hir.Quote(rname))
	}
	im.stmts = append(im.stmts, "return "+strings.Join(rets, ", "))
	src := im.text(true)
	mod, err := hir.ParseFile(im.opts.Source+".hir", []byte(src))
	if err == nil {
		err = hir.Check(mod)
	}
	if err != nil {
		return nil, fmt.Errorf("onnx: internal: the imported module does not check: %v", err)
	}
	return &Result{HIR: hir.Format(mod), Weights: im.weights, Names: im.pnames, Warnings: im.warnings}, nil
}

// text assembles the module; final adds the header comment and the result list.
func (im *importer) text(final bool) string {
	var b strings.Builder
	if final {
		fmt.Fprintf(&b, "# Imported by rlxc import from %s (ONNX IR %d, opset %d", im.opts.Source, im.m.IRVersion, im.opset)
		if im.m.ProducerName != "" {
			fmt.Fprintf(&b, ", produced by %s %s", im.m.ProducerName, im.m.ProducerVersion)
		}
		b.WriteString(").\n")
	}
	name := im.opts.Module
	if name == "" {
		name = "model"
	}
	fmt.Fprintf(&b, "hir 1\nmodule %s\n\n", hir.Quote(name))
	for _, d := range im.dims {
		fmt.Fprintf(&b, "dim %s\n", d)
	}
	b.WriteString("\n")
	for _, p := range im.params {
		b.WriteString(p + "\n")
	}
	results := "()"
	if final {
		results = "(" + strings.Join(im.results, ", ") + ")"
	}
	fmt.Fprintf(&b, "\nfunc main(%s) -> %s {\n", strings.Join(im.args, ", "), results)
	im.firstStmt = strings.Count(b.String(), "\n") + 1
	for _, s := range im.stmts {
		b.WriteString("  " + s + "\n")
	}
	if !final {
		b.WriteString("  return\n")
	}
	b.WriteString("}\n")
	return b.String()
}

var dimNameOK = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (im *importer) inputType(in *onnxpb.ValueInfo) (hir.Type, error) {
	dt, err := dtypeOf(in.ElemType)
	if err != nil {
		return hir.Type{}, fmt.Errorf("onnx: graph input %q: %v", in.Name, err)
	}
	if !in.HasShape {
		return hir.Type{}, fmt.Errorf("onnx: graph input %q has no shape; export with a static or named (dynamic_axes) shape", in.Name)
	}
	t := hir.Type{DType: dt}
	for i, d := range in.Shape {
		switch {
		case d.Known:
			t.Shape = append(t.Shape, dim.Const(d.Value))
		default:
			name := d.Param
			if !dimNameOK.MatchString(name) || name == "" {
				gen := fmt.Sprintf("%s_d%d", strings.Map(func(r rune) rune {
					if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
						return r
					}
					return '_'
				}, in.Name), i)
				if name == "" {
					im.warnings = append(im.warnings, fmt.Sprintf("input %q dim %d is dynamic without a name; calling it %s", in.Name, i, gen))
				} else {
					im.warnings = append(im.warnings, fmt.Sprintf("input %q dim %d is named %q, not an identifier; calling it %s", in.Name, i, name, gen))
				}
				name = gen
			}
			if _, reserved := hir.ParseDType(name); reserved || name == "inf" || name == "nan" || name == "in" {
				name += "_"
			}
			if !im.dimSeen[name] {
				im.dimSeen[name] = true
				im.dims = append(im.dims, name)
			}
			t.Shape = append(t.Shape, dim.Sym(name))
		}
	}
	return t, nil
}

func dtypeOf(onnxType int32) (tensor.DType, error) {
	switch onnxType {
	case 1:
		return tensor.F32, nil
	case 2:
		return tensor.U8, nil
	case 3:
		return tensor.I8, nil
	case 5:
		return tensor.I16, nil
	case 6:
		return tensor.I32, nil
	case 7:
		return tensor.I64, nil
	case 9:
		return tensor.Bool, nil
	case 10:
		return tensor.F16, nil
	case 11:
		return tensor.F64, nil
	case 16:
		return tensor.BF16, nil
	}
	return tensor.InvalidDType, fmt.Errorf("dtype %s is not supported (supported: FLOAT FLOAT16 BFLOAT16 DOUBLE INT8 INT16 INT32 INT64 UINT8 BOOL)", onnxpb.DTypeName(onnxType))
}

// checkErr reports a failed check of the HIR made so far against the ONNX
// node that wrote the first failing statement: an earlier node's output
// may only fail to check when a later node asks for its type.
func (im *importer) checkErr(err error) error {
	var list hir.ErrorList
	if errors.As(err, &list) && len(list) > 0 {
		if i := list[0].Pos.Line - im.firstStmt; i >= 0 && i < len(im.stmtNode) {
			n := im.m.Graph.Nodes[im.stmtNode[i]]
			return &Error{Node: n.Name, OpType: n.OpType, Index: im.stmtNode[i], Opset: im.opset,
				Msg: fmt.Sprintf("%v", err)}
		}
	}
	return im.errf("the HIR made so far does not check: %v", err)
}

// typeOf returns the HIR type of an ONNX value, checking the module so far
// when the value was made by an earlier statement.
func (im *importer) typeOf(name string) (hir.Type, error) {
	v := im.vals[name]
	if v == nil {
		return hir.Type{}, fmt.Errorf("value %q is not defined before its use", name)
	}
	if v.typ != nil {
		return *v.typ, nil
	}
	if v.konst != nil {
		return hir.Type{DType: v.konst.DType, Shape: constDims(v.konst.Shape)}, nil
	}
	if v.sym != nil {
		dt := tensor.I64
		if v.fdt != tensor.InvalidDType {
			dt = v.fdt
		}
		if v.scal {
			return hir.Type{DType: dt}, nil
		}
		if v.nd != nil {
			return hir.Type{DType: dt, Shape: constDims(v.nd)}, nil
		}
		return hir.Type{DType: dt, Shape: []dim.Expr{dim.Const(int64(len(v.sym)))}}, nil
	}
	if t, ok := im.typed[v.name]; ok {
		v.typ = &t
		return t, nil
	}
	if im.checkedAt != len(im.stmts) && im.checkNew() {
		if t, ok := im.typed[v.name]; ok {
			v.typ = &t
			return t, nil
		}
	}
	if im.checked == nil || im.checkedAt != len(im.stmts) {
		src := im.text(false)
		mod, err := hir.ParseFile("import", []byte(src))
		if err == nil {
			err = hir.Check(mod)
		}
		if err != nil {
			return hir.Type{}, im.checkErr(err)
		}
		im.checked, im.checkedAt = mod, len(im.stmts)
		for _, s := range mod.Func("main").Body {
			for i, r := range s.Results {
				if i < len(s.Types) {
					im.setTyped(r.Name, s.Types[i])
				}
			}
		}
	}
	f := im.checked.Func("main")
	for _, s := range f.Body {
		for i, r := range s.Results {
			if r.Name == v.name && i < len(s.Types) {
				t := s.Types[i]
				v.typ = &t
				return t, nil
			}
		}
	}
	for _, p := range f.Params {
		if p.Name == v.name {
			return p.Checked, nil
		}
	}
	for _, d := range im.checked.Decls {
		if p, ok := d.(*hir.ParamDecl); ok && p.Name == v.name {
			return p.Checked, nil
		}
	}
	return hir.Type{}, fmt.Errorf("internal: no type for %q", name)
}

func (im *importer) setTyped(name string, t hir.Type) {
	if im.typed == nil {
		im.typed = map[string]hir.Type{}
	}
	im.typed[name] = t
}

// checkNew types the statements made since the last check (stmts[
// checkedAt:]) by checking them alone: a module whose main takes, as
// typed arguments, the earlier values they read. The whole module is
// checked only where this fails (and then for the error, with positions
// in the whole text): rechecking everything for each node's types made
// import quadratic in the model's size (a 4151-node MaxViT spent 87% of
// its import there). It reports whether the new statements' types are
// now in typed.
func (im *importer) checkNew() bool {
	var head strings.Builder
	head.WriteString("hir 1\nmodule m\n\n")
	for _, d := range im.dims {
		fmt.Fprintf(&head, "dim %s\n", d)
	}
	body := "  " + strings.Join(im.stmts[im.checkedAt:], "\n  ") + "\n  return\n}\n"
	parsed, err := hir.ParseFile("import", []byte(head.String()+"\nfunc main() -> () {\n"+body))
	if err != nil {
		return false
	}
	defined := map[string]bool{}
	var args []string
	for _, s := range parsed.Func("main").Body {
		for _, a := range s.Args {
			id, ok := a.(*hir.Ident)
			if !ok || defined[id.Name] {
				continue
			}
			t, ok := im.typed[id.Name]
			if !ok {
				return false
			}
			defined[id.Name] = true
			args = append(args, fmt.Sprintf("%s: %s", hir.Quote(id.Name), t))
		}
		for _, r := range s.Results {
			defined[r.Name] = true
		}
	}
	mod, err := hir.ParseFile("import", []byte(head.String()+"\nfunc main("+strings.Join(args, ", ")+") -> () {\n"+body))
	if err == nil {
		err = hir.Check(mod)
	}
	if err != nil {
		return false
	}
	for _, s := range mod.Func("main").Body {
		for i, r := range s.Results {
			if i < len(s.Types) {
				im.setTyped(r.Name, s.Types[i])
			}
		}
	}
	im.checkedAt = len(im.stmts)
	return true
}

func constDims(s []int64) []dim.Expr {
	out := make([]dim.Expr, len(s))
	for i, d := range s {
		out[i] = dim.Const(d)
	}
	return out
}

func dimList(ds []dim.Expr) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.String()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// runtime returns the HIR name of an ONNX value, materializing a constant
// (as an inline const or a param) or a symbolic integer (as a const when its
// values are known) on first use.
func (im *importer) runtime(name string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("an omitted optional input is used")
	}
	v := im.vals[name]
	if v == nil {
		return "", fmt.Errorf("value %q is not defined before its use", name)
	}
	if v.name != "" {
		return v.name, nil
	}
	if v.konst == nil && v.sym != nil {
		// Shape arithmetic used as data: a constant when every value is
		// known, else computed at run time from the dims (positions, masks).
		t, ok := v.symTensor()
		if !ok || v.fdt != tensor.InvalidDType {
			return im.symRuntime(name, v), nil
		}
		v.konst = t
	}
	t := v.konst
	hname := im.hirName(name)
	v.name = hname
	if t.Len() <= im.opts.InlineMax && t.DType != tensor.BF16 && t.DType != tensor.F16 {
		im.stmts = append(im.stmts, fmt.Sprintf("%s = const(%s, %s%s)", hir.Quote(hname), literal(t), t.DType, tensor.ShapeString(t.Shape)))
		return hname, nil
	}
	decl := fmt.Sprintf("param %s : %s%s", hir.Quote(hname), t.DType, tensor.ShapeString(t.Shape))
	if im.opts.WeightsFile != "" {
		decl += fmt.Sprintf(" = @%q", im.opts.WeightsFile)
	}
	im.params = append(im.params, decl)
	im.setTyped(hname, hir.Type{DType: t.DType, Shape: constDims(t.Shape)})
	im.weights[hname] = t
	im.pnames = append(im.pnames, hname)
	return hname, nil
}

// literal prints tensor data as a HIR literal (nested lists, or a scalar).
func literal(t *tensor.Tensor) string {
	n := t.Len()
	vals := make([]string, n)
	for i := 0; i < n; i++ {
		vals[i] = elemString(t, i)
	}
	if len(t.Shape) == 0 {
		return vals[0]
	}
	var build func(d, off int) (string, int)
	build = func(d, off int) (string, int) {
		if d == len(t.Shape) {
			return vals[off], off + 1
		}
		parts := make([]string, t.Shape[d])
		for i := range parts {
			parts[i], off = build(d+1, off)
		}
		return "[" + strings.Join(parts, ", ") + "]", off
	}
	s, _ := build(0, 0)
	return s
}

func elemString(t *tensor.Tensor, i int) string {
	switch t.DType {
	case tensor.F32:
		return floatLit(float64(t.F32()[i]), 32)
	case tensor.F64:
		return floatLit(t.F64()[i], 64)
	case tensor.F16:
		return floatLit(float64(tensor.F16ToF32(uint16(t.Data[2*i])|uint16(t.Data[2*i+1])<<8)), 32)
	case tensor.BF16:
		return floatLit(float64(tensor.BF16ToF32(uint16(t.Data[2*i])|uint16(t.Data[2*i+1])<<8)), 32)
	case tensor.I64:
		return fmt.Sprint(t.I64()[i])
	case tensor.I32:
		return fmt.Sprint(t.I32()[i])
	case tensor.I16:
		return fmt.Sprint(int16(uint16(t.Data[2*i]) | uint16(t.Data[2*i+1])<<8))
	case tensor.I8:
		return fmt.Sprint(int8(t.Data[i]))
	case tensor.U8:
		return fmt.Sprint(t.Data[i])
	case tensor.Bool:
		if t.Data[i] != 0 {
			return "true"
		}
		return "false"
	}
	return "0"
}

// floatLit prints the shortest decimal that reads back as the same value.
func floatLit(v float64, bits int) string {
	switch {
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	case math.IsNaN(v):
		return "nan"
	}
	s := fmt.Sprint(v)
	if bits == 32 {
		s = fmt.Sprint(float32(v))
	}
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}

// emit adds `outs = op(args, attrs)` and binds the node's outputs to it.
func (im *importer) emit(outs []string, op string, args []string, attrs ...string) error {
	var names []string
	for _, o := range outs {
		h := im.hirName(o)
		im.vals[o] = &val{name: h}
		names = append(names, hir.Quote(h))
	}
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = hir.Quote(a)
	}
	all := append(quoted, attrs...)
	im.stmts = append(im.stmts, fmt.Sprintf("%s = %s(%s)", strings.Join(names, ", "), op, strings.Join(all, ", ")))
	return nil
}

// emitTmp adds a statement with a fresh name and returns it.
func (im *importer) emitTmp(hint, op string, args []string, attrs ...string) string {
	h := im.hirName(hint)
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = hir.Quote(a)
	}
	all := append(quoted, attrs...)
	im.stmts = append(im.stmts, fmt.Sprintf("%s = %s(%s)", hir.Quote(h), op, strings.Join(all, ", ")))
	return h
}

// alias makes an ONNX output the same value as an input (Identity, Dropout).
func (im *importer) alias(out, in string) { im.vals[out] = im.vals[in] }

// rt2 returns the HIR names of the node's inputs 0 and 1, materialized.
func (im *importer) rt2() (a, b string, err error) {
	if a, err = im.rt(0); err == nil {
		b, err = im.rt(1)
	}
	return a, b, err
}

// rt returns the HIR name of the node's input i, materialized.
func (im *importer) rt(i int) (string, error) {
	n := im.node
	if i >= len(n.Inputs) || n.Inputs[i] == "" {
		return "", fmt.Errorf("input %d is missing", i)
	}
	return im.runtime(n.Inputs[i])
}

// symOf returns the integer values of an input known at import time.
func (im *importer) symOf(name string) ([]dim.Expr, bool, error) {
	v := im.vals[name]
	if v == nil {
		return nil, false, fmt.Errorf("value %q is not defined before its use", name)
	}
	if v.sym != nil {
		if v.fdt != tensor.InvalidDType {
			return nil, false, fmt.Errorf("value %q is %s, an integer tensor was expected", name, v.fdt)
		}
		if v.nd != nil {
			return nil, false, fmt.Errorf("value %q has rank %d, a scalar or 1-D integer tensor was expected", name, len(v.nd))
		}
		return v.sym, v.scal, nil
	}
	if t := v.konst; t != nil {
		if t.DType != tensor.I64 && t.DType != tensor.I32 {
			return nil, false, fmt.Errorf("value %q is %s, an integer tensor was expected", name, t.DType)
		}
		if len(t.Shape) > 1 {
			return nil, false, fmt.Errorf("value %q has rank %d, a scalar or 1-D integer tensor was expected", name, len(t.Shape))
		}
		out := make([]dim.Expr, t.Len())
		for i := range out {
			if t.DType == tensor.I64 {
				out[i] = dim.Const(t.I64()[i])
			} else {
				out[i] = dim.Const(int64(t.I32()[i]))
			}
		}
		return out, len(t.Shape) == 0, nil
	}
	return nil, false, fmt.Errorf("value %q is computed at run time, but it must be known at import time (a shape, axes or sizes)", name)
}

// isRead reports whether a node of the graph reads the value name, or
// the graph returns it.
func (im *importer) isRead(name string) bool {
	if im.read == nil {
		im.read = map[string]bool{}
		var walk func(g *onnxpb.Graph)
		walk = func(g *onnxpb.Graph) { // an If's branches read outer values too
			for _, n := range g.Nodes {
				for _, in := range n.Inputs {
					im.read[in] = true
				}
				for _, a := range n.Attrs {
					if a.G != nil {
						walk(a.G)
					}
				}
			}
			for _, o := range g.Outputs {
				im.read[o.Name] = true
			}
		}
		walk(im.m.Graph)
	}
	return im.read[name]
}

func (im *importer) isKnownInt(name string) bool {
	v := im.vals[name]
	if v == nil || name == "" {
		return false
	}
	if v.sym != nil {
		return v.fdt == tensor.InvalidDType && v.nd == nil // float(seq) is not shape arithmetic
	}
	t := v.konst
	return t != nil && (t.DType == tensor.I64 || t.DType == tensor.I32) && len(t.Shape) <= 1 && t.Len() <= 64
}

// constInts reads an optional constant integer input (axes, pads, ...).
func (im *importer) constInts(i int) ([]int64, bool, error) {
	n := im.node
	if i >= len(n.Inputs) || n.Inputs[i] == "" {
		return nil, false, nil
	}
	s, _, err := im.symOf(n.Inputs[i])
	if err != nil {
		return nil, false, err
	}
	out := make([]int64, len(s))
	for j, d := range s {
		c, ok := d.Const()
		if !ok {
			return nil, false, fmt.Errorf("input %d must be constant, found %s", i, d)
		}
		out[j] = c
	}
	return out, true, nil
}

func intList(v []int64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprint(x)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
