package npy

import (
	"archive/zip"
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/tensor"
)

func TestNPZRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	ts := map[string]*tensor.Tensor{
		"x":         randomTensor(rng, tensor.F32, []int64{2, 3}),
		"a":         randomTensor(rng, tensor.I64, nil),
		"mask":      randomTensor(rng, tensor.Bool, []int64{4}),
		"empty":     randomTensor(rng, tensor.F16, []int64{0, 5}),
		"dir/y":     randomTensor(rng, tensor.U8, []int64{3, 1, 2}),
		"weights.0": randomTensor(rng, tensor.I8, []int64{7}),
	}
	names := []string{"x", "a", "mask", "empty", "dir/y", "weights.0"} // not sorted
	dir := t.TempDir()
	path := filepath.Join(dir, "t.npz")
	if err := WriteNPZ(path, names, ts); err != nil {
		t.Fatal(err)
	}
	got, gotNames, err := ReadNPZ(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gotNames, names) {
		t.Errorf("names %q, want %q", gotNames, names)
	}
	for _, n := range names {
		if got[n] == nil || !sameTensor(got[n], ts[n]) {
			t.Errorf("%s: got %v, want %s", n, got[n], describe(ts[n]))
		}
	}
	// Members are stored .npy files, as np.savez writes them, and an
	// equal input gives an equal archive.
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		if f.Method != zip.Store || !strings.HasSuffix(f.Name, ".npy") || f.Flags&0x8 != 0 {
			t.Errorf("member %s: method %d, flags %#x", f.Name, f.Method, f.Flags)
		}
	}
	zr.Close()
	first, _ := os.ReadFile(path)
	if err := WriteNPZ(path, names, ts); err != nil {
		t.Fatal(err)
	}
	if second, _ := os.ReadFile(path); !bytes.Equal(first, second) {
		t.Error("writing the same tensors twice gave different archives")
	}
	// nil names: all tensors, sorted.
	if err := WriteNPZ(path, nil, ts); err != nil {
		t.Fatal(err)
	}
	_, gotNames, err = ReadNPZ(path)
	sorted := slices.Sorted(slices.Values(names))
	if err != nil || !slices.Equal(gotNames, sorted) {
		t.Errorf("nil names: %q, %v; want %q", gotNames, err, sorted)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("directory holds %d entries, want just t.npz", len(ents))
	}
}

// writeZip builds an archive member by member, as np.savez_compressed would
// (deflated) or as a broken writer might.
func writeZip(t *testing.T, path string, members []member) {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, m := range members {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: m.name, Method: m.method})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(m.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

type member = struct {
	name   string
	method uint16
	data   []byte
}

func npyOf(t *testing.T, x *tensor.Tensor) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, x); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestNPZDeflatedAndErrors(t *testing.T) {
	dir := t.TempDir()
	x := tensor.FromF32([]int64{2, 2}, []float32{1, 2, 3, 4})
	m := tensor.New(tensor.Bool, 3)
	fortran := npyBytes(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }\n", tensor.Bytes([]float32{1, 3, 2, 4}))

	path := filepath.Join(dir, "deflated.npz")
	writeZip(t, path, []member{
		{"x.npy", zip.Deflate, npyOf(t, x)},
		{"m.npy", zip.Store, npyOf(t, m)},
		{"f.npy", zip.Deflate, fortran},
	})
	ts, names, err := ReadNPZ(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(names, []string{"x", "m", "f"}) || !sameTensor(ts["x"], x) || !sameTensor(ts["m"], m) || !sameTensor(ts["f"], x) {
		t.Errorf("got %q %v", names, ts)
	}

	good := npyOf(t, x)
	for _, c := range []struct {
		name    string
		members []member
		want    string
	}{
		{"not npy", []member{{"x.npy", zip.Store, good}, {"notes.txt", zip.Store, []byte("hi")}}, `member "notes.txt" is not a .npy file`},
		{"duplicate", []member{{"x.npy", zip.Store, good}, {"x.npy", zip.Deflate, good}}, `two members named "x.npy"`},
		{"truncated member", []member{{"x.npy", zip.Deflate, good[:len(good)-4]}}, `npz: PATH: member "x.npy": header says shape (2, 2) of <f4 (16 bytes) but the member has 12 bytes of data`},
		{"extra bytes", []member{{"x.npy", zip.Store, append(slices.Clone(good), 1, 2, 3)}}, `member "x.npy": 3 bytes after the array data`},
		{"garbage member", []member{{"x.npy", zip.Store, []byte("garbage")}}, `member "x.npy": not a .npy member`},
		{"bad descr", []member{{"x.npy", zip.Store, npyBytes(1, "{'descr': '<c16', 'fortran_order': False, 'shape': (), }\n", make([]byte, 16))}}, `unsupported descr "<c16"`},
	} {
		p := filepath.Join(dir, "bad.npz")
		writeZip(t, p, c.members)
		_, _, err := ReadNPZ(p)
		want := strings.ReplaceAll(c.want, "PATH", p)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", c.name, err, want)
		}
	}

	// A corrupted stored member fails its CRC check.
	p := filepath.Join(dir, "crc.npz")
	if err := WriteNPZ(p, []string{"x"}, map[string]*tensor.Tensor{"x": x}); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(p)
	i := bytes.Index(raw, tensor.Bytes([]float32{1, 2, 3, 4}))
	raw[i] ^= 0xff
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadNPZ(p); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("corrupted member: %v", err)
	}
	// Not a zip at all.
	if err := os.WriteFile(p, []byte("not a zip"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadNPZ(p); err == nil || !strings.Contains(err.Error(), "npz: "+p) {
		t.Errorf("not a zip: %v", err)
	}
}

func TestWriteNPZErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "w.npz")
	x := tensor.New(tensor.F32, 2)
	for _, c := range []struct {
		name  string
		names []string
		ts    map[string]*tensor.Tensor
		want  string
	}{
		{"missing", []string{"x", "y"}, map[string]*tensor.Tensor{"x": x}, `no tensor named "y"`},
		{"nil tensor", []string{"x"}, map[string]*tensor.Tensor{"x": nil}, `no tensor named "x"`},
		{"duplicate", []string{"x", "x"}, map[string]*tensor.Tensor{"x": x}, `the name "x" is given twice`},
		{"unlisted", []string{"x"}, map[string]*tensor.Tensor{"x": x, "z": x}, `tensor "z" is not in the list of names`},
		{"empty name", []string{""}, map[string]*tensor.Tensor{"": x}, "empty tensor name"},
		{"bf16", []string{"b"}, map[string]*tensor.Tensor{"b": tensor.New(tensor.BF16, 1)}, `tensor "b": npy: bf16 has no NumPy dtype`},
	} {
		err := WriteNPZ(path, c.names, c.ts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("failed writes left %d files", len(ents))
	}
}

// TestReadNPZLimit: an archive whose members claim more than the limit is
// refused before anything is decompressed.
func TestReadNPZLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.npz")
	x := tensor.New(tensor.F32, 256, 256) // 256 KiB of zeros: deflates to little
	if err := WriteNPZ(path, nil, map[string]*tensor.Tensor{"x": x}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadNPZLimit(path, 64<<10); err == nil || !strings.Contains(err.Error(), "expand to more than the limit") {
		t.Errorf("64 KiB limit: %v", err)
	}
	if ts, _, err := ReadNPZLimit(path, 1<<20); err != nil || ts["x"].Len() != 256*256 {
		t.Errorf("1 MiB limit: %v", err)
	}
}
