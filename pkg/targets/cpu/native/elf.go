package native

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrInvalid is what every error [Validate] and [Load] return for an
// object they refuse wraps: the object is not native code this package
// loads (corrupt, built for another machine, or asking for what a
// loader of ours does not do). The error's text says what is wrong.
var ErrInvalid = errors.New("corrupt or foreign native code")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}

const (
	// maxSpan bounds the memory one object maps: compiled kernels are
	// kilobytes; a span this large is a corrupt header.
	maxSpan = 256 << 20
	// maxAlign bounds a segment's p_align: 64 KiB is the largest page
	// of the kernels we run on (arm64), lld's default for aarch64.
	maxAlign = 64 << 10
	// maxLoads bounds the PT_LOAD segments (lld writes three or four),
	// which keeps the pairwise overlap checks small.
	maxLoads = 16
	// minPage is the smallest page size of the kernels we run on.
	minPage = 4 << 10
	// relaEnt is the size of an Elf64_Rela.
	relaEnt = 24
)

// Dynamic tags debug/elf does not name.
const (
	dtRELRSZ         elf.DynTag = 35
	dtRELR           elf.DynTag = 36
	dtRELRENT        elf.DynTag = 37
	dtAndroidREL     elf.DynTag = 0x6000000f
	dtAndroidRELSZ   elf.DynTag = 0x60000010
	dtAndroidRELA    elf.DynTag = 0x60000011
	dtAndroidRELASZ  elf.DynTag = 0x60000012
	dtAndroidRELR    elf.DynTag = 0x6fffe000
	dtAndroidRELRSZ  elf.DynTag = 0x6fffe001
	dtAndroidRELRENT elf.DynTag = 0x6fffe003
)

// target is what an object for one Go architecture must be.
type target struct {
	goarch  string
	machine elf.Machine
	// relative is the machine's R_*_RELATIVE, the one relocation type
	// loaded: base + addend, what position-independent code needs for
	// pointers in its data.
	relative uint32
	relName  func(uint32) string
	// maxPage is the largest page size the architecture's Linux kernels
	// use: segments with different permissions must not share a page of
	// that size, so the object loads on every kernel.
	maxPage uint64
}

func targetFor(goarch string) (target, error) {
	switch goarch {
	case "amd64":
		return target{goarch, elf.EM_X86_64, uint32(elf.R_X86_64_RELATIVE),
			func(t uint32) string { return elf.R_X86_64(t).String() }, 4 << 10}, nil
	case "arm64":
		// arm64 kernels run with 4, 16 or 64 KiB pages.
		return target{goarch, elf.EM_AARCH64, uint32(elf.R_AARCH64_RELATIVE),
			func(t uint32) string { return elf.R_AARCH64(t).String() }, 64 << 10}, nil
	}
	return target{}, fmt.Errorf("native code runs on linux/amd64 and linux/arm64, not on %s", goarch)
}

// segment is a PT_LOAD segment.
type segment struct {
	index             int // its program header's index
	vaddr, memsz, end uint64
	off, filesz       uint64
	align             uint64
	read, write, exec bool
	// pageLo and pageE bound its pages at the target's largest page
	// size.
	pageLo, pageE uint64
}

func (s segment) perms() string {
	p := ""
	if s.read {
		p += "R"
	}
	if s.write {
		p += "W"
	}
	if s.exec {
		p += "X"
	}
	if p == "" {
		return "none"
	}
	return p
}

// reloc is an R_*_RELATIVE relocation: the 8 bytes at vaddr off become
// base + addend.
type reloc struct{ off, addend uint64 }

// image is a validated object: everything Load needs to map it.
type image struct {
	segs []segment
	// lo and hi bound the segments' memory: the lowest vaddr and the
	// highest end.
	lo, hi uint64
	// align is the largest p_align (at least 1): the mapping's base is
	// a multiple of it.
	align uint64
	// relroStart and relroEnd bound the PT_GNU_RELRO range, made
	// read-only after relocation (equal: none).
	relroStart, relroEnd uint64
	relocs               []reloc
	// funcs maps each exported function to its vaddr.
	funcs map[string]uint64
	// maxPage is the target's largest page size.
	maxPage uint64
}

// Validate checks that obj is native code for goarch ("amd64" or
// "arm64") that [Load] would load on a linux/goarch machine, without
// mapping anything. Its errors about obj wrap [ErrInvalid]; a goarch
// other than those two is an error of its own.
func Validate(obj []byte, goarch string) error {
	_, err := validate(obj, goarch)
	return err
}

func down(x, page uint64) uint64 { return x &^ (page - 1) }
func up(x, page uint64) uint64   { return (x + page - 1) &^ (page - 1) }

// validate runs every check on obj as code for goarch and returns what
// mapping it takes. Nothing in it trusts a field before checking it.
func validate(obj []byte, goarch string) (*image, error) {
	t, err := targetFor(goarch)
	if err != nil {
		return nil, err
	}
	if err := checkHeader(obj, t); err != nil {
		return nil, err
	}
	f, err := elf.NewFile(bytes.NewReader(obj))
	if err != nil {
		return nil, invalid("%v", err)
	}
	im := &image{align: 1, maxPage: t.maxPage}
	var dyn, relro *elf.Prog
	for i, p := range f.Progs {
		switch p.Type {
		case elf.PT_INTERP:
			return nil, invalid("it asks for a program interpreter (PT_INTERP)")
		case elf.PT_TLS:
			return nil, invalid("it has thread-local storage (PT_TLS)")
		case elf.PT_GNU_STACK:
			if p.Flags&elf.PF_X != 0 {
				return nil, invalid("it asks for an executable stack (PT_GNU_STACK)")
			}
		case elf.PT_DYNAMIC:
			if dyn != nil {
				return nil, invalid("it has more than one PT_DYNAMIC")
			}
			dyn = p
		case elf.PT_GNU_RELRO:
			if relro != nil {
				return nil, invalid("it has more than one PT_GNU_RELRO")
			}
			relro = p
		case elf.PT_LOAD:
			s, err := checkLoad(i, p, len(obj), t)
			if err != nil {
				return nil, err
			}
			if len(im.segs) == maxLoads {
				return nil, invalid("it has more than %d PT_LOAD segments", maxLoads)
			}
			im.segs = append(im.segs, s)
		}
	}
	if err := im.checkLayout(); err != nil {
		return nil, err
	}
	if relro != nil && relro.Memsz > 0 {
		if err := im.checkRelro(relro); err != nil {
			return nil, err
		}
	}
	if dyn == nil {
		return nil, invalid("it has no dynamic segment (PT_DYNAMIC): not a shared object")
	}
	rela, err := im.checkDynamic(obj, dyn, f)
	if err != nil {
		return nil, err
	}
	if err := im.checkRelocs(rela, t); err != nil {
		return nil, err
	}
	if err := im.checkSymbols(f); err != nil {
		return nil, err
	}
	return im, nil
}

// checkHeader checks the ELF identification, type and machine before
// debug/elf reads anything else.
func checkHeader(obj []byte, t target) error {
	if len(obj) < 64 || string(obj[:4]) != elf.ELFMAG {
		return invalid("not an ELF object")
	}
	if c := elf.Class(obj[elf.EI_CLASS]); c != elf.ELFCLASS64 {
		return invalid("not a 64-bit ELF object (%v)", c)
	}
	if d := elf.Data(obj[elf.EI_DATA]); d != elf.ELFDATA2LSB {
		return invalid("not a little-endian ELF object (%v)", d)
	}
	if v := elf.Version(obj[elf.EI_VERSION]); v != elf.EV_CURRENT {
		return invalid("unknown ELF version %d", v)
	}
	if typ := elf.Type(binary.LittleEndian.Uint16(obj[16:])); typ != elf.ET_DYN {
		return invalid("its type is %v, want ET_DYN (a shared object)", typ)
	}
	if m := elf.Machine(binary.LittleEndian.Uint16(obj[18:])); m != t.machine {
		return invalid("it is code for %v, and %s runs %v", m, t.goarch, t.machine)
	}
	// The header tables must lie in the object (debug/elf would find
	// out too, after reading up to 10 MiB of what they claim).
	le := binary.LittleEndian
	size := uint64(len(obj))
	phoff, phent, phnum := le.Uint64(obj[32:]), uint64(le.Uint16(obj[54:])), uint64(le.Uint16(obj[56:]))
	if phoff > size || phent*phnum > size-phoff {
		return invalid("its program headers (%d of %d bytes at %#x) are outside the %d-byte object", phnum, phent, phoff, size)
	}
	// shnum 0 may mean extended numbering; debug/elf checks that case.
	shoff, shent, shnum := le.Uint64(obj[40:]), uint64(le.Uint16(obj[58:])), uint64(le.Uint16(obj[60:]))
	if shnum > 0 && (shoff > size || shent*shnum > size-shoff) {
		return invalid("its section headers (%d of %d bytes at %#x) are outside the %d-byte object", shnum, shent, shoff, size)
	}
	return nil
}

// checkLoad checks one PT_LOAD segment on its own.
func checkLoad(i int, p *elf.Prog, size int, t target) (segment, error) {
	s := segment{
		index: i, vaddr: p.Vaddr, memsz: p.Memsz, off: p.Off, filesz: p.Filesz,
		align: p.Align,
		read:  p.Flags&elf.PF_R != 0, write: p.Flags&elf.PF_W != 0, exec: p.Flags&elf.PF_X != 0,
	}
	if s.write && s.exec {
		return s, invalid("segment %d (PT_LOAD) is both writable and executable", i)
	}
	if s.off > uint64(size) || s.filesz > uint64(size)-s.off {
		return s, invalid("segment %d's file range (offset %#x, %#x bytes) is outside the %d-byte object", i, s.off, s.filesz, size)
	}
	if s.filesz > s.memsz {
		return s, invalid("segment %d has p_filesz %#x > p_memsz %#x", i, s.filesz, s.memsz)
	}
	if s.align > 1 && s.align&(s.align-1) != 0 {
		return s, invalid("segment %d's p_align %#x is not a power of two", i, s.align)
	}
	if s.align > maxAlign {
		return s, invalid("segment %d's p_align %#x is over %d KiB", i, s.align, maxAlign>>10)
	}
	// Room for rounding up to a page, so no sum below overflows.
	if s.vaddr > ^uint64(0)-t.maxPage || s.memsz > ^uint64(0)-t.maxPage-s.vaddr {
		return s, invalid("segment %d's memory range (%#x, %#x bytes) overflows", i, s.vaddr, s.memsz)
	}
	s.end = s.vaddr + s.memsz
	s.pageLo, s.pageE = down(s.vaddr, t.maxPage), up(s.end, t.maxPage)
	return s, nil
}

// checkLayout checks the segments together: no overlap, no page shared
// by segments with different permissions, a bounded span.
func (im *image) checkLayout() error {
	if len(im.segs) == 0 {
		return invalid("it has no PT_LOAD segment")
	}
	im.lo, im.hi = ^uint64(0), 0
	for i, a := range im.segs {
		if a.memsz == 0 {
			continue
		}
		im.lo, im.hi = min(im.lo, a.vaddr), max(im.hi, a.end)
		im.align = max(im.align, a.align)
		for _, b := range im.segs[:i] {
			if b.memsz == 0 {
				continue
			}
			if a.vaddr < b.end && b.vaddr < a.end {
				return invalid("segments %d and %d overlap", b.index, a.index)
			}
			if a.pageLo < b.pageE && b.pageLo < a.pageE && a.perms() != b.perms() {
				return invalid("segments %d (%s) and %d (%s) share a %d KiB page", b.index, b.perms(), a.index, a.perms(), im.maxPage>>10)
			}
		}
	}
	if im.hi == 0 {
		return invalid("its PT_LOAD segments are empty")
	}
	if span := up(im.hi, im.maxPage) - down(im.lo, im.maxPage); span > maxSpan {
		return invalid("it maps %d MiB, more than %d MiB", span>>20, maxSpan>>20)
	}
	return nil
}

// checkRelro checks the PT_GNU_RELRO range (data made read-only once
// relocated): it lies in one writable segment, and the pages it
// protects, at any page size a kernel may use, hold no other segment.
func (im *image) checkRelro(p *elf.Prog) error {
	start := p.Vaddr
	var in *segment
	for i := range im.segs {
		if s := &im.segs[i]; s.memsz > 0 && s.vaddr <= start && start < s.end {
			in = s
		}
	}
	if in == nil || !in.write {
		return invalid("its PT_GNU_RELRO range at %#x is not in a writable segment", start)
	}
	// Linkers pad RELRO to the end of its segment's last (smallest)
	// page.
	if p.Memsz > up(in.end, minPage)-start {
		return invalid("its PT_GNU_RELRO range (%#x, %#x bytes) runs past its segment", start, p.Memsz)
	}
	end := start + p.Memsz
	for page := uint64(minPage); page <= im.maxPage; page *= 2 {
		lo, hi := down(start, page), down(end, page)
		for _, s := range im.segs {
			if s.index != in.index && s.memsz > 0 && lo < up(s.end, page) && down(s.vaddr, page) < hi {
				return invalid("its PT_GNU_RELRO range shares a %d KiB page with segment %d", page>>10, s.index)
			}
		}
	}
	im.relroStart, im.relroEnd = start, end
	return nil
}

// fileRange returns the file offset of the size bytes at vaddr, which
// must lie in one PT_LOAD segment's file-backed part.
func (im *image) fileRange(vaddr, size uint64) (uint64, bool) {
	for _, s := range im.segs {
		if vaddr >= s.vaddr && vaddr-s.vaddr <= s.filesz && size <= s.filesz-(vaddr-s.vaddr) {
			return s.off + (vaddr - s.vaddr), true
		}
	}
	return 0, false
}

// checkDynamic reads the dynamic section from its segment and refuses
// every tag that asks for what a loader of ours does not do: load other
// objects, run code at load, write to code, PLT or packed relocations.
// It returns the RELA table's bytes.
func (im *image) checkDynamic(obj []byte, dyn *elf.Prog, f *elf.File) ([]byte, error) {
	if dyn.Off > uint64(len(obj)) || dyn.Filesz > uint64(len(obj))-dyn.Off {
		return nil, invalid("its dynamic segment is outside the object")
	}
	d := obj[dyn.Off : dyn.Off+dyn.Filesz]
	seen := map[elf.DynTag]uint64{}
	for ; len(d) >= 16; d = d[16:] {
		tag := elf.DynTag(binary.LittleEndian.Uint64(d))
		val := binary.LittleEndian.Uint64(d[8:])
		if tag == elf.DT_NULL {
			break
		}
		switch tag {
		case elf.DT_NEEDED:
			return nil, invalid("it needs another shared object%s (DT_NEEDED)", neededName(f))
		case elf.DT_INIT, elf.DT_FINI, elf.DT_INIT_ARRAY, elf.DT_FINI_ARRAY, elf.DT_PREINIT_ARRAY:
			name := tag.String()
			if tag == elf.DT_PREINIT_ARRAY {
				name = "DT_PREINIT_ARRAY" // debug/elf names 32 DT_ENCODING
			}
			return nil, invalid("it has code to run when loaded or unloaded (%s)", name)
		case elf.DT_TEXTREL:
			return nil, invalid("it relocates its code (DT_TEXTREL)")
		case elf.DT_FLAGS:
			if elf.DynFlag(val)&elf.DF_TEXTREL != 0 {
				return nil, invalid("it relocates its code (DF_TEXTREL)")
			}
			if elf.DynFlag(val)&elf.DF_STATIC_TLS != 0 {
				return nil, invalid("it has thread-local storage (DF_STATIC_TLS)")
			}
		case elf.DT_JMPREL, elf.DT_PLTREL, elf.DT_PLTRELSZ:
			return nil, invalid("it has PLT relocations (%v): it calls functions of other objects", tag)
		case elf.DT_REL, elf.DT_RELSZ, elf.DT_RELENT:
			return nil, invalid("it has REL relocations (%v); only RELA ones load", tag)
		case dtRELR, dtRELRSZ, dtRELRENT:
			return nil, invalid("it has packed relative relocations (DT_RELR); link without -z pack-relative-relocs")
		case dtAndroidREL, dtAndroidRELSZ, dtAndroidRELA, dtAndroidRELASZ, dtAndroidRELR, dtAndroidRELRSZ, dtAndroidRELRENT:
			return nil, invalid("it has Android packed relocations (dynamic tag %#x)", uint64(tag))
		case elf.DT_AUXILIARY, elf.DT_FILTER:
			return nil, invalid("it filters another shared object (%v)", tag)
		case elf.DT_RELA, elf.DT_RELASZ, elf.DT_RELAENT:
			if _, ok := seen[tag]; ok {
				return nil, invalid("its dynamic section repeats %v", tag)
			}
			seen[tag] = val
		}
	}
	addr, hasTable := seen[elf.DT_RELA]
	size, hasSize := seen[elf.DT_RELASZ]
	if !hasTable && !hasSize {
		return nil, nil
	}
	if !hasTable || !hasSize {
		return nil, invalid("its dynamic section has only one of DT_RELA and DT_RELASZ")
	}
	if ent, ok := seen[elf.DT_RELAENT]; ok && ent != relaEnt {
		return nil, invalid("its DT_RELAENT is %d, want %d", ent, relaEnt)
	}
	if size%relaEnt != 0 {
		return nil, invalid("its DT_RELASZ %d is not a multiple of %d", size, relaEnt)
	}
	off, ok := im.fileRange(addr, size)
	if !ok {
		return nil, invalid("its relocation table (%#x, %d bytes) is outside the segments' file contents", addr, size)
	}
	return obj[off : off+size], nil
}

// neededName is " (NAME)" for the first DT_NEEDED debug/elf finds, or
// "" where it finds none.
func neededName(f *elf.File) string {
	libs, err := f.ImportedLibraries()
	if err != nil || len(libs) == 0 {
		return ""
	}
	return fmt.Sprintf(" %q", libs[0])
}

// checkRelocs checks each relocation: R_*_RELATIVE with no symbol,
// writing 8 bytes inside a writable segment, pointing inside the object.
func (im *image) checkRelocs(rela []byte, t target) error {
	for i := 0; len(rela) >= relaEnt; i, rela = i+1, rela[relaEnt:] {
		off := binary.LittleEndian.Uint64(rela)
		info := binary.LittleEndian.Uint64(rela[8:])
		addend := binary.LittleEndian.Uint64(rela[16:])
		if typ := uint32(info); typ != t.relative {
			return invalid("relocation %d has type %s; only %s loads", i, t.relName(typ), t.relName(t.relative))
		}
		if sym := info >> 32; sym != 0 {
			return invalid("relative relocation %d names symbol %d", i, sym)
		}
		writable := false
		for _, s := range im.segs {
			if s.write && s.memsz >= 8 && off >= s.vaddr && off-s.vaddr <= s.memsz-8 {
				writable = true
				break
			}
		}
		if !writable {
			return invalid("relocation %d writes at %#x, outside writable memory", i, off)
		}
		if addend < im.lo || addend > im.hi {
			return invalid("relocation %d points at %#x, outside the object's memory %#x to %#x", i, addend, im.lo, im.hi)
		}
		im.relocs = append(im.relocs, reloc{off, addend})
	}
	return nil
}

// checkSymbols collects the exported functions from the dynamic symbol
// table. A symbol the object imports, or a function outside the
// executable segments, refuses the object.
func (im *image) checkSymbols(f *elf.File) error {
	syms, err := f.DynamicSymbols()
	if errors.Is(err, elf.ErrNoSymbols) {
		return invalid("it has no dynamic symbol table")
	}
	if err != nil {
		return invalid("its dynamic symbols: %v", err)
	}
	im.funcs = map[string]uint64{}
	for _, s := range syms {
		bind, typ := elf.ST_BIND(s.Info), elf.ST_TYPE(s.Info)
		if s.Name == "" || (bind != elf.STB_GLOBAL && bind != elf.STB_WEAK) {
			continue
		}
		switch {
		case s.Section == elf.SHN_UNDEF:
			return invalid("it imports %q", s.Name)
		case typ == elf.STT_TLS:
			return invalid("it has thread-local storage (%q)", s.Name)
		case typ == elf.STT_GNU_IFUNC:
			return invalid("%q is an IFUNC, chosen by running code at load", s.Name)
		case typ != elf.STT_FUNC:
			continue
		case s.Section == elf.SHN_ABS:
			return invalid("function %q has an absolute address", s.Name)
		}
		if v := elf.ST_VISIBILITY(s.Other); v != elf.STV_DEFAULT && v != elf.STV_PROTECTED {
			continue
		}
		inCode := false
		for _, seg := range im.segs {
			if seg.exec && s.Value >= seg.vaddr && s.Value < seg.end && s.Size <= seg.end-s.Value {
				inCode = true
				break
			}
		}
		if !inCode {
			return invalid("function %q (%#x, %d bytes) is outside the executable segments", s.Name, s.Value, s.Size)
		}
		if _, dup := im.funcs[s.Name]; !dup {
			im.funcs[s.Name] = s.Value
		}
	}
	return nil
}

// Module is native code mapped into this process by [Load].
type Module struct {
	// mem is the mapping; nil once closed.
	mem   []byte
	funcs map[string]uintptr
}

// Func returns the address of the exported function name, to pass to
// [Call].
func (m *Module) Func(name string) (uintptr, error) {
	if m.mem == nil {
		return 0, errors.New("native: Func on a closed module")
	}
	if p, ok := m.funcs[name]; ok {
		return p, nil
	}
	return 0, fmt.Errorf("native code has no function %q%s", name, m.nearby())
}

// nearby lists up to 8 functions the module has, for Func's error.
func (m *Module) nearby() string {
	if len(m.funcs) == 0 {
		return " (it exports no function)"
	}
	var names []string
	for n := range m.funcs {
		names = append(names, n)
	}
	slices.Sort(names)
	if len(names) > 8 {
		names = append(names[:8], "...")
	}
	return " (it has " + strings.Join(names, ", ") + ")"
}
