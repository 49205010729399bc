package artifact

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// partAt says which part of the file b each byte belongs to, as an Error
// names it, using the layout recorded in b (which must be valid).
func partAt(t *testing.T, b []byte) []string {
	t.Helper()
	f, err := OpenBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	parts := make([]string, len(b))
	tableOff := binary.LittleEndian.Uint64(b[offTableOff:])
	tableLen := binary.LittleEndian.Uint64(b[offTableLen:])
	for i := range parts {
		switch {
		case i < HeaderSize:
			parts[i] = "header"
		case uint64(i) < tableOff:
			parts[i] = "padding before the section table"
		case uint64(i) < tableOff+tableLen:
			parts[i] = "section table"
		}
	}
	prevEnd := int64(tableOff + tableLen)
	for _, s := range f.Sections() {
		for i := prevEnd; i < s.Offset; i++ {
			parts[i] = fmt.Sprintf("padding before section %q", s.Name)
		}
		for i := s.Offset; i < s.Offset+s.Stored; i++ {
			parts[i] = fmt.Sprintf("section %q", s.Name)
		}
		prevEnd = s.Offset + s.Stored
	}
	for i, p := range parts {
		if p == "" {
			t.Fatalf("byte %d belongs to no part", i)
		}
	}
	return parts
}

// Flipping any single byte of a valid file, in any part, is caught, and the
// error names the part.
func TestEveryByteFlipIsCaught(t *testing.T) {
	b := encode(t, testSections(t))
	parts := partAt(t, b)
	seen := map[string]bool{}
	for _, mask := range []byte{0x01, 0x80, 0xff} {
		for i := range b {
			c := bytes.Clone(b)
			c[i] ^= mask
			_, err := OpenBytes(c)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("flip %#x at byte %d (%s): got %v, want an *Error", mask, i, parts[i], err)
			}
			want := parts[i]
			switch {
			case i < len(Magic):
				if !errors.Is(err, ErrNotArtifact) {
					t.Fatalf("flip in the magic: got %v", err)
				}
			case e.Part != want:
				t.Fatalf("flip %#x at byte %d (%s): error names %q: %v", mask, i, want, e.Part, err)
			case !strings.Contains(err.Error(), want):
				t.Fatalf("flip %#x at byte %d: message does not name %s: %v", mask, i, want, err)
			}
			seen[want] = true
		}
	}
	// The test file has each kind of part.
	for _, p := range []string{"header", "section table", `section "program/0"`, `section "weights/1"`, `padding before section "weights/0"`} {
		if !seen[p] {
			t.Errorf("no byte of %s was flipped", p)
		}
	}
}

// The messages a person sees, on a file on disk.
func TestCorruptMessages(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "model.rlx")
	if err := WriteFile(path, testSections(t)); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	f, _ := OpenBytes(b)
	var prog SectionInfo
	for _, s := range f.Sections() {
		if s.Name == "program/0" {
			prog = s
		}
	}
	write := func(c []byte) string {
		p := filepath.Join(dir, "model.rlx")
		os.WriteFile(p, c, 0o644)
		_, err := Open(p)
		if err == nil {
			t.Fatal("opened a damaged file")
		}
		return strings.Replace(err.Error(), dir+string(filepath.Separator), "", 1)
	}
	c := bytes.Clone(b)
	c[prog.Offset+3] ^= 1
	if got, want := write(c), `model.rlx: section "program/0" is corrupt (sha256 mismatch): the file was modified or truncated; rebuild it`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got, want := write(b[:len(b)-1]), `model.rlx: truncated: section "kernels" runs past the end of the file`; !strings.HasPrefix(got, want) {
		t.Errorf("got  %s\nwant %s...", got, want)
	}
	if got, want := write([]byte("PK\x03\x04 a zip file")), `model.rlx: not an rlx artifact`; !strings.HasPrefix(got, want) {
		t.Errorf("got  %s\nwant %s...", got, want)
	}
	if got := write(append(bytes.Clone(b), 0)); !strings.Contains(got, "unexpected bytes after the last section") {
		t.Errorf("appended byte: %s", got)
	}
}

// A file cut at any length fails cleanly, saying it is truncated and what
// runs past the end.
func TestTruncation(t *testing.T) {
	b := encode(t, testSections(t))
	parts := partAt(t, b)
	for n := range len(b) {
		_, err := OpenBytes(b[:n])
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("cut at %d: got %v", n, err)
		}
		if n == 0 {
			if !errors.Is(err, ErrNotArtifact) {
				t.Fatalf("empty: got %v", err)
			}
			continue
		}
		if !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), "truncated") {
			t.Fatalf("cut at %d: got %v", n, err)
		}
		// The part that runs past the end is the one byte n belongs to, or
		// for a cut in padding the section that padding precedes.
		want := parts[n]
		switch {
		case want == "header" || strings.HasSuffix(want, "section table"):
			want = "the " + strings.TrimPrefix(want, "padding before the ")
			if want == "the header" && n >= HeaderSize {
				want = "the section table"
			}
		case strings.HasPrefix(want, "padding before "):
			want = strings.TrimPrefix(want, "padding before ")
		}
		if e.Part != want {
			t.Fatalf("cut at %d (in %s): error names %q: %v", n, parts[n], e.Part, err)
		}
	}
}

// craft builds a file around a hand-made section table, signed so that only
// the checks on its structure can reject it: it stands for a file made by
// someone who knows the format, which digests cannot catch.
func craft(top map[string]any, stored ...[]byte) []byte {
	tb, err := MarshalManifest(top)
	if err != nil {
		panic(err)
	}
	h := header{format: FormatVersion, compat: CompatVersion, tableOff: HeaderSize,
		tableLen: uint64(len(tb)), tableSum: sha256.Sum256(tb)}
	out := append(h.encode(), tb...)
	for _, s := range stored {
		out = append(out, s...)
	}
	return out
}

// entry is a table entry for craft, at offset with the digest of stored.
func entry(name string, codec Codec, offset int, stored []byte, raw int) map[string]any {
	sum := sha256.Sum256(stored)
	return map[string]any{"name": name, "codec": string(codec), "offset": offset,
		"stored": len(stored), "raw": raw, "sha256": sum[:], "align": 1}
}

// tableSize returns the size of the table in a crafted file, to place
// sections after it.
func tableSize(top map[string]any) int {
	b, _ := MarshalManifest(top)
	return len(b)
}

func TestCraftedTables(t *testing.T) {
	good, _ := compress(bytes.Repeat([]byte("abc"), 1000))
	// place makes the entries' offsets, relative to the end of the table,
	// absolute; the table's size depends on them, so it repeats until stable.
	place := func(entries ...map[string]any) map[string]any {
		top := map[string]any{"sections": entries, "future": "ignored"}
		rel := make([]int, len(entries))
		for i, e := range entries {
			rel[i] = e["offset"].(int)
		}
		for n := 0; ; {
			for i, e := range entries {
				e["offset"] = rel[i] + HeaderSize + n
			}
			if m := tableSize(top); m != n {
				n = m
				continue
			}
			return top
		}
	}
	// A well-formed crafted file with unknown fields opens.
	e := entry("p", CodecZstd, 0, good, 3000)
	e["new_field"] = []int{1, 2}
	if f, err := OpenBytes(craft(place(e), good)); err != nil {
		t.Fatalf("unknown fields: %v", err)
	} else if got, err := f.Section("p"); err != nil || len(got) != 3000 {
		t.Fatalf("section: %d bytes, %v", len(got), err)
	}

	for _, tc := range []struct {
		name string
		file func() []byte
		want string // in the error of Open, or of Section if Open succeeds
	}{
		{"raw size lies", func() []byte {
			return craft(place(entry("p", CodecZstd, 0, good, 3001)), good)
		}, `section "p" is corrupt (decoded to 3000 bytes, the table says 3001)`},
		{"raw size too small", func() []byte {
			return craft(place(entry("p", CodecZstd, 0, good, 2999)), good)
		}, `section "p" is corrupt (zstd:`},
		{"absurd raw size", func() []byte {
			return craft(place(entry("p", CodecZstd, 0, good, 1<<40)), good)
		}, `section "p" is malformed (zstd section of 25 bytes claims 1099511627776 decoded)`},
		{"not zstd", func() []byte {
			junk := []byte("definitely not a zstd frame")
			return craft(place(entry("p", CodecZstd, 0, junk, 100)), junk)
		}, `section "p" is corrupt (zstd:`},
		{"raw size mismatch", func() []byte {
			return craft(place(entry("p", CodecRaw, 0, []byte("abc"), 4)), []byte("abc"))
		}, `raw section of 3 bytes claims 4 decoded`},
		{"unknown codec", func() []byte {
			return craft(place(entry("p", "brotli", 0, []byte("abc"), 3)), []byte("abc"))
		}, `unknown codec "brotli"`},
		{"overlap", func() []byte {
			return craft(place(entry("a", CodecRaw, 0, []byte("abcd"), 4), entry("b", CodecRaw, 2, []byte("cd"), 2)), []byte("abcd"))
		}, `section "b" is malformed (starts at byte`},
		{"duplicate", func() []byte {
			return craft(place(entry("a", CodecRaw, 0, []byte("ab"), 2), entry("a", CodecRaw, 2, []byte("ab"), 2)), []byte("abab"))
		}, `two sections named "a"`},
		{"no name", func() []byte {
			return craft(place(entry("", CodecRaw, 0, []byte("ab"), 2)), []byte("ab"))
		}, `section 0 has no name`},
		{"bad align", func() []byte {
			e := entry("a", CodecRaw, 0, []byte("ab"), 2)
			e["align"] = 3
			return craft(place(e), []byte("ab"))
		}, `section "a" is malformed (offset`},
		{"huge align", func() []byte {
			e := entry("a", CodecRaw, 0, []byte("ab"), 2)
			e["align"] = 1 << 40
			return craft(place(e), []byte("ab"))
		}, `section "a" is malformed (offset`},
		{"offset past end", func() []byte {
			e := entry("a", CodecRaw, 0, []byte("ab"), 2)
			e["offset"] = 1 << 62
			return craft(map[string]any{"sections": []any{e}}, []byte("ab"))
		}, `truncated: section "a" runs past the end`},
		{"short digest", func() []byte {
			e := entry("a", CodecRaw, 0, []byte("ab"), 2)
			e["sha256"] = []byte{1, 2}
			return craft(place(e), []byte("ab"))
		}, `digest of 2 bytes`},
		{"table not a map", func() []byte {
			tb := []byte{0x93, 1, 2, 3}
			h := header{format: 1, compat: 1, tableOff: HeaderSize, tableLen: uint64(len(tb)), tableSum: sha256.Sum256(tb)}
			return append(h.encode(), tb...)
		}, `section table is malformed`},
		{"table inside header", func() []byte {
			h := header{format: 1, compat: 1, tableOff: 8, tableLen: 4}
			return h.encode()
		}, `section table at byte 8, inside the header`},
	} {
		f, err := OpenBytes(tc.file())
		if err == nil {
			_, err = f.Section(f.Sections()[0].Name)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v\nwant %s", tc.name, err, tc.want)
		}
	}
}
