// Package toolchain runs the external compilers kernels go through at
// build time: glslangValidator (GLSL to SPIR-V, then spirv-val when it is
// installed), clang (CUDA C to PTX) and clang with lld (C to a CPU's
// native code).
package toolchain

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// timeout bounds one compile: a hung compiler must not hang a CI build.
const timeout = 2 * time.Minute

// Tool names an external compiler and the package that installs it.
type Tool struct {
	Command string
	Package string // Debian
}

// The tools the GPU targets use.
var (
	Glslang  = Tool{"glslangValidator", "glslang-tools"}
	SpirvVal = Tool{"spirv-val", "spirv-tools"}
	Clang    = Tool{"clang", "clang"}
	Lld      = Tool{"ld.lld", "lld"}
)

// Path finds the tool, or says how to install it.
func (t Tool) Path() (string, error) {
	p, err := exec.LookPath(t.Command)
	if err != nil {
		return "", fmt.Errorf("%s not found (on Debian: apt-get install %s)", t.Command, t.Package)
	}
	return p, nil
}

// run runs a command in a temporary directory holding the file name with
// content src, and returns the bytes of the file out it writes.
func run(name, src, out string, args ...string) ([]byte, error) {
	return runFiles(map[string][]byte{name: []byte(src)}, out, args...)
}

// runFiles is run with several input files, by name.
func runFiles(files map[string][]byte, out string, args ...string) ([]byte, error) {
	dir, err := os.MkdirTemp("", "rlx-kernel-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if ctx.Err() != nil {
			msg = "timed out after " + timeout.String()
		}
		return nil, fmt.Errorf("%s: %v: %s", filepath.Base(args[0]), err, msg)
	}
	if out == "" {
		return nil, nil
	}
	return os.ReadFile(filepath.Join(dir, out))
}

// GLSLToSPIRV compiles a GLSL compute shader for Vulkan 1.1 and, when
// spirv-val is installed, validates the result.
func GLSLToSPIRV(name, src string) ([]byte, string, error) {
	glslang, err := Glslang.Path()
	if err != nil {
		return nil, "", err
	}
	spv, err := run(name+".comp", src, name+".spv", glslang, "-V", "--target-env", "vulkan1.1", "-S", "comp", "-o", name+".spv", name+".comp")
	if err != nil {
		return nil, "", err
	}
	if val, err := SpirvVal.Path(); err == nil {
		if _, err := runBytes(name+".spv", spv, val, "--target-env", "vulkan1.1", name+".spv"); err != nil {
			return nil, "", err
		}
	}
	return spv, "spirv", nil
}

func runBytes(name string, data []byte, args ...string) ([]byte, error) {
	return run(name, string(data), "", args...)
}

// PTXArch is the GPU architecture PTX is built for: sm_80 (Ampere) PTX
// JIT-compiles on every later GPU.
const PTXArch = "sm_80"

// CUDAToPTX compiles a CUDA C kernel to PTX with clang (no CUDA toolkit:
// the kernel carries its own built-ins, see kir's CUDA prelude).
func CUDAToPTX(name, src string) ([]byte, string, error) {
	clang, err := Clang.Path()
	if err != nil {
		return nil, "", err
	}
	ptx, err := run(name+".cu", src, name+".ptx", clang, "-x", "cuda", "--cuda-device-only", "-nocudainc", "-nocudalib",
		"--cuda-gpu-arch="+PTXArch, "-O3", "-S", "-o", name+".ptx", name+".cu")
	if err != nil {
		return nil, "", err
	}
	return ptx, "ptx", nil
}

// CompileFlags are the flags every native CPU object is compiled with,
// besides its CPU level's: freestanding code (no libc, no libm, no stack
// protector, which reads a libc global), position independent, with only
// the kernels visible. No -ffast-math: NaN and infinity keep their IEEE
// meaning.
var CompileFlags = []string{"-O3", "-std=c11", "-ffreestanding", "-nostdlib", "-fno-math-errno", "-fno-stack-protector",
	"-fno-asynchronous-unwind-tables", "-fno-unwind-tables", "-fPIC", "-fvisibility=hidden",
	"-Werror=implicit-function-declaration"}

// LinkFlags link objects into a shared object whose only exports are the
// kernels, with every reference resolved at link time (-z defs), no build
// ID and no symbol table beyond the dynamic one, so the same objects give
// the same bytes.
var LinkFlags = []string{"-nostdlib", "-shared", "-fuse-ld=lld", "-Wl,-z,defs", "-Wl,--build-id=none", "-Wl,--strip-all",
	"-Wl,-z,noexecstack", "-Wl,--hash-style=gnu"}

// CFlags are CompileFlags and LinkFlags: one clang run from C to a shared
// object (CToELF).
var CFlags = append(append([]string{}, CompileFlags...), LinkFlags...)

// NativeTools checks for what CToELF runs: clang and lld.
func NativeTools() error {
	for _, t := range []Tool{Clang, Lld} {
		if _, err := t.Path(); err != nil {
			return err
		}
	}
	return nil
}

// CToELF compiles a C translation unit into an ELF shared object with
// clang and lld, for the CPU level that levelFlags select (its --target
// and -march).
func CToELF(name, src string, levelFlags []string) ([]byte, error) {
	clang, err := Clang.Path()
	if err != nil {
		return nil, err
	}
	if _, err := Lld.Path(); err != nil {
		return nil, err
	}
	args := append([]string{clang}, levelFlags...)
	args = append(args, CFlags...)
	args = append(args, "-o", name+".so", name+".c")
	return run(name+".c", src, name+".so", args...)
}

// CToObject compiles a C translation unit into a relocatable object for
// the CPU level that levelFlags select, for LinkELF.
func CToObject(name, src string, levelFlags []string) ([]byte, error) {
	clang, err := Clang.Path()
	if err != nil {
		return nil, err
	}
	args := append([]string{clang}, levelFlags...)
	args = append(args, CompileFlags...)
	args = append(args, "-c", "-o", name+".o", name+".c")
	return run(name+".c", src, name+".o", args...)
}

// LinkELF links objects (from CToObject, in that order) into an ELF
// shared object with lld, as CToELF's link does.
func LinkELF(name string, objects [][]byte, levelFlags []string) ([]byte, error) {
	clang, err := Clang.Path()
	if err != nil {
		return nil, err
	}
	if _, err := Lld.Path(); err != nil {
		return nil, err
	}
	files := make(map[string][]byte, len(objects))
	args := append([]string{clang}, levelFlags...)
	args = append(args, LinkFlags...)
	args = append(args, "-o", name+".so")
	for i, o := range objects {
		f := fmt.Sprintf("%s%d.o", name, i)
		files[f] = o
		args = append(args, f)
	}
	return runFiles(files, name+".so", args...)
}

// ClangIdentity names the clang a native build runs, cheaply: its
// resolved path, size and modification time, hashed ("clang-3f2a..."), or
// "" without clang. It is part of every native build's cache key; running
// clang --version instead cost a cache hit about 0.1 s.
func ClangIdentity() string {
	p, err := Clang.Path()
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		p = real
	}
	fi, err := os.Stat(p)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d\x00%d", p, fi.Size(), fi.ModTime().UnixNano())))
	return "clang-" + hex.EncodeToString(sum[:6])
}
