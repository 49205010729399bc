package artifact

import (
	"crypto/sha256"
	"encoding/binary"
)

// Magic starts every .rlx file. The NUL and newline catch text-mode transfers
// that rewrite line endings.
const Magic = "RLXART\x00\n"

const (
	// FormatVersion is the version of the layout this package writes.
	FormatVersion uint32 = 1
	// CompatVersion is the newest compatibility version this package reads,
	// and the one it writes.
	CompatVersion uint32 = 1
	// HeaderSize is the fixed size of the header.
	HeaderSize = 128
)

// Alignments of sections in the file.
const (
	// WeightsAlign is the alignment for raw sections the loader maps and uses
	// in place: a page, so that a mapped section starts on a page boundary.
	WeightsAlign = 4096
	// DefaultAlign is used when Section.Align is 0: a cache line, which suits
	// the SIMD loads of any raw tensor data.
	DefaultAlign = 64
	// MaxAlign bounds alignments (a 2 MiB huge page), so that a crafted table
	// cannot demand huge padding.
	MaxAlign = 1 << 21
)

// MaxZstdRatio bounds a zstd section's uncompressed size by its stored size.
// A reader does not trust a recorded size beyond it, so that a small crafted
// file cannot make it allocate gigabytes; a writer stores a section raw
// instead if it compresses better than that (which happens only for data
// that is nearly all one byte). zstdSlack lets tiny sections through.
const (
	MaxZstdRatio = 1024
	zstdSlack    = 64 << 10
)

// maxRawSize is the largest uncompressed size a zstd section of stored bytes
// may claim.
func maxRawSize(stored uint64) uint64 {
	if stored > (1<<63)/MaxZstdRatio {
		return 1 << 63
	}
	return stored*MaxZstdRatio + zstdSlack
}

// Header field offsets.
const (
	offMagic      = 0
	offFormat     = 8
	offCompat     = 12
	offTableOff   = 16
	offTableLen   = 24
	offTableSum   = 32
	offReserved   = 64
	offHeaderSum  = 96
	headerSumSpan = offHeaderSum
)

type header struct {
	format, compat     uint32
	tableOff, tableLen uint64
	tableSum           [32]byte
}

func (h *header) encode() []byte {
	b := make([]byte, HeaderSize)
	copy(b[offMagic:], Magic)
	binary.LittleEndian.PutUint32(b[offFormat:], h.format)
	binary.LittleEndian.PutUint32(b[offCompat:], h.compat)
	binary.LittleEndian.PutUint64(b[offTableOff:], h.tableOff)
	binary.LittleEndian.PutUint64(b[offTableLen:], h.tableLen)
	copy(b[offTableSum:], h.tableSum[:])
	sum := sha256.Sum256(b[:headerSumSpan])
	copy(b[offHeaderSum:], sum[:])
	return b
}

// tableEntry is one section in the section table. Field names are short
// because they are repeated per section; readers ignore unknown ones.
type tableEntry struct {
	Name   string `msgpack:"name"`
	Codec  Codec  `msgpack:"codec"`
	Offset uint64 `msgpack:"offset"`
	Stored uint64 `msgpack:"stored"` // bytes in the file
	Raw    uint64 `msgpack:"raw"`    // bytes after decoding
	SHA256 []byte `msgpack:"sha256"` // of the stored bytes
	Align  uint64 `msgpack:"align"`
}

type table struct {
	Sections []tableEntry `msgpack:"sections"`
}

func alignUp(n, align uint64) uint64 { return (n + align - 1) &^ (align - 1) }

func isPow2(n uint64) bool { return n != 0 && n&(n-1) == 0 }
