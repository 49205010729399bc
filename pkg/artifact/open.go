package artifact

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
)

// SectionInfo describes a section as recorded in the section table.
type SectionInfo struct {
	Name   string
	Codec  Codec
	Offset int64  // of the stored bytes in the file
	Stored int64  // bytes in the file
	Raw    int64  // bytes after decoding (equal to Stored for raw sections)
	Align  int    // alignment of Offset
	Digest string // hex sha256 of the stored bytes
}

// File is an open, verified artifact. Its methods may be called from several
// goroutines, but not concurrently with Close.
type File struct {
	name      string
	data      []byte
	release   func() error // unmaps data; nil for OpenBytes
	closeOnce sync.Once
	closeErr  error
	closed    bool
	format    uint32
	sections  []SectionInfo
	index     map[string]int
}

// OpenBytes checks b as an artifact, as Open does for a file. The File
// refers to b: raw sections are slices of it.
func OpenBytes(b []byte) (*File, error) {
	return openBytes("artifact", b, nil)
}

// openBytes verifies b and returns a File over it. If verification fails,
// release is not called: the caller still owns b.
func openBytes(name string, b []byte, release func() error) (f *File, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer catchFault(name, &err)
	return verify(name, b, release)
}

// catchFault turns a memory fault in the calling function into an error. A
// mapped file that another process truncates faults (SIGBUS) when the lost
// pages are read; reading through the mapping under this guard makes that an
// error rather than a crash. Use, with the setting restored on return:
//
//	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
//	defer catchFault(name, &err)
func catchFault(name string, err *error) {
	r := recover()
	if r == nil {
		return
	}
	if _, isFault := r.(interface{ Addr() uintptr }); !isFault {
		panic(r)
	}
	*err = &Error{File: name, Part: "file", Kind: ErrTruncated,
		Msg: "the file shrank while it was being read: something is writing to it in place; replace artifacts by renaming a new file over them"}
}

func verify(name string, b []byte, release func() error) (*File, error) {
	size := uint64(len(b))
	if size < uint64(len(Magic)) || string(b[:len(Magic)]) != Magic {
		switch {
		case size == 0:
			return nil, notArtifact(name, "the file is empty")
		case size < uint64(len(Magic)) && string(b) == Magic[:size]:
			return nil, truncated(name, "the header", HeaderSize, size)
		}
		return nil, notArtifact(name, fmt.Sprintf("it starts with %q, not %q", b[:min(size, uint64(len(Magic)))], Magic))
	}
	// The versions sit at fixed offsets in every format, and come before
	// everything else a newer format may have changed, the header digest
	// included.
	if size < offCompat+4 {
		return nil, truncated(name, "the header", HeaderSize, size)
	}
	format := binary.LittleEndian.Uint32(b[offFormat:])
	compat := binary.LittleEndian.Uint32(b[offCompat:])
	if compat > CompatVersion {
		return nil, &Error{File: name, Part: "header", Kind: ErrTooNew, Msg: fmt.Sprintf(
			"the header says it needs a reader of artifact compatibility version %d (format %d), "+
				"but this rlxrun reads only up to compatibility version %d: "+
				"it was built by a newer rlxc; upgrade rlxrun to a release that reads compatibility version %d",
			compat, format, CompatVersion, compat)}
	}
	if size < HeaderSize {
		return nil, truncated(name, "the header", HeaderSize, size)
	}
	if sum := sha256.Sum256(b[:headerSumSpan]); !bytes.Equal(sum[:], b[offHeaderSum:offHeaderSum+32]) {
		return nil, corrupt(name, "header", "sha256 mismatch")
	}
	if compat == 0 || format == 0 {
		return nil, malformed(name, "header", fmt.Sprintf("format %d, compatibility %d", format, compat))
	}
	tableOff := binary.LittleEndian.Uint64(b[offTableOff:])
	tableLen := binary.LittleEndian.Uint64(b[offTableLen:])
	if tableOff < HeaderSize {
		return nil, malformed(name, "header", fmt.Sprintf("section table at byte %d, inside the header", tableOff))
	}
	if tableOff > size || tableLen > size-tableOff {
		return nil, truncated(name, "the section table", satAdd(tableOff, tableLen), size)
	}
	if err := checkZero(name, b[HeaderSize:tableOff], HeaderSize, "padding before the section table"); err != nil {
		return nil, err
	}
	tb := b[tableOff : tableOff+tableLen]
	if sum := sha256.Sum256(tb); !bytes.Equal(sum[:], b[offTableSum:offTableSum+32]) {
		return nil, corrupt(name, "section table", "sha256 mismatch")
	}
	t, err := decodeTable(tb)
	if err != nil {
		return nil, malformed(name, "section table", err.Error())
	}
	f := &File{name: name, data: b, release: release, format: format,
		sections: make([]SectionInfo, 0, len(t.Sections)), index: make(map[string]int, len(t.Sections))}
	pos := tableOff + tableLen
	for _, e := range t.Sections {
		if err := f.addSection(e, &pos); err != nil {
			return nil, err
		}
	}
	if pos != size {
		return nil, malformed(name, "end of file", fmt.Sprintf("%d unexpected bytes after the last section", size-pos))
	}
	return f, nil
}

// addSection checks e against the file and the sections before it (pos is
// where the previous one ended) and records it.
func (f *File) addSection(e tableEntry, pos *uint64) error {
	name, size := f.name, uint64(len(f.data))
	if e.Name == "" {
		return malformed(name, "section table", fmt.Sprintf("section %d has no name", len(f.sections)))
	}
	part := sectionPart(e.Name)
	if _, dup := f.index[e.Name]; dup {
		return malformed(name, "section table", fmt.Sprintf("two sections named %q", e.Name))
	}
	if e.Offset > size || e.Stored > size-e.Offset {
		return truncated(name, part, satAdd(e.Offset, e.Stored), size)
	}
	if !isPow2(e.Align) || e.Align > MaxAlign || e.Offset%e.Align != 0 {
		return malformed(name, part, fmt.Sprintf("offset %d, alignment %d", e.Offset, e.Align))
	}
	if e.Offset < *pos {
		return malformed(name, part, fmt.Sprintf("starts at byte %d, before the end of what precedes it (%d)", e.Offset, *pos))
	}
	if len(e.SHA256) != sha256.Size {
		return malformed(name, part, fmt.Sprintf("digest of %d bytes", len(e.SHA256)))
	}
	switch e.Codec {
	case CodecRaw:
		if e.Raw != e.Stored {
			return malformed(name, part, fmt.Sprintf("raw section of %d bytes claims %d decoded", e.Stored, e.Raw))
		}
	case CodecZstd:
		if (e.Stored == 0) != (e.Raw == 0) || e.Raw > maxRawSize(e.Stored) {
			return malformed(name, part, fmt.Sprintf("zstd section of %d bytes claims %d decoded", e.Stored, e.Raw))
		}
	default:
		return malformed(name, part, fmt.Sprintf("unknown codec %q: it may need a newer rlxrun", e.Codec))
	}
	if e.Raw > uint64(maxInt) {
		return malformed(name, part, fmt.Sprintf("%d bytes do not fit in memory here", e.Raw))
	}
	if err := checkZero(name, f.data[*pos:e.Offset], *pos, "padding before "+part); err != nil {
		return err
	}
	stored := f.data[e.Offset : e.Offset+e.Stored]
	if sum := sha256.Sum256(stored); !bytes.Equal(sum[:], e.SHA256) {
		return corrupt(name, part, "sha256 mismatch")
	}
	f.index[e.Name] = len(f.sections)
	f.sections = append(f.sections, SectionInfo{
		Name: e.Name, Codec: e.Codec, Offset: int64(e.Offset), Stored: int64(e.Stored),
		Raw: int64(e.Raw), Align: int(e.Align), Digest: hex.EncodeToString(e.SHA256),
	})
	*pos = e.Offset + e.Stored
	return nil
}

const maxInt = int(^uint(0) >> 1)

func satAdd(a, b uint64) uint64 {
	if a+b < a {
		return ^uint64(0)
	}
	return a + b
}

// checkZero reports the first non-zero byte of pad, which starts at file
// offset at. Padding is checked because a flipped padding byte means the
// file was damaged even where no digest covers it.
func checkZero(name string, pad []byte, at uint64, part string) error {
	for i, c := range pad {
		if c != 0 {
			return corrupt(name, part, fmt.Sprintf("non-zero byte at offset %d", at+uint64(i)))
		}
	}
	return nil
}

// Name returns the path the File was opened from ("artifact" for OpenBytes).
func (f *File) Name() string { return f.name }

// FormatVersion returns the format version of the writer that made the file.
func (f *File) FormatVersion() uint32 { return f.format }

// Size returns the size of the file in bytes.
func (f *File) Size() int64 { return int64(len(f.data)) }

// Sections describes the sections in file order.
func (f *File) Sections() []SectionInfo {
	out := make([]SectionInfo, len(f.sections))
	copy(out, f.sections)
	return out
}

// Section returns the decoded bytes of the named section. For a raw section
// that is a slice of the file without a copy: read-only (writing to a mapped
// file faults), and valid only until Close. A zstd section is decompressed
// into a new buffer on each call; callers that need it twice keep it.
func (f *File) Section(name string) ([]byte, error) {
	if f.closed {
		return nil, &Error{File: f.name, Part: sectionPart(name), Kind: ErrClosed,
			Msg: fmt.Sprintf("read of section %q after Close", name)}
	}
	i, ok := f.index[name]
	if !ok {
		names := make([]string, len(f.sections))
		for i, s := range f.sections {
			names[i] = s.Name
		}
		return nil, &Error{File: f.name, Part: sectionPart(name), Kind: ErrNoSection,
			Msg: fmt.Sprintf("no section %q (it has: %s)", name, strings.Join(names, ", "))}
	}
	s := f.sections[i]
	end := s.Offset + s.Stored
	stored := f.data[s.Offset:end:end]
	if s.Codec == CodecRaw || s.Raw == 0 {
		return stored, nil
	}
	out, err := f.decompress(stored, int(s.Raw))
	if e := (*Error)(nil); errors.As(err, &e) {
		return nil, err
	}
	if err != nil {
		return nil, corrupt(f.name, sectionPart(name), "zstd: "+err.Error())
	}
	if int64(len(out)) != s.Raw {
		return nil, corrupt(f.name, sectionPart(name), fmt.Sprintf("decoded to %d bytes, the table says %d", len(out), s.Raw))
	}
	return out, nil
}

// decompress runs under the fault guard, since it reads the mapping.
func (f *File) decompress(stored []byte, raw int) (out []byte, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer catchFault(f.name, &err)
	return decompress(stored, raw)
}

// Close releases the file's mapping; slices returned by Section become
// invalid. Calling it again does nothing.
func (f *File) Close() error {
	f.closeOnce.Do(func() {
		f.closed = true
		if f.release != nil {
			f.closeErr = f.release()
		}
		f.data = nil
	})
	return f.closeErr
}
