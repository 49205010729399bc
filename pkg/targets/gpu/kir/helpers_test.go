package kir

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/internal/testenv"
	"github.com/rlx-project/rlx/internal/vktest"
	"github.com/rlx-project/rlx/pkg/targets/gpu/vk"
	"github.com/rlx-project/rlx/pkg/targets/toolchain"
)

// skipOrFail skips a test whose tool or device is missing here (fails it
// under CI=true).
var skipOrFail = testenv.SkipOrFail

// needTool skips (or fails under CI) without an external compiler.
func needTool(t testing.TB, tool toolchain.Tool) {
	t.Helper()
	if _, err := tool.Path(); err != nil {
		skipOrFail(t, "%v", err)
	}
}

// vulkan is the package's Vulkan device, opened once, closed by TestMain.
var vulkan vktest.Shared

func TestMain(m *testing.M) { vulkan.Main(m) }

func device(t testing.TB) *vk.Device { return vulkan.Device(t) }

// runVulkan prints k as GLSL, compiles it to SPIR-V (validated by spirv-val
// when installed), and runs it as one dispatch of groups workgroups on the
// Vulkan device. bufs[i] is the initial content of parameter i's buffer
// (its length is the buffer's size); the contents of every buffer after
// the dispatch come back. A kernel that takes launch offsets gets zeros.
func runVulkan(t testing.TB, k *Kernel, groups [3]int, bufs ...[]byte) [][]byte {
	t.Helper()
	var offsets []int32
	if k.Offsets {
		offsets = make([]int32, len(k.Params))
	}
	return runVulkanAt(t, k, groups, offsets, bufs...)
}

// runVulkanAt is runVulkan with the launch offsets of a kernel that takes
// them (Kernel.Offsets), pushed as its push constants.
func runVulkanAt(t testing.TB, k *Kernel, groups [3]int, offsets []int32, bufs ...[]byte) [][]byte {
	t.Helper()
	d := device(t)
	if len(bufs) != len(k.Params) {
		t.Fatalf("runVulkan %s: %d buffers for %d parameters", k.Name, len(bufs), len(k.Params))
	}
	src, err := Print(GLSL, k)
	if err != nil {
		t.Fatalf("Print: %v", err)
	}
	spv, _, err := toolchain.GLSLToSPIRV(k.Name, src)
	if err != nil {
		t.Fatalf("GLSLToSPIRV: %v\n%s", err, numbered(src))
	}
	var push []byte
	for _, o := range offsets {
		push = binary.LittleEndian.AppendUint32(push, uint32(o))
	}
	p, err := d.NewPipeline(spv, GLSL.Entry(k), len(bufs), len(push))
	if err != nil {
		t.Fatalf("NewPipeline: %v", err)
	}
	defer p.Free()
	vb := make([]*vk.Buffer, len(bufs))
	for i, b := range bufs {
		if vb[i], err = d.NewBuffer(int64(len(b))); err != nil {
			t.Fatalf("NewBuffer: %v", err)
		}
		defer vb[i].Free()
		if err := vb[i].Write(0, b); err != nil {
			t.Fatalf("Write: %v", err)
		}
	}
	c, err := d.Record([]vk.Dispatch{{Pipeline: p, Buffers: vb, Groups: [3]uint32{uint32(groups[0]), uint32(groups[1]), uint32(groups[2])}, Push: push}})
	if err != nil {
		t.Fatalf("Record: %v", err)
	}
	defer c.Free()
	if err := c.Run(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	out := make([][]byte, len(bufs))
	for i, b := range vb {
		out[i] = make([]byte, len(bufs[i]))
		if err := b.Read(0, out[i]); err != nil {
			t.Fatalf("Read: %v", err)
		}
	}
	return out
}

// numbered prefixes each line of src with its number, for compiler errors.
func numbered(src string) string {
	var b strings.Builder
	for i, l := range strings.Split(strings.TrimRight(src, "\n"), "\n") {
		fmt.Fprintf(&b, "%4d  %s\n", i+1, l)
	}
	return b.String()
}

// Element encodings, little-endian as every Vulkan device here is.

func encode(t Type, vals []uint64) []byte {
	n := t.Size()
	b := make([]byte, n*len(vals))
	for i, v := range vals {
		switch n {
		case 1:
			b[i] = byte(v)
		case 2:
			binary.LittleEndian.PutUint16(b[2*i:], uint16(v))
		case 4:
			binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
		case 8:
			binary.LittleEndian.PutUint64(b[8*i:], v)
		}
	}
	return b
}

func decode(t Type, b []byte) []uint64 {
	n := t.Size()
	v := make([]uint64, len(b)/n)
	for i := range v {
		switch n {
		case 1:
			v[i] = uint64(b[i])
		case 2:
			v[i] = uint64(binary.LittleEndian.Uint16(b[2*i:]))
		case 4:
			v[i] = uint64(binary.LittleEndian.Uint32(b[4*i:]))
		case 8:
			v[i] = binary.LittleEndian.Uint64(b[8*i:])
		}
	}
	return v
}

func f32Bits(v []float32) []uint64 {
	u := make([]uint64, len(v))
	for i, x := range v {
		u[i] = uint64(math.Float32bits(x))
	}
	return u
}

func i64Bits(v []int64) []uint64 {
	u := make([]uint64, len(v))
	for i, x := range v {
		u[i] = uint64(x)
	}
	return u
}

// mapKernel is an elementwise kernel over n elements: parameters in[0..]
// are read at the loop index i (as variables a0, a1, ...), f's result is
// stored to the last parameter, of type out. The loop is a grid-stride
// loop over the launch mapGroups(n) returns.
func mapKernel(name string, n int, in []Type, out Type, f func(a []*Expr) *Expr) (*Kernel, [3]int) {
	groups := mapGroups(n)
	k := &Kernel{Name: "k_" + name, Local: [3]int{64, 1, 1}}
	i := Var("i", I32)
	var body []*Stmt
	var args []*Expr
	for j, t := range in {
		k.Params = append(k.Params, Param{Name: fmt.Sprintf("in%d", j), Elem: t})
		v := fmt.Sprintf("a%d", j)
		body = append(body, Decl(v, Load(j, t, i)))
		args = append(args, Var(v, t.Compute()))
	}
	k.Params = append(k.Params, Param{Name: "out", Elem: out, Write: true})
	body = append(body, Store(len(in), i, f(args)))
	k.Body = []*Stmt{For("i", GlobalID(0), Int(int64(n)), Int(int64(groups[0]*64)), body...)}
	return k, groups
}

func mapGroups(n int) [3]int { return [3]int{max(1, min((n+63)/64, 256)), 1, 1} }

// runMap runs mapKernel over the inputs (raw element bits, all of one
// length) and returns the output's raw bits.
func runMap(t testing.TB, name string, in []Type, out Type, f func(a []*Expr) *Expr, inputs ...[]uint64) []uint64 {
	t.Helper()
	n := len(inputs[0])
	k, groups := mapKernel(name, n, in, out, f)
	var bufs [][]byte
	for j, v := range inputs {
		if len(v) != n {
			t.Fatalf("runMap: input %d has %d elements, input 0 %d", j, len(v), n)
		}
		bufs = append(bufs, encode(in[j], v))
	}
	bufs = append(bufs, make([]byte, n*out.Size()))
	res := runVulkan(t, k, groups, bufs...)
	return decode(out, res[len(res)-1])
}
