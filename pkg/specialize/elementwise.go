package specialize

import (
	"fmt"
	"slices"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/mir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// elementwise compiles an elementwise node, or a fused region of them, into
// one lir.Elementwise: register bytecode run over the output's elements.
// Scalar constants become immediates.
func (g *gen) elementwise(n *mir.Node) error {
	region := n.Region
	if region == nil {
		// A single node is a region of one.
		region = &mir.Graph{Inputs: n.Args, Outputs: n.Results, Nodes: []*mir.Node{n}}
	}
	out := n.Results[0]
	shape := g.shape(out)
	for _, r := range n.Results {
		if !slices.Equal(g.shape(r), shape) {
			return fmt.Errorf("internal: fused results of different shapes %v and %v", g.shape(r), shape)
		}
	}
	c := &ewCompiler{reg: map[*mir.Value]int{}, target: g.w.Target}
	var operands []*mir.Value
	// Operands: the region inputs, except scalar constants (immediates).
	for i, v := range region.Inputs {
		outer := n.Args[i]
		if outer.IsConst() && outer.Const.Len() == 1 {
			c.imm(v, constScalar(outer))
			continue
		}
		r := c.alloc(v)
		c.code = append(c.code, lir.Instr{Op: lir.EwLoad, Dst: r, A: len(operands)})
		operands = append(operands, outer)
	}
	for _, rn := range region.Nodes {
		for _, a := range rn.Args {
			if _, ok := c.reg[a]; !ok {
				if a.IsConst() && a.Const.Len() == 1 {
					c.imm(a, constScalar(a))
				} else {
					return fmt.Errorf("internal: fused operand %s is neither an input nor a scalar constant", a)
				}
			}
		}
		if err := c.node(rn); err != nil {
			return err
		}
	}
	for i, o := range region.Outputs {
		c.code = append(c.code, lir.Instr{Op: lir.EwStore, A: i, Dst: c.reg[o]})
	}
	op := &lir.Elementwise{Shape: shape, Code: c.code}
	if len(op.Shape) == 0 {
		op.Shape = []int64{1} // a scalar runs as one element of a row
	}
	// A region of a channels-last stretch (channelsLast) runs over
	// [N, H, W, C], its results stored so.
	nhwc := g.p.Kernels[n] == KernelChannelsLast
	if nhwc {
		op.Shape = nhwcOrder(shape)
	}
	for _, v := range operands {
		base, off, st := g.viewStrides(v, shape)
		if len(shape) == 0 {
			st = []int64{0}
		}
		if nhwc {
			if g.p.ChannelsLast[v] {
				st = nhwcStrides(g.shape(v), shape)
			}
			st = nhwcOrder(st)
		}
		var buf lir.Buf
		if base == v {
			buf = g.buffer(v)
		} else {
			// A slice read in place (slices.go): its source's bytes from
			// the slice's first element to its last.
			b := g.prog.Buffers[g.buffer(base)]
			size := int64(v.Type.DType.Size())
			b.Offset += off * size
			b.Bytes = span(shape, st) * size
			buf = g.add(b)
		}
		op.In = append(op.In, lir.EwIn{Buf: buf, DType: v.Type.DType, Strides: st})
	}
	for _, r := range n.Results {
		op.Out = append(op.Out, lir.EwOut{Buf: g.buffer(r), DType: r.Type.DType})
	}
	foldByteChains(op) // requantizations in short (bytechain.go)
	g.emit(n, op)
	return nil
}

// nhwcOrder is a 4-D shape's (or strides') NCHW dims in NHWC order.
func nhwcOrder(s []int64) []int64 {
	return []int64{s[0], s[2], s[3], s[1]}
}

// nhwcStrides is the strides, in NCHW order, of a value of shape s
// stored channels last and broadcast to out (0 along broadcast dims).
func nhwcStrides(s, out []int64) []int64 {
	st := []int64{s[2] * s[3] * s[1], 1, s[3] * s[1], s[1]}
	for d := range st {
		if s[d] == 1 && out[d] != 1 {
			st[d] = 0
		}
	}
	return st
}

// constScalar reads a one-element constant as float64.
func constScalar(v *mir.Value) float64 {
	t := v.Const
	switch t.DType.String() {
	case "f32":
		return float64(t.F32()[0])
	case "f64":
		return t.F64()[0]
	case "i64":
		return float64(t.I64()[0])
	case "i32":
		return float64(t.I32()[0])
	case "i16":
		return float64(int16(uint16(t.Data[0]) | uint16(t.Data[1])<<8))
	case "i8":
		return float64(int8(t.Data[0]))
	case "u8", "bool":
		return float64(t.Data[0])
	case "f16":
		return float64(tensor.F16ToF32(uint16(t.Data[0]) | uint16(t.Data[1])<<8))
	case "bf16":
		return float64(tensor.BF16ToF32(uint16(t.Data[0]) | uint16(t.Data[1])<<8))
	}
	return 0
}

type ewCompiler struct {
	target string
	code   []lir.Instr
	reg    map[*mir.Value]int
	next   int
}

func (c *ewCompiler) alloc(v *mir.Value) int {
	r := c.next
	c.next++
	c.reg[v] = r
	return r
}

func (c *ewCompiler) imm(v *mir.Value, x float64) {
	r := c.alloc(v)
	c.code = append(c.code, lir.Instr{Op: lir.EwImm, Dst: r, Imm: x})
}

func (c *ewCompiler) node(n *mir.Node) error {
	name := string(n.Op)
	in := n.Args
	dt := in[0].Type.DType
	switch name {
	case "div", "mod":
		if !dt.IsFloat() {
			name = "i" + name // integer division truncates; mod stays floored
		}
	case "cast":
		r := c.alloc(n.Results[0])
		c.code = append(c.code, lir.Instr{Op: lir.EwCast, Dst: r, A: c.reg[in[0]], Imm: float64(n.Attrs.DType("to"))})
		return nil
	case "leaky_relu":
		r := c.alloc(n.Results[0])
		c.code = append(c.code, lir.Instr{Op: lir.EwLeakyRelu, Dst: r, A: c.reg[in[0]], Imm: n.Attrs.Float("alpha")})
		return nil
	case "clamp":
		cur := c.reg[in[0]]
		for _, b := range []struct {
			attr string
			op   lir.EwOp
		}{{"min", lir.EwMax}, {"max", lir.EwMin}} {
			if !n.Attrs.Has(b.attr) {
				continue
			}
			k := c.next
			c.next++
			c.code = append(c.code, lir.Instr{Op: lir.EwImm, Dst: k, Imm: n.Attrs.Float(b.attr)})
			r := c.next
			c.next++
			c.code = append(c.code, lir.Instr{Op: b.op, Dst: r, A: cur, B: k})
			cur = r
		}
		c.reg[n.Results[0]] = cur
		return nil
	}
	op, ok := lir.ParseEwOp(name)
	if !ok || op.Info().Arity != len(in) || op.Info().Unary == nil && op.Info().Binary == nil && op != lir.EwWhere {
		return fmt.Errorf("target %s has no elementwise kernel for %s", c.target, n.Op)
	}
	ins := lir.Instr{Op: op}
	regs := []*int{&ins.A, &ins.B, &ins.C}
	for i, a := range in {
		*regs[i] = c.reg[a]
	}
	ins.Dst = c.alloc(n.Results[0])
	c.code = append(c.code, ins)
	return nil
}
