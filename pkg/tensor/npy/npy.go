// Package npy reads and writes NumPy .npy and .npz files as tensors.
//
// Reading accepts format versions 1.0, 2.0 and 3.0 and these descrs (the
// byte-order character may be '<', '|', '=' or absent, all meaning
// little-endian, or '>'):
//
//	f2 → f16   f4 → f32   f8 → f64
//	i1 → i8    i2 → i16   i4 → i32   i8 → i64
//	u1 → u8    b1 → bool
//
// Big-endian data ('>f4' and so on) is byte-swapped to little-endian, and
// fortran_order True data is transposed into row-major order, so the tensor
// always holds little-endian row-major data. Bool bytes other than 0 are read
// as 1. Every other descr (complex, unsigned wider than a byte, strings,
// objects, structured dtypes) is an error naming it. A shape may have at most
// MaxDims dims, as in NumPy 2.
//
// Writing produces what np.save produces, byte for byte: format 1.0 (2.0 if
// the header needs more than 65535 bytes), descrs '<f4', '|i1', '|b1' and so
// on, fortran_order False, the header padded so the data starts at a multiple
// of 64. bf16 has no NumPy dtype and cannot be written.
//
// Reading never allocates much more than the input holds: when the input's
// size is known (a file, a *bytes.Reader, *bytes.Buffer or *strings.Reader)
// the header is checked against it before any allocation; otherwise the data
// is read in growing chunks.
package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/rlx-project/rlx/pkg/tensor"
)

const magic = "\x93NUMPY"

// MaxDims is the most dims a .npy shape may have (NumPy 2's limit).
const MaxDims = 64

// maxHeaderLen bounds the header a reader accepts (NumPy's own default
// limit is 10000 bytes; a 64-dim header fits in under 2 KiB).
const maxHeaderLen = 1 << 20

// chunk is the first allocation when the data size is not known in advance.
const chunk = 1 << 20

// align is where NumPy starts the data: a multiple of 64 bytes.
const align = 64

// source is an input being decoded, with what is known about its size.
type source struct {
	r       io.Reader
	pkg     string // for errors: "npy", or "npz" for an archive member
	name    string // for errors: a path, or "" for Read
	what    string // "input", "file", "member"
	size    int64  // bytes available at the start; -1 if unknown
	trusted bool   // size is real: the data can be allocated at once
	n       int64  // bytes consumed
}

func (s *source) errf(format string, args ...any) error {
	prefix := "npy: "
	if s.pkg != "" {
		prefix = s.pkg + ": "
	}
	if s.name != "" {
		prefix += s.name + ": "
	}
	return fmt.Errorf("%s"+format, append([]any{prefix}, args...)...)
}

func (s *source) remaining() int64 {
	if s.size < 0 {
		return -1
	}
	return max(s.size-s.n, 0)
}

func (s *source) readFull(b []byte) (int, error) {
	n, err := io.ReadFull(s.r, b)
	s.n += int64(n)
	return n, err
}

// Read reads one .npy array from r and leaves r just past its data, so a
// stream of concatenated arrays can be read with repeated calls. At the end
// of the input it returns an error that wraps io.EOF.
func Read(r io.Reader) (*tensor.Tensor, error) {
	s := &source{r: r, what: "input", size: -1}
	switch v := r.(type) {
	case *bytes.Reader:
		s.size, s.trusted = int64(v.Len()), true
	case *bytes.Buffer:
		s.size, s.trusted = int64(v.Len()), true
	case *strings.Reader:
		s.size, s.trusted = int64(v.Len()), true
	case *os.File:
		if fi, err := v.Stat(); err == nil && fi.Mode().IsRegular() {
			if off, err := v.Seek(0, io.SeekCurrent); err == nil && off <= fi.Size() {
				s.size, s.trusted = fi.Size()-off, true
			}
		}
	}
	return s.decode()
}

// ReadFile reads a .npy file. Bytes after the array data are an error.
func ReadFile(path string) (*tensor.Tensor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	defer f.Close()
	s := &source{r: f, name: path, what: "file", size: -1}
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		s.size, s.trusted = fi.Size(), true
	}
	t, err := s.decode()
	if err != nil {
		return nil, err
	}
	if err := s.expectEnd(); err != nil {
		return nil, err
	}
	return t, nil
}

// expectEnd checks that nothing follows the array data.
func (s *source) expectEnd() error {
	var b [1]byte
	n, err := io.ReadFull(s.r, b[:])
	if n > 0 {
		extra := "more bytes"
		if s.size >= 0 {
			extra = strconv.FormatInt(s.size-s.n, 10) + " bytes"
		}
		return s.errf("%s after the array data (the %s is longer than its header says)", extra, s.what)
	}
	if err != io.EOF {
		return s.errf("%w", err)
	}
	return nil
}

func (s *source) decode() (*tensor.Tensor, error) {
	// Magic string and version.
	var pre [8]byte
	n, err := s.readFull(pre[:])
	if err != nil {
		switch {
		case n == 0 && err == io.EOF:
			return nil, s.errf("empty %s: %w", s.what, io.EOF)
		case err == io.ErrUnexpectedEOF:
			if !strings.HasPrefix(magic, string(pre[:min(n, len(magic))])) {
				return nil, s.errf("not a .npy %s: it starts with %q, not %q", s.what, pre[:n], magic)
			}
			return nil, s.errf("truncated: the %s has only %d bytes", s.what, n)
		}
		return nil, s.errf("%w", err)
	}
	if string(pre[:6]) != magic {
		return nil, s.errf("not a .npy %s: it starts with %q, not %q", s.what, pre[:6], magic)
	}
	major, minor := pre[6], pre[7]
	var lenSize int
	switch {
	case major == 1 && minor == 0:
		lenSize = 2
	case (major == 2 || major == 3) && minor == 0:
		lenSize = 4
	default:
		return nil, s.errf("unsupported .npy format version %d.%d (want 1.0, 2.0 or 3.0)", major, minor)
	}

	// Header length and header.
	var lb [4]byte
	if n, err := s.readFull(lb[:lenSize]); err != nil {
		if err == io.ErrUnexpectedEOF || err == io.EOF {
			return nil, s.errf("truncated: the %s ends inside the header length (%d of %d bytes)", s.what, n, lenSize)
		}
		return nil, s.errf("%w", err)
	}
	var hlen int64
	if lenSize == 2 {
		hlen = int64(binary.LittleEndian.Uint16(lb[:2]))
	} else {
		hlen = int64(binary.LittleEndian.Uint32(lb[:4]))
	}
	if hlen > maxHeaderLen {
		return nil, s.errf("header length %d is larger than the %d bytes allowed", hlen, maxHeaderLen)
	}
	if rem := s.remaining(); rem >= 0 && hlen > rem {
		return nil, s.errf("truncated header: it says %d bytes, but the %s has only %d more", hlen, s.what, rem)
	}
	hbuf := make([]byte, hlen)
	if n, err := s.readFull(hbuf); err != nil {
		if err == io.ErrUnexpectedEOF || err == io.EOF {
			return nil, s.errf("truncated header: it says %d bytes, but the %s has only %d more", hlen, s.what, n)
		}
		return nil, s.errf("%w", err)
	}
	h, err := parseHeader(string(hbuf))
	if err != nil {
		return nil, s.errf("%v", err)
	}
	dt, swap, err := parseDescr(h.descr)
	if err != nil {
		return nil, s.errf("%v", err)
	}
	esz := int64(dt.Size())
	nbytes, ok := dataSize(h.shape, esz)
	if !ok {
		return nil, s.errf("header shape %s of %s is too large (its size overflows)", shapeString(h.shape), h.descr)
	}

	// Data.
	data, err := s.readData(nbytes, func(got int64) error {
		return s.errf("header says shape %s of %s (%d bytes) but the %s has %d bytes of data",
			shapeString(h.shape), h.descr, nbytes, s.what, got)
	})
	if err != nil {
		return nil, err
	}
	if swap && esz > 1 {
		byteSwap(data, int(esz))
	}
	if dt == tensor.Bool {
		for i, b := range data {
			if b > 1 {
				data[i] = 1
			}
		}
	}
	if h.fortran {
		data = fortranToC(data, h.shape, int(esz))
	}
	return &tensor.Tensor{DType: dt, Shape: h.shape, Data: data}, nil
}

// readData reads exactly n bytes; short is the error for a short input.
func (s *source) readData(n int64, short func(got int64) error) ([]byte, error) {
	if rem := s.remaining(); rem >= 0 && n > rem {
		return nil, short(rem)
	}
	if n > math.MaxInt {
		return nil, s.errf("the array needs %d bytes, more than this machine can address", n)
	}
	if s.trusted || n <= chunk {
		buf := make([]byte, n)
		got, err := s.readFull(buf)
		if err != nil {
			if err == io.ErrUnexpectedEOF || err == io.EOF {
				return nil, short(int64(got))
			}
			return nil, s.errf("reading the array data: %w", err)
		}
		return buf, nil
	}
	// Unknown size: grow as the data arrives, so a lying header costs at
	// most twice what the input really holds.
	buf := make([]byte, 0, chunk)
	for int64(len(buf)) < n {
		if len(buf) == cap(buf) {
			nb := make([]byte, len(buf), min(2*int64(cap(buf)), n))
			copy(nb, buf)
			buf = nb
		}
		got, err := s.readFull(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+got]
		if err != nil {
			if err == io.ErrUnexpectedEOF || err == io.EOF {
				return nil, short(int64(len(buf)))
			}
			return nil, s.errf("reading the array data: %w", err)
		}
	}
	return buf, nil
}

// dataSize is the byte size of a shape, false if it overflows int64. A
// shape whose nonzero dims overflow is rejected even when another dim is 0.
func dataSize(shape []int64, esz int64) (int64, bool) {
	prod := esz
	zero := false
	for _, d := range shape {
		if d < 0 {
			return 0, false
		}
		if d == 0 {
			zero = true
			continue
		}
		if prod > math.MaxInt64/d {
			return 0, false
		}
		prod *= d
	}
	if zero {
		return 0, true
	}
	return prod, true
}

// descrs maps a descr without its byte-order character to a dtype.
var descrs = map[string]tensor.DType{
	"f2": tensor.F16, "f4": tensor.F32, "f8": tensor.F64,
	"i1": tensor.I8, "i2": tensor.I16, "i4": tensor.I32, "i8": tensor.I64,
	"u1": tensor.U8, "b1": tensor.Bool,
}

// parseDescr maps a descr to a dtype and whether its data is big-endian.
func parseDescr(descr string) (tensor.DType, bool, error) {
	body, swap := descr, false
	if body != "" {
		switch body[0] {
		case '<', '|', '=': // '=' is native, and rlx runs little-endian only
			body = body[1:]
		case '>':
			body, swap = body[1:], true
		}
	}
	if dt, ok := descrs[body]; ok {
		return dt, swap, nil
	}
	why := ""
	switch {
	case strings.HasPrefix(body, "O"):
		why = " (object arrays are not supported)"
	case strings.HasPrefix(body, "c"):
		why = " (complex numbers are not supported)"
	case strings.HasPrefix(body, "U") || strings.HasPrefix(body, "S") || strings.HasPrefix(body, "a"):
		why = " (strings are not supported)"
	case strings.HasPrefix(body, "u"):
		why = " (u8 is the only unsigned dtype)"
	case strings.HasPrefix(body, "V"):
		why = " (void and structured dtypes are not supported)"
	}
	return 0, false, fmt.Errorf("unsupported descr %s%s; supported: <f2 <f4 <f8 |i1 <i2 <i4 <i8 |u1 |b1", strconv.Quote(clip(descr)), why)
}

// writeDescrs is what np.save writes for each dtype.
var writeDescrs = map[tensor.DType]string{
	tensor.F16: "<f2", tensor.F32: "<f4", tensor.F64: "<f8",
	tensor.I8: "|i1", tensor.I16: "<i2", tensor.I32: "<i4", tensor.I64: "<i8",
	tensor.U8: "|u1", tensor.Bool: "|b1",
}

func byteSwap(data []byte, esz int) {
	for i := 0; i+esz <= len(data); i += esz {
		e := data[i : i+esz]
		for a, b := 0, esz-1; a < b; a, b = a+1, b-1 {
			e[a], e[b] = e[b], e[a]
		}
	}
}

// fortranToC reorders column-major data into row-major order.
func fortranToC(data []byte, shape []int64, esz int) []byte {
	nd := len(shape)
	if nd < 2 || len(data) == 0 {
		return data
	}
	fstride := make([]int, nd) // in elements
	st := 1
	for k := 0; k < nd; k++ {
		fstride[k] = st
		st *= int(shape[k])
	}
	out := make([]byte, len(data))
	idx := make([]int, nd)
	off := 0 // column-major element offset of idx
	for o := 0; o < len(out); o += esz {
		copy(out[o:o+esz], data[off*esz:off*esz+esz])
		for k := nd - 1; k >= 0; k-- {
			idx[k]++
			off += fstride[k]
			if idx[k] < int(shape[k]) {
				break
			}
			off -= fstride[k] * int(shape[k])
			idx[k] = 0
		}
	}
	return out
}

// encodeHeader checks t and returns the magic string, version, header length
// and header that np.save would write for it.
func encodeHeader(t *tensor.Tensor) ([]byte, error) {
	if t == nil {
		return nil, errors.New("npy: cannot write a nil tensor")
	}
	descr, ok := writeDescrs[t.DType]
	if !ok {
		if t.DType == tensor.BF16 {
			return nil, errors.New("npy: bf16 has no NumPy dtype; convert the tensor to f32 before writing it")
		}
		return nil, fmt.Errorf("npy: cannot write dtype %s", t.DType)
	}
	if len(t.Shape) > MaxDims {
		return nil, fmt.Errorf("npy: shape has %d dims, more than the %d NumPy allows", len(t.Shape), MaxDims)
	}
	for i, d := range t.Shape {
		if d < 0 {
			return nil, fmt.Errorf("npy: shape %s has the negative dim %d at %d", shapeString(t.Shape), d, i)
		}
	}
	n, ok := dataSize(t.Shape, int64(t.DType.Size()))
	if !ok {
		return nil, fmt.Errorf("npy: shape %s of %s overflows", shapeString(t.Shape), t.DType)
	}
	if int64(len(t.Data)) != n {
		return nil, fmt.Errorf("npy: tensor %s%s has %d bytes of data, want %d", t.DType, shapeString(t.Shape), len(t.Data), n)
	}
	hdr := "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shapeString(t.Shape) + ", }"
	// np.save leaves room for the first dim to grow to 21 digits in place.
	if len(t.Shape) > 0 {
		hdr += strings.Repeat(" ", 21-len(strconv.FormatInt(t.Shape[0], 10)))
	}
	return wrapHeader(hdr), nil
}

// wrapHeader adds the prefix, the padding and the newline, as NumPy's
// _wrap_header does: version 1.0 if the length fits 16 bits, else 2.0.
func wrapHeader(hdr string) []byte {
	hlen := len(hdr) + 1 // the newline
	prefix := len(magic) + 2 + 2
	pad := align - (prefix+hlen)%align
	major := byte(1)
	if hlen+pad > math.MaxUint16 {
		major, prefix = 2, len(magic)+2+4
		pad = align - (prefix+hlen)%align
	}
	out := make([]byte, 0, prefix+hlen+pad)
	out = append(out, magic...)
	out = append(out, major, 0)
	if major == 1 {
		out = binary.LittleEndian.AppendUint16(out, uint16(hlen+pad))
	} else {
		out = binary.LittleEndian.AppendUint32(out, uint32(hlen+pad))
	}
	out = append(out, hdr...)
	for range pad {
		out = append(out, ' ')
	}
	return append(out, '\n')
}

// Write writes t to w as a .npy array.
func Write(w io.Writer, t *tensor.Tensor) error {
	hdr, err := encodeHeader(t)
	if err != nil {
		return err
	}
	if _, err := w.Write(hdr); err != nil {
		return fmt.Errorf("npy: %w", err)
	}
	if _, err := w.Write(t.Data); err != nil {
		return fmt.Errorf("npy: %w", err)
	}
	return nil
}

// WriteFile writes t to a .npy file through a temporary file in the same
// directory and a rename, so the file is either complete or untouched.
func WriteFile(path string, t *tensor.Tensor) error {
	if _, err := encodeHeader(t); err != nil {
		return err
	}
	return writeAtomic(path, func(w io.Writer) error { return Write(w, t) })
}
