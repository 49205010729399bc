// Package toolchain runs the external compilers GPU kernels go through at
// build time: glslangValidator (GLSL to SPIR-V, then spirv-val when it is
// installed) and clang (CUDA C to PTX).
package toolchain

import (
	"bytes"
	"context"
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
	dir, err := os.MkdirTemp("", "rlx-kernel-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
		return nil, err
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
