package native

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"
)

// cpuinfoFlag is each feature's name in /proc/cpuinfo: an oracle for
// Runs that does not go through x/sys/cpu or our cpuid.
var cpuinfoFlag = map[string]string{
	"cx16": "cx16", "lahf": "lahf_lm", "popcnt": "popcnt", "sse3": "pni", "ssse3": "ssse3",
	"sse4.1": "sse4_1", "sse4.2": "sse4_2", "avx": "avx", "avx2": "avx2", "bmi1": "bmi1",
	"bmi2": "bmi2", "f16c": "f16c", "fma": "fma", "lzcnt": "abm", "movbe": "movbe",
	// Linux does not list OSXSAVE; it lists xsave where it turned it on.
	"osxsave": "xsave",
	"avx512f": "avx512f", "avx512bw": "avx512bw", "avx512cd": "avx512cd",
	"avx512dq": "avx512dq", "avx512vl": "avx512vl",
	"fp": "fp", "asimd": "asimd", "atomics": "atomics", "asimdrdm": "asimdrdm", "crc32": "crc32",
}

// cpuinfoFlags returns the first CPU's feature flags from /proc/cpuinfo,
// or skips where it has none of this architecture's (under qemu-user it
// is the host's).
func cpuinfoFlags(t *testing.T) map[string]bool {
	want := map[string]string{"amd64": "flags", "arm64": "Features"}[runtime.GOARCH]
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skipf("no /proc/cpuinfo: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		if strings.TrimSpace(key) == want {
			flags := map[string]bool{}
			for _, f := range strings.Fields(val) {
				flags[f] = true
			}
			return flags
		}
	}
	t.Skipf("/proc/cpuinfo has no %q line: not this architecture's (an emulator's?)", want)
	return nil
}

func TestLevels(t *testing.T) {
	names := map[string]bool{}
	for _, l := range Levels() {
		if names[l.Name] {
			t.Errorf("level %s twice", l.Name)
		}
		names[l.Name] = true
		if l.GOARCH != "amd64" && l.GOARCH != "arm64" {
			t.Errorf("%s: GOARCH %q", l.Name, l.GOARCH)
		}
		if got, err := LookupLevel(l.Name); err != nil || got.Name != l.Name {
			t.Errorf("LookupLevel(%q) = %v, %v", l.Name, got.Name, err)
		}
		if !strings.Contains(strings.Join(l.Clang, " "), "--target=") {
			t.Errorf("%s: clang flags %q name no target", l.Name, l.Clang)
		}
		for _, f := range l.Features {
			if _, ok := cpuinfoFlag[f]; !ok {
				t.Errorf("%s: feature %q has no /proc/cpuinfo name in the test", l.Name, f)
			}
		}
	}
	for _, want := range []string{"x86-64-v3", "x86-64-v4", "armv8.2-a"} {
		if !names[want] {
			t.Errorf("no level %s", want)
		}
	}
	v4, _ := LookupLevel("x86-64-v4")
	if !strings.Contains(strings.Join(v4.Clang, " "), "-mprefer-vector-width=512") {
		t.Errorf("x86-64-v4's flags %q do not ask for 512-bit vectors", v4.Clang)
	}
	_, err := LookupLevel("x86-64-v5")
	if err == nil || !strings.Contains(err.Error(), `"x86-64-v5"`) ||
		!strings.Contains(err.Error(), "x86-64-v3, x86-64-v4, armv8.2-a") {
		t.Errorf("LookupLevel(x86-64-v5): %v, want the name and the levels", err)
	}
}

func TestRunsWrongArch(t *testing.T) {
	l := foreignLevel(t)
	err := l.Runs()
	if err == nil || !strings.Contains(err.Error(), l.Name) || !strings.Contains(err.Error(), runtime.GOARCH) {
		t.Errorf("%s.Runs() = %v, want an error naming the level and %s", l.Name, err, runtime.GOARCH)
	}
}

func TestRunsMissingFeature(t *testing.T) {
	l := Level{Name: "test-level", GOARCH: runtime.GOARCH, Features: []string{"no-such-feature", "no-such-either"}}
	err := l.Runs()
	want := "this CPU lacks no-such-feature, no-such-either needed by test-level"
	if err == nil || err.Error() != want {
		t.Errorf("Runs() = %v, want %q", err, want)
	}
}

// TestRunsMatchesCPUInfo checks Runs and Best against the kernel's list
// of this CPU's features.
func TestRunsMatchesCPUInfo(t *testing.T) {
	flags := cpuinfoFlags(t)
	var best string
	for _, l := range Levels() {
		if l.GOARCH != runtime.GOARCH {
			continue
		}
		var missing []string
		for _, f := range l.Features {
			if !flags[cpuinfoFlag[f]] {
				missing = append(missing, f)
			}
		}
		err := l.Runs()
		if (err == nil) != (len(missing) == 0) {
			t.Errorf("%s.Runs() = %v, and /proc/cpuinfo lacks %v", l.Name, err, missing)
		}
		if err != nil {
			for _, f := range missing {
				if !strings.Contains(err.Error(), f) {
					t.Errorf("%s.Runs() = %v, does not name %s", l.Name, err, f)
				}
			}
			t.Logf("%s: %v", l.Name, err)
		}
		if len(missing) == 0 {
			best = l.Name
		}
	}
	got, ok := Best()
	if got.Name != best || ok != (best != "") {
		t.Errorf("Best() = %q, %v; /proc/cpuinfo says %q", got.Name, ok, best)
	}
	t.Logf("Best() = %s", got.Name)
}

// runnable returns the levels of this architecture this CPU runs, Best
// among them, or skips.
func runnable(t *testing.T) []Level {
	if runtime.GOOS != "linux" || (runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64") {
		t.Skipf("native code does not run on %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	var ls []Level
	for _, l := range Levels() {
		if l.GOARCH != runtime.GOARCH {
			continue
		}
		if err := l.Runs(); err != nil {
			t.Logf("not run: %v", err)
			continue
		}
		ls = append(ls, l)
	}
	if len(ls) == 0 {
		t.Skip("this CPU runs no native level")
	}
	if best, _ := Best(); ls[len(ls)-1].Name != best.Name {
		t.Fatalf("Best() = %s, want %s", best.Name, ls[len(ls)-1].Name)
	}
	return ls
}

// TestScale loads the scale kernel of every level this CPU runs and calls
// it from several goroutines at once on interleaved ranges.
func TestScale(t *testing.T) {
	for _, l := range runnable(t) {
		t.Run(l.Name, func(t *testing.T) {
			obj := build(t, "scale-"+l.Name, scaleSrc, levelFlags(l))
			if n := relativeRelocs(t, obj); n == 0 {
				t.Fatal("the object has no RELATIVE relocation: the test does not test relocation")
			}
			if err := Validate(obj, l.GOARCH); err != nil {
				t.Fatal(err)
			}
			m, err := Load(obj)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := m.Close(); err != nil {
					t.Error(err)
				}
			}()
			fn, err := m.Func("scale")
			if err != nil {
				t.Fatal(err)
			}
			const n = 100_003
			x, y := make([]float32, n), make([]float32, n)
			for i := range x {
				x[i] = float32(i%1000)*0.25 - 100
				y[i] = -1
			}
			args := []unsafe.Pointer{unsafe.Pointer(&x[0]), unsafe.Pointer(&y[0])}
			sizes := []int64{4 * n, 4 * n}
			short := []int64{4 * n, 4 * (n - 2)}
			if r := Call(fn, unsafe.Pointer(&args[0]), unsafe.Pointer(&short[0]), 0, n); r != 1 {
				t.Fatalf("a short buffer: the kernel returned %d", r)
			}
			// Chunks of uneven size, from 8 goroutines; the last
			// element is left out, and an empty and a reversed range
			// are called too (they write nothing).
			var next atomic.Int64
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					Call(fn, unsafe.Pointer(&args[0]), unsafe.Pointer(&sizes[0]), 5, 5)
					Call(fn, unsafe.Pointer(&args[0]), unsafe.Pointer(&sizes[0]), 9, 3)
					for {
						lo := next.Add(997) - 997
						if lo >= n-1 {
							return
						}
						if r := Call(fn, unsafe.Pointer(&args[0]), unsafe.Pointer(&sizes[0]), lo, min(lo+997, n-1)); r != 0 {
							t.Errorf("kernel returned %d", r)
						}
					}
				})
			}
			wg.Wait()
			runtime.KeepAlive(x)
			runtime.KeepAlive(y)
			bad := 0
			for i := range n - 1 {
				if want := 2*x[i] + scaleTable[i%4]; y[i] != want && bad < 5 {
					t.Errorf("y[%d] = %v, want %v", i, y[i], want)
					bad++
				}
			}
			if y[n-1] != -1 {
				t.Errorf("y[%d] = %v, outside the ranges called, want -1 (untouched)", n-1, y[n-1])
			}
		})
	}
}

func TestFunc(t *testing.T) {
	ls := runnable(t)
	obj := build(t, "scale-"+ls[0].Name, scaleSrc, levelFlags(ls[0]))
	m, err := Load(obj)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"scale", "nop"} {
		if fn, err := m.Func(name); err != nil || fn == 0 {
			t.Errorf("Func(%q) = %#x, %v", name, fn, err)
		}
	}
	// table and halves are hidden data, not functions.
	for _, name := range []string{"missing_kernel", "table", "halves", ""} {
		_, err := m.Func(name)
		if err == nil || !strings.Contains(err.Error(), `"`+name+`"`) {
			t.Errorf("Func(%q) = %v, want an error naming it", name, err)
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Func("scale"); err == nil {
		t.Error("Func after Close: no error")
	}
	if err := m.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestProtections reads the loaded module's pages back from
// /proc/self/maps: the code is r-x, nothing is writable and executable,
// and the RELRO data (the relocated pointer array) ends read-only.
func TestProtections(t *testing.T) {
	ls := runnable(t)
	obj := build(t, "scale-"+ls[0].Name, scaleSrc, levelFlags(ls[0]))
	m, err := Load(obj)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	fn, err := m.Func("scale")
	if err != nil {
		t.Fatal(err)
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skipf("no /proc/self/maps: %v", err)
	}
	lo := uint64(uintptr(unsafe.Pointer(&m.mem[0])))
	hi := lo + uint64(len(m.mem))
	perms := map[string]int{}
	inCode := false
	for _, line := range strings.Split(string(maps), "\n") {
		var from, to uint64
		var perm string
		if _, err := fmt.Sscanf(line, "%x-%x %s", &from, &to, &perm); err != nil || to <= lo || from >= hi {
			continue
		}
		if from < lo || to > hi {
			t.Errorf("mapping %s extends past the module's [%#x, %#x)", line, lo, hi)
		}
		perms[perm[:3]]++
		if strings.Contains(perm, "w") && strings.Contains(perm, "x") {
			t.Errorf("writable and executable: %s", line)
		}
		if from <= uint64(fn) && uint64(fn) < to {
			inCode = perm[:3] == "r-x"
			if !inCode {
				t.Errorf("scale at %#x is in %s", fn, line)
			}
		}
	}
	if !inCode {
		t.Errorf("scale at %#x is in no mapping of the module", fn)
	}
	// lld's layout: read-only data, code, and the RELRO data, which is
	// all the writable segment holds here.
	for _, p := range []string{"r--", "r-x"} {
		if perms[p] == 0 {
			t.Errorf("no %s pages; the module's mappings: %v", p, perms)
		}
	}
	if perms["rw-"] != 0 {
		t.Errorf("writable pages left after RELRO: %v", perms)
	}
	t.Logf("the module's mappings by permissions: %v", perms)
}

// TestValidateForeign: every level's object validates for its own
// architecture and is refused for the other, naming both machines.
func TestValidateForeign(t *testing.T) {
	for _, l := range Levels() {
		obj := build(t, "scale-"+l.Name, scaleSrc, levelFlags(l))
		if err := Validate(obj, l.GOARCH); err != nil {
			t.Errorf("%s: %v", l.Name, err)
		}
		other := map[string]string{"amd64": "arm64", "arm64": "amd64"}[l.GOARCH]
		err := Validate(obj, other)
		wantRefused(t, l.Name+" as "+other, err, "EM_")
		if err != nil && (!strings.Contains(err.Error(), "EM_X86_64") || !strings.Contains(err.Error(), "EM_AARCH64")) {
			t.Errorf("%s as %s: %v, want both machines named", l.Name, other, err)
		}
		if err := Validate(obj, "riscv64"); err == nil || !strings.Contains(err.Error(), "linux/amd64 and linux/arm64") {
			t.Errorf("Validate(riscv64) = %v", err)
		}
	}
}

// refusal is an object Validate and Load must refuse, and what the error
// says.
type refusal struct {
	name string
	obj  func(t *testing.T) []byte
	want string
}

const exportDef = `#include <stdint.h>
#define EXPORT __attribute__((visibility("default")))
`

// refusals are the cases of TestRefusals: built with clang and lld where
// flags produce the object, else patched from good, a good object for
// this architecture (nil where clang cannot run).
func refusals(good []byte, whyNot error) []refusal {
	// buildOther builds scale for a triple other than our levels'.
	buildOther := func(name, triple string) func(t *testing.T) []byte {
		return func(t *testing.T) []byte {
			return build(t, name, scaleSrc, append(append([]string(nil), baseFlags...), "--target="+triple))
		}
	}
	src := func(name, body string, flags ...string) func(t *testing.T) []byte {
		return func(t *testing.T) []byte {
			l := hostLevel(t)
			return build(t, name+"-"+l.GOARCH, exportDef+body, levelFlags(l, flags...))
		}
	}
	noDefs := func(name, body string) func(t *testing.T) []byte {
		return func(t *testing.T) []byte {
			l := hostLevel(t)
			return build(t, name+"-"+l.GOARCH, exportDef+body, without(levelFlags(l), "-Wl,-z,defs"))
		}
	}
	patch := func(fix func(t *testing.T, obj []byte) []byte) func(t *testing.T) []byte {
		return func(t *testing.T) []byte {
			if good == nil {
				noTools(t, "native code tests need clang and ld.lld: "+whyNot.Error())
			}
			return fix(t, clone(good))
		}
	}
	retag := func(from, to elf.DynTag) func(t *testing.T) []byte {
		return patch(func(t *testing.T, obj []byte) []byte {
			put64(obj, dynEntry(t, obj, from), uint64(to))
			return obj
		})
	}
	// The machine's relocation types, for the patched relocations.
	irelative := func() uint64 {
		if runtime.GOARCH == "arm64" {
			return uint64(elf.R_AARCH64_IRELATIVE)
		}
		return uint64(elf.R_X86_64_IRELATIVE)
	}
	text := func(t *testing.T, obj []byte) phdr { return findPhdr(t, obj, elf.PT_LOAD, elf.PF_X) }
	data := func(t *testing.T, obj []byte) phdr { return findPhdr(t, obj, elf.PT_LOAD, elf.PF_W) }
	rodata := func(t *testing.T, obj []byte) phdr { return findPhdr(t, obj, elf.PT_LOAD, elf.PF_R) }

	return []refusal{
		{"not ELF", func(*testing.T) []byte { return []byte("#!/bin/sh\necho not native code\n" + strings.Repeat(" ", 64)) }, "not an ELF object"},
		{"ELF32 (i686)", buildOther("scale-i686", "i686-linux-gnu"), "not a 64-bit ELF object (ELFCLASS32)"},
		{"big-endian (aarch64_be)", buildOther("scale-aarch64_be", "aarch64_be-linux-gnu"), "not a little-endian ELF object (ELFDATA2MSB)"},
		{"ET_REL (clang -c)", func(t *testing.T) []byte {
			l := hostLevel(t)
			return build(t, "rel-"+l.GOARCH, scaleSrc, without(levelFlags(l, "-c"), "-shared", "-fuse-ld=lld", "-Wl,-z,defs"))
		}, "its type is ET_REL, want ET_DYN"},
		{"ET_EXEC", patch(func(_ *testing.T, obj []byte) []byte {
			binary.LittleEndian.PutUint16(obj[16:], uint16(elf.ET_EXEC))
			return obj
		}), "its type is ET_EXEC, want ET_DYN"},
		{"foreign machine", func(t *testing.T) []byte {
			l := foreignLevel(t)
			return build(t, "scale-"+l.Name, scaleSrc, levelFlags(l))
		}, "it is code for EM_"},
		{"PT_INTERP", src("interp", `const char interp[] __attribute__((section(".interp"))) = "/lib/ld.so";
EXPORT void f(void) {}`), "program interpreter (PT_INTERP)"},
		{"PT_TLS", src("tls", `__attribute__((tls_model("initial-exec"))) __thread int v;
EXPORT int f(void) { return v++; }`), "thread-local storage (PT_TLS)"},
		{"executable stack", src("execstack", `EXPORT void f(void) {}`, "-Wl,-z,execstack"), "executable stack (PT_GNU_STACK)"},
		{"DT_NEEDED", func(t *testing.T) []byte {
			l := hostLevel(t)
			return buildWith(t, "needed-"+l.GOARCH, exportDef+`EXPORT void f(void) {}`,
				levelFlags(l, "-Wl,--no-as-needed"), map[string]string{"libdummy.so": "void dummy(void) {}"})
		}, `it needs another shared object "libdummy.so" (DT_NEEDED)`},
		{"DT_INIT", src("init", `EXPORT void c(void) {} EXPORT void f(void) {}`, "-Wl,-init=c"), "code to run when loaded or unloaded (DT_INIT)"},
		{"DT_FINI", src("fini", `EXPORT void c(void) {} EXPORT void f(void) {}`, "-Wl,-fini=c"), "(DT_FINI)"},
		{"DT_INIT_ARRAY (constructor)", src("ctor", `static volatile int x;
__attribute__((constructor)) static void c(void) { x = 1; }
EXPORT int f(void) { return x; }`), "code to run when loaded or unloaded (DT_INIT_ARRAY)"},
		{"DT_FINI_ARRAY (destructor)", src("dtor", `static volatile int x;
__attribute__((destructor)) static void c(void) { x = 1; }
EXPORT int f(void) { return x; }`), "(DT_FINI_ARRAY)"},
		{"DT_PREINIT_ARRAY", src("preinit", `static void c(void) {}
__attribute__((used, section(".preinit_array"))) static void (*p)(void) = c;
EXPORT void f(void) {}`), "(DT_PREINIT_ARRAY)"},
		{"DT_TEXTREL", retag(elf.DT_RELACOUNT, elf.DT_TEXTREL), "it relocates its code (DT_TEXTREL)"},
		{"DF_TEXTREL (non-PIC code, amd64)", func(t *testing.T) []byte {
			// -mcmodel=large has a 64-bit absolute address in the code,
			// a relocation there; aarch64's large model builds
			// addresses with MOVZ/MOVK, which no loader relocates.
			if runtime.GOARCH != "amd64" {
				t.Skip("amd64's code model; DT_TEXTREL covers the refusal")
			}
			l := hostLevel(t)
			return build(t, "textrel-"+l.GOARCH, scaleSrc, without(levelFlags(l, "-fno-pic", "-mcmodel=large", "-Wl,-z,notext"), "-fPIC"))
		}, "it relocates its code (DF_TEXTREL)"},
		{"DT_JMPREL (a call to an undefined function)", noDefs("plt", `extern void ext(void);
EXPORT void f(void) { ext(); }`), "PLT relocations"},
		{"GLOB_DAT (an undefined variable)", noDefs("got", `extern int ext;
EXPORT int *f(void) { return &ext; }`), "_GLOB_DAT; only R_"},
		{"DT_REL", retag(elf.DT_RELA, elf.DT_REL), "REL relocations (DT_REL)"},
		{"DT_RELR", func(t *testing.T) []byte {
			l := hostLevel(t)
			return build(t, "relr-"+l.GOARCH, scaleSrc, levelFlags(l, "-Wl,--pack-dyn-relocs=relr"))
		}, "packed relative relocations (DT_RELR)"},
		{"DT_RELA twice", retag(elf.DT_RELACOUNT, elf.DT_RELA), "repeats DT_RELA"},
		{"IRELATIVE", patch(func(t *testing.T, obj []byte) []byte {
			put64(obj, firstRela(t, obj)+8, irelative())
			return obj
		}), "_IRELATIVE; only R_"},
		{"RELATIVE naming a symbol", patch(func(t *testing.T, obj []byte) []byte {
			at := firstRela(t, obj) + 8
			put64(obj, at, binary.LittleEndian.Uint64(obj[at:])|1<<32)
			return obj
		}), "names symbol 1"},
		{"relocation into code", patch(func(t *testing.T, obj []byte) []byte {
			put64(obj, firstRela(t, obj), text(t, obj).vaddr)
			return obj
		}), "outside writable memory"},
		{"relocation past the object", patch(func(t *testing.T, obj []byte) []byte {
			put64(obj, firstRela(t, obj), 1<<40)
			return obj
		}), "writes at 0x10000000000, outside writable memory"},
		{"relocation at the end of a segment", patch(func(t *testing.T, obj []byte) []byte {
			d := data(t, obj)
			put64(obj, firstRela(t, obj), d.vaddr+d.memsz-4)
			return obj
		}), "outside writable memory"},
		{"relocation addend outside", patch(func(t *testing.T, obj []byte) []byte {
			put64(obj, firstRela(t, obj)+16, 1<<40)
			return obj
		}), "points at 0x10000000000, outside the object's memory"},
		{"negative addend", patch(func(t *testing.T, obj []byte) []byte {
			put64(obj, firstRela(t, obj)+16, ^uint64(0))
			return obj
		}), "outside the object's memory"},
		{"W+X segment", patch(func(t *testing.T, obj []byte) []byte {
			put32(obj, text(t, obj).at+phFlags, uint32(elf.PF_R|elf.PF_W|elf.PF_X))
			return obj
		}), "is both writable and executable"},
		{"file range past the end", patch(func(t *testing.T, obj []byte) []byte {
			put64(obj, text(t, obj).at+phOff, uint64(len(obj))-8)
			return obj
		}), "is outside the"},
		{"file size past the end", patch(func(t *testing.T, obj []byte) []byte {
			x := text(t, obj)
			put64(obj, x.at+phFilesz, uint64(len(obj)))
			put64(obj, x.at+phMemsz, uint64(len(obj)))
			return obj
		}), "is outside the"},
		{"p_filesz > p_memsz", patch(func(t *testing.T, obj []byte) []byte {
			d := data(t, obj)
			put64(obj, d.at+phMemsz, d.filesz-1)
			return obj
		}), "p_filesz"},
		{"p_align not a power of two", patch(func(t *testing.T, obj []byte) []byte {
			put64(obj, text(t, obj).at+phAlign, 0x3000)
			return obj
		}), "p_align 0x3000 is not a power of two"},
		{"p_align over 64 KiB", patch(func(t *testing.T, obj []byte) []byte {
			put64(obj, text(t, obj).at+phAlign, 0x20000)
			return obj
		}), "p_align 0x20000 is over 64 KiB"},
		{"segments overlap", patch(func(t *testing.T, obj []byte) []byte {
			put64(obj, text(t, obj).at+phVaddr, rodata(t, obj).vaddr+8)
			return obj
		}), "overlap"},
		{"R and R+X share a page", patch(func(t *testing.T, obj []byte) []byte {
			r := rodata(t, obj)
			put64(obj, text(t, obj).at+phVaddr, r.vaddr+r.memsz)
			return obj
		}), "(R) and 2 (RX) share a"},
		{"span over 256 MiB", patch(func(t *testing.T, obj []byte) []byte {
			put64(obj, data(t, obj).at+phMemsz, 300<<20)
			return obj
		}), "more than 256 MiB"},
		{"memory range overflows", patch(func(t *testing.T, obj []byte) []byte {
			put64(obj, data(t, obj).at+phVaddr, ^uint64(0)-100)
			return obj
		}), "overflows"},
		{"RELRO in code", patch(func(t *testing.T, obj []byte) []byte {
			put64(obj, findPhdr(t, obj, elf.PT_GNU_RELRO, 0).at+phVaddr, text(t, obj).vaddr)
			return obj
		}), "PT_GNU_RELRO range at"},
		{"no PT_DYNAMIC", patch(func(t *testing.T, obj []byte) []byte {
			put32(obj, findPhdr(t, obj, elf.PT_DYNAMIC, 0).at+phType, uint32(elf.PT_NULL))
			return obj
		}), "no dynamic segment"},
		{"an imported symbol", patch(func(t *testing.T, obj []byte) []byte {
			binary.LittleEndian.PutUint16(obj[dynsym(t, obj, "nop")+6:], uint16(elf.SHN_UNDEF))
			return obj
		}), `it imports "nop"`},
		{"a function outside the code", patch(func(t *testing.T, obj []byte) []byte {
			put64(obj, dynsym(t, obj, "scale")+8, data(t, obj).vaddr)
			return obj
		}), `function "scale"`},
	}
}

// TestRefusals: each case is refused by Validate and by Load, with its
// message, and every truncation of a good object is refused.
func TestRefusals(t *testing.T) {
	l := hostLevel(t)
	good, whyNot := compile(t, "scale-"+l.Name, scaleSrc, levelFlags(l), nil)
	for _, c := range refusals(good, whyNot) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			obj := c.obj(t)
			wantRefused(t, "Validate", Validate(obj, runtime.GOARCH), c.want)
			if runtime.GOOS != "linux" {
				return
			}
			m, err := Load(obj)
			if err == nil {
				_ = m.Close()
			}
			wantRefused(t, "Load", err, c.want)
		})
	}
}

func TestTruncated(t *testing.T) {
	l := hostLevel(t)
	obj := build(t, "scale-"+l.Name, scaleSrc, levelFlags(l))
	for n := range len(obj) {
		if err := Validate(obj[:n], runtime.GOARCH); err == nil || !errors.Is(err, ErrInvalid) {
			t.Fatalf("%d of %d bytes: %v, want a refusal", n, len(obj), err)
		}
	}
}

func BenchmarkCall(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("native code runs on linux")
	}
	l, ok := Best()
	if !ok {
		b.Skip("this CPU runs no native level")
	}
	m, err := Load(build(b, "scale-"+l.Name, scaleSrc, levelFlags(l)))
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	fn, err := m.Func("nop")
	if err != nil {
		b.Fatal(err)
	}
	args := []unsafe.Pointer{nil, nil}
	sizes := []int64{0, 0}
	for b.Loop() {
		Call(fn, unsafe.Pointer(&args[0]), unsafe.Pointer(&sizes[0]), 0, 1)
	}
}
