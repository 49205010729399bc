package artifact

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

// testSections covers every kind of section: zstd and raw, empty ones of
// both, page-aligned weights with lengths that are and are not a multiple of
// the page, and data that zstd cannot shrink.
func testSections(t testing.TB) []Section {
	rng := rand.New(rand.NewPCG(1, 2))
	noise := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	manifest, err := MarshalManifest(map[string]any{
		"compiler": "rlxc test", "target": "cpu/avx2,fma",
		"inputs": []string{"x"}, "bindings": []map[string]int{{"batch": 1}, {"batch": 8}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return []Section{
		{Name: "manifest", Codec: CodecZstd, Data: manifest},
		{Name: "program/0", Codec: CodecZstd, Data: bytes.Repeat([]byte("load x; matmul w0; relu; store y\n"), 200)},
		{Name: "program/1", Codec: CodecZstd, Data: noise(3000)},
		{Name: "empty/raw", Codec: CodecRaw, Data: nil},
		{Name: "empty/zstd", Codec: CodecZstd, Data: []byte{}},
		{Name: "weights/0", Codec: CodecRaw, Align: WeightsAlign, Data: noise(2 * WeightsAlign)},
		{Name: "weights/1", Codec: CodecRaw, Align: WeightsAlign, Data: noise(1234)},
		{Name: "kernels", Codec: "", Data: noise(77)},
	}
}

func encode(t testing.TB, sections []Section) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Encode(&buf, sections); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func checkRoundTrip(t *testing.T, f *File, sections []Section) {
	t.Helper()
	infos := f.Sections()
	if len(infos) != len(sections) {
		t.Fatalf("%d sections, want %d", len(infos), len(sections))
	}
	for i, s := range sections {
		if infos[i].Name != s.Name {
			t.Errorf("section %d is %q, want %q", i, infos[i].Name, s.Name)
		}
		got, err := f.Section(s.Name)
		if err != nil {
			t.Fatalf("section %q: %v", s.Name, err)
		}
		if !bytes.Equal(got, s.Data) {
			t.Errorf("section %q: got %d bytes, want %d, or different bytes", s.Name, len(got), len(s.Data))
		}
		if infos[i].Raw != int64(len(s.Data)) {
			t.Errorf("section %q: Raw %d, want %d", s.Name, infos[i].Raw, len(s.Data))
		}
	}
}

func TestRoundTrip(t *testing.T) {
	sections := testSections(t)
	b := encode(t, sections)
	f, err := OpenBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	checkRoundTrip(t, f, sections)
	if f.FormatVersion() != FormatVersion || f.Size() != int64(len(b)) {
		t.Errorf("format %d size %d", f.FormatVersion(), f.Size())
	}
	for _, s := range f.Sections() {
		want := CodecZstd
		if s.Name == "kernels" || strings.HasPrefix(s.Name, "weights") || s.Name == "empty/raw" {
			want = CodecRaw
		}
		if s.Codec != want {
			t.Errorf("section %q: codec %q, want %q", s.Name, s.Codec, want)
		}
	}
	if info := f.Sections()[1]; info.Stored >= info.Raw/10 {
		t.Errorf("program/0 did not compress: %d -> %d", info.Raw, info.Stored)
	}
}

func TestNoSections(t *testing.T) {
	b := encode(t, nil)
	f, err := OpenBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Sections()) != 0 {
		t.Fatal("sections in an empty artifact")
	}
	if _, err := f.Section("x"); !errors.Is(err, ErrNoSection) {
		t.Fatalf("got %v, want ErrNoSection", err)
	}
}

func TestWriteFileOpen(t *testing.T) {
	sections := testSections(t)
	path := filepath.Join(t.TempDir(), "model.rlx")
	if err := WriteFile(path, sections); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	checkRoundTrip(t, f, sections)
	for _, s := range f.Sections() {
		if s.Offset%int64(s.Align) != 0 {
			t.Errorf("section %q at %d, not aligned to %d", s.Name, s.Offset, s.Align)
		}
		if !strings.HasPrefix(s.Name, "weights/") {
			continue
		}
		if s.Align != WeightsAlign {
			t.Errorf("section %q: align %d", s.Name, s.Align)
		}
		// Mapped (or, elsewhere, loaded into an aligned buffer), the weights
		// start on a page in memory too, and are the file's own bytes.
		b, _ := f.Section(s.Name)
		if p := uintptr(unsafe.Pointer(&b[0])); p%WeightsAlign != 0 {
			t.Errorf("section %q at address %#x, not page aligned", s.Name, p)
		}
		if cap(b) != len(b) {
			t.Errorf("section %q: cap %d > len %d lets appends overwrite the next section", s.Name, cap(b), len(b))
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
	if _, err := f.Section("manifest"); !errors.Is(err, ErrClosed) {
		t.Fatalf("Section after Close: %v", err)
	}
	// WriteFile leaves nothing else behind.
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Errorf("directory holds %d files, want 1", len(ents))
	}
}

func TestWriteFileErrorLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "model.rlx")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := WriteFile(path, []Section{{Name: "a"}, {Name: "a"}})
	if err == nil || !strings.Contains(err.Error(), `two sections named "a"`) {
		t.Fatalf("got %v", err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("directory holds %d files, want 1", len(ents))
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("old file changed to %q", b)
	}
}

func TestEncodeRejects(t *testing.T) {
	for _, tc := range []struct {
		s    []Section
		want string
	}{
		{[]Section{{Name: ""}}, "no name"},
		{[]Section{{Name: "a", Codec: "lz4"}}, `unknown codec "lz4"`},
		{[]Section{{Name: "a", Align: 3}}, "alignment 3"},
		{[]Section{{Name: "a", Align: -4}}, "alignment -4"},
		{[]Section{{Name: "a", Align: 2 * MaxAlign}}, "alignment"},
	} {
		if err := Encode(&bytes.Buffer{}, tc.s); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want %q", tc.s, err, tc.want)
		}
	}
}

func TestDeterministic(t *testing.T) {
	want := encode(t, testSections(t))
	var wg sync.WaitGroup
	got := make([][]byte, 4)
	for i := range got {
		wg.Go(func() { got[i] = encode(t, testSections(t)) })
	}
	wg.Wait()
	for i, b := range got {
		if !bytes.Equal(b, want) {
			t.Fatalf("encoding %d differs", i)
		}
	}
	// Manifests with maps built in different orders encode identically.
	m1, m2 := map[string]int{}, map[string]int{}
	for i := range 50 {
		m1[string(rune('a'+i%26))+strings.Repeat("x", i)] = i
	}
	for i := 49; i >= 0; i-- {
		m2[string(rune('a'+i%26))+strings.Repeat("x", i)] = i
	}
	b1, _ := MarshalManifest(m1)
	b2, _ := MarshalManifest(m2)
	if !bytes.Equal(b1, b2) {
		t.Fatal("manifest bytes depend on map order")
	}
}

// A section that zstd shrinks beyond what readers accept is stored raw.
func TestZstdRatioFallsBackToRaw(t *testing.T) {
	data := make([]byte, 4<<20)
	b := encode(t, []Section{{Name: "zeros", Codec: CodecZstd, Data: data}})
	f, err := OpenBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	if c := f.Sections()[0].Codec; c != CodecRaw {
		t.Errorf("codec %q, want raw", c)
	}
	got, _ := f.Section("zeros")
	if !bytes.Equal(got, data) {
		t.Error("data differs")
	}
}

func TestOpenMissing(t *testing.T) {
	_, err := Open(filepath.Join(t.TempDir(), "nope.rlx"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("got %v, want ErrNotExist", err)
	}
}

func TestNotAnArtifact(t *testing.T) {
	for _, in := range []string{"", "hello world, this is not an artifact", "RLXART\x00X" + strings.Repeat("\x00", 200)} {
		_, err := OpenBytes([]byte(in))
		if !errors.Is(err, ErrNotArtifact) || !strings.Contains(err.Error(), "not an rlx artifact") {
			t.Errorf("%.10q: got %v", in, err)
		}
	}
	path := filepath.Join(t.TempDir(), "empty.rlx")
	os.WriteFile(path, nil, 0o644)
	if _, err := Open(path); !errors.Is(err, ErrNotArtifact) || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty file: got %v", err)
	}
}

func setCompat(b []byte, compat uint32, resign bool) []byte {
	b = bytes.Clone(b)
	binary.LittleEndian.PutUint32(b[offCompat:], compat)
	if resign {
		sum := sha256.Sum256(b[:headerSumSpan])
		copy(b[offHeaderSum:], sum[:])
	}
	return b
}

func TestCompatTooNew(t *testing.T) {
	b := encode(t, testSections(t))
	// A newer writer signs its header; a newer format may also have changed
	// what the digest covers, so the version must be refused either way.
	for _, resign := range []bool{true, false} {
		_, err := OpenBytes(setCompat(b, 2, resign))
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, ErrTooNew) {
			t.Fatalf("got %v, want ErrTooNew", err)
		}
		for _, want := range []string{"compatibility version 2", "reads only up to compatibility version 1", "upgrade rlxrun"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%q does not say %q", err, want)
			}
		}
	}
	if _, err := OpenBytes(setCompat(b, 0, true)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("compat 0: got %v", err)
	}
	// A newer format version with the same compatibility version opens.
	nb := bytes.Clone(b)
	binary.LittleEndian.PutUint32(nb[offFormat:], 7)
	nb = setCompat(nb, CompatVersion, true)
	f, err := OpenBytes(nb)
	if err != nil || f.FormatVersion() != 7 {
		t.Fatalf("format 7: %v", err)
	}
}

func TestRaceSafeReads(t *testing.T) {
	sections := testSections(t)
	f, err := OpenBytes(encode(t, sections))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for _, s := range sections {
				if got, err := f.Section(s.Name); err != nil || !bytes.Equal(got, s.Data) {
					t.Errorf("section %q: %v", s.Name, err)
				}
			}
		})
	}
	wg.Wait()
}
