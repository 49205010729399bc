package safetensors

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/rlx-project/rlx/pkg/tensor"
)

// allDTypes builds one tensor of every dtype, with distinct contents and
// shapes that leave odd byte counts, so that layout and alignment matter.
func allDTypes() map[string]*tensor.Tensor {
	ts := map[string]*tensor.Tensor{}
	shapes := [][]int64{{3}, {2, 3}, {}, {1, 5, 1}, {0, 4}, {7}}
	for i := range 10 {
		d := tensor.DType(i + 1) // f32 .. bool
		shape := shapes[i%len(shapes)]
		t := tensor.New(d, shape...)
		for j := range t.Data {
			t.Data[j] = byte(j*7 + int(d))
			if d == tensor.Bool {
				t.Data[j] &= 1
			}
		}
		ts["t_"+d.String()] = t
	}
	ts["scalar"] = tensor.FromF32(nil, []float32{math.Pi})
	ts["weight.with <html> & \"quotes\""] = tensor.FromI64([]int64{2}, []int64{-1, math.MaxInt64})
	return ts
}

func encode(t *testing.T, ts map[string]*tensor.Tensor, meta map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Encode(&buf, nil, ts, meta); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func checkSame(t *testing.T, f *File, ts map[string]*tensor.Tensor, meta map[string]string) {
	t.Helper()
	var want []string
	for n := range ts {
		want = append(want, n)
	}
	got := f.Names()
	if len(got) != len(want) {
		t.Fatalf("names %q, want %d of them", got, len(want))
	}
	for i := 1; i < len(got); i++ {
		if got[i-1] >= got[i] {
			t.Fatalf("names not sorted: %q", got)
		}
	}
	for _, n := range want {
		g, err := f.Tensor(n)
		if err != nil {
			t.Fatal(err)
		}
		w := ts[n]
		if g.DType != w.DType || tensor.ShapeString(g.Shape) != tensor.ShapeString(w.Shape) || !bytes.Equal(g.Data, w.Data) {
			t.Errorf("%s: got %s%v %x, want %s%v %x", n, g.DType, g.Shape, g.Data, w.DType, w.Shape, w.Data)
		}
		if g.Shape == nil {
			t.Errorf("%s: nil shape", n)
		}
		if err := g.Check(); err != nil {
			t.Error(err)
		}
		if len(g.Data) > 0 && uintptr(unsafe.Pointer(&g.Data[0]))%uintptr(g.DType.Size()) != 0 {
			t.Errorf("%s: data not aligned to %d", n, g.DType.Size())
		}
	}
	if m := f.Metadata(); len(m) != len(meta) || (len(meta) > 0 && !reflect.DeepEqual(m, meta)) {
		t.Errorf("metadata %v, want %v", m, meta)
	}
}

func TestRoundTrip(t *testing.T) {
	ts := allDTypes()
	meta := map[string]string{"format": "pt", "note": "ünïcode <&>", "": "empty key"}
	path := filepath.Join(t.TempDir(), "all.safetensors")
	if err := Write(path, nil, ts, meta); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	checkSame(t, f, ts, meta)
	if runtime.GOOS == "linux" && f.unmap == nil {
		t.Error("Open read the file instead of mapping it")
	}
	// Values through the typed views.
	s, _ := f.Tensor("scalar")
	if v := s.F32(); len(v) != 1 || v[0] != math.Pi {
		t.Errorf("scalar = %v", v)
	}
	w, _ := f.Tensor("weight.with <html> & \"quotes\"")
	if v := w.I64(); !reflect.DeepEqual(v, []int64{-1, math.MaxInt64}) {
		t.Errorf("i64 = %v", v)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
	if _, err := f.Tensor("scalar"); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Tensor after Close: %v", err)
	}

	// Parse of the same bytes agrees.
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	g, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	checkSame(t, g, ts, meta)
	if !bytes.Equal(b, encode(t, ts, meta)) {
		t.Error("Encode and Write differ")
	}
}

func TestLayout(t *testing.T) {
	b := encode(t, allDTypes(), map[string]string{"a": "b"})
	n := binary.LittleEndian.Uint64(b)
	if (8+n)%8 != 0 {
		t.Errorf("data buffer starts at %d, not a multiple of 8", 8+n)
	}
	hdr := string(b[8 : 8+n])
	trimmed := strings.TrimRight(hdr, " ")
	if !strings.HasPrefix(hdr, "{") || !strings.HasSuffix(trimmed, "}") || len(hdr)-len(trimmed) >= 8 {
		t.Errorf("header %q", hdr)
	}
	if !strings.HasPrefix(trimmed, `{"__metadata__":{"a":"b"},"scalar":{"data_offsets":[`) {
		t.Errorf("header keys not sorted: %.80s", trimmed)
	}
	// Only the selected tensors, and the order of names does not matter.
	ts := allDTypes()
	var b1, b2 bytes.Buffer
	if err := Encode(&b1, []string{"t_f32", "scalar"}, ts, nil); err != nil {
		t.Fatal(err)
	}
	if err := Encode(&b2, []string{"scalar", "t_f32"}, ts, map[string]string{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b1.Bytes(), b2.Bytes()) {
		t.Error("order of names changes the bytes")
	}
	f, err := Parse(b1.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Names(); !reflect.DeepEqual(got, []string{"scalar", "t_f32"}) {
		t.Errorf("names %q", got)
	}
	// An empty file.
	e := encode(t, nil, nil)
	if string(e) != "\x08\x00\x00\x00\x00\x00\x00\x00{}      " {
		t.Errorf("empty file %q", e)
	}
	if f, err := Parse(e); err != nil || len(f.Names()) != 0 {
		t.Errorf("empty file: %v", err)
	}
}

func TestDeterministic(t *testing.T) {
	dir := t.TempDir()
	meta := map[string]string{"z": "1", "a": "2", "m": "3"}
	var files [][]byte
	for i := range 3 {
		p := filepath.Join(dir, fmt.Sprint(i, ".safetensors"))
		if err := Write(p, nil, allDTypes(), meta); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, b)
	}
	for _, b := range files[1:] {
		if !bytes.Equal(b, files[0]) {
			t.Fatal("two writes of the same tensors differ")
		}
	}
	// Overwriting an existing file leaves no temporary files behind.
	p := filepath.Join(dir, "0.safetensors")
	if err := Write(p, nil, allDTypes(), meta); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 3 {
		t.Errorf("directory has %d entries, want 3", len(ents))
	}
}

func TestWriteErrors(t *testing.T) {
	good := tensor.FromF32([]int64{2}, []float32{1, 2})
	cases := []struct {
		name  string
		names []string
		ts    map[string]*tensor.Tensor
		want  string
	}{
		{"missing", []string{"x"}, map[string]*tensor.Tensor{}, `no tensor "x"`},
		{"nil", nil, map[string]*tensor.Tensor{"x": nil}, `no tensor "x"`},
		{"twice", []string{"x", "x"}, map[string]*tensor.Tensor{"x": good}, "twice"},
		{"reserved", nil, map[string]*tensor.Tensor{"__metadata__": good}, "__metadata__"},
		{"dtype", nil, map[string]*tensor.Tensor{"x": {DType: tensor.InvalidDType, Shape: []int64{1}, Data: []byte{0}}}, "dtype"},
		{"short", nil, map[string]*tensor.Tensor{"x": {DType: tensor.F32, Shape: []int64{2}, Data: make([]byte, 7)}}, "bytes"},
		{"negative", nil, map[string]*tensor.Tensor{"x": {DType: tensor.F32, Shape: []int64{-1, -1}, Data: make([]byte, 4)}}, "negative"},
	}
	dir := t.TempDir()
	for _, c := range cases {
		p := filepath.Join(dir, c.name)
		err := Write(p, c.names, c.ts, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.want)
		}
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s: file written despite the error", c.name)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("failed writes left %d files", len(ents))
	}
	if err := Write(filepath.Join(dir, "no", "such", "dir"), nil, nil, nil); err == nil {
		t.Error("write into a missing directory succeeded")
	}
}

func TestMissingTensor(t *testing.T) {
	ts := map[string]*tensor.Tensor{}
	for i := range 12 {
		ts[fmt.Sprintf("w%02d", i)] = tensor.FromF32([]int64{1}, []float32{float32(i)})
	}
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := Write(path, nil, ts, nil); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = f.Tensor("bias")
	want := `safetensors: no tensor named "bias" in ` + path + ` (it has 12 tensors: w00, w01, w02, w03, w04, w05, w06, w07, ...)`
	if err == nil || err.Error() != want {
		t.Errorf("error\n%v\nwant\n%s", err, want)
	}
	g, _ := Parse(encode(t, nil, nil))
	if _, err := g.Tensor("x"); err == nil || !strings.Contains(err.Error(), "it has no tensors") {
		t.Errorf("error %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(filepath.Join(dir, "absent")); err == nil {
		t.Error("opened a missing file")
	}
	p := filepath.Join(dir, "empty")
	os.WriteFile(p, nil, 0o644)
	if _, err := Open(p); err == nil || !strings.Contains(err.Error(), "too short") {
		t.Errorf("empty file: %v", err)
	}
	p = filepath.Join(dir, "bad")
	os.WriteFile(p, raw(`{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, 3), 0o644)
	if _, err := Open(p); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("bad file: %v", err)
	}
}

// raw builds a file from a header and a data buffer of n bytes.
func raw(header string, n int) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	b = append(b, header...)
	return append(b, make([]byte, n)...)
}

func TestParseErrors(t *testing.T) {
	lenOnly := func(n uint64, rest string) []byte {
		return append(binary.LittleEndian.AppendUint64(nil, n), rest...)
	}
	cases := []struct {
		name string
		file []byte
		want string
	}{
		{"empty", nil, "too short"},
		{"short", []byte{1, 0, 0}, "too short"},
		{"header past end", lenOnly(100, "{}"), "runs past the end"},
		{"header huge", lenOnly(math.MaxUint64, "{}"), "over the limit"},
		{"header over limit", lenOnly(MaxHeaderSize+1, "{}"), "over the limit"},
		{"zero header", lenOnly(0, ""), "start with '{'"},
		{"no brace", raw(` {}`, 0), "start with '{'"},
		{"array", raw(`[]`, 0), "start with '{'"},
		{"bad json", raw(`{"x":`, 0), "header"},
		{"truncated json", raw(`{"x":{"dtype":"F32"`, 0), "header"},
		{"trailing", raw(`{} {}`, 0), "after the JSON object"},
		{"not utf8", raw("{\"\xff\":{}}", 0), "UTF-8"},
		{"duplicate tensor", raw(`{"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"x":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}`, 2), `duplicate key "x"`},
		{"duplicate field", raw(`{"x":{"dtype":"U8","dtype":"I8","shape":[1],"data_offsets":[0,1]}}`, 1), `duplicate key "dtype"`},
		{"entry not object", raw(`{"x":5}`, 0), `tensor "x"`},
		{"unknown dtype", raw(`{"w1":{"dtype":"F17","shape":[1],"data_offsets":[0,4]}}`, 4), `tensor "w1": unknown dtype "F17"`},
		{"unsupported dtype", raw(`{"w1":{"dtype":"U32","shape":[1],"data_offsets":[0,4]}}`, 4), `tensor "w1": dtype U32 is not supported`},
		{"lowercase dtype", raw(`{"w1":{"dtype":"f32","shape":[1],"data_offsets":[0,4]}}`, 4), `tensor "w1": unknown dtype "f32"`},
		{"dtype not string", raw(`{"w1":{"dtype":4,"shape":[1],"data_offsets":[0,4]}}`, 4), `tensor "w1": bad dtype`},
		{"no dtype", raw(`{"w1":{"shape":[1],"data_offsets":[0,4]}}`, 4), `tensor "w1": no dtype`},
		{"no shape", raw(`{"w1":{"dtype":"F32","data_offsets":[0,4]}}`, 4), `no shape`},
		{"null shape", raw(`{"w1":{"dtype":"F32","shape":null,"data_offsets":[0,4]}}`, 4), `no shape`},
		{"no offsets", raw(`{"w1":{"dtype":"F32","shape":[1]}}`, 4), `no data_offsets`},
		{"negative dim", raw(`{"w1":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}`, 4), "negative dim"},
		{"fractional dim", raw(`{"w1":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}}`, 4), "bad shape"},
		{"overflow", raw(`{"w1":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}}`, 0), "overflows"},
		{"overflow to zero", raw(`{"w1":{"dtype":"U8","shape":[4294967296,4294967296,4294967296,0],"data_offsets":[0,0]}}`, 0), "overflows"},
		{"size mismatch", raw(`{"w1":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}`, 4), "needs 8 bytes"},
		{"one offset", raw(`{"w1":{"dtype":"U8","shape":[1],"data_offsets":[0]}}`, 1), "want 2"},
		{"three offsets", raw(`{"w1":{"dtype":"U8","shape":[1],"data_offsets":[0,1,2]}}`, 1), "want 2"},
		{"negative offset", raw(`{"w1":{"dtype":"U8","shape":[1],"data_offsets":[-1,0]}}`, 1), "bad data_offsets"},
		{"huge offset", raw(`{"w1":{"dtype":"U8","shape":[1],"data_offsets":[0,99999999999999999999999]}}`, 1), "bad data_offsets"},
		{"reversed", raw(`{"w1":{"dtype":"U8","shape":[0],"data_offsets":[1,0]}}`, 1), "end before"},
		{"past data", raw(`{"w1":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, 4), "past the end of the 4-byte data buffer"},
		{"overlap", raw(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, 8), `tensor "b" [4, 8) overlaps tensor "a" [0, 8)`},
		{"same range", raw(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, 4), `tensor "b" [0, 4) overlaps tensor "a" [0, 4)`},
		{"empty inside", raw(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"e":{"dtype":"F32","shape":[0],"data_offsets":[4,4]}}`, 8), `tensor "e" [4, 4) overlaps tensor "a"`},
		{"hole", raw(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}`, 12), "[4, 8) belong to no tensor"},
		{"hole at start", raw(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, 8), "[0, 4) belong to no tensor"},
		{"trailing data", raw(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, 6), "[4, 6) after the last tensor"},
		{"data without tensors", raw(`{}`, 1), "[0, 1) after the last tensor"},
		{"metadata not object", raw(`{"__metadata__":"x"}`, 0), "__metadata__"},
		{"metadata not strings", raw(`{"__metadata__":{"a":1}}`, 0), `__metadata__: value of "a" is 1, not a string`},
		{"metadata nested", raw(`{"__metadata__":{"a":{"b":"c"}}}`, 0), `not a string`},
		{"metadata duplicate", raw(`{"__metadata__":{"a":"1","a":"2"}}`, 0), `duplicate key "a"`},
		{"metadata twice", raw(`{"__metadata__":{},"__metadata__":{}}`, 0), `duplicate key "__metadata__"`},
	}
	for _, c := range cases {
		f, err := Parse(c.file)
		if err == nil {
			t.Errorf("%s: parsed, names %q", c.name, f.Names())
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q, want one containing %q", c.name, err, c.want)
		}
		if !strings.HasPrefix(err.Error(), "safetensors: ") {
			t.Errorf("%s: error %q lacks the package prefix", c.name, err)
		}
	}
}

func TestParseAccepts(t *testing.T) {
	cases := []struct {
		name string
		file []byte
	}{
		{"padded", raw(`{"a":{"dtype":"BOOL","shape":[1],"data_offsets":[0,1]}}       `, 1)},
		{"other whitespace", raw("{\n\"a\" : {\"dtype\":\"BOOL\",\"shape\":[1],\"data_offsets\":[0,1]}\t}\n", 1)},
		{"unknown fields ignored", raw(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"extra":[1,{}]}}`, 1)},
		{"null metadata", raw(`{"__metadata__":null}`, 0)},
		{"empty tensors share offsets", raw(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"e":{"dtype":"F32","shape":[0],"data_offsets":[4,4]},"f":{"dtype":"F64","shape":[3,0],"data_offsets":[4,4]},"g":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},"b":{"dtype":"I8","shape":[],"data_offsets":[4,5]}}`, 5)},
		{"unaligned", raw(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"b":{"dtype":"F64","shape":[2],"data_offsets":[1,17]}}`, 17)},
	}
	for _, c := range cases {
		f, err := Parse(c.file)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		for _, n := range f.Names() {
			tt, err := f.Tensor(n)
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
				continue
			}
			if err := tt.Check(); err != nil {
				t.Errorf("%s: %s: %v", c.name, n, err)
			}
			if len(tt.Data) > 0 && uintptr(unsafe.Pointer(&tt.Data[0]))%uintptr(tt.DType.Size()) != 0 {
				t.Errorf("%s: %s: unaligned data", c.name, n)
			}
		}
	}
}

// TestUnalignedCopy checks that an unaligned F64 tensor comes back as an
// aligned copy with the right values.
func TestUnalignedCopy(t *testing.T) {
	b := raw(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"b":{"dtype":"F64","shape":[2],"data_offsets":[1,17]}}`, 17)
	// Make the data buffer start at a multiple of 8, so b starts at an odd address.
	n := len(b) - 17
	buf := make([]uint64, (len(b)+16)/8)
	mem := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), len(buf)*8)
	off := (8 - n%8) % 8
	copy(mem[off:], b)
	data := mem[off+n:]
	binary.LittleEndian.PutUint64(data[1:], math.Float64bits(1.5))
	binary.LittleEndian.PutUint64(data[9:], math.Float64bits(-2))
	f, err := Parse(mem[off : off+len(b)])
	if err != nil {
		t.Fatal(err)
	}
	x, err := f.Tensor("b")
	if err != nil {
		t.Fatal(err)
	}
	if got := x.F64(); !reflect.DeepEqual(got, []float64{1.5, -2}) {
		t.Errorf("values %v", got)
	}
	if &x.Data[0] == &data[1] {
		t.Error("unaligned data was not copied")
	}
	a, _ := f.Tensor("a")
	if &a.Data[0] != &data[0] {
		t.Error("aligned data was copied")
	}
}

// TestViewsAreZeroCopy checks that tensors alias the parsed bytes.
func TestViewsAreZeroCopy(t *testing.T) {
	b := encode(t, allDTypes(), nil)
	f, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range f.Names() {
		x, _ := f.Tensor(n)
		if len(x.Data) == 0 {
			continue
		}
		p := uintptr(unsafe.Pointer(&x.Data[0]))
		start := uintptr(unsafe.Pointer(&b[0]))
		if p < start || p >= start+uintptr(len(b)) {
			t.Errorf("%s is a copy", n)
		}
		if cap(x.Data) != len(x.Data) {
			t.Errorf("%s: cap %d exceeds len %d, so append would write into the file", n, cap(x.Data), len(x.Data))
		}
	}
}

func FuzzParse(f *testing.F) {
	var buf bytes.Buffer
	Encode(&buf, nil, allDTypes(), map[string]string{"k": "v"})
	f.Add(buf.Bytes())
	f.Add(raw(`{}`, 0))
	f.Add(raw(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"e":{"dtype":"F32","shape":[0],"data_offsets":[4,4]}}`, 4))
	f.Add(raw(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"b":{"dtype":"F64","shape":[2],"data_offsets":[1,17]}}`, 17))
	f.Add(raw(`{"__metadata__":{"a":"b"},"x":{"dtype":"BF16","shape":[2,1],"data_offsets":[0,4]}}`, 4))
	f.Add(raw(`{"w1":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}}`, 0))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, '{', '}'})
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := Parse(b)
		if err != nil {
			return
		}
		ts := map[string]*tensor.Tensor{}
		var total int
		for _, n := range file.Names() {
			x, err := file.Tensor(n)
			if err != nil {
				t.Fatalf("parsed, but tensor %q: %v", n, err)
			}
			if err := x.Check(); err != nil {
				t.Fatalf("tensor %q: %v", n, err)
			}
			total += len(x.Data)
			ts[n] = x
		}
		if total > len(b) {
			t.Fatalf("tensors hold %d bytes, more than the file's %d", total, len(b))
		}
		// What was read writes and reads back the same.
		var out bytes.Buffer
		if err := Encode(&out, nil, ts, file.Metadata()); err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		again, err := Parse(out.Bytes())
		if err != nil {
			t.Fatalf("re-parse: %v", err)
		}
		if !reflect.DeepEqual(again.Names(), file.Names()) {
			t.Fatalf("names %q became %q", file.Names(), again.Names())
		}
		for _, n := range file.Names() {
			x, _ := again.Tensor(n)
			if y := ts[n]; x.DType != y.DType || !reflect.DeepEqual(x.Shape, y.Shape) || !bytes.Equal(x.Data, y.Data) {
				t.Fatalf("tensor %q changed in a round trip", n)
			}
		}
	})
}

// TestOpenRefusesNonRegularFiles: /dev/zero (a device without end) or a
// directory is refused with a message, not read without limit.
func TestOpenRefusesNonRegularFiles(t *testing.T) {
	for _, path := range []string{os.DevNull, t.TempDir()} {
		if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("%s: %v", path, err)
		}
	}
}
