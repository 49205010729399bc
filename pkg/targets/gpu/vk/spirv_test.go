package vk

import (
	"encoding/binary"
	"strings"
	"testing"
)

// These tests need no device: they run on every platform.

// module assembles a SPIR-V module: the header, then the instructions.
func module(ins ...[]uint32) []byte {
	w := []uint32{spirvMagic, 0x00010300, 0, 100, 0}
	for _, in := range ins {
		w = append(w, uint32(len(in))<<16|in[0])
		w = append(w, in[1:]...)
	}
	b := make([]byte, 4*len(w))
	for i, x := range w {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	return b
}

// str packs a SPIR-V literal string.
func str(s string) []uint32 {
	b := append([]byte(s), 0)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	w := make([]uint32, len(b)/4)
	for i := range w {
		w[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return w
}

func entryPoint(model uint32, name string) []uint32 {
	return append([]uint32{opEntryPoint, model, 1}, str(name)...)
}

// storageBuffer declares variable id (struct id+1, pointer id+2) in
// storage class sc at the given set and binding.
func storageBuffer(id, sc, set, binding uint32) [][]uint32 {
	return [][]uint32{
		{opDecorate, id, decDescriptorSet, set},
		{opDecorate, id, decBinding, binding},
		{opTypeStruct, id + 1},
		{opTypePointer, id + 2, sc, id + 1},
		{opVariable, id + 2, id, sc},
	}
}

func TestCheckSPIRV(t *testing.T) {
	good := module(append([][]uint32{entryPoint(execGLCompute, "main")}, storageBuffer(10, scStorageBuffer, 0, 1)...)...)
	words, err := checkSPIRV(good, "main", 2, 0)
	if err != nil {
		t.Fatalf("valid module: %v", err)
	}
	if len(words) != len(good)/4 || words[0] != spirvMagic {
		t.Errorf("words = %d words starting %#x", len(words), words[0])
	}

	bad := func(name string, code []byte, entry string, bindings, push int, want string) {
		t.Helper()
		_, err := checkSPIRV(code, entry, bindings, push)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one that says %q", name, err, want)
		}
	}
	bad("binding out of range", good, "main", 1, 0, "binding 1")
	bad("wrong entry", good, "run", 2, 0, `no GLCompute entry point "run" (it has: main)`)
	bad("vertex entry", module(entryPoint(0, "main")), "main", 0, 0, "(it has: none)")
	bad("set 1", module(append([][]uint32{entryPoint(execGLCompute, "main")}, storageBuffer(10, scStorageBuffer, 1, 0)...)...), "main", 4, 0, "descriptor set 1")
	bad("uniform block", module(append([][]uint32{entryPoint(execGLCompute, "main")}, storageBuffer(10, scUniform, 0, 0)...)...), "main", 1, 0, "uniform buffer")
	bad("image", module(append([][]uint32{entryPoint(execGLCompute, "main")}, storageBuffer(10, 0, 0, 0)...)...), "main", 1, 0, "not a storage buffer")
	// A push-constant block fits a layout with at least its bytes; a
	// layout without push constants refuses it.
	block := func(members ...uint32) []byte { // int members at these byte offsets
		ins := [][]uint32{entryPoint(execGLCompute, "main"), {opTypeInt, 20, 32, 1}}
		st := []uint32{opTypeStruct, 21}
		for m, off := range members {
			ins = append(ins, []uint32{opMemberDecorate, 21, uint32(m), decOffset, off})
			st = append(st, 20)
		}
		return module(append(ins, st, []uint32{opTypePointer, 22, scPushConstant, 21}, []uint32{opVariable, 22, 23, scPushConstant})...)
	}
	for _, push := range []int{8, 12, 128} {
		if _, err := checkSPIRV(block(0, 4), "main", 0, push); err != nil {
			t.Errorf("8-byte push-constant block, %d-byte range: %v", push, err)
		}
	}
	bad("push constants, none in the layout", block(0, 4), "main", 0, 0, "push constants; the pipeline layout has none")
	bad("push constants past the range", block(0, 4, 8), "main", 0, 8, "push-constant block is 12 bytes; the pipeline layout has 8")
	bad("push constants at a huge offset", block(0xfffffffc), "main", 0, 128, "push-constant block is 4294967296 bytes")
	bad("push constants not a block", module(entryPoint(execGLCompute, "main"), []uint32{opVariable, 5, 6, scPushConstant}), "main", 0, 4, "not a block")
	bad("push constants without offsets", module(entryPoint(execGLCompute, "main"), []uint32{opTypeInt, 20, 32, 1}, []uint32{opTypeStruct, 21, 20},
		[]uint32{opTypePointer, 22, scPushConstant, 21}, []uint32{opVariable, 22, 23, scPushConstant}), "main", 0, 4, "member 0 is not a scalar at a fixed offset")
	truncated := good[:len(good)-4]
	bad("truncated", truncated, "main", 2, 0, "malformed SPIR-V")
	zero := append(module(entryPoint(execGLCompute, "main")), 0, 0, 0, 0)
	bad("zero word count", zero, "main", 0, 0, "malformed SPIR-V")
	bad("empty", nil, "main", 0, 0, "empty")
	bad("not words", good[:len(good)-1], "main", 2, 0, "not a multiple of 4")
	bad("short", good[:12], "main", 2, 0, "shorter than its 20-byte header")
	swapped := make([]byte, len(good))
	for i := 0; i < len(good); i += 4 {
		binary.BigEndian.PutUint32(swapped[i:], binary.LittleEndian.Uint32(good[i:]))
	}
	bad("big-endian", swapped, "main", 2, 0, "big-endian")
	bad("ELF", []byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00\x3e\x00"), "main", 0, 0, "not a SPIR-V module")
}

func TestOpenNeverPanics(t *testing.T) {
	// Open either works or fails with an error that says why; it never
	// panics, whatever the platform and whether or not Vulkan is installed.
	d, err := Open()
	if err != nil {
		if err.Error() == "" {
			t.Error("Open failed with an empty error")
		}
		t.Logf("Open: %v", err)
		return
	}
	if err := d.Close(); err != nil {
		t.Error(err)
	}
}
