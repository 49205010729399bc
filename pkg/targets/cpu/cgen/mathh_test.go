package cgen

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The tests of rlx_math.h: each function, compiled as a vectorized loop by
// clang, against its float64 definition (pkg/lir/ew.go's, Go's math)
// rounded to float32; every loop vectorizes at x86-64-v3 and armv8.2-a;
// the header compiles and links freestanding for both.

// mathFunc is one function of rlx_math.h.
type mathFunc struct {
	c     string // its C name
	arity int
	// ref is the float64 value the result is measured against. For gelu
	// and gelu_tanh it is the definition rewritten so float64 keeps its
	// relative accuracy in the negative tail (1 + erf(x) there is
	// erfc(-x), computed without the cancellation); def is the definition
	// as pkg/lir/ew.go writes it, and the special values are checked
	// against it too.
	ref, def func(x, y float64) float64
	// ulps bounds the error, in float32 ulps of ref (units of 2^-149 for
	// denormal results); 0 means bit for bit.
	ulps float64
	// accurate reports where the bound holds (nil: everywhere); elsewhere
	// the result must only be finite and within [-1, 1] (sin, cos).
	accurate func(x float32) bool
	// grids are dense samples of the range that matters.
	grids [][]float32
}

func mathUnary(f func(float64) float64) func(x, y float64) float64 {
	return func(x, _ float64) float64 { return f(x) }
}

const mathSqrt2pi = 0.79788456080286535588 // sqrt(2/pi)

// The contract of rlx_math.h's float-only functions (its opening
// comment): within mathBound float32 ulps, and within mathMaxRel relative
// where the result is normal. Every function with a nonzero ulps bound is
// held to mathMaxRel too; the header's table has the measured maxima.
const (
	mathBound  = 4
	mathMaxRel = 5e-7
)

func mathFuncs() []mathFunc {
	sigmoid := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	trigAccurate := func(x float32) bool { return math.Abs(float64(x)) < 0x1p22 }
	return []mathFunc{
		{c: "rlx_expf", ref: mathUnary(math.Exp), ulps: mathBound,
			grids: [][]float32{mathLin(-104, 89, 200000), mathLin(-1, 1, 20000)}},
		{c: "rlx_logf", ref: mathUnary(math.Log), ulps: mathBound,
			grids: [][]float32{mathLin(0, 4, 100000), mathGeo(1e-45, 3e38, 100000), mathLin(0.99, 1.01, 20000)}},
		{c: "rlx_tanhf", ref: mathUnary(math.Tanh), ulps: mathBound,
			grids: [][]float32{mathLin(-10, 10, 200000), mathLin(-0.6, 0.6, 20000)}},
		{c: "rlx_sigmoidf", ref: mathUnary(sigmoid), ulps: mathBound,
			grids: [][]float32{mathLin(-110, 30, 200000), mathLin(-10, 10, 20000)}},
		{c: "rlx_siluf", ref: mathUnary(func(x float64) float64 { return x / (1 + math.Exp(-x)) }), ulps: mathBound,
			grids: [][]float32{mathLin(-125, 30, 200000), mathLin(-10, 10, 20000)}},
		{c: "rlx_erff", ref: mathUnary(math.Erf), ulps: mathBound,
			grids: [][]float32{mathLin(-5, 5, 200000), mathLin(-1, 1, 20000)}},
		{c: "rlx_geluf", ulps: mathBound,
			ref:   mathUnary(func(x float64) float64 { return 0.5 * x * math.Erfc(-x/math.Sqrt2) }),
			def:   mathUnary(func(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }),
			grids: [][]float32{mathLin(-16, 10, 200000), mathLin(-3, 3, 20000)}},
		{c: "rlx_gelu_tanhf", ulps: mathBound,
			ref: mathUnary(func(x float64) float64 {
				return x / (1 + math.Exp(-2*mathSqrt2pi*(x+0.044715*x*x*x)))
			}),
			def: mathUnary(func(x float64) float64 {
				return 0.5 * x * (1 + math.Tanh(mathSqrt2pi*(x+0.044715*x*x*x)))
			}),
			grids: [][]float32{mathLin(-14, 10, 200000), mathLin(-3, 3, 20000)}},
		{c: "rlx_sinf", ref: mathUnary(math.Sin), ulps: mathBound, accurate: trigAccurate,
			grids: [][]float32{mathLin(-10, 10, 100000), mathLin(-1e5, 1e5, 200000), mathNearPiOver2(1e5, 60000),
				mathLin(-0x1p22, 0x1p22, 100000), mathNearPiOver2(0x1p22, 30000)}},
		{c: "rlx_cosf", ref: mathUnary(math.Cos), ulps: mathBound, accurate: trigAccurate,
			grids: [][]float32{mathLin(-10, 10, 100000), mathLin(-1e5, 1e5, 200000), mathNearPiOver2(1e5, 60000),
				mathLin(-0x1p22, 0x1p22, 100000), mathNearPiOver2(0x1p22, 30000)}},
		{c: "rlx_softsignf", ref: mathUnary(func(x float64) float64 { return x / (1 + math.Abs(x)) }), ulps: 2,
			grids: [][]float32{mathLin(-100, 100, 200000), mathLin(-2, 2, 20000)}},
		{c: "rlx_powf", arity: 2, ref: math.Pow, ulps: 1, grids: mathPowGrids()},
		{c: "rlx_modf_floor", arity: 2, ref: mathFloorMod, ulps: 0, grids: mathModGrids()},
	}
}

// mathFloorMod is the definition of pkg/lir/ew.go's mod: Python's %.
func mathFloorMod(a, b float64) float64 {
	r := math.Mod(a, b)
	if r != 0 && (r < 0) != (b < 0) {
		r += b
	}
	return r
}

// mathLin is n evenly spaced values from lo to hi.
func mathLin(lo, hi float64, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(lo + (hi-lo)*float64(i)/float64(n-1))
	}
	return v
}

// mathGeo is n values from lo to hi evenly spaced in log.
func mathGeo(lo, hi float64, n int) []float32 {
	v := make([]float32, n)
	l, h := math.Log(lo), math.Log(hi)
	for i := range v {
		v[i] = float32(math.Exp(l + (h-l)*float64(i)/float64(n-1)))
	}
	return v
}

// mathNearPiOver2 is the floats nearest k·π/2 for k up to limit/(π/2), and
// their neighbours: where sin or cos is near 0 and the reduction must be
// accurate to keep the relative error.
func mathNearPiOver2(limit float64, n int) []float32 {
	var v []float32
	kmax := limit / (math.Pi / 2)
	for i := 0; i < n/3; i++ {
		k := math.Round(kmax * float64(i) / float64(n/3))
		f := float32(k * math.Pi / 2)
		v = append(v, f, math.Nextafter32(f, 0), math.Nextafter32(f, float32(math.Inf(1))))
	}
	return v
}

// mathStrided is every 4099th float32 bit pattern: denormals, huge values,
// Inf and NaN included.
func mathStrided() []float32 {
	var v []float32
	for b := uint64(0); b < 1<<32; b += 4099 {
		v = append(v, math.Float32frombits(uint32(b)))
	}
	return v
}

// mathSpecials are the values every function is checked at.
func mathSpecials() []float32 {
	inf := float32(math.Inf(1))
	v := []float32{0, 1, 2, 0.5, inf, float32(math.NaN()),
		math.SmallestNonzeroFloat32, math.Float32frombits(0x007fffff), math.Float32frombits(0x00800000),
		math.MaxFloat32, 1e-30, 1e-10, 1e-4, 0.875, 0.5493061, 4, 9.1, 10.5, 14.85, 20,
		88.72283, 88.72284, 89, 103.97, 104, 120, 121, 1e5, 1e10, 0x1p23, 0x1p24, 0x1p47, 3e38,
		3, 1.0 / 3, 16777215} // odd integers for pow
	out := make([]float32, 0, 2*len(v))
	for _, x := range v {
		out = append(out, x, -x)
	}
	return out
}

// mathPairs is every pair of xs and ys, as two slices.
func mathPairs(xs, ys []float32) [][]float32 {
	a := make([]float32, 0, len(xs)*len(ys))
	b := make([]float32, 0, len(xs)*len(ys))
	for _, x := range xs {
		for _, y := range ys {
			a = append(a, x)
			b = append(b, y)
		}
	}
	return [][]float32{a, b}
}

// mathStridedPairs pairs every 4099th bit pattern with a scrambled one.
func mathStridedPairs() [][]float32 {
	xs := mathStrided()
	ys := make([]float32, len(xs))
	for i := range ys {
		ys[i] = math.Float32frombits(uint32(uint64(i) * 2654435761 >> 3))
	}
	return [][]float32{xs, ys}
}

func mathPowGrids() [][]float32 {
	g := mathPairs(mathGeo(0.01, 100, 400), mathLin(-20, 20, 500))
	g = mathAppendPairs(g, mathPairs(mathLin(-10, -0.1, 100), mathLin(-40, 40, 81)))
	near1 := make([]float32, 0, 2001)
	for k := -1000; k <= 1000; k++ {
		near1 = append(near1, float32(1+float64(k)*0x1p-23))
	}
	g = mathAppendPairs(g, mathPairs(near1, []float32{-3e6, -1e5, -1e3, 1e3, 1e5, 1e6, 3e6}))
	var xs []float32
	for b := uint64(0); b < 0x7f800000; b += 4099 * 64 {
		xs = append(xs, math.Float32frombits(uint32(b)))
	}
	g = mathAppendPairs(g, mathPairs(xs, []float32{-2, -1.5, -1, -0.5, -1.0 / 3, 0.1, 1.0 / 3, 0.5, 0.75, 2, 3}))
	return g
}

func mathModGrids() [][]float32 {
	bs := mathLin(-7, 7, 401)
	bs = append(bs[:200], bs[201:]...) // not 0
	g := mathPairs(mathLin(-50, 50, 500), bs)
	g = mathAppendPairs(g, mathPairs(mathLin(-1e4, 1e4, 2001), []float32{0.1, -0.1, 1e-3, 3, -3, 0.7}))
	return g
}

func mathAppendPairs(a, b [][]float32) [][]float32 {
	return [][]float32{slices.Concat(a[0], b[0]), slices.Concat(a[1], b[1])}
}

// inputs is everything f runs on: its grids, the strided bit patterns and
// the special values (for a binary function, every pair of them).
func (f mathFunc) inputs() (xs, ys []float32) {
	if f.arity == 2 {
		g := mathAppendPairs(f.grids, mathStridedPairs())
		g = [][]float32{mathThin(g[0]), mathThin(g[1])}
		g = mathAppendPairs(g, mathPairs(mathSpecials(), mathSpecials()))
		return g[0], g[1]
	}
	for _, g := range f.grids {
		xs = append(xs, g...)
	}
	xs = mathThin(append(xs, mathStrided()...))
	xs = append(xs, mathSpecials()...)
	return xs, nil
}

// mathRace reports a -race build of the test. The race detector slows the
// comparison loops tenfold and has nothing to find in them, so such a run
// checks one build on every 16th input (and every special value).
var mathRace = sync.OnceValue(func() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
})

// mathThin is v, or every 16th element of it under -race.
func mathThin(v []float32) []float32 {
	if !mathRace() {
		return v
	}
	var out []float32
	for i := 0; i < len(v); i += 16 {
		out = append(out, v[i])
	}
	return out
}

// mathRequireTool returns the path of a tool, skipping the test without it,
// except under CI=true, which installs it.
func mathRequireTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not on PATH (CI installs it)", name)
		}
		t.Skipf("%s is not on PATH", name)
	}
	return p
}

// mathWriteHeader writes rlx_math.h into dir.
func mathWriteHeader(t *testing.T, dir string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "rlx_math.h"), []byte(mathHeader), 0o644); err != nil {
		t.Fatal(err)
	}
}

// mathDriverSource is a host program: per function a loop over arrays
// calling it (the shape generated code has), and a main that runs the one
// named in argv[1] over the float32s of argv[2] (x, then y for a binary
// function) and writes the results to argv[3].
func mathDriverSource(fns []mathFunc) string {
	var b strings.Builder
	b.WriteString("#include \"rlx_math.h\"\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n")
	for _, f := range fns {
		call := f.c + "(x[i])"
		if f.arity == 2 {
			call = f.c + "(x[i], y[i])"
		}
		fmt.Fprintf(&b, "static void run_%s(const float *restrict x, const float *restrict y, float *restrict out, long n) { (void)y; for (long i = 0; i < n; i++) out[i] = %s; }\n", f.c, call)
	}
	b.WriteString(`typedef void (*runfn)(const float *, const float *, float *, long);
static const struct { const char *name; int arity; runfn fn; } fns[] = {
`)
	for _, f := range fns {
		fmt.Fprintf(&b, "\t{\"%s\", %d, run_%s},\n", f.c, max(f.arity, 1), f.c)
	}
	b.WriteString(`};

int main(int argc, char **argv) {
	if (argc != 4) return 2;
	for (size_t k = 0; k < sizeof fns / sizeof fns[0]; k++) {
		if (strcmp(fns[k].name, argv[1]) != 0) continue;
		FILE *in = fopen(argv[2], "rb");
		if (!in) return 3;
		fseek(in, 0, SEEK_END);
		long size = ftell(in);
		fseek(in, 0, SEEK_SET);
		float *buf = malloc(size + 4);
		if (fread(buf, 1, size, in) != (size_t)size) return 4;
		fclose(in);
		long n = size / 4 / fns[k].arity;
		float *out = malloc(n * 4 + 4);
		fns[k].fn(buf, buf + n, out, n);
		FILE *o = fopen(argv[3], "wb");
		if (!o || fwrite(out, 4, n, o) != (size_t)n || fclose(o) != 0) return 5;
		return 0;
	}
	return 6;
}
`)
	return b.String()
}

// mathRunClang runs clang in dir and returns its stderr.
func mathRunClang(t *testing.T, clang, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(clang, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("clang %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stderr.String()
}

// mathCPUFlags is the flags line of /proc/cpuinfo (nil without one).
func mathCPUFlags() []string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return nil
	}
	for _, l := range strings.Split(string(b), "\n") {
		if name, flags, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(name) == "flags" {
			return strings.Fields(flags)
		}
	}
	return nil
}

// mathTargets are the CPU levels generated code is compiled for, as
// clang flags.
var mathTargets = []struct{ name, flags string }{
	{"x86-64-v3", "--target=x86_64-linux-gnu -march=x86-64-v3"},
	{"armv8.2-a", "--target=aarch64-linux-gnu -march=armv8.2-a"},
}

// mathKernelsSource is a freestanding translation unit with one exported
// kernel per function, each on its own line: a loop over arrays calling
// the function, the shape generated code has. lines maps each function to
// the line of its loop.
func mathKernelsSource(fns []mathFunc) (src string, lines map[string]int) {
	var b strings.Builder
	b.WriteString("#include \"rlx_math.h\"\n")
	lines = map[string]int{}
	for i, f := range fns {
		if f.arity == 2 {
			fmt.Fprintf(&b, "void k_%s(const float *restrict x, const float *restrict y, float *restrict out, long n) { for (long i = 0; i < n; i++) out[i] = %s(x[i], y[i]); }\n", f.c, f.c)
		} else {
			fmt.Fprintf(&b, "void k_%s(const float *restrict x, float *restrict out, long n) { for (long i = 0; i < n; i++) out[i] = %s(x[i]); }\n", f.c, f.c)
		}
		lines[f.c] = i + 2
	}
	return b.String(), lines
}

// mathKernelsDir writes rlx_math.h and kernels.c into a temporary folder.
func mathKernelsDir(t *testing.T) (dir string, lines map[string]int) {
	t.Helper()
	dir = t.TempDir()
	mathWriteHeader(t, dir)
	src, lines := mathKernelsSource(mathFuncs())
	if err := os.WriteFile(filepath.Join(dir, "kernels.c"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, lines
}

// TestMathHeaderVectorizes checks that each function's loop vectorizes
// at x86-64-v3 and at armv8.2-a (clang's -Rpass=loop-vectorize remark at
// the loop's line).
func TestMathHeaderVectorizes(t *testing.T) {
	clang := mathRequireTool(t, "clang")
	t.Parallel()
	dir, lines := mathKernelsDir(t)
	for _, target := range mathTargets {
		t.Run(target.name, func(t *testing.T) {
			t.Parallel()
			args := append(strings.Fields(target.flags), "-O3", "-ffreestanding", "-nostdlib", "-fno-math-errno", "-fPIC",
				"-Wall", "-Wextra", "-Werror", "-Rpass=loop-vectorize", "-c", "kernels.c", "-o", target.name+".o")
			stderr := mathRunClang(t, clang, dir, args...)
			re := regexp.MustCompile(`kernels\.c:(\d+):\d+: remark: vectorized loop \(vectorization width: (\d+)`)
			width := map[int]string{}
			for _, m := range re.FindAllStringSubmatch(stderr, -1) {
				n, _ := strconv.Atoi(m[1])
				width[n] = m[2]
			}
			var got []string
			for _, f := range mathFuncs() {
				w, ok := width[lines[f.c]]
				if !ok {
					t.Errorf("%s: its loop did not vectorize at %s", f.c, target.name)
					continue
				}
				got = append(got, f.c+" "+w)
			}
			t.Logf("vectorization widths: %s", strings.Join(got, ", "))
		})
	}
}

// TestMathHeaderFreestanding compiles the kernels with the flags
// generated code uses and links them as a shared object that must have no
// undefined symbol (no libc, no libm), for x86-64-v3 and armv8.2-a.
func TestMathHeaderFreestanding(t *testing.T) {
	clang := mathRequireTool(t, "clang")
	mathRequireTool(t, "ld.lld")
	t.Parallel()
	dir, _ := mathKernelsDir(t)
	for _, target := range mathTargets {
		t.Run(target.name, func(t *testing.T) {
			t.Parallel()
			args := append(strings.Fields(target.flags), "-O3", "-ffreestanding", "-nostdlib", "-fno-math-errno", "-fPIC",
				"-shared", "-fuse-ld=lld", "-Wl,-z,defs", "-Wall", "-Wextra", "-Werror", "kernels.c", "-o", target.name+".so")
			mathRunClang(t, clang, dir, args...)
		})
	}
}

// mathResult is what one function's comparison found.
type mathResult struct {
	maxErr   float64 // ulps
	atX      float32
	atY      float32
	maxRel   float64 // relative, over normal results
	atRelX   float32
	atRelY   float32
	bad      []string
	checked  int
	inexact  int // results that are not the float64 value rounded
	outRange int // inputs beyond the accurate range checked for bounds only
}

func (r *mathResult) fail(format string, args ...any) {
	if len(r.bad) < 10 {
		r.bad = append(r.bad, fmt.Sprintf(format, args...))
	}
}

// mathUlp32 is the spacing of float32s at v (2^-149 below the normals).
func mathUlp32(v float64) float64 {
	_, e := math.Frexp(v)
	if e-24 < -149 {
		return 0x1p-149
	}
	return math.Ldexp(1, e-24)
}

func (f mathFunc) args(x, y float32) string {
	if f.arity == 2 {
		return fmt.Sprintf("%s(%g [%#08x], %g [%#08x])", f.c, x, math.Float32bits(x), y, math.Float32bits(y))
	}
	return fmt.Sprintf("%s(%g [%#08x])", f.c, x, math.Float32bits(x))
}

// check compares got with f's reference at (x, y).
func (f mathFunc) check(r *mathResult, x, y float32, got float32, ref float64) {
	r.checked++
	g := float64(got)
	want := float32(ref)
	switch {
	case math.IsNaN(ref) || math.IsNaN(g):
		if math.IsNaN(ref) != math.IsNaN(g) {
			r.fail("%s = %g, want %g", f.args(x, y), got, want)
		}
		return
	case f.ulps == 0:
		if math.Float32bits(got) != math.Float32bits(want) {
			r.fail("%s = %g [%#08x], want %g [%#08x]", f.args(x, y), got, math.Float32bits(got), want, math.Float32bits(want))
		}
		return
	case f.accurate != nil && !f.accurate(x):
		r.outRange++
		if math.IsInf(float64(x), 0) || math.IsNaN(float64(x)) {
			r.fail("%s = %g, want NaN", f.args(x, y), got)
		} else if !(g >= -1 && g <= 1) {
			r.fail("%s = %g, beyond the accurate range but not in [-1, 1]", f.args(x, y), got)
		}
		return
	case math.IsInf(float64(want), 0) && got == want: // the float64 value rounds to ±Inf
		return
	case math.IsInf(ref, 0):
		r.fail("%s = %g, want %g", f.args(x, y), got, ref)
		return
	case want == 0 && got == 0 && math.Signbit(float64(want)) != math.Signbit(g):
		r.fail("%s = %g, want %g (the sign of zero)", f.args(x, y), got, want)
		return
	}
	if got != want {
		r.inexact++
	}
	if math.IsInf(g, 0) { // Inf where the value rounds to MaxFloat32: count it as 2^128
		g = math.Copysign(0x1p128, g)
	}
	e := math.Abs(g-ref) / mathUlp32(ref)
	if e > r.maxErr || r.checked == 1 {
		r.maxErr, r.atX, r.atY = e, x, y
	}
	if rel := math.Abs(g-ref) / math.Abs(ref); math.Abs(ref) >= 0x1p-126 && rel > r.maxRel {
		r.maxRel, r.atRelX, r.atRelY = rel, x, y
	}
}

// checkDef checks the classes of results against pkg/lir/ew.go's
// definition where the test's reference is a rewriting of it: NaN, ±Inf
// and signed zero.
func (f mathFunc) checkDef(r *mathResult, x float32, got float32) {
	d := f.def(float64(x), 0)
	g := float64(got)
	switch {
	case math.IsNaN(d) || math.IsNaN(g):
		if math.IsNaN(d) != math.IsNaN(g) {
			r.fail("%s = %g, the definition gives %g", f.args(x, 0), got, d)
		}
	case math.IsInf(d, 0) || math.IsInf(g, 0):
		if d != g {
			r.fail("%s = %g, the definition gives %g", f.args(x, 0), got, d)
		}
	case d == 0 && got == 0 && math.Signbit(d) != math.Signbit(g):
		r.fail("%s = %g, the definition gives %g (the sign of zero)", f.args(x, 0), got, d)
	}
}

// mathCase is one function's inputs and the float64 reference at each.
type mathCase struct {
	f      mathFunc
	xs, ys []float32
	ref    []float64
	in     []byte // xs then ys, little endian
}

var mathCases = sync.OnceValue(func() []mathCase {
	fns := mathFuncs()
	cases := make([]mathCase, len(fns))
	var wg sync.WaitGroup
	for i, f := range fns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			xs, ys := f.inputs()
			ref := make([]float64, len(xs))
			for j, x := range xs {
				y := 0.0
				if ys != nil {
					y = float64(ys[j])
				}
				ref[j] = f.ref(float64(x), y)
			}
			in := make([]byte, 0, 4*(len(xs)+len(ys)))
			for _, v := range append(append([]float32(nil), xs...), ys...) {
				in = binary.LittleEndian.AppendUint32(in, math.Float32bits(v))
			}
			cases[i] = mathCase{f: f, xs: xs, ys: ys, ref: ref, in: in}
		}()
	}
	wg.Wait()
	return cases
})

// TestMathHeaderAccuracy builds the driver for the host (x86-64-v3, and
// x86-64-v4 with 512-bit vectors where the CPU has AVX-512F; armv8.2-a on
// arm64) and measures every function against its reference.
func TestMathHeaderAccuracy(t *testing.T) {
	clang := mathRequireTool(t, "clang")
	t.Parallel()
	type build struct{ name, flags string }
	var builds []build
	cpu := mathCPUFlags()
	switch runtime.GOARCH {
	case "amd64":
		if slices.Contains(cpu, "avx2") && slices.Contains(cpu, "fma") {
			builds = append(builds, build{"x86-64-v3", "-march=x86-64-v3"})
		} else {
			t.Logf("no avx2 and fma in /proc/cpuinfo: the x86-64-v3 build is not run")
		}
		if slices.Contains(cpu, "avx512f") {
			builds = append(builds, build{"x86-64-v4", "-march=x86-64-v4 -mprefer-vector-width=512"})
		} else {
			t.Logf("no avx512f in /proc/cpuinfo: the x86-64-v4 build is not run")
		}
	case "arm64":
		builds = append(builds, build{"armv8.2-a", "-march=armv8.2-a"})
	}
	if len(builds) == 0 {
		t.Skipf("no build of the driver runs on this %s host", runtime.GOARCH)
	}
	if mathRace() {
		t.Logf("-race: %s only, on every 16th input", builds[0].name)
		builds = builds[:1]
	}
	for _, b := range builds {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			mathWriteHeader(t, dir)
			src := mathDriverSource(mathFuncs())
			if err := os.WriteFile(filepath.Join(dir, "driver.c"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"-O3"}, strings.Fields(b.flags)...)
			mathRunClang(t, clang, dir, append(args, "-fno-math-errno", "-Wall", "-Wextra", "-Werror", "driver.c", "-o", "driver")...)
			for _, c := range mathCases() {
				got := mathRunDriver(t, dir, c)
				var r mathResult
				for j, x := range c.xs {
					var y float32
					if c.ys != nil {
						y = c.ys[j]
					}
					c.f.check(&r, x, y, got[j], c.ref[j])
				}
				if c.f.def != nil {
					for j, x := range c.xs {
						c.f.checkDef(&r, x, got[j])
					}
				}
				mathReport(t, c.f, &r)
			}
		})
	}
}

func mathRunDriver(t *testing.T, dir string, c mathCase) []float32 {
	t.Helper()
	in := filepath.Join(dir, c.f.c+".in")
	out := filepath.Join(dir, c.f.c+".out")
	if err := os.WriteFile(in, c.in, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(dir, "driver"), c.f.c, in, out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("driver %s: %v\n%s", c.f.c, err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 4*len(c.xs) {
		t.Fatalf("driver %s: %d bytes of results for %d inputs", c.f.c, len(b), len(c.xs))
	}
	got := make([]float32, len(c.xs))
	for i := range got {
		got[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return got
}

func mathReport(t *testing.T, f mathFunc, r *mathResult) {
	t.Helper()
	where := ""
	if r.outRange > 0 {
		where = fmt.Sprintf("; %d inputs beyond the accurate range checked finite in [-1, 1]", r.outRange)
	}
	if f.ulps == 0 {
		t.Logf("%-15s %8d inputs: bit for bit%s", f.c, r.checked, where)
	} else {
		t.Logf("%-15s %8d inputs: max %.3f ulp at %s, max relative %.3g, %.2f%% not correctly rounded%s",
			f.c, r.checked, r.maxErr, f.args(r.atX, r.atY), r.maxRel, 100*float64(r.inexact)/float64(r.checked), where)
		if r.maxErr > f.ulps {
			t.Errorf("%s: max error %.3f ulp at %s, above the bound of %g ulp", f.c, r.maxErr, f.args(r.atX, r.atY), f.ulps)
		}
		if r.maxRel > mathMaxRel {
			t.Errorf("%s: max relative error %.3g at %s, above the bound of %g", f.c, r.maxRel, f.args(r.atRelX, r.atRelY), mathMaxRel)
		}
	}
	for _, b := range r.bad {
		t.Error(b)
	}
}
