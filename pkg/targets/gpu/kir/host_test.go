package kir

// The numeric cases (numeric_test.go) once more, as the MSL print compiled
// as C++ for the host with testdata/metal_stub.h and run one invocation
// after another, under UndefinedBehaviorSanitizer. This checks what the
// Vulkan run cannot: that the C-family text the CUDA and MSL printers
// write computes the same values (C's conversions and integer rules, not
// GLSL's), and that the builders never rely on behaviour C leaves
// undefined (signed overflow, shifting a negative int left, INT_MIN / -1,
// out-of-range float to int conversion), which the GLSL semantics on
// llvmpipe would forgive. It is C++ on the host, not Metal on a GPU: the
// math functions are the host's, fma is fused, and barriers do nothing,
// so kernels that need a barrier between invocations are not run.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// hostJob is one kernel to run on the host with the initial contents of
// its parameters' buffers.
type hostJob struct {
	k      *Kernel
	groups [3]int
	bufs   [][]byte
}

// hostTypes are the C types of parameter elements in the MSL print.
var hostTypes = map[Type]string{Bool: "metal::uchar", U8: "metal::uchar", I8: "char", I16: "short", F16: "metal::ushort",
	BF16: "metal::ushort", I32: "int", U32: "metal::uint", I64: "long", F32: "float"}

// hostFlags compile the host program: -ffp-contract=off, no fused
// multiply-adds but fma's; -fsigned-char, Metal's char is signed whatever
// the host's is; UBSan stopping at the first report.
var hostFlags = []string{"-std=c++17", "-O1", "-fsigned-char", "-fno-strict-aliasing", "-ffp-contract=off",
	"-fsanitize=undefined", "-fno-sanitize-recover=all", "-Wno-unknown-attributes"}

// needUBSan skips (or fails under CI) where clang++ cannot link a program
// with UBSan (Debian's clang has its runtime, in libclang-rt-*-dev).
func needUBSan(t *testing.T, clangxx string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.cpp"), []byte("int main() { return 0; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(clangxx, append(slices.Clone(hostFlags), "-o", "p", "p.cpp")...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		skipOrFail(t, "clang++ cannot build with -fsanitize=undefined: %v\n%s", err, out)
	}
}

// runMSLHost compiles the MSL prints of jobs into one C++ program with
// UBSan, runs each job's whole launch, and returns every job's buffers
// afterwards.
func runMSLHost(t *testing.T, clangxx string, jobs []hostJob) [][][]byte {
	t.Helper()
	stub, err := filepath.Abs(filepath.Join("testdata", "metal_stub.h"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var src strings.Builder
	src.WriteString("#include <cstdio>\n#include <cstdlib>\n#include <vector>\n")
	fmt.Fprintf(&src, "#include %q\n", stub)
	src.WriteString(`static std::vector<unsigned char> rd(const char* name, size_t n) {
  std::vector<unsigned char> b((n + 7) / 8 * 8 + 8);
  FILE* f = std::fopen(name, "rb");
  if (!f || std::fread(b.data(), 1, n, f) != n) { std::fprintf(stderr, "cannot read %s\n", name); std::exit(2); }
  std::fclose(f);
  return b;
}
static void wr(const char* name, const std::vector<unsigned char>& b, size_t n) {
  FILE* f = std::fopen(name, "wb");
  if (!f || std::fwrite(b.data(), 1, n, f) != n) { std::fprintf(stderr, "cannot write %s\n", name); std::exit(2); }
  std::fclose(f);
}
`)
	var main strings.Builder
	main.WriteString("int main() {\n")
	for j, job := range jobs {
		k := job.k
		msl, err := Print(MSL, k)
		if err != nil {
			t.Fatalf("Print(%s): %v", k.Name, err)
		}
		src.WriteString(strings.Replace(msl, "#include <metal_stdlib>\n", "", 1))
		fmt.Fprintf(&main, "  { // %s\n", k.Name)
		var args []string
		for i, p := range k.Params {
			name := fmt.Sprintf("j%d_%d.bin", j, i)
			if err := os.WriteFile(filepath.Join(dir, name), job.bufs[i], 0o644); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&main, "    auto b%d = rd(%q, %d);\n", i, name, len(job.bufs[i]))
			c := "const "
			if p.Write {
				c = ""
			}
			args = append(args, fmt.Sprintf("(%s%s*)b%d.data()", c, hostTypes[p.Elem], i))
		}
		l, g := k.Local, job.groups
		fmt.Fprintf(&main, "    for (unsigned gz = 0; gz < %d; gz++) for (unsigned gy = 0; gy < %d; gy++) for (unsigned gx = 0; gx < %d; gx++)\n", g[2], g[1], g[0])
		fmt.Fprintf(&main, "    for (unsigned lz = 0; lz < %d; lz++) for (unsigned ly = 0; ly < %d; ly++) for (unsigned lx = 0; lx < %d; lx++)\n", l[2], l[1], l[0])
		fmt.Fprintf(&main, "      %s(%s, metal::uint3{gx * %d + lx, gy * %d + ly, gz * %d + lz}, metal::uint3{lx, ly, lz}, metal::uint3{gx, gy, gz});\n",
			k.Name, strings.Join(args, ", "), l[0], l[1], l[2])
		for i := range k.Params {
			fmt.Fprintf(&main, "    wr(\"j%d_%d.bin\", b%d, %d);\n", j, i, i, len(job.bufs[i]))
		}
		main.WriteString("  }\n")
	}
	main.WriteString("  return 0;\n}\n")
	src.WriteString(main.String())
	prog := filepath.Join(dir, "kernels.cpp")
	if err := os.WriteFile(prog, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cc := exec.Command(clangxx, append(slices.Clone(hostFlags), "-o", "kernels", "kernels.cpp")...)
	cc.Dir = dir
	if out, err := cc.CombinedOutput(); err != nil {
		t.Fatalf("clang++: %v\n%s", err, out)
	}
	run := exec.Command("./kernels")
	run.Dir = dir
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("running the kernels: %v\n%s%s", err, out, sourceLines(src.String(), string(out)))
	}
	res := make([][][]byte, len(jobs))
	for j, job := range jobs {
		for i := range job.k.Params {
			b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("j%d_%d.bin", j, i)))
			if err != nil {
				t.Fatal(err)
			}
			res[j] = append(res[j], b)
		}
	}
	return res
}

// TestMSLHost runs every numeric case and the golden elementwise kernel
// as C++ on the host.
func TestMSLHost(t *testing.T) {
	clangxx := clangPP(t)
	needUBSan(t, clangxx)
	cases := append(builderCases(), primitiveCases()...)
	var jobs []hostJob
	for i := range cases {
		k, groups := cases[i].kernel()
		k.Name = fmt.Sprintf("%s_%d", k.Name, i) // one program holds them all
		var bufs [][]byte
		for j, in := range cases[i].inputs {
			bufs = append(bufs, encode(cases[i].in[j], in))
		}
		bufs = append(bufs, make([]byte, len(cases[i].inputs[0])*cases[i].out.Size()))
		jobs = append(jobs, hostJob{k, groups, bufs})
	}
	ew, groups, bufs, check := elementwiseJob()
	jobs = append(jobs, hostJob{ew, groups, bufs})
	out := runMSLHost(t, clangxx, jobs)
	be := backend{name: "host", fusedFMA: true}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.check(t, be, decode(c.out, out[i][len(c.in)]))
		})
	}
	t.Run("elementwise", func(t *testing.T) { check(t, out[len(out)-1]) })
}

// sourceLines quotes the lines of src that UBSan's report names
// (kernels.cpp:LINE:COL), with the kernel each is in.
func sourceLines(src, report string) string {
	lines := strings.Split(src, "\n")
	var b strings.Builder
	seen := map[string]bool{}
	for _, f := range strings.Fields(report) {
		if seen[f] {
			continue
		}
		seen[f] = true
		var line, col int
		if n, _ := fmt.Sscanf(strings.TrimPrefix(f, "kernels.cpp:"), "%d:%d:", &line, &col); n != 2 || !strings.HasPrefix(f, "kernels.cpp:") || line < 1 || line > len(lines) {
			continue
		}
		kernel := "?"
		for i := line - 1; i >= 0; i-- {
			if strings.HasPrefix(lines[i], "kernel void ") {
				kernel = strings.TrimPrefix(lines[i], "kernel void ")
				kernel = kernel[:strings.Index(kernel, "(")]
				break
			}
		}
		fmt.Fprintf(&b, "line %d, in kernel %s:\n%s\n", line, kernel, lines[line-1])
	}
	return b.String()
}
