//go:build (linux || (freebsd && cgo)) && (amd64 || arm64)

package vk

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rlx-project/rlx/internal/testenv"
)

// The tests that need a Vulkan device or glslangValidator skip without
// them, except under CI=true, where CI installs both and a skip would hide
// a broken runtime.

var skipOrFail = testenv.SkipOrFail

func openDevice(t *testing.T) *Device {
	t.Helper()
	d, err := Open()
	if err != nil {
		skipOrFail(t, "no Vulkan device: %v", err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return d
}

// compile compiles a GLSL compute shader to SPIR-V with glslangValidator.
func compile(t testing.TB, src string) []byte {
	t.Helper()
	glslang, err := exec.LookPath("glslangValidator")
	if err != nil {
		skipOrFail(t, "glslangValidator not found (apt-get install glslang-tools)")
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "k.comp"), filepath.Join(dir, "k.spv")
	if err := os.WriteFile(in, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(glslang, "-V", "--target-env", "vulkan1.1", "-S", "comp", "-o", out, in)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("glslangValidator: %v\n%s", err, msg)
	}
	spv, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return spv
}

func newBuffer(t *testing.T, d *Device, size int64) *Buffer {
	t.Helper()
	b, err := d.NewBuffer(size)
	if err != nil {
		t.Fatalf("NewBuffer(%d): %v", size, err)
	}
	return b
}

func newPipeline(t *testing.T, d *Device, src string, bindings int) *Pipeline {
	t.Helper()
	p, err := d.NewPipeline(compile(t, src), "main", bindings, 0)
	if err != nil {
		t.Fatalf("NewPipeline: %v", err)
	}
	return p
}

func record(t *testing.T, d *Device, ds ...Dispatch) *Commands {
	t.Helper()
	c, err := d.Record(ds)
	if err != nil {
		t.Fatalf("Record: %v", err)
	}
	return c
}

func run(t *testing.T, c *Commands) {
	t.Helper()
	if err := c.Run(); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func u32bytes(v []uint32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	return b
}

func f32bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func readU32(t *testing.T, b *Buffer, n int) []uint32 {
	t.Helper()
	raw := make([]byte, 4*n)
	if err := b.Read(0, raw); err != nil {
		t.Fatalf("Read: %v", err)
	}
	v := make([]uint32, n)
	for i := range v {
		v[i] = binary.LittleEndian.Uint32(raw[4*i:])
	}
	return v
}

func readF32(t *testing.T, b *Buffer, n int) []float32 {
	t.Helper()
	u := readU32(t, b, n)
	v := make([]float32, n)
	for i, x := range u {
		v[i] = math.Float32frombits(x)
	}
	return v
}

func write(t *testing.T, b *Buffer, p []byte) {
	t.Helper()
	if err := b.Write(0, p); err != nil {
		t.Fatalf("Write: %v", err)
	}
}

func TestOpen(t *testing.T) {
	d := openDevice(t)
	t.Logf("device %q (%s, Vulkan %s), features %v", d.Name(), d.Type(), d.APIVersion(), d.Features())
	t.Logf("limits %+v", d.Limits())
	if d.Name() == "" {
		t.Error("empty device name")
	}
	f := d.Features()
	if !slices.IsSorted(f) {
		t.Errorf("Features() = %v, not sorted", f)
	}
	for _, name := range f {
		if !d.HasFeature(name) {
			t.Errorf("HasFeature(%q) = false, but Features lists it", name)
		}
	}
	lim := d.Limits()
	if lim.MaxComputeWorkGroupInvocations < 128 || lim.MaxStorageBufferRange < 1<<27 || lim.MaxPerStageDescriptorStorageBuffers < 4 {
		t.Errorf("limits below the Vulkan minimums: %+v", lim)
	}
}

const vecAddSrc = `#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) writeonly buffer C { float c[]; };
void main() {
	uint i = gl_GlobalInvocationID.x;
	if (i < uint(c.length())) {
		c[i] = a[i] + b[i];
	}
}
`

func TestVectorAdd(t *testing.T) {
	d := openDevice(t)
	const n = 1000 // not a multiple of the workgroup size
	p := newPipeline(t, d, vecAddSrc, 3)
	defer p.Free()
	a, b, c := newBuffer(t, d, 4*n), newBuffer(t, d, 4*n), newBuffer(t, d, 4*n)
	defer a.Free()
	defer b.Free()
	defer c.Free()
	av, bv := make([]float32, n), make([]float32, n)
	for i := range av {
		av[i] = float32(i)*0.25 - 17
		bv[i] = 1 / float32(i+3)
	}
	write(t, a, f32bytes(av))
	write(t, b, f32bytes(bv))
	cmds := record(t, d, Dispatch{Pipeline: p, Buffers: []*Buffer{a, b, c}, Groups: [3]uint32{(n + 63) / 64, 1, 1}})
	defer cmds.Free()
	run(t, cmds)
	got := readF32(t, c, n)
	for i := range got {
		if want := av[i] + bv[i]; got[i] != want {
			t.Fatalf("c[%d] = %v, want %v", i, got[i], want)
		}
	}
}

// TestTwoDispatches runs a sequence whose second dispatch reads what the
// first wrote, including elements written by other workgroups, three times
// through one Commands with new inputs written between the runs.
func TestTwoDispatches(t *testing.T) {
	d := openDevice(t)
	const n = 777
	first := newPipeline(t, d, `#version 450
layout(local_size_x = 32) in;
layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) writeonly buffer T { uint tmp[]; };
void main() {
	uint i = gl_GlobalInvocationID.x;
	if (i < uint(x.length())) {
		tmp[i] = x[i] * 3u + 1u;
	}
}
`, 2)
	second := newPipeline(t, d, `#version 450
layout(local_size_x = 32) in;
layout(std430, binding = 0) readonly buffer T { uint tmp[]; };
layout(std430, binding = 1) writeonly buffer Y { uint y[]; };
void main() {
	uint i = gl_GlobalInvocationID.x;
	uint n = uint(tmp.length());
	if (i < n) {
		y[i] = tmp[i] + 2u * tmp[n - 1u - i];
	}
}
`, 2)
	x, tmp, y := newBuffer(t, d, 4*n), newBuffer(t, d, 4*n), newBuffer(t, d, 4*n)
	groups := [3]uint32{(n + 31) / 32, 1, 1}
	cmds := record(t, d,
		Dispatch{Pipeline: first, Buffers: []*Buffer{x, tmp}, Groups: groups},
		Dispatch{Pipeline: second, Buffers: []*Buffer{tmp, y}, Groups: groups},
	)
	for r := range 3 {
		xv := make([]uint32, n)
		for i := range xv {
			xv[i] = uint32(i*(r+1)) ^ uint32(r*7919)
		}
		write(t, x, u32bytes(xv))
		run(t, cmds)
		got := readU32(t, y, n)
		for i := range got {
			want := (xv[i]*3 + 1) + 2*(xv[n-1-i]*3+1)
			if got[i] != want {
				t.Fatalf("run %d: y[%d] = %d, want %d", r, i, got[i], want)
			}
		}
	}
	// Close frees what the test did not.
}

// TestInt64And8Bit needs shaderInt64 and storageBuffer8BitAccess: a module
// that declares the Int64 and StorageBuffer8BitAccess capabilities fails
// pipeline creation, or computes garbage, on a device where they were not
// enabled.
func TestInt64And8Bit(t *testing.T) {
	d := openDevice(t)
	if !d.HasFeature(FeatureShaderInt64) || !d.HasFeature(FeatureStorageBuffer8BitAccess) {
		t.Skipf("needs hardware: %s lacks shaderInt64 or storageBuffer8BitAccess (has %v)", d.Name(), d.Features())
	}
	p := newPipeline(t, d, `#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_8bit_storage : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer P { uint n; };
layout(std430, binding = 1) readonly buffer A { uint8_t a[]; };
layout(std430, binding = 2) readonly buffer B { int64_t b[]; };
layout(std430, binding = 3) writeonly buffer C { int64_t c[]; };
layout(std430, binding = 4) writeonly buffer D { uint8_t e[]; };
void main() {
	uint i = gl_GlobalInvocationID.x;
	if (i >= n) {
		return;
	}
	uint ai = uint(a[i]);
	c[i] = b[i] * int64_t(ai) - (int64_t(1) << 40);
	e[i] = uint8_t((ai * 3u + 7u) & 255u);
}
`, 5)
	const n = 301
	params, a, b, c, e := newBuffer(t, d, 4), newBuffer(t, d, n), newBuffer(t, d, 8*n), newBuffer(t, d, 8*n), newBuffer(t, d, n)
	av := make([]byte, n)
	bv := make([]byte, 8*n)
	for i := range n {
		av[i] = byte(i*37 + 11)
		binary.LittleEndian.PutUint64(bv[8*i:], uint64(int64(i-150)*(1<<33)+int64(i)))
	}
	write(t, params, u32bytes([]uint32{n}))
	write(t, a, av)
	write(t, b, bv)
	cmds := record(t, d, Dispatch{Pipeline: p, Buffers: []*Buffer{params, a, b, c, e}, Groups: [3]uint32{(n + 63) / 64, 1, 1}})
	run(t, cmds)
	cv := make([]byte, 8*n)
	ev := make([]byte, n)
	if err := c.Read(0, cv); err != nil {
		t.Fatal(err)
	}
	if err := e.Read(0, ev); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		bi := int64(binary.LittleEndian.Uint64(bv[8*i:]))
		if got, want := int64(binary.LittleEndian.Uint64(cv[8*i:])), bi*int64(av[i])-(1<<40); got != want {
			t.Fatalf("c[%d] = %d, want %d", i, got, want)
		}
		if got, want := ev[i], av[i]*3+7; got != want {
			t.Fatalf("e[%d] = %d, want %d", i, got, want)
		}
	}
}

// TestFloat16Int16 needs shaderFloat16, shaderInt16 and
// storageBuffer16BitAccess: half-precision and 16-bit integer arithmetic on
// 16-bit buffers. The values are chosen so that every result is exact in
// half precision.
func TestFloat16Int16(t *testing.T) {
	d := openDevice(t)
	for _, f := range []string{FeatureShaderFloat16, FeatureShaderInt16, FeatureStorageBuffer16BitAccess} {
		if !d.HasFeature(f) {
			t.Skipf("needs hardware: %s lacks %s (has %v)", d.Name(), f, d.Features())
		}
	}
	p := newPipeline(t, d, `#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer P { uint n; };
layout(std430, binding = 1) readonly buffer A { float16_t a[]; };
layout(std430, binding = 2) readonly buffer B { int16_t b[]; };
layout(std430, binding = 3) writeonly buffer C { float16_t c[]; };
layout(std430, binding = 4) writeonly buffer D { int16_t e[]; };
void main() {
	uint i = gl_GlobalInvocationID.x;
	if (i >= n) {
		return;
	}
	c[i] = a[i] * float16_t(2.0) + float16_t(0.5);
	e[i] = b[i] * int16_t(3) - int16_t(7);
}
`, 5)
	const n = 999
	params, a, b, c, e := newBuffer(t, d, 4), newBuffer(t, d, 2*n), newBuffer(t, d, 2*n), newBuffer(t, d, 2*n), newBuffer(t, d, 2*n)
	av, bv := make([]byte, 2*n), make([]byte, 2*n)
	for i := range n {
		binary.LittleEndian.PutUint16(av[2*i:], f16bits(float32(i-500)/4))
		binary.LittleEndian.PutUint16(bv[2*i:], uint16(int16(i*13-6000)))
	}
	write(t, params, u32bytes([]uint32{n}))
	write(t, a, av)
	write(t, b, bv)
	cmds := record(t, d, Dispatch{Pipeline: p, Buffers: []*Buffer{params, a, b, c, e}, Groups: [3]uint32{(n + 63) / 64, 1, 1}})
	run(t, cmds)
	cv, ev := make([]byte, 2*n), make([]byte, 2*n)
	if err := c.Read(0, cv); err != nil {
		t.Fatal(err)
	}
	if err := e.Read(0, ev); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if got, want := binary.LittleEndian.Uint16(cv[2*i:]), f16bits(float32(i-500)/2+0.5); got != want {
			t.Fatalf("c[%d] = %#04x, want %#04x", i, got, want)
		}
		if got, want := int16(binary.LittleEndian.Uint16(ev[2*i:])), int16(i*13-6000)*3-7; got != want {
			t.Fatalf("e[%d] = %d, want %d", i, got, want)
		}
	}
}

// f16bits is the IEEE half-precision encoding of f, which must be zero or
// a normal half that f represents exactly.
func f16bits(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	if f == 0 {
		return sign
	}
	exp := int(b>>23&0xff) - 127 + 15
	mant := b & 0x7fffff
	if exp <= 0 || exp >= 31 || mant&0x1fff != 0 {
		panic("f16bits: not exactly representable as a normal half")
	}
	return sign | uint16(exp)<<10 | uint16(mant>>13)
}

// TestSharedReduction sums 256 floats per workgroup with a tree reduction
// in shared memory, synchronized with barrier(). The Go reference adds in
// the same tree order, so the results must match exactly.
func TestSharedReduction(t *testing.T) {
	d := openDevice(t)
	p := newPipeline(t, d, `#version 450
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer S { float sums[]; };
shared float part[256];
void main() {
	uint l = gl_LocalInvocationID.x;
	part[l] = x[gl_GlobalInvocationID.x];
	barrier();
	for (uint s = 128u; s > 0u; s >>= 1u) {
		if (l < s) {
			part[l] += part[l + s];
		}
		barrier();
	}
	if (l == 0u) {
		sums[gl_WorkGroupID.x] = part[0];
	}
}
`, 2)
	const groups = 4
	xv := make([]float32, 256*groups)
	for i := range xv {
		xv[i] = float32(math.Sin(float64(i))) * 3.5
	}
	x, s := newBuffer(t, d, int64(4*len(xv))), newBuffer(t, d, 4*groups)
	write(t, x, f32bytes(xv))
	cmds := record(t, d, Dispatch{Pipeline: p, Buffers: []*Buffer{x, s}, Groups: [3]uint32{groups, 1, 1}})
	run(t, cmds)
	got := readF32(t, s, groups)
	for g := range groups {
		part := slices.Clone(xv[256*g : 256*(g+1)])
		for s := 128; s > 0; s >>= 1 {
			for l := range s {
				part[l] += part[l+s]
			}
		}
		if got[g] != part[0] {
			t.Errorf("sum of group %d = %v, want %v", g, got[g], part[0])
		}
	}
}

func TestZeroSizeBuffer(t *testing.T) {
	d := openDevice(t)
	b := newBuffer(t, d, 0)
	defer b.Free()
	if b.Size() != 0 {
		t.Errorf("Size() = %d, want 0", b.Size())
	}
	if err := b.Write(0, nil); err != nil {
		t.Errorf("Write(0, nil) on an empty buffer: %v", err)
	}
	if err := b.Write(0, []byte{1}); err == nil {
		t.Error("Write of 1 byte into an empty buffer succeeded")
	}
	// An empty buffer can still be bound (the Vulkan buffer has 4 bytes).
	p := newPipeline(t, d, vecAddSrc, 3)
	c, err := d.Record([]Dispatch{{Pipeline: p, Buffers: []*Buffer{b, b, b}, Groups: [3]uint32{1, 1, 1}}})
	if err != nil {
		t.Fatalf("Record with empty buffers: %v", err)
	}
	run(t, c)
}

func TestBufferBounds(t *testing.T) {
	d := openDevice(t)
	b := newBuffer(t, d, 10)
	if err := b.Write(0, make([]byte, 10)); err != nil {
		t.Errorf("Write of the whole buffer: %v", err)
	}
	if err := b.Write(6, []byte{1, 2, 3, 4}); err != nil {
		t.Errorf("Write of the last 4 bytes: %v", err)
	}
	got := make([]byte, 4)
	if err := b.Read(6, got); err != nil || !slices.Equal(got, []byte{1, 2, 3, 4}) {
		t.Errorf("Read(6) = %v, %v", got, err)
	}
	for _, c := range []struct {
		off int64
		n   int
	}{{7, 4}, {-1, 1}, {11, 0}, {0, 11}, {math.MaxInt64, 1}} {
		if err := b.Write(c.off, make([]byte, c.n)); err == nil || !strings.Contains(err.Error(), "out of bounds") {
			t.Errorf("Write(%d, %d bytes) = %v, want an out-of-bounds error", c.off, c.n, err)
		}
		if err := b.Read(c.off, make([]byte, c.n)); err == nil {
			t.Errorf("Read(%d, %d bytes) succeeded", c.off, c.n)
		}
	}
	if _, err := d.NewBuffer(-1); err == nil {
		t.Error("NewBuffer(-1) succeeded")
	}
	b.Free()
	b.Free()
	if err := b.Write(0, []byte{1}); !errors.Is(err, ErrFreed) {
		t.Errorf("Write after Free = %v, want ErrFreed", err)
	}
}

func TestBadPipelines(t *testing.T) {
	d := openDevice(t)
	garbage := make([]byte, 4096)
	for i := range garbage {
		garbage[i] = byte(i*131 + i>>3)
	}
	header := u32bytes([]uint32{spirvMagic, 0x00010000, 0, 100, 0})
	withMagic := append(slices.Clone(header), garbage...)
	cases := []struct {
		name, want string
		code       []byte
		entry      string
		bindings   int
	}{
		{"empty", "empty", nil, "main", 0},
		{"odd length", "multiple of 4", []byte{3, 2, 0x23, 7, 0}, "main", 0},
		{"garbage", "not a SPIR-V module", garbage, "main", 0},
		{"text", "not a SPIR-V module", []byte("#version 450\nvoid main() {}\n"), "main", 0},
		{"garbage after header", "malformed SPIR-V", withMagic, "main", 0},
		{"header only", "no GLCompute entry point", header, "main", 0},
		{"too many bindings", "bindings", header, "main", 1 << 30},
	}
	for _, c := range cases {
		p, err := d.NewPipeline(c.code, c.entry, c.bindings, 0)
		if err == nil {
			p.Free()
			t.Errorf("%s: NewPipeline succeeded", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q does not say %q", c.name, err, c.want)
		}
	}
	// A valid module used wrongly.
	spv := compile(t, vecAddSrc)
	if _, err := d.NewPipeline(spv, "mian", 3, 0); err == nil || !strings.Contains(err.Error(), `no GLCompute entry point "mian" (it has: main)`) {
		t.Errorf("wrong entry point: %v", err)
	}
	if _, err := d.NewPipeline(spv, "main", 2, 0); err == nil || !strings.Contains(err.Error(), "binding 2") {
		t.Errorf("too few bindings: %v", err)
	}
	push := compile(t, `#version 450
layout(local_size_x = 1) in;
layout(push_constant) uniform P { uint k; };
layout(std430, binding = 0) buffer X { uint x[]; };
void main() { x[0] = k; }
`)
	if _, err := d.NewPipeline(push, "main", 1, 0); err == nil || !strings.Contains(err.Error(), "push constants") {
		t.Errorf("push constants: %v", err)
	}
	if _, err := d.NewPipeline(push, "main", 1, 4+int(d.Limits().MaxPushConstantsSize)); err == nil || !strings.Contains(err.Error(), "bytes of push constants") {
		t.Errorf("push constants past the device's limit: %v", err)
	}
	// With a push-constant range, the block is accepted, and each dispatch
	// pushes its own value, recorded once and reused by every Run.
	pp, err := d.NewPipeline(push, "main", 1, 4)
	if err != nil {
		t.Fatalf("push constants: %v", err)
	}
	defer pp.Free()
	x, y := newBuffer(t, d, 4), newBuffer(t, d, 4)
	if _, err := d.Record([]Dispatch{{Pipeline: pp, Buffers: []*Buffer{x}, Groups: [3]uint32{1, 1, 1}}}); err == nil || !strings.Contains(err.Error(), "0 bytes of push constants; its pipeline takes 4") {
		t.Errorf("dispatch without its push constants: %v", err)
	}
	c := record(t, d, Dispatch{Pipeline: pp, Buffers: []*Buffer{x}, Groups: [3]uint32{1, 1, 1}, Push: u32bytes([]uint32{0xabcd})},
		Dispatch{Pipeline: pp, Buffers: []*Buffer{y}, Groups: [3]uint32{1, 1, 1}, Push: u32bytes([]uint32{77})})
	defer c.Free()
	for range 2 {
		run(t, c)
		got := make([]byte, 8)
		if err := x.Read(0, got[:4]); err != nil {
			t.Fatal(err)
		}
		if err := y.Read(0, got[4:]); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, u32bytes([]uint32{0xabcd, 77})) {
			t.Errorf("pushed values read back as % x", got)
		}
	}
	ubo := compile(t, `#version 450
layout(local_size_x = 1) in;
layout(std140, binding = 0) uniform U { uint k; };
layout(std430, binding = 1) buffer X { uint x[]; };
void main() { x[0] = k; }
`)
	if _, err := d.NewPipeline(ubo, "main", 2, 0); err == nil || !strings.Contains(err.Error(), "uniform buffer") {
		t.Errorf("uniform buffer: %v", err)
	}
	set1 := compile(t, `#version 450
layout(local_size_x = 1) in;
layout(std430, set = 1, binding = 0) buffer X { uint x[]; };
void main() { x[0] = 1u; }
`)
	if _, err := d.NewPipeline(set1, "main", 1, 0); err == nil || !strings.Contains(err.Error(), "descriptor set 1") {
		t.Errorf("set 1: %v", err)
	}
}

func TestRecordErrors(t *testing.T) {
	d := openDevice(t)
	p := newPipeline(t, d, vecAddSrc, 3)
	a := newBuffer(t, d, 16)
	if _, err := d.Record(nil); err == nil {
		t.Error("Record(nil) succeeded")
	}
	if _, err := d.Record([]Dispatch{{Buffers: []*Buffer{a, a, a}}}); err == nil {
		t.Error("Record without a pipeline succeeded")
	}
	if _, err := d.Record([]Dispatch{{Pipeline: p, Buffers: []*Buffer{a, a}}}); err == nil || !strings.Contains(err.Error(), "3 bindings") {
		t.Errorf("Record with 2 buffers for 3 bindings: %v", err)
	}
	if _, err := d.Record([]Dispatch{{Pipeline: p, Buffers: []*Buffer{a, nil, a}}}); err == nil {
		t.Error("Record with a nil buffer succeeded")
	}
	if _, err := d.Record([]Dispatch{{Pipeline: p, Buffers: []*Buffer{a, a, a}, Groups: [3]uint32{math.MaxUint32, 1, 1}}}); err == nil {
		t.Error("Record with too many groups succeeded")
	}

	// Freeing a buffer that recorded Commands use makes Run fail cleanly,
	// and the Commands can still be freed.
	b := newBuffer(t, d, 16)
	c := record(t, d, Dispatch{Pipeline: p, Buffers: []*Buffer{a, b, a}, Groups: [3]uint32{1, 1, 1}})
	run(t, c)
	b.Free()
	if err := c.Run(); !errors.Is(err, ErrFreed) {
		t.Errorf("Run after freeing a buffer it uses = %v, want ErrFreed", err)
	}
	if _, err := d.Record([]Dispatch{{Pipeline: p, Buffers: []*Buffer{a, b, a}}}); !errors.Is(err, ErrFreed) {
		t.Errorf("Record with a freed buffer = %v, want ErrFreed", err)
	}
	c.Free()
	c.Free()
	if err := c.Run(); !errors.Is(err, ErrFreed) {
		t.Errorf("Run after Free = %v, want ErrFreed", err)
	}

	// Same for a pipeline.
	c = record(t, d, Dispatch{Pipeline: p, Buffers: []*Buffer{a, a, a}, Groups: [3]uint32{1, 1, 1}})
	p.Free()
	if err := c.Run(); !errors.Is(err, ErrFreed) {
		t.Errorf("Run after freeing its pipeline = %v, want ErrFreed", err)
	}
	c.Free()
}

func TestClose(t *testing.T) {
	d, err := Open()
	if err != nil {
		skipOrFail(t, "no Vulkan device: %v", err)
	}
	p := newPipeline(t, d, vecAddSrc, 3)
	a := newBuffer(t, d, 64)
	c := record(t, d, Dispatch{Pipeline: p, Buffers: []*Buffer{a, a, a}, Groups: [3]uint32{1, 1, 1}})
	run(t, c)
	if err := d.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := d.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := c.Run(); !errors.Is(err, ErrClosed) {
		t.Errorf("Run after Close = %v, want ErrClosed", err)
	}
	if err := a.Write(0, []byte{1}); err == nil {
		t.Error("Write after Close succeeded")
	}
	if _, err := d.NewBuffer(4); !errors.Is(err, ErrClosed) {
		t.Errorf("NewBuffer after Close = %v, want ErrClosed", err)
	}
	if _, err := d.NewPipeline(compile(t, vecAddSrc), "main", 3, 0); !errors.Is(err, ErrClosed) {
		t.Errorf("NewPipeline after Close = %v, want ErrClosed", err)
	}
	if _, err := d.Record([]Dispatch{{Pipeline: p, Buffers: []*Buffer{a, a, a}}}); err == nil {
		t.Error("Record after Close succeeded")
	}
	c.Free()
	p.Free()
	a.Free()
}

// TestConcurrent drives one device from several goroutines: each makes its
// own buffers and Commands and runs them, and all of them also run one
// shared Commands (whose Runs are serialized).
func TestConcurrent(t *testing.T) {
	d := openDevice(t)
	spv := compile(t, vecAddSrc)
	p, err := d.NewPipeline(spv, "main", 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	const n = 500
	one := make([]float32, n)
	for i := range one {
		one[i] = 1
	}
	sa, sb := newBuffer(t, d, 4*n), newBuffer(t, d, 4*n)
	write(t, sa, f32bytes(one))
	write(t, sb, f32bytes(one))
	sc := newBuffer(t, d, 4*n)
	shared := record(t, d, Dispatch{Pipeline: p, Buffers: []*Buffer{sa, sb, sc}, Groups: [3]uint32{(n + 63) / 64, 1, 1}})

	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 6 {
		wg.Go(func() {
			a, err := d.NewBuffer(4 * n)
			if err != nil {
				errs <- err
				return
			}
			defer a.Free()
			c, err := d.NewBuffer(4 * n)
			if err != nil {
				errs <- err
				return
			}
			defer c.Free()
			cmds, err := d.Record([]Dispatch{{Pipeline: p, Buffers: []*Buffer{a, a, c}, Groups: [3]uint32{(n + 63) / 64, 1, 1}}})
			if err != nil {
				errs <- err
				return
			}
			defer cmds.Free()
			v := make([]float32, n)
			out := make([]byte, 4*n)
			for r := range 10 {
				for i := range v {
					v[i] = float32(g*1000 + r*10 + i)
				}
				if err := a.Write(0, f32bytes(v)); err != nil {
					errs <- err
					return
				}
				if err := cmds.Run(); err != nil {
					errs <- err
					return
				}
				if err := shared.Run(); err != nil {
					errs <- err
					return
				}
				if err := c.Read(0, out); err != nil {
					errs <- err
					return
				}
				for i := range v {
					if got := math.Float32frombits(binary.LittleEndian.Uint32(out[4*i:])); got != 2*v[i] {
						errs <- errors.New("wrong result in a concurrent run")
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i, v := range readF32(t, sc, n) {
		if v != 2 {
			t.Fatalf("shared result %d = %v, want 2", i, v)
		}
	}
}

// TestValidation reruns this package's tests in a child process under the
// Khronos validation layer with synchronization validation on, and fails
// on any validation error. llvmpipe checks almost nothing itself: it runs
// an Int64 shader on a device where shaderInt64 was never enabled, and
// gives the right answer without the barrier between two dispatches; the
// layer reports both (VUID-VkShaderModuleCreateInfo-pCode-01091,
// SYNC-HAZARD-READ-AFTER-WRITE). Skips when the layer is not installed
// (apt-get install vulkan-validationlayers).
func TestValidation(t *testing.T) {
	if os.Getenv("RLX_VK_UNDER_VALIDATION") != "" {
		t.Skip("already running under validation")
	}
	if testing.Short() {
		t.Skip("-short")
	}
	openDevice(t) // skip (or fail under CI) without a device
	cmd := exec.Command(os.Args[0], "-test.count=1", "-test.v", "-test.skip=^(TestValidation|TestLayout|TestResultNames)$")
	cmd.Env = append(os.Environ(),
		"RLX_VK_UNDER_VALIDATION=1",
		"VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation",
		"VK_LAYER_ENABLES=VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT",
		"VK_LOADER_DEBUG=layer", // to see that the layer was loaded
	)
	out, err := cmd.CombinedOutput()
	if !strings.Contains(string(out), `layer "VK_LAYER_KHRONOS_validation"`) {
		t.Skip("the Khronos validation layer is not installed (apt-get install vulkan-validationlayers)")
	}
	var report []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "Validation Error") || strings.HasPrefix(strings.TrimSpace(line), "--- FAIL") ||
			strings.HasPrefix(strings.TrimSpace(line), "--- SKIP") || strings.Contains(line, "_test.go:") {
			report = append(report, line)
		}
	}
	if err != nil || slices.ContainsFunc(report, func(l string) bool { return strings.Contains(l, "Validation Error") }) {
		t.Fatalf("under the validation layer (%v):\n%s", err, strings.Join(report, "\n"))
	}
	t.Logf("clean under VK_LAYER_KHRONOS_validation:\n%s", strings.Join(report, "\n"))
}

func TestResultNames(t *testing.T) {
	err := &Error{Op: "vkAllocateMemory", Code: ErrorOutOfDeviceMemory}
	if got, want := err.Error(), "vulkan: vkAllocateMemory: VK_ERROR_OUT_OF_DEVICE_MEMORY"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got := ErrorDeviceLost.String(); got != "VK_ERROR_DEVICE_LOST" {
		t.Errorf("ErrorDeviceLost = %q", got)
	}
	if got := Result(-12345).String(); got != "VkResult(-12345)" {
		t.Errorf("unknown result = %q", got)
	}
}

// BenchmarkRun measures the fixed cost of Commands.Run (submit, wait on the
// fence, reset it) with one and with eight tiny dispatches.
func BenchmarkRun(b *testing.B) {
	d, err := Open()
	if err != nil {
		b.Skipf("no Vulkan device: %v", err)
	}
	defer d.Close()
	code := compile(b, vecAddSrc)
	p, err := d.NewPipeline(code, "main", 3, 0)
	if err != nil {
		b.Fatal(err)
	}
	buf, err := d.NewBuffer(256)
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1, 8} {
		ds := make([]Dispatch, n)
		for i := range ds {
			ds[i] = Dispatch{Pipeline: p, Buffers: []*Buffer{buf, buf, buf}, Groups: [3]uint32{1, 1, 1}}
		}
		c, err := d.Record(ds)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("dispatches=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := c.Run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
