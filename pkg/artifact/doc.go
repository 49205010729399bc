// Package artifact reads and writes the .rlx container: the one file that the
// compiler (rlxc) produces and the runtime (rlxrun) maps and runs. It knows
// nothing of programs or kernels; it stores named byte sections, checks that
// they are intact, and hands them back, so the compiler and the runtime can
// both depend on it without depending on each other. It imports no other rlx
// package.
//
// # Layout
//
// All integers are little-endian.
//
//	offset  size  field
//	     0     8  magic "RLXART\x00\n"
//	     8     4  format version (FormatVersion)
//	    12     4  compatibility version (CompatVersion)
//	    16     8  section table offset
//	    24     8  section table length
//	    32    32  sha256 of the section table
//	    64    32  reserved, zero when written, ignored when read
//	    96    32  sha256 of bytes 0..96 of the header
//	   128        section table, then the sections, each at an offset aligned
//	              to its alignment; the gaps are zero bytes
//
// The magic, the two versions and their offsets never change. The format
// version says which writer produced the file; the compatibility version is
// bumped only when an older reader could no longer read the file correctly, and
// a reader refuses a compatibility version newer than its own. Additions that
// old readers may ignore (new section table fields, new sections, the
// reserved header bytes) keep the compatibility version.
//
// The section table is a msgpack map {"sections": [entry...]}; each entry is a
// map with the fields name, codec, offset, stored, raw, sha256 and align (see
// tableEntry). Readers ignore fields they do not know. Sections appear in the
// table in file order.
//
// # Integrity
//
// Open and OpenBytes check the header digest, the table digest, every
// section's sha256 over its stored bytes, and that every padding byte is zero,
// before returning. Any failure is an *Error naming the part that is bad, and
// no input makes them panic or allocate much more than the input's size.
//
// # Reproducibility
//
// Encode is a function of its input: no timestamps, sections in the caller's
// order, zstd with fixed settings on one goroutine, and manifests through
// MarshalManifest, which sorts map keys.
package artifact
