package native

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The flags the compiler builds kernels with (less the level's).
var baseFlags = []string{
	"-O3", "-ffreestanding", "-nostdlib", "-fPIC", "-shared", "-fuse-ld=lld",
	"-Wl,-z,defs", "-fvisibility=hidden",
}

// objDirEnv names a directory of prebuilt test objects, for a test
// binary run where clang cannot (a cross-compiled one under an
// emulator without the host's binaries): where clang runs, each object a
// test builds is also written there, under the test's name for it;
// where clang does not, the tests read them from there.
const objDirEnv = "RLX_NATIVE_TESTOBJ"

// levelFlags is what builds code for level l.
func levelFlags(l Level, extra ...string) []string {
	return append(append(append([]string(nil), baseFlags...), l.Clang...), extra...)
}

// without returns flags less the ones named.
func without(flags []string, drop ...string) []string {
	var out []string
	for _, f := range flags {
		keep := true
		for _, d := range drop {
			keep = keep && f != d
		}
		if keep {
			out = append(out, f)
		}
	}
	return out
}

// hostLevel is this architecture's first level (the code of which the
// refusal cases compile; it is not run), foreignLevel another
// architecture's.
func hostLevel(t testing.TB) Level {
	for _, l := range Levels() {
		if l.GOARCH == runtime.GOARCH {
			return l
		}
	}
	t.Skipf("no native level for %s", runtime.GOARCH)
	return Level{}
}

func foreignLevel(t testing.TB) Level {
	for _, l := range Levels() {
		if l.GOARCH != runtime.GOARCH {
			return l
		}
	}
	t.Fatal("no level of another architecture")
	return Level{}
}

// noTools skips the test, or fails it under CI=true, where CI installs
// clang and lld.
func noTools(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s, and CI=true", why)
	}
	t.Skip(why)
}

// toolsErr says why clang cannot build here, or nil if it can.
func toolsErr() error {
	for _, tool := range []string{"clang", "ld.lld"} {
		if _, err := exec.LookPath(tool); err != nil {
			return err
		}
	}
	// Under an emulator, exec of a host binary may fail.
	if err := exec.Command("clang", "--version").Run(); err != nil {
		return err
	}
	return nil
}

// compile runs clang on src with flags into an object named name, and
// returns its bytes. The C files and extra inputs go to a temporary
// directory; inputs maps further file names to their C source, each
// built first with the same flags into a shared object of that name
// (for DT_NEEDED). The error says why clang cannot run here, where it
// cannot and $RLX_NATIVE_TESTOBJ is not set.
func compile(t testing.TB, name, src string, flags []string, inputs map[string]string) ([]byte, error) {
	t.Helper()
	objDir := os.Getenv(objDirEnv)
	if err := toolsErr(); err != nil {
		if objDir != "" {
			obj, rerr := os.ReadFile(filepath.Join(objDir, name+".so"))
			if rerr != nil {
				t.Fatalf("clang cannot run here (%v), and %s has no %s.so: %v", err, objDirEnv, name, rerr)
			}
			return obj, nil
		}
		return nil, err
	}
	dir := t.TempDir()
	for lib, libSrc := range inputs {
		c := filepath.Join(dir, lib+".c")
		if err := os.WriteFile(c, []byte(libSrc), 0o644); err != nil {
			t.Fatal(err)
		}
		args := append(append([]string(nil), flags...), "-Wl,-soname,"+lib, c, "-o", filepath.Join(dir, lib))
		if out, err := exec.Command("clang", args...).CombinedOutput(); err != nil {
			t.Fatalf("clang %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		flags = append(append([]string(nil), flags...), "-L"+dir, "-l:"+lib)
	}
	c, so := filepath.Join(dir, name+".c"), filepath.Join(dir, name+".so")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append(append([]string(nil), flags...), c, "-o", so)
	if out, err := exec.Command("clang", args...).CombinedOutput(); err != nil {
		t.Fatalf("clang %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	obj, err := os.ReadFile(so)
	if err != nil {
		t.Fatal(err)
	}
	if objDir != "" {
		if err := os.WriteFile(filepath.Join(objDir, name+".so"), obj, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return obj, nil
}

// build is compile for a test: it skips (fails under CI=true) where
// clang cannot run.
func build(t testing.TB, name, src string, flags []string) []byte {
	t.Helper()
	return buildWith(t, name, src, flags, nil)
}

func buildWith(t testing.TB, name, src string, flags []string, inputs map[string]string) []byte {
	t.Helper()
	obj, err := compile(t, name, src, flags, inputs)
	if err != nil {
		noTools(t, "native code tests need clang and ld.lld ("+err.Error()+"); where they cannot run (under an emulator), run the tests once where they can with "+objDirEnv+"=DIR, then here with the same setting")
	}
	return obj
}

// The kernel the tests load and run: y = 2x + table[i%4], with the
// table reached through a pointer array in data, which needs RELATIVE
// relocations (volatile keeps clang from folding the pointers away).
const scaleSrc = `#include <stdint.h>
#define EXPORT __attribute__((visibility("default")))

static const float table[4] = {0.5f, 1.5f, -2.0f, 3.25f};
static const float *const volatile halves[2] = {table, table + 2};

EXPORT int64_t scale(void *const *a, const int64_t *bytes, int64_t lo, int64_t hi) {
	if (bytes[0] < hi * 4 || bytes[1] < hi * 4) return 1;
	const float *x = a[0];
	float *y = a[1];
	const float *t0 = halves[0], *t1 = halves[1];
	for (int64_t i = lo; i < hi; i++) {
		int64_t k = i % 4;
		y[i] = 2 * x[i] + (k < 2 ? t0[k] : t1[k - 2]);
	}
	return 0;
}

EXPORT int64_t nop(void *const *a, const int64_t *bytes, int64_t lo, int64_t hi) {
	(void)a; (void)bytes; (void)lo; (void)hi;
	return 0;
}
`

// scaleTable is scaleSrc's table.
var scaleTable = [4]float32{0.5, 1.5, -2.0, 3.25}

// relativeRelocs counts obj's R_*_RELATIVE relocations in .rela.dyn.
func relativeRelocs(t testing.TB, obj []byte) int {
	t.Helper()
	f, err := elf.NewFile(strings.NewReader(string(obj)))
	if err != nil {
		t.Fatal(err)
	}
	sec := f.Section(".rela.dyn")
	if sec == nil {
		return 0
	}
	data, err := sec.Data()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for ; len(data) >= 24; data = data[24:] {
		typ := uint32(binary.LittleEndian.Uint64(data[8:]))
		if (f.Machine == elf.EM_X86_64 && typ == uint32(elf.R_X86_64_RELATIVE)) ||
			(f.Machine == elf.EM_AARCH64 && typ == uint32(elf.R_AARCH64_RELATIVE)) {
			n++
		}
	}
	return n
}

// Patching a good object: its program headers, dynamic entries,
// relocations and dynamic symbols, found the way a loader finds them.

type phdr struct {
	at                                int // the header's file offset
	typ                               elf.ProgType
	flags                             elf.ProgFlag
	off, vaddr, filesz, memsz, palign uint64
}

func phdrs(obj []byte) []phdr {
	le := binary.LittleEndian
	phoff, ent, n := le.Uint64(obj[32:]), int(le.Uint16(obj[54:])), int(le.Uint16(obj[56:]))
	var ps []phdr
	for i := range n {
		at := int(phoff) + i*ent
		h := obj[at:]
		ps = append(ps, phdr{at, elf.ProgType(le.Uint32(h)), elf.ProgFlag(le.Uint32(h[4:])),
			le.Uint64(h[8:]), le.Uint64(h[16:]), le.Uint64(h[32:]), le.Uint64(h[40:]), le.Uint64(h[48:])})
	}
	return ps
}

// findPhdr returns the first program header of that type whose flags
// include flags.
func findPhdr(t testing.TB, obj []byte, typ elf.ProgType, flags elf.ProgFlag) phdr {
	t.Helper()
	for _, p := range phdrs(obj) {
		if p.typ == typ && p.flags&flags == flags {
			return p
		}
	}
	t.Fatalf("no %v %v program header", typ, flags)
	return phdr{}
}

// Offsets of the fields in an Elf64_Phdr.
const (
	phType, phFlags, phOff, phVaddr, phFilesz, phMemsz, phAlign = 0, 4, 8, 16, 32, 40, 48
)

func put64(obj []byte, at int, v uint64) { binary.LittleEndian.PutUint64(obj[at:], v) }
func put32(obj []byte, at int, v uint32) { binary.LittleEndian.PutUint32(obj[at:], v) }

// fileOff translates a vaddr of obj to its file offset.
func fileOff(t testing.TB, obj []byte, vaddr uint64) int {
	t.Helper()
	for _, p := range phdrs(obj) {
		if p.typ == elf.PT_LOAD && vaddr >= p.vaddr && vaddr < p.vaddr+p.filesz {
			return int(p.off + vaddr - p.vaddr)
		}
	}
	t.Fatalf("vaddr %#x is in no segment's file contents", vaddr)
	return 0
}

// dynEntry returns the file offset of obj's first dynamic entry with
// that tag.
func dynEntry(t testing.TB, obj []byte, tag elf.DynTag) int {
	t.Helper()
	d := findPhdr(t, obj, elf.PT_DYNAMIC, 0)
	for at := int(d.off); at+16 <= int(d.off+d.filesz); at += 16 {
		if elf.DynTag(binary.LittleEndian.Uint64(obj[at:])) == tag {
			return at
		}
	}
	t.Fatalf("no %v dynamic entry", tag)
	return 0
}

// firstRela returns the file offset of obj's first RELA relocation.
func firstRela(t testing.TB, obj []byte) int {
	t.Helper()
	at := dynEntry(t, obj, elf.DT_RELA)
	return fileOff(t, obj, binary.LittleEndian.Uint64(obj[at+8:]))
}

// dynsym returns the file offset of the dynamic symbol name's entry.
func dynsym(t testing.TB, obj []byte, name string) int {
	t.Helper()
	f, err := elf.NewFile(strings.NewReader(string(obj)))
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	sec := f.Section(".dynsym")
	for i, s := range syms {
		if s.Name == name {
			return int(sec.Offset) + (i+1)*24 // DynamicSymbols drops entry 0
		}
	}
	t.Fatalf("no dynamic symbol %q", name)
	return 0
}

// clone returns a copy of obj to patch.
func clone(obj []byte) []byte { return append([]byte(nil), obj...) }

// wantRefused checks that err refuses an object with a message holding
// want.
func wantRefused(t *testing.T, what string, err error, want string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error, want one containing %q", what, want)
		return
	}
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("%s: error %q does not wrap ErrInvalid", what, err)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("%s: error %q, want it to contain %q", what, err, want)
	}
}
