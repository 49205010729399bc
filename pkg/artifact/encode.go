package artifact

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"io"
	"os"

	"github.com/rlx-project/rlx/internal/atomicfile"
)

// Codec says how a section's bytes are stored.
type Codec string

const (
	// CodecRaw stores the bytes as they are, so a mapped file can hand them
	// out without a copy.
	CodecRaw Codec = "raw"
	// CodecZstd stores the bytes zstd-compressed.
	CodecZstd Codec = "zstd"
)

// Section is one named section to write.
type Section struct {
	Name  string
	Codec Codec // CodecRaw (also when empty) or CodecZstd
	// Align is the alignment of the section's offset in the file, a power of
	// two up to MaxAlign; 0 means DefaultAlign. Use WeightsAlign for data the
	// loader maps in place.
	Align int
	Data  []byte
}

// plan is a laid-out file: the header, the table and its encoding, and each
// section's stored bytes (at the offset its table entry gives).
type plan struct {
	header  []byte
	t       *table
	encoded []byte
	stored  [][]byte
}

// layout compresses and places the sections. The table records offsets and
// sits before the sections, so its length moves the offsets; layout repeats
// until the length is stable. Lengths only grow with offsets and offsets only
// grow with the length, so this ends after a step or two.
func layout(sections []Section) (*plan, error) {
	t := &table{Sections: make([]tableEntry, len(sections))}
	p := &plan{stored: make([][]byte, len(sections)), t: t}
	seen := make(map[string]bool, len(sections))
	for i, s := range sections {
		if s.Name == "" {
			return nil, fmt.Errorf("artifact: section %d has no name", i)
		}
		if seen[s.Name] {
			return nil, fmt.Errorf("artifact: two sections named %q", s.Name)
		}
		seen[s.Name] = true
		align := uint64(DefaultAlign)
		if s.Align != 0 {
			if s.Align < 0 || !isPow2(uint64(s.Align)) || s.Align > MaxAlign {
				return nil, fmt.Errorf("artifact: section %q: alignment %d is not a power of two up to %d", s.Name, s.Align, MaxAlign)
			}
			align = uint64(s.Align)
		}
		codec, stored := s.Codec, s.Data
		switch codec {
		case "", CodecRaw:
			codec = CodecRaw
		case CodecZstd:
			if len(s.Data) > 0 {
				z, err := compress(s.Data)
				if err != nil {
					return nil, fmt.Errorf("artifact: section %q: %w", s.Name, err)
				}
				stored = z
				// Readers refuse ratios beyond MaxZstdRatio; such data is
				// almost all one byte, and stored raw it stays readable.
				if uint64(len(s.Data)) > maxRawSize(uint64(len(z))) {
					codec, stored = CodecRaw, s.Data
				}
			}
		default:
			return nil, fmt.Errorf("artifact: section %q: unknown codec %q (want %q or %q)", s.Name, s.Codec, CodecRaw, CodecZstd)
		}
		sum := sha256.Sum256(stored)
		p.stored[i] = stored
		t.Sections[i] = tableEntry{
			Name: s.Name, Codec: codec, Stored: uint64(len(stored)),
			Raw: uint64(len(s.Data)), SHA256: sum[:], Align: align,
		}
	}
	var tableLen uint64
	for range 16 {
		pos := uint64(HeaderSize) + tableLen
		for i := range t.Sections {
			e := &t.Sections[i]
			e.Offset = alignUp(pos, e.Align)
			pos = e.Offset + e.Stored
		}
		b, err := encodeTable(t)
		if err != nil {
			return nil, fmt.Errorf("artifact: section table: %w", err)
		}
		if uint64(len(b)) == tableLen {
			h := header{format: FormatVersion, compat: CompatVersion,
				tableOff: HeaderSize, tableLen: tableLen, tableSum: sha256.Sum256(b)}
			p.header, p.encoded = h.encode(), b
			return p, nil
		}
		tableLen = uint64(len(b))
	}
	return nil, fmt.Errorf("artifact: section table layout did not settle")
}

// Encode writes an artifact holding sections, in the given order. The same
// sections always give the same bytes.
func Encode(w io.Writer, sections []Section) error {
	p, err := layout(sections)
	if err != nil {
		return err
	}
	if _, err := w.Write(p.header); err != nil {
		return err
	}
	if _, err := w.Write(p.encoded); err != nil {
		return err
	}
	pos := uint64(HeaderSize + len(p.encoded))
	var zeros [4096]byte
	for i, e := range p.t.Sections {
		for pad := e.Offset - pos; pad > 0; {
			n := min(pad, uint64(len(zeros)))
			if _, err := w.Write(zeros[:n]); err != nil {
				return err
			}
			pad -= n
		}
		if _, err := w.Write(p.stored[i]); err != nil {
			return err
		}
		pos = e.Offset + e.Stored
	}
	return nil
}

// WriteFile writes an artifact to path atomically: through a temporary file
// in the same directory, synced and then renamed, so path never holds a
// partial artifact, and a process that has the old file mapped keeps its
// (now unlinked) copy intact.
func WriteFile(path string, sections []Section) error {
	return atomicfile.Write(path, 0o644, func(f *os.File) error {
		bw := bufio.NewWriterSize(f, 1<<20)
		if err := Encode(bw, sections); err != nil {
			return err
		}
		return bw.Flush()
	})
}
