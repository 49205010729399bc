package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/rlx-project/rlx/pkg/tensor"
)

// onlyReader hides the concrete type, so Read cannot learn the input size.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(b []byte) (int, error) { return o.r.Read(b) }

// npyBytes builds a .npy file by hand: the header is used as given (no
// padding is added).
func npyBytes(major byte, hdr string, data []byte) []byte {
	b := []byte(magic)
	b = append(b, major, 0)
	if major == 1 {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(hdr)))
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(hdr)))
	}
	b = append(b, hdr...)
	return append(b, data...)
}

func sameTensor(a, b *tensor.Tensor) bool {
	if a.DType != b.DType || len(a.Shape) != len(b.Shape) || !bytes.Equal(a.Data, b.Data) {
		return false
	}
	for i := range a.Shape {
		if a.Shape[i] != b.Shape[i] {
			return false
		}
	}
	return true
}

func describe(t *tensor.Tensor) string {
	d := t.Data
	if len(d) > 32 {
		d = d[:32]
	}
	return fmt.Sprintf("%s%s % x", t.DType, shapeString(t.Shape), d)
}

func randomTensor(rng *rand.Rand, dt tensor.DType, shape []int64) *tensor.Tensor {
	t := tensor.New(dt, shape...)
	for i := range t.Data {
		t.Data[i] = byte(rng.Uint32())
		if dt == tensor.Bool {
			t.Data[i] &= 1
		}
	}
	return t
}

func mustRead(t *testing.T, b []byte) *tensor.Tensor {
	t.Helper()
	got, err := Read(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return got
}

var allDTypes = []tensor.DType{tensor.F32, tensor.F16, tensor.F64, tensor.I8, tensor.I16, tensor.I32, tensor.I64, tensor.U8, tensor.Bool}

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	shapes := [][]int64{{}, {0}, {1}, {5}, {2, 3}, {2, 0, 3}, {1, 1, 1, 1}, {3, 4, 5}, {7, 1, 9, 2}}
	for _, dt := range allDTypes {
		for _, shape := range shapes {
			want := randomTensor(rng, dt, shape)
			var buf bytes.Buffer
			if err := Write(&buf, want); err != nil {
				t.Fatalf("%s%v: Write: %v", dt, shape, err)
			}
			b := buf.Bytes()
			dataStart := len(b) - len(want.Data)
			if dataStart%64 != 0 || b[dataStart-1] != '\n' {
				t.Errorf("%s%v: data starts at %d, want a multiple of 64 after a newline", dt, shape, dataStart)
			}
			for _, r := range []struct {
				name string
				r    io.Reader
			}{
				{"bytes.Reader", bytes.NewReader(b)},
				{"unsized", onlyReader{bytes.NewReader(b)}},
				{"one byte at a time", iotest.OneByteReader(bytes.NewReader(b))},
				{"bytes.Buffer", bytes.NewBuffer(b)},
				{"strings.Reader", strings.NewReader(string(b))},
			} {
				got, err := Read(r.r)
				if err != nil {
					t.Fatalf("%s%v via %s: Read: %v", dt, shape, r.name, err)
				}
				if !sameTensor(got, want) {
					t.Errorf("%s%v via %s: got %s, want %s", dt, shape, r.name, describe(got), describe(want))
				}
			}
		}
	}
}

// TestWriteMatchesNumPy checks Write against np.save's bytes for
// np.zeros((1, 512), np.float32) (the header of the mlp/b1 test vectors) and
// against the header rules of numpy/lib/format.py for other shapes.
func TestWriteMatchesNumPy(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, tensor.New(tensor.F32, 1, 512)); err != nil {
		t.Fatal(err)
	}
	want := "\x93NUMPY\x01\x00\x76\x00{'descr': '<f4', 'fortran_order': False, 'shape': (1, 512), }" +
		strings.Repeat(" ", 56) + "\n"
	if got := buf.String()[:128]; got != want {
		t.Errorf("header\n got %q\nwant %q", got, want)
	}
	for _, c := range []struct {
		t    *tensor.Tensor
		want string
	}{
		{tensor.New(tensor.F64), "{'descr': '<f8', 'fortran_order': False, 'shape': (), }"},
		{tensor.New(tensor.I8, 5), "{'descr': '|i1', 'fortran_order': False, 'shape': (5,), }" + strings.Repeat(" ", 20)},
		{tensor.New(tensor.Bool, 12, 0), "{'descr': '|b1', 'fortran_order': False, 'shape': (12, 0), }" + strings.Repeat(" ", 19)},
		{tensor.New(tensor.U8, 3), "{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }" + strings.Repeat(" ", 20)},
		{tensor.New(tensor.F16, 3), "{'descr': '<f2', 'fortran_order': False, 'shape': (3,), }" + strings.Repeat(" ", 20)},
		{tensor.New(tensor.I16, 3), "{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }" + strings.Repeat(" ", 20)},
		{tensor.New(tensor.I32, 3), "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }" + strings.Repeat(" ", 20)},
		{tensor.New(tensor.I64, 3), "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }" + strings.Repeat(" ", 20)},
	} {
		var buf bytes.Buffer
		if err := Write(&buf, c.t); err != nil {
			t.Fatal(err)
		}
		b := buf.Bytes()
		hlen := int(binary.LittleEndian.Uint16(b[8:10]))
		if b[6] != 1 || b[7] != 0 || (10+hlen)%64 != 0 {
			t.Errorf("%s: version %d.%d, header length %d", describe(c.t), b[6], b[7], hlen)
		}
		hdr := string(b[10 : 10+hlen])
		if strings.TrimRight(hdr, " \n") != strings.TrimRight(c.want, " ") || !strings.HasPrefix(hdr, c.want) {
			t.Errorf("%s: header %q, want %q plus padding", describe(c.t), hdr, c.want)
		}
	}
}

// modelsDir finds shared/models: next to the repository (../shared) or
// inside it (shared/, as on the device machines).
func modelsDir(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
	for _, c := range []string{filepath.Join(dir, "shared", "models"), filepath.Join(dir, "..", "shared", "models")} {
		if fi, err := os.Stat(c); err == nil && fi.IsDir() {
			return c
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("shared/models not found next to or inside the repository, and CI=true")
	}
	t.Skip("shared/models not found; skipping the NumPy-written files")
	return ""
}

// TestNumPyFiles reads the NumPy-written test vectors and checks that
// writing them back gives NumPy's bytes exactly.
func TestNumPyFiles(t *testing.T) {
	dir := modelsDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "*", "*", "*.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no .npy files under %s", dir)
	}
	for _, path := range files {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ReadFile(path)
		if err != nil {
			t.Errorf("ReadFile: %v", err)
			continue
		}
		if err := got.Check(); err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		// Activations and references are f32; token ids (GPT's inputs) i64.
		switch {
		case got.DType == tensor.I64 && len(got.Shape) >= 1:
			if nonzero := slices.IndexFunc(got.I64(), func(v int64) bool { return v != 0 }); nonzero < 0 {
				t.Errorf("%s: all zeros", path)
			}
		case got.DType == tensor.F32 && len(got.Shape) >= 2:
			nonzero := 0
			for _, v := range got.F32() {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					t.Errorf("%s: non-finite value %v", path, v)
					break
				}
				if v != 0 {
					nonzero++
				}
			}
			if nonzero == 0 {
				t.Errorf("%s: all zeros", path)
			}
		default:
			t.Errorf("%s: got %s%s, want an f32 array of 2 or more dims or i64 token ids", path, got.DType, shapeString(got.Shape))
		}
		var buf bytes.Buffer
		if err := Write(&buf, got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), raw) {
			t.Errorf("%s: Write does not reproduce NumPy's bytes (%d vs %d bytes)", path, buf.Len(), len(raw))
		}
		// Read from an open file as well (sized by Stat).
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		got2, err := Read(f)
		f.Close()
		if err != nil || !sameTensor(got, got2) {
			t.Errorf("%s: Read(*os.File) = %v, %v", path, got2, err)
		}
	}
}

func TestVersionsAndHeaderForms(t *testing.T) {
	data := tensor.Bytes([]float32{1, 2, 3, 4, 5, 6})
	want := tensor.FromF32([]int64{2, 3}, []float32{1, 2, 3, 4, 5, 6})
	for _, c := range []struct {
		name  string
		major byte
		hdr   string
	}{
		{"v1", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n"},
		{"v2", 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" + strings.Repeat(" ", 200) + "\n"},
		{"v3 (utf-8)", 3, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }   \n"},
		{"16-byte aligned, old NumPy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }    \n"},
		{"no newline, no padding", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}"},
		{"Python 2 longs", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }\n"},
		{"other key order, double quotes", 1, "{\"shape\": (2,3), \"fortran_order\": False, \"descr\": \"<f4\"}\n"},
		{"native byte order", 1, "{'descr': '=f4', 'fortran_order': False, 'shape': (2, 3), }\n"},
		{"no byte order", 1, "{'descr': 'f4', 'fortran_order': False, 'shape': (2, 3), }\n"},
		{"tabs and newlines", 1, "{\t'descr' :\n'<f4' ,'fortran_order':False,'shape':( 2 , 3 , ) }\r\n"},
	} {
		got, err := Read(bytes.NewReader(npyBytes(c.major, c.hdr, data)))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !sameTensor(got, want) {
			t.Errorf("%s: got %s", c.name, describe(got))
		}
	}
}

func TestWriteVersion2(t *testing.T) {
	// No tensor of at most MaxDims dims needs a 2.0 header; check the
	// wrapping itself with an oversized header.
	hdr := "{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }" + strings.Repeat(" ", 70000)
	b := wrapHeader(hdr)
	if b[6] != 2 || b[7] != 0 || len(b)%64 != 0 || b[len(b)-1] != '\n' {
		t.Fatalf("version %d.%d, length %d", b[6], b[7], len(b))
	}
	if hlen := binary.LittleEndian.Uint32(b[8:12]); int(hlen)+12 != len(b) {
		t.Fatalf("header length %d, file prefix %d", hlen, len(b))
	}
	got := mustRead(t, append(b, 1, 0, 2, 0))
	if want := (&tensor.Tensor{DType: tensor.I16, Shape: []int64{2}, Data: []byte{1, 0, 2, 0}}); !sameTensor(got, want) {
		t.Errorf("got %s", describe(got))
	}
}

func TestFortranOrder(t *testing.T) {
	for _, shape := range [][]int64{{2, 3}, {2, 3, 4}, {1, 5}, {5, 1}, {3, 1, 2, 2}, {6}, {}, {2, 0, 3}} {
		n := tensor.NumElements(shape)
		// c[i] holds the C-order index; f is the same array in Fortran order.
		c := make([]int32, n)
		f := make([]int32, n)
		idx := make([]int64, len(shape))
		for i := range n {
			c[i] = int32(i)
			off, st := int64(0), int64(1)
			for k := range shape {
				off += idx[k] * st
				st *= shape[k]
			}
			f[off] = int32(i)
			for k := len(shape) - 1; k >= 0; k-- {
				idx[k]++
				if idx[k] < shape[k] {
					break
				}
				idx[k] = 0
			}
		}
		hdr := fmt.Sprintf("{'descr': '<i4', 'fortran_order': True, 'shape': %s, }\n", shapeString(shape))
		got := mustRead(t, npyBytes(1, hdr, tensor.Bytes(f)))
		want := &tensor.Tensor{DType: tensor.I32, Shape: shape, Data: tensor.Bytes(c)}
		if want.Data == nil {
			want.Data = []byte{}
		}
		if !sameTensor(got, want) {
			t.Errorf("fortran %v: got %v, want %v", shape, got.I32(), c)
		}
	}
	// Big-endian and Fortran order together.
	hdr := "{'descr': '>i2', 'fortran_order': True, 'shape': (2, 2), }\n"
	got := mustRead(t, npyBytes(1, hdr, []byte{0, 1, 0, 3, 0, 2, 0, 4}))
	if want := []byte{1, 0, 2, 0, 3, 0, 4, 0}; !bytes.Equal(got.Data, want) {
		t.Errorf("big-endian fortran: got % x, want % x", got.Data, want)
	}
}

func TestBigEndian(t *testing.T) {
	for _, c := range []struct {
		descr string
		dt    tensor.DType
		value any
	}{
		{">f4", tensor.F32, []float32{1.5, -2, 3e9}},
		{">f8", tensor.F64, []float64{1.5, -2, math.Pi}},
		{">i2", tensor.I16, []int16{1, -2, 300}},
		{">i4", tensor.I32, []int32{1, -2, 70000}},
		{">i8", tensor.I64, []int64{1, -2, 1 << 40}},
		{">f2", tensor.F16, []uint16{0x3c00, 0xc000, 0x7bff}},
		{">i1", tensor.I8, []int8{1, -2, 3}},
		{">u1", tensor.U8, []uint8{1, 2, 255}},
	} {
		var be bytes.Buffer
		if err := binary.Write(&be, binary.BigEndian, c.value); err != nil {
			t.Fatal(err)
		}
		var le bytes.Buffer
		if err := binary.Write(&le, binary.LittleEndian, c.value); err != nil {
			t.Fatal(err)
		}
		hdr := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (3,), }\n", c.descr)
		got := mustRead(t, npyBytes(1, hdr, be.Bytes()))
		want := &tensor.Tensor{DType: c.dt, Shape: []int64{3}, Data: le.Bytes()}
		if !sameTensor(got, want) {
			t.Errorf("%s: got %s, want %s", c.descr, describe(got), describe(want))
		}
	}
}

func TestBoolAndScalar(t *testing.T) {
	got := mustRead(t, npyBytes(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (2, 2), }\n", []byte{0, 1, 2, 255}))
	if want := (&tensor.Tensor{DType: tensor.Bool, Shape: []int64{2, 2}, Data: []byte{0, 1, 1, 1}}); !sameTensor(got, want) {
		t.Errorf("bool: got %s", describe(got))
	}
	got = mustRead(t, npyBytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }\n", tensor.Bytes([]float64{2.5})))
	if len(got.Shape) != 0 || got.Shape == nil || got.DType != tensor.F64 || got.F64()[0] != 2.5 {
		t.Errorf("scalar: got %s", describe(got))
	}
	got = mustRead(t, npyBytes(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (5,), }\n", make([]byte, 40)))
	if len(got.Shape) != 1 || got.Shape[0] != 5 {
		t.Errorf("(5,): got %s", describe(got))
	}
	got = mustRead(t, npyBytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3), }\n", nil))
	if len(got.Shape) != 2 || got.Shape[0] != 0 || got.Shape[1] != 3 || len(got.Data) != 0 {
		t.Errorf("(0, 3): got %s", describe(got))
	}
}

func TestReadErrors(t *testing.T) {
	f4 := func(shape string) string {
		return "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }\n"
	}
	withDescr := func(descr string) string {
		return "{'descr': " + descr + ", 'fortran_order': False, 'shape': (1,), }\n"
	}
	six := make([]byte, 24)
	for _, c := range []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "npy: empty input"},
		{"short magic", []byte("\x93NUM"), "truncated: the input has only 4 bytes"},
		{"not npy", []byte("PK\x03\x04 this is a zip"), `not a .npy input: it starts with "PK\x03\x04 t"`},
		{"short text", []byte("hi"), `not a .npy input: it starts with "hi"`},
		{"version 4.0", []byte("\x93NUMPY\x04\x00\x10\x00"), "unsupported .npy format version 4.0"},
		{"version 1.1", []byte("\x93NUMPY\x01\x01\x10\x00"), "unsupported .npy format version 1.1"},
		{"no header length", []byte("\x93NUMPY\x02\x00\x10\x00"), "ends inside the header length (2 of 4 bytes)"},
		{"truncated header", npyBytes(1, f4("(2, 3)"), nil)[:40], "truncated header: it says 60 bytes, but the input has only 30 more"},
		{"huge header", []byte("\x93NUMPY\x02\x00\xff\xff\xff\xff{"), "header length 4294967295 is larger than the 1048576 bytes allowed"},
		{"unterminated dict", npyBytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), ", six), "malformed header"},
		{"not a dict", npyBytes(1, "[1, 2]\n", six), "not a dict"},
		{"garbage", npyBytes(1, "\x00\x01\x02garbage", six), "malformed header"},
		{"code", npyBytes(1, "{'descr': __import__('os'), 'fortran_order': False, 'shape': (1,)}", six), `unexpected name "__import__"`},
		{"trailing junk", npyBytes(1, f4("(2, 3)")+"x", six), "unexpected 'x' after the dict"},
		{"unterminated string", npyBytes(1, "{'descr: '<f4'}", six), "malformed header"},
		{"float dim", npyBytes(1, f4("(2.5, 3)"), six), "in the number 2"},
		{"missing shape", npyBytes(1, "{'descr': '<f4', 'fortran_order': False}\n", six), `has no "shape" key`},
		{"extra key", npyBytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}\n", six), `unexpected key "x"`},
		{"duplicate key", npyBytes(1, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}\n", six), `the key "descr" twice`},
		{"escaped quote", npyBytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'it\\'s\\n': 1}\n", six), `unexpected key "it's\n"`},
		{"newline in string", npyBytes(1, "{'descr': '<f4\n', 'fortran_order': False, 'shape': (1,)}\n", six), "unterminated string at offset 10"},
		{"int key", npyBytes(1, "{1: '<f4'}\n", six), "key 1 is not a string"},
		{"fortran not bool", npyBytes(1, "{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}\n", six), "fortran_order is 0, want True or False"},
		{"shape not tuple", npyBytes(1, f4("5"), six), "shape is 5, want a tuple"},
		{"shape list", npyBytes(1, f4("[2, 3]"), six), "shape is [2, 3], want a tuple"},
		{"shape of strings", npyBytes(1, f4("('a',)"), six), "dim 0 is 'a', not an int"},
		{"negative dim", npyBytes(1, f4("(2, -3)"), six), "shape (2, -3): dim 1 is negative"},
		{"dim beyond int64", npyBytes(1, f4("(99999999999999999999,)"), six), "dim 0 is too large"},
		{"overflow", npyBytes(1, f4("(4611686018427387904, 4)"), six), "is too large (its size overflows)"},
		{"overflow beside zero", npyBytes(1, f4("(0, 4611686018427387904, 4)"), nil), "overflows"},
		{"65 dims", npyBytes(1, f4("("+strings.Repeat("1, ", 65)+")"), six), "65 dims, more than the 64"},
		{"deep nesting", npyBytes(1, "{'descr': "+strings.Repeat("[", 100)+"}", six), "nested deeper than 32"},
		{"complex", npyBytes(1, withDescr("'<c8'"), six), `unsupported descr "<c8" (complex numbers are not supported)`},
		{"unicode", npyBytes(1, withDescr("'<U5'"), six), `unsupported descr "<U5" (strings are not supported)`},
		{"object", npyBytes(1, withDescr("'|O'"), six), `unsupported descr "|O" (object arrays are not supported)`},
		{"u4", npyBytes(1, withDescr("'<u4'"), six), `unsupported descr "<u4" (u8 is the only unsigned dtype)`},
		{"empty descr", npyBytes(1, withDescr("''"), six), `unsupported descr ""`},
		{"structured", npyBytes(1, withDescr("[('a', '<f4'), ('b', '<i4')]"), six), "unsupported descr [('a', '<f4'), ('b', '<i4')]: structured"},
		{"short data", npyBytes(1, f4("(2, 3)"), six[:20]), "npy: header says shape (2, 3) of <f4 (24 bytes) but the input has 20 bytes of data"},
		{"no data", npyBytes(1, f4("(5,)"), nil), "header says shape (5,) of <f4 (20 bytes) but the input has 0 bytes of data"},
		{"huge claim", npyBytes(1, f4("(1099511627776, 1024)"), six), "(4503599627370496 bytes) but the input has 24 bytes of data"},
	} {
		for _, r := range []struct {
			name string
			r    io.Reader
		}{
			{"sized", bytes.NewReader(c.in)},
			{"unsized", onlyReader{bytes.NewReader(c.in)}},
		} {
			got, err := Read(r.r)
			if err == nil {
				t.Errorf("%s (%s): no error, got %s", c.name, r.name, describe(got))
				continue
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s (%s): error\n %s\nwant it to contain\n %s", c.name, r.name, err, c.want)
			}
		}
	}
	if _, err := Read(bytes.NewReader(nil)); !errors.Is(err, io.EOF) {
		t.Errorf("empty input: %v does not wrap io.EOF", err)
	}
}

// TestNoHugeAllocation checks that a header claiming far more data than the
// input holds is rejected without allocating it.
func TestNoHugeAllocation(t *testing.T) {
	in := npyBytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1073741824, 64), }\n", make([]byte, 3<<20))
	for _, mk := range []func() io.Reader{
		func() io.Reader { return bytes.NewReader(in) },
		func() io.Reader { return onlyReader{bytes.NewReader(in)} },
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Read(mk())
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), "but the input has 3145728 bytes of data") {
			t.Errorf("error %v", err)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 16<<20 {
			t.Errorf("allocated %d bytes for a 3 MiB input", n)
		}
	}
}

func TestLargeUnsized(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	want := randomTensor(rng, tensor.F32, []int64{3, 1 << 18}) // 3 MiB: several chunks
	var buf bytes.Buffer
	if err := Write(&buf, want); err != nil {
		t.Fatal(err)
	}
	got, err := Read(onlyReader{iotest.HalfReader(bytes.NewReader(buf.Bytes()))})
	if err != nil || !sameTensor(got, want) {
		t.Fatalf("unsized read of 3 MiB: %v", err)
	}
	_, err = Read(onlyReader{bytes.NewReader(buf.Bytes()[:buf.Len()-5])})
	if err == nil || !strings.Contains(err.Error(), "(3145728 bytes) but the input has 3145723 bytes of data") {
		t.Errorf("truncated: %v", err)
	}
}

func TestReadErrorPassedThrough(t *testing.T) {
	boom := errors.New("boom")
	b := npyBytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", make([]byte, 24))
	for _, cut := range []int{0, 5, 9, 30, len(b) - 3} {
		_, err := Read(io.MultiReader(bytes.NewReader(b[:cut]), iotest.ErrReader(boom)))
		if !errors.Is(err, boom) {
			t.Errorf("cut %d: %v does not wrap the reader's error", cut, err)
		}
	}
}

func TestReadStream(t *testing.T) {
	a := tensor.FromF32([]int64{2}, []float32{1, 2})
	b := tensor.FromI64([]int64{1, 1}, []int64{7})
	var buf bytes.Buffer
	if err := Write(&buf, a); err != nil {
		t.Fatal(err)
	}
	if err := Write(&buf, b); err != nil {
		t.Fatal(err)
	}
	r := onlyReader{&buf}
	for _, want := range []*tensor.Tensor{a, b} {
		got, err := Read(r)
		if err != nil || !sameTensor(got, want) {
			t.Fatalf("got %v, %v; want %s", got, err, describe(want))
		}
	}
	if _, err := Read(r); !errors.Is(err, io.EOF) {
		t.Errorf("after the last array: %v, want io.EOF", err)
	}
}

func TestWriteErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		t    *tensor.Tensor
		want string
	}{
		{"nil", nil, "nil tensor"},
		{"bf16", tensor.New(tensor.BF16, 2), "bf16 has no NumPy dtype"},
		{"invalid dtype", &tensor.Tensor{DType: tensor.InvalidDType, Shape: []int64{1}, Data: []byte{0}}, "cannot write dtype invalid"},
		{"short data", &tensor.Tensor{DType: tensor.F32, Shape: []int64{2, 3}, Data: make([]byte, 20)}, "tensor f32(2, 3) has 20 bytes of data, want 24"},
		{"negative dims", &tensor.Tensor{DType: tensor.U8, Shape: []int64{-1, -2}, Data: make([]byte, 2)}, "negative dim -1"},
		{"overflow", &tensor.Tensor{DType: tensor.F32, Shape: []int64{1 << 62, 4}}, "overflows"},
		{"too many dims", &tensor.Tensor{DType: tensor.U8, Shape: make([]int64, 65)}, "65 dims"},
	} {
		err := Write(io.Discard, c.t)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

func TestFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.npy")
	want := tensor.FromF32([]int64{2, 2}, []float32{1, 2, 3, 4})
	if err := WriteFile(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(path)
	if err != nil || !sameTensor(got, want) {
		t.Fatalf("ReadFile: %v, %v", got, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode: %v, %v", fi.Mode(), err)
	}

	// A failed write leaves the old file and no temporary file.
	if err := WriteFile(path, tensor.New(tensor.BF16, 1)); err == nil {
		t.Fatal("bf16 written")
	}
	if got, err := ReadFile(path); err != nil || !sameTensor(got, want) {
		t.Errorf("after a failed write: %v, %v", got, err)
	}
	// Overwrite.
	want2 := tensor.New(tensor.Bool, 3)
	if err := WriteFile(path, want2); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadFile(path); err != nil || !sameTensor(got, want2) {
		t.Errorf("after overwrite: %v, %v", got, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("directory holds %d entries, want just x.npy", len(ents))
	}
	if err := WriteFile(filepath.Join(dir, "no", "such", "dir.npy"), want); err == nil {
		t.Error("writing into a missing directory succeeded")
	}

	// Errors name the file; trailing bytes are an error for a file.
	raw, _ := os.ReadFile(path)
	bad := filepath.Join(dir, "bad.npy")
	if err := os.WriteFile(bad, append(raw, 0, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(bad); err == nil || !strings.Contains(err.Error(), "npy: "+bad+": 2 bytes after the array data") {
		t.Errorf("trailing bytes: %v", err)
	}
	if err := os.WriteFile(bad, raw[:len(raw)-1], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(bad); err == nil || !strings.Contains(err.Error(), "npy: "+bad+": header says shape (3,) of |b1 (3 bytes) but the file has 2 bytes of data") {
		t.Errorf("truncated: %v", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing.npy")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}
