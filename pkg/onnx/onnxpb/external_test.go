package onnxpb

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// externalModel is a model whose tensors keep their bytes in files of
// dir: two initializers in one file (the second at an offset, to the
// file's end), a Constant's value in a subdirectory with its checksum,
// and an initializer of an If branch. It returns the model and each
// tensor's expected bytes by name.
func externalModel(t *testing.T, dir string) (*Model, map[string][]byte) {
	t.Helper()
	want := map[string][]byte{}
	data := func(name string, n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(len(name)*31 + i*7)
		}
		want[name] = b
		return b
	}
	a, b := data("a", 16), data("b", 24)
	file := append(append(append([]byte{}, a...), make([]byte, 48)...), b...)
	if err := os.WriteFile(filepath.Join(dir, "m.onnx.data"), file, 0o644); err != nil {
		t.Fatal(err)
	}
	c := data("c", 8)
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "c.bin"), c, 0o644); err != nil {
		t.Fatal(err)
	}
	d := data("d", 4)
	if err := os.WriteFile(filepath.Join(dir, "d.bin"), d, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha1.Sum(c)
	ext := func(name string, dims []int64, kv map[string]string) *Tensor {
		return &Tensor{Name: name, DataType: DTUint8, Dims: dims, External: true, ExternalData: kv}
	}
	branch := &Graph{Initializers: []*Tensor{ext("d", []int64{4}, map[string]string{"location": "d.bin"})},
		Outputs: []*ValueInfo{{Name: "d"}}}
	g := &Graph{
		Initializers: []*Tensor{
			ext("a", []int64{16}, map[string]string{"location": "m.onnx.data", "offset": "0", "length": "16"}),
			ext("b", []int64{24}, map[string]string{"location": "m.onnx.data", "offset": "64"}),
		},
		Nodes: []*Node{
			{OpType: "Constant", Outputs: []string{"c"}, Attrs: []*Attr{{Name: "value", Type: AttrTensor,
				T: ext("c", []int64{8}, map[string]string{"location": "sub/c.bin", "checksum": hex.EncodeToString(sum[:])})}}},
			{OpType: "If", Inputs: []string{"cond"}, Outputs: []string{"e"}, Attrs: []*Attr{{Name: "then_branch", Type: AttrGraph, HasGraph: true, G: branch}}},
		},
		Outputs: []*ValueInfo{{Name: "a"}},
	}
	return &Model{IRVersion: 8, Opsets: map[string]int64{"": 17}, Graph: g}, want
}

// writeModel encodes m into dir/m.onnx.
func writeModel(t *testing.T, dir string, m *Model) string {
	t.Helper()
	enc, err := Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "m.onnx")
	if err := os.WriteFile(path, enc, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestExternalDataLoads: DecodeFile reads every external tensor, wherever it
// is in the model, at its offset and length.
func TestExternalDataLoads(t *testing.T) {
	dir := t.TempDir()
	m, want := externalModel(t, dir)
	got, err := DecodeFile(writeModel(t, dir, m))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string][]byte{}
	var walk func(g *Graph)
	walk = func(g *Graph) {
		for _, x := range g.Initializers {
			seen[x.Name] = x.RawData
			if x.External || x.ExternalData != nil {
				t.Errorf("%s still external after loading: %+v", x.Name, x)
			}
		}
		for _, n := range g.Nodes {
			for _, a := range n.Attrs {
				if a.T != nil {
					seen[a.T.Name] = a.T.RawData
				}
				if a.G != nil {
					walk(a.G)
				}
			}
		}
	}
	walk(got.Graph)
	for name, w := range want {
		if !bytes.Equal(seen[name], w) {
			t.Errorf("%s: data %v, want %v", name, seen[name], w)
		}
	}
	x, err := got.Graph.Initializers[1].ToTensor()
	if err != nil || !bytes.Equal(x.Data, want["b"]) {
		t.Errorf("b as a tensor: %v, %v", x, err)
	}
}

// TestExternalDataErrors: each bad external_data entry is an error naming
// the tensor and what is wrong, and a missing file is a path error.
func TestExternalDataErrors(t *testing.T) {
	cases := []struct {
		name string
		kv   map[string]string
		want string
	}{
		{"no location", map[string]string{"offset": "0"}, `tensor "a": external data: no location`},
		{"absolute", map[string]string{"location": "/etc/passwd"}, `location "/etc/passwd" is not a path inside the model's directory`},
		{"escapes", map[string]string{"location": "../m.onnx.data"}, `location "../m.onnx.data" is not a path inside`},
		{"escapes after a dir", map[string]string{"location": "sub/../../x"}, `is not a path inside`},
		{"offset past the end", map[string]string{"location": "m.onnx.data", "offset": "89"}, "offset 89 is past the end of m.onnx.data (88 bytes)"},
		{"length past the end", map[string]string{"location": "m.onnx.data", "offset": "80", "length": "9"}, "9 bytes at offset 80 run past the end of m.onnx.data (88 bytes)"},
		{"negative offset", map[string]string{"location": "m.onnx.data", "offset": "-1"}, `offset "-1" is not a byte count`},
		{"bad length", map[string]string{"location": "m.onnx.data", "length": "ten"}, `length "ten" is not a byte count`},
		{"checksum", map[string]string{"location": "m.onnx.data", "length": "16", "checksum": strings.Repeat("0", 40)}, "SHA-1 of 16 bytes at offset 0 of m.onnx.data is"},
		{"a directory", map[string]string{"location": "sub"}, "sub is not a regular file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			m, _ := externalModel(t, dir)
			m.Graph.Initializers[0].ExternalData = maps.Clone(c.kv)
			_, err := DecodeFile(writeModel(t, dir, m))
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `tensor "a"`) {
				t.Fatalf("got %v, want an error about tensor \"a\" containing %q", err, c.want)
			}
		})
	}
	// a link inside the directory to a file outside it
	dir := t.TempDir()
	m, _ := externalModel(t, dir)
	outside := filepath.Join(t.TempDir(), "secret.bin")
	if err := os.WriteFile(outside, make([]byte, 16), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link.bin")); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	m.Graph.Initializers[0].ExternalData = map[string]string{"location": "link.bin"}
	if _, err := DecodeFile(writeModel(t, dir, m)); err == nil || !strings.Contains(err.Error(), `location "link.bin" leads out of the model's directory`) {
		t.Errorf("a link out of the directory: %v", err)
	}
	m.Graph.Initializers[0].ExternalData = map[string]string{"location": "missing.bin"}
	_, err := DecodeFile(writeModel(t, dir, m))
	var pe *fs.PathError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "missing.bin") {
		t.Fatalf("missing file: %v, want a path error naming missing.bin", err)
	}
}

// TestExternalDataOffsets: every offset and length within the file reads
// exactly those bytes, and a length of 0 reads none.
func TestExternalDataOffsets(t *testing.T) {
	dir := t.TempDir()
	file := make([]byte, 40)
	for i := range file {
		file[i] = byte(i)
	}
	if err := os.WriteFile(filepath.Join(dir, "w.bin"), file, 0o644); err != nil {
		t.Fatal(err)
	}
	for off := 0; off <= len(file); off += 5 {
		for n := 0; off+n <= len(file); n += 7 {
			x := &Tensor{Name: "x", DataType: DTUint8, Dims: []int64{int64(n)}, External: true,
				ExternalData: map[string]string{"location": "w.bin", "offset": strconv.Itoa(off), "length": strconv.Itoa(n)}}
			m := &Model{Graph: &Graph{Initializers: []*Tensor{x}}}
			if err := m.LoadExternal(dir); err != nil {
				t.Fatalf("offset %d length %d: %v", off, n, err)
			}
			if !bytes.Equal(x.RawData, file[off:off+n]) || x.RawData == nil {
				t.Fatalf("offset %d length %d: %v", off, n, x.RawData)
			}
		}
	}
}

// FuzzLoadExternal: any external_data entries either load bytes of a file
// inside the model's directory, exactly as many as they ask for, or are an
// error; nothing panics or reads outside the directory.
func FuzzLoadExternal(f *testing.F) {
	f.Add("w.bin", "0", "40", "")
	f.Add("w.bin", "39", "", "")
	f.Add("../w.bin", "0", "1", "")
	f.Add("/w.bin", "", "", "")
	f.Add("sub/../w.bin", "8", "8", "da39a3ee5e6b4b0d3255bfef95601890afd80709")
	f.Add("w.bin", "18446744073709551615", "1", "")
	f.Add("w.bin", "40", "0", "da39a3ee5e6b4b0d3255bfef95601890afd80709")
	dir := f.TempDir()
	file := make([]byte, 40)
	for i := range file {
		file[i] = byte(i)
	}
	if err := os.WriteFile(filepath.Join(dir, "w.bin"), file, 0o644); err != nil {
		f.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, loc, off, n, sum string) {
		kv := map[string]string{"location": loc}
		for k, v := range map[string]string{"offset": off, "length": n, "checksum": sum} {
			if v != "" {
				kv[k] = v
			}
		}
		x := &Tensor{Name: "x", DataType: DTUint8, External: true, ExternalData: kv}
		m := &Model{Graph: &Graph{Initializers: []*Tensor{x}}}
		if err := m.LoadExternal(dir); err != nil {
			return
		}
		if !filepath.IsLocal(filepath.FromSlash(loc)) {
			t.Fatalf("loaded %q, which is not inside the directory", loc)
		}
		o, _ := strconv.Atoi(off)
		if want := file[o:]; n != "" {
			l, _ := strconv.Atoi(n)
			if !bytes.Equal(x.RawData, want[:l]) {
				t.Fatalf("offset %s length %s: %v", off, n, x.RawData)
			}
		} else if !bytes.Equal(x.RawData, want) {
			t.Fatalf("offset %s to the end: %v", off, x.RawData)
		}
	})
}
