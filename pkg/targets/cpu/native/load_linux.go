//go:build linux && (amd64 || arm64)

package native

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Load validates obj as native code for this process's architecture
// (every check of [Validate]) and only then maps it: one anonymous
// read-write mapping, each PT_LOAD segment copied to its place, the bss
// left zero, the RELATIVE relocations applied, and then each segment's
// pages given its permissions (R, R+X or R+W; never W+X), the RELRO
// range read-only and the gaps between segments inaccessible. No code
// of the object runs at load. Close unmaps it.
func Load(obj []byte) (*Module, error) {
	im, err := validate(obj, runtime.GOARCH)
	if err != nil {
		return nil, err
	}
	ps := uint64(os.Getpagesize())
	if ps < minPage || ps > im.maxPage || ps&(ps-1) != 0 {
		return nil, fmt.Errorf("native: this kernel's %d-byte pages are not a size native code is laid out for (%d to %d)", ps, minPage, im.maxPage)
	}
	lo := down(im.lo, ps)
	size := up(im.hi, ps) - lo
	align := max(ps, im.align)
	// Map align-ps bytes more than the span and unmap what is left over
	// on either side of an aligned start.
	total := size + align - ps
	raw, err := unix.MmapPtr(-1, 0, nil, uintptr(total), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("native: mapping %d bytes: %w", total, err)
	}
	// skip brings vaddr lo to a multiple of align (mod 2^64: lo may be
	// above the mapping's address).
	skip := -(uint64(uintptr(raw)) - lo) & (align - 1)
	start := unsafe.Add(raw, skip)
	if skip > 0 {
		if err := unix.MunmapPtr(raw, uintptr(skip)); err != nil {
			_ = unix.MunmapPtr(raw, uintptr(total))
			return nil, fmt.Errorf("native: unmapping: %w", err)
		}
	}
	if tail := total - skip - size; tail > 0 {
		if err := unix.MunmapPtr(unsafe.Add(start, size), uintptr(tail)); err != nil {
			_ = unix.MunmapPtr(start, uintptr(size+tail))
			return nil, fmt.Errorf("native: unmapping: %w", err)
		}
	}
	m := &Module{mem: unsafe.Slice((*byte)(start), size)}
	if err := m.fill(obj, im, lo, ps); err != nil {
		_ = m.Close()
		return nil, err
	}
	return m, nil
}

// fill copies, relocates and protects the segments in m.mem, whose
// first byte is vaddr lo, and resolves the functions.
func (m *Module) fill(obj []byte, im *image, lo, ps uint64) error {
	base := uint64(uintptr(unsafe.Pointer(&m.mem[0]))) - lo
	for _, s := range im.segs {
		if s.memsz > 0 {
			copy(m.mem[s.vaddr-lo:], obj[s.off:s.off+s.filesz])
		}
	}
	for _, r := range im.relocs {
		binary.LittleEndian.PutUint64(m.mem[r.off-lo:], base+r.addend)
	}
	pages := func(from, to uint64) []byte { return m.mem[down(from, ps)-lo : up(to, ps)-lo] }
	for _, s := range im.segs {
		if s.exec && s.memsz > 0 {
			syncICache(pages(s.vaddr, s.end))
		}
	}
	if err := unix.Mprotect(m.mem, unix.PROT_NONE); err != nil {
		return fmt.Errorf("native: mprotect: %w", err)
	}
	for _, s := range im.segs {
		if s.memsz == 0 {
			continue
		}
		prot := unix.PROT_NONE
		if s.read {
			prot |= unix.PROT_READ
		}
		if s.write {
			prot |= unix.PROT_WRITE
		}
		if s.exec {
			prot |= unix.PROT_EXEC
		}
		if err := unix.Mprotect(pages(s.vaddr, s.end), prot); err != nil {
			return fmt.Errorf("native: mprotect: %w", err)
		}
	}
	// The pages RELRO covers whole, as glibc's ld.so protects them.
	if from, to := down(im.relroStart, ps), down(im.relroEnd, ps); from < to {
		if err := unix.Mprotect(m.mem[from-lo:to-lo], unix.PROT_READ); err != nil {
			return fmt.Errorf("native: mprotect: %w", err)
		}
	}
	m.funcs = make(map[string]uintptr, len(im.funcs))
	for name, v := range im.funcs {
		m.funcs[name] = uintptr(base + v)
	}
	return nil
}

// Close unmaps the module. No call into it may be running or start
// after; Func fails after Close. Closing twice does nothing.
func (m *Module) Close() error {
	if m.mem == nil {
		return nil
	}
	mem := m.mem
	m.mem, m.funcs = nil, nil
	if err := unix.MunmapPtr(unsafe.Pointer(&mem[0]), uintptr(len(mem))); err != nil {
		return fmt.Errorf("native: unmapping: %w", err)
	}
	return nil
}
