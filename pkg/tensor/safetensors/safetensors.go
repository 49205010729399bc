// Package safetensors reads and writes the safetensors tensor file format
// (https://github.com/huggingface/safetensors):
//
//	8 bytes   N, the header length, an unsigned little-endian 64-bit integer
//	N bytes   a UTF-8 JSON object, starting with '{', maybe padded with spaces:
//	          {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
//	           "__metadata__": {"key": "value"}}
//	the rest  the data buffer; offsets are relative to its start
//
// A file is treated as hostile: Open and Parse check the whole header
// (length, JSON, duplicate keys, dtypes, shapes, offsets, and that the
// tensors cover the data buffer exactly, without overlaps or holes) before
// they return, so that every tensor of a File they return can be read.
// Nothing in a file makes this package allocate much more than the file's
// own size, and no input makes it panic.
package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/bits"
	"os"
	"sort"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/rlx-project/rlx/pkg/tensor"
)

// MaxHeaderSize is the largest header accepted, in bytes: the limit of the
// reference implementation.
const MaxHeaderSize = 100_000_000

// metadataKey is the header key that holds the string-to-string metadata.
const metadataKey = "__metadata__"

// The safetensors dtype names of the rlx dtypes.
var dtypeToName = map[tensor.DType]string{
	tensor.F32:  "F32",
	tensor.F16:  "F16",
	tensor.BF16: "BF16",
	tensor.F64:  "F64",
	tensor.I8:   "I8",
	tensor.I16:  "I16",
	tensor.I32:  "I32",
	tensor.I64:  "I64",
	tensor.U8:   "U8",
	tensor.Bool: "BOOL",
}

var nameToDType = func() map[string]tensor.DType {
	m := make(map[string]tensor.DType, len(dtypeToName))
	for d, n := range dtypeToName {
		m[n] = d
	}
	return m
}()

// unsupported are dtypes of the safetensors format that rlx has no type for.
var unsupported = map[string]bool{
	"U16": true, "U32": true, "U64": true,
	"F8_E4M3": true, "F8_E5M2": true, "F8_E8M0": true, "F6_E2M3": true,
	"F6_E3M2": true, "F4": true, "C64": true,
}

// entry is one checked tensor of the header.
type entry struct {
	name       string
	dtype      tensor.DType
	shape      []int64
	begin, end uint64 // within the data buffer, begin <= end <= len(data)
}

// File is an opened safetensors file. Its tensors are views into one
// read-only buffer (a memory mapping of the file, where the platform has
// one): callers must not write to their Data, and must not use them after
// Close. A File's methods may be called from several goroutines at once,
// but not at the same time as Close.
type File struct {
	name    string // for messages
	buf     []byte // the whole file
	data    []byte // the data buffer, a suffix of buf
	entries map[string]*entry
	names   []string // sorted
	meta    map[string]string
	unmap   func([]byte) error // nil unless buf is a mapping
	closed  bool
}

// Parse reads a safetensors file held in b, checking the whole header. The
// File's tensors alias b, which the caller must not change while they are in
// use.
func Parse(b []byte) (*File, error) {
	return parse(b, "<memory>")
}

// Open reads the safetensors file at path, mapping it into memory where the
// platform allows (reading it otherwise), and checks the whole header.
func Open(path string) (*File, error) {
	fd, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	var (
		buf   []byte
		unmap func([]byte) error
	)
	if st.Mode().IsRegular() {
		size := st.Size()
		if size >= 8 {
			buf, unmap, err = mmapFile(fd, size)
			if err != nil {
				buf, unmap = nil, nil // fall back to reading
			}
		}
		if buf == nil {
			if int64(int(size)) != size {
				return nil, fmt.Errorf("safetensors: %s: file of %d bytes is too large to read", path, size)
			}
			buf = make([]byte, size)
			if _, err := io.ReadFull(fd, buf); err != nil {
				return nil, fmt.Errorf("safetensors: read %s: %w", path, err)
			}
		}
	} else {
		// A device (/dev/zero), a pipe or a directory: no size to check a
		// header against, and possibly no end.
		return nil, fmt.Errorf("safetensors: %s is not a regular file; write the weights to a file first", path)
	}
	f, err := parse(buf, path)
	if err != nil {
		if unmap != nil {
			_ = unmap(buf)
		}
		return nil, err
	}
	f.unmap = unmap
	return f, nil
}

// Close releases the file's buffer. Tensors returned by Tensor must not be
// used after Close. Closing twice is not an error.
func (f *File) Close() error {
	if f.closed {
		return nil
	}
	f.closed = true
	buf, unmap := f.buf, f.unmap
	f.buf, f.data, f.unmap = nil, nil, nil
	if unmap != nil {
		if err := unmap(buf); err != nil {
			return fmt.Errorf("safetensors: close %s: %w", f.name, err)
		}
	}
	return nil
}

// Names lists the tensors of the file, sorted.
func (f *File) Names() []string {
	return append([]string(nil), f.names...)
}

// Metadata is a copy of the file's __metadata__ (empty when it has none).
func (f *File) Metadata() map[string]string {
	m := make(map[string]string, len(f.meta))
	for k, v := range f.meta {
		m[k] = v
	}
	return m
}

// Tensor returns the named tensor. Its Data is a view into the file's
// buffer, not a copy, unless the data is not aligned to its element size in
// memory (possible only for files not written by this package or the
// reference implementation, or for Parse of an unaligned slice), when it is
// an aligned copy.
func (f *File) Tensor(name string) (*tensor.Tensor, error) {
	if f.closed {
		return nil, fmt.Errorf("safetensors: %s is closed", f.name)
	}
	e, ok := f.entries[name]
	if !ok {
		return nil, fmt.Errorf("safetensors: no tensor named %q in %s (%s)", name, f.name, f.listing())
	}
	data := f.data[e.begin:e.end:e.end]
	if len(data) > 0 {
		if size := uintptr(e.dtype.Size()); uintptr(unsafe.Pointer(&data[0]))%size != 0 {
			data = alignedCopy(data)
		}
	}
	return &tensor.Tensor{DType: e.dtype, Shape: append([]int64{}, e.shape...), Data: data}, nil
}

// listing describes the file's tensors for an error message, naming at most
// a few.
func (f *File) listing() string {
	const most = 8
	n := len(f.names)
	switch n {
	case 0:
		return "it has no tensors"
	case 1:
		return "it has 1 tensor: " + f.names[0]
	}
	shown := f.names
	more := ""
	if n > most {
		shown, more = shown[:most], ", ..."
	}
	return fmt.Sprintf("it has %d tensors: %s%s", n, strings.Join(shown, ", "), more)
}

// alignedCopy copies b into memory aligned to 8 bytes.
func alignedCopy(b []byte) []byte {
	words := make([]uint64, (len(b)+7)/8)
	out := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), len(b))
	copy(out, b)
	return out
}

// parse checks a whole file held in b; name is used in messages.
func parse(b []byte, name string) (*File, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("safetensors: %s: %s", name, fmt.Sprintf(format, args...))
	}
	if len(b) < 8 {
		return nil, fail("file is %d bytes, too short for the 8-byte header length", len(b))
	}
	n := binary.LittleEndian.Uint64(b[:8])
	if n > MaxHeaderSize {
		return nil, fail("header length %d is over the limit of %d bytes", n, MaxHeaderSize)
	}
	if n > uint64(len(b)-8) {
		return nil, fail("header length %d runs past the end of the file (%d bytes after the length)", n, len(b)-8)
	}
	header := b[8 : 8+n]
	data := b[8+n:]
	if len(header) == 0 || header[0] != '{' {
		return nil, fail("header does not start with '{'")
	}
	if !utf8.Valid(header) {
		return nil, fail("header is not valid UTF-8")
	}

	dec := json.NewDecoder(bytes.NewReader(header))
	top, err := objectFields(dec)
	if err != nil {
		return nil, fail("header: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fail("header: data after the JSON object")
	}

	f := &File{name: name, buf: b, data: data, entries: make(map[string]*entry, len(top)), meta: map[string]string{}}
	for _, kv := range top {
		if kv.key == metadataKey {
			if f.meta, err = parseMetadata(kv.raw); err != nil {
				return nil, fail("%s: %v", metadataKey, err)
			}
			continue
		}
		e, err := parseEntry(kv.key, kv.raw, uint64(len(data)))
		if err != nil {
			return nil, fail("tensor %q: %v", kv.key, err)
		}
		f.entries[kv.key] = e
		f.names = append(f.names, kv.key)
	}
	sort.Strings(f.names)
	if err := checkCoverage(f.entries, uint64(len(data))); err != nil {
		return nil, fail("%v", err)
	}
	return f, nil
}

type field struct {
	key string
	raw json.RawMessage
}

// objectFields reads one JSON object from dec, rejecting duplicate keys.
func objectFields(dec *json.Decoder) ([]field, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("want a JSON object, got %s", describe(tok))
	}
	var fields []field
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("want an object key, got %s", describe(tok))
		}
		if seen[key] {
			return nil, fmt.Errorf("duplicate key %q", key)
		}
		seen[key] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("key %q: %v", key, err)
		}
		fields = append(fields, field{key, raw})
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return nil, err
	}
	return fields, nil
}

// describe names a JSON token for a message.
func describe(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		return fmt.Sprintf("%q", string(t))
	case string:
		return fmt.Sprintf("string %q", t)
	case nil:
		return "null"
	default:
		return fmt.Sprintf("%T %v", t, t)
	}
}

// fieldsOf reads raw as one JSON object with distinct keys.
func fieldsOf(raw json.RawMessage) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	fields, err := objectFields(dec)
	if err != nil {
		return nil, err
	}
	m := make(map[string]json.RawMessage, len(fields))
	for _, kv := range fields {
		m[kv.key] = kv.raw
	}
	return m, nil
}

func parseMetadata(raw json.RawMessage) (map[string]string, error) {
	meta := map[string]string{}
	if string(raw) == "null" {
		return meta, nil
	}
	fields, err := fieldsOf(raw)
	if err != nil {
		return nil, err
	}
	for k, v := range fields {
		var s string
		if len(v) == 0 || v[0] != '"' {
			return nil, fmt.Errorf("value of %q is %s, not a string", k, snippet(v))
		}
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, fmt.Errorf("value of %q: %v", k, err)
		}
		meta[k] = s
	}
	return meta, nil
}

// snippet shortens raw JSON for a message.
func snippet(raw []byte) string {
	const most = 40
	if len(raw) > most {
		return string(raw[:most]) + "..."
	}
	return string(raw)
}

// parseEntry checks one tensor's header entry against a data buffer of
// dataLen bytes.
func parseEntry(name string, raw json.RawMessage, dataLen uint64) (*entry, error) {
	fields, err := fieldsOf(raw)
	if err != nil {
		return nil, err
	}
	get := func(key string, v any) error {
		r, ok := fields[key]
		if !ok || string(r) == "null" {
			return fmt.Errorf("no %s", key)
		}
		if err := json.Unmarshal(r, v); err != nil {
			return fmt.Errorf("bad %s %s: %v", key, snippet(r), err)
		}
		return nil
	}
	var (
		dname   string
		shape   []int64
		offsets []uint64
	)
	if err := get("dtype", &dname); err != nil {
		return nil, err
	}
	dt, ok := nameToDType[dname]
	if !ok {
		if unsupported[dname] {
			return nil, fmt.Errorf("dtype %s is not supported by rlx", dname)
		}
		return nil, fmt.Errorf("unknown dtype %q", dname)
	}
	if err := get("shape", &shape); err != nil {
		return nil, err
	}
	if err := get("data_offsets", &offsets); err != nil {
		return nil, err
	}
	if len(offsets) != 2 {
		return nil, fmt.Errorf("data_offsets has %d numbers, want 2 [begin, end]", len(offsets))
	}
	begin, end := offsets[0], offsets[1]
	if begin > end {
		return nil, fmt.Errorf("data_offsets [%d, %d] end before they begin", begin, end)
	}
	if end > dataLen {
		return nil, fmt.Errorf("data_offsets [%d, %d] run past the end of the %d-byte data buffer", begin, end, dataLen)
	}
	nbytes := uint64(dt.Size())
	for _, d := range shape {
		if d < 0 {
			return nil, fmt.Errorf("shape %s has a negative dim", tensor.ShapeString(shape))
		}
		hi, lo := bits.Mul64(nbytes, uint64(d))
		if hi != 0 || lo > 1<<62 {
			return nil, fmt.Errorf("shape %s of %s is too large (its byte size overflows)", tensor.ShapeString(shape), dt)
		}
		nbytes = lo
	}
	if nbytes != end-begin {
		return nil, fmt.Errorf("%s%s needs %d bytes, but data_offsets [%d, %d] hold %d",
			dt, tensor.ShapeString(shape), nbytes, begin, end, end-begin)
	}
	if shape == nil {
		shape = []int64{}
	}
	return &entry{name: name, dtype: dt, shape: shape, begin: begin, end: end}, nil
}

// checkCoverage checks that the tensors cover the data buffer exactly once:
// no overlaps, no holes, nothing after the last tensor.
func checkCoverage(entries map[string]*entry, dataLen uint64) error {
	es := make([]*entry, 0, len(entries))
	for _, e := range entries {
		es = append(es, e)
	}
	sort.Slice(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if a.begin != b.begin {
			return a.begin < b.begin
		}
		if a.end != b.end {
			return a.end < b.end
		}
		return a.name < b.name
	})
	var pos uint64
	var last *entry // the tensor that ends at pos, if any
	for _, e := range es {
		switch {
		case e.begin < pos:
			return fmt.Errorf("tensor %q [%d, %d) overlaps tensor %q [%d, %d)", e.name, e.begin, e.end, last.name, last.begin, last.end)
		case e.begin > pos:
			return fmt.Errorf("data buffer bytes [%d, %d) belong to no tensor (the spec allows no holes)", pos, e.begin)
		}
		if e.end > pos || last == nil {
			last = e
		}
		pos = e.end
	}
	if pos != dataLen {
		return fmt.Errorf("data buffer bytes [%d, %d) after the last tensor belong to no tensor (the spec allows no holes)", pos, dataLen)
	}
	return nil
}
