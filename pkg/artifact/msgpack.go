package artifact

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"github.com/vmihailenco/msgpack/v5"
)

// MarshalManifest encodes v as msgpack in a canonical form: integers in their
// shortest encoding, and the entries of every map, struct fields included,
// sorted by key (string keys by their bytes, before any other keys, which are
// sorted by their encoding). Equal values give equal bytes, which artifact
// reproducibility needs. Struct fields are named by their msgpack tags.
//
// The msgpack encoder's own SetSortMapKeys sorts only a few map types
// (map[string]string, map[string]bool, map[string]any), not map[string]int or
// map[string]SomeStruct, so the sorting is done here, on the encoded bytes.
func MarshalManifest(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	out, end, err := canonical(buf.Bytes(), 0, 0, make([]byte, 0, buf.Len()))
	if err != nil {
		return nil, err
	}
	if end != uint64(buf.Len()) {
		return nil, fmt.Errorf("msgpack: encoder wrote %d bytes after the value", uint64(buf.Len())-end)
	}
	return out, nil
}

// UnmarshalManifest decodes msgpack b into v, ignoring map keys that v does
// not have (so older readers accept newer manifests). b must hold exactly one
// value. The manifest comes from a file, so b is checked first: no container
// may claim more elements than b has bytes, and nesting is bounded, which
// keeps a crafted manifest from making the decoder allocate without bound (it
// sizes slices from the claimed length) or recurse off the stack.
func UnmarshalManifest(b []byte, v any) (err error) {
	if err := checkMsgpack(b); err != nil {
		return err
	}
	// The checks above rule out the failures we know of in the decoder; this
	// keeps one we do not know of from crashing the runtime.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("msgpack: %v", r)
		}
	}()
	return msgpack.Unmarshal(b, v)
}

// maxMsgpackDepth bounds nesting in manifests and the section table.
const maxMsgpackDepth = 64

var errMsgpackEOF = errors.New("msgpack: unexpected end of data")

// item is the shape of the msgpack value at some offset: hdr bytes of code
// and lengths, then skip bytes of payload, then n nested values (two per map
// entry).
type item struct {
	hdr, skip, n uint64
	isMap, isStr bool
}

// readItem reads the header of the value at b[p:]. It checks that the
// payload fits in b and that a container claims no more values than b has
// bytes left, since every value takes at least one byte.
func readItem(b []byte, p uint64) (item, error) {
	n := uint64(len(b))
	if p >= n {
		return item{}, errMsgpackEOF
	}
	c := b[p]
	// length reads the big-endian length of w bytes after the code.
	length := func(w uint64) (uint64, error) {
		if w > n-p-1 {
			return 0, errMsgpackEOF
		}
		var v uint64
		for _, x := range b[p+1 : p+1+w] {
			v = v<<8 | uint64(x)
		}
		return v, nil
	}
	it := item{hdr: 1}
	var err error
	switch {
	case c <= 0x7f || c >= 0xe0, c == 0xc0, c == 0xc2, c == 0xc3:
	case c <= 0x8f: // fixmap
		it.n, it.isMap = 2*uint64(c&0x0f), true
	case c <= 0x9f: // fixarray
		it.n = uint64(c & 0x0f)
	case c <= 0xbf: // fixstr
		it.skip, it.isStr = uint64(c&0x1f), true
	case c >= 0xc4 && c <= 0xc6: // bin 8/16/32
		w := uint64(1) << (c - 0xc4)
		it.hdr += w
		it.skip, err = length(w)
	case c >= 0xd9 && c <= 0xdb: // str 8/16/32
		w := uint64(1) << (c - 0xd9)
		it.hdr += w
		it.skip, err = length(w)
		it.isStr = true
	case c >= 0xc7 && c <= 0xc9: // ext 8/16/32: length, type, data
		w := uint64(1) << (c - 0xc7)
		it.hdr += w + 1
		it.skip, err = length(w)
	case c == 0xca:
		it.skip = 4
	case c == 0xcb:
		it.skip = 8
	case c >= 0xcc && c <= 0xcf: // uint 8..64
		it.skip = 1 << (c - 0xcc)
	case c >= 0xd0 && c <= 0xd3: // int 8..64
		it.skip = 1 << (c - 0xd0)
	case c >= 0xd4 && c <= 0xd8: // fixext 1..16: type, data
		it.skip = 1 + 1<<(c-0xd4)
	case c == 0xdc || c == 0xdd: // array 16/32
		w := uint64(2) << (c - 0xdc)
		it.hdr += w
		it.n, err = length(w)
	case c == 0xde || c == 0xdf: // map 16/32
		w := uint64(2) << (c - 0xde)
		it.hdr += w
		it.n, err = length(w)
		it.n *= 2
		it.isMap = true
	default: // 0xc1 is never used
		return item{}, fmt.Errorf("msgpack: invalid code 0x%02x at byte %d", c, p)
	}
	if err != nil {
		return item{}, err
	}
	if it.hdr > n-p || it.skip > n-p-it.hdr || it.n > n-p-it.hdr-it.skip {
		return item{}, fmt.Errorf("msgpack: value at byte %d runs past the end of the data", p)
	}
	return it, nil
}

// checkMsgpack checks that b is one msgpack value (see readItem), nested at
// most maxMsgpackDepth deep, with nothing after it. It is iterative, so it
// cannot overflow the stack whatever b holds.
func checkMsgpack(b []byte) error {
	pending := []uint64{1} // values still to read in each open container
	p := uint64(0)
	for len(pending) > 0 {
		if pending[len(pending)-1] == 0 {
			pending = pending[:len(pending)-1]
			continue
		}
		pending[len(pending)-1]--
		it, err := readItem(b, p)
		if err != nil {
			return err
		}
		p += it.hdr + it.skip
		if it.n > 0 {
			if len(pending) > maxMsgpackDepth {
				return fmt.Errorf("msgpack: nested deeper than %d", maxMsgpackDepth)
			}
			pending = append(pending, it.n)
		}
	}
	if p != uint64(len(b)) {
		return fmt.Errorf("msgpack: %d unexpected bytes after the value", uint64(len(b))-p)
	}
	return nil
}

// canonical appends the value at b[p:] to out with every map's entries
// sorted, and returns where the value ended. b comes from our own encoder,
// so recursion depth is that of the Go value.
func canonical(b []byte, p uint64, depth int, out []byte) ([]byte, uint64, error) {
	if depth > maxMsgpackDepth {
		return nil, 0, fmt.Errorf("msgpack: nested deeper than %d", maxMsgpackDepth)
	}
	it, err := readItem(b, p)
	if err != nil {
		return nil, 0, err
	}
	end := p + it.hdr + it.skip
	out = append(out, b[p:end]...)
	if !it.isMap {
		for range it.n {
			if out, end, err = canonical(b, end, depth+1, out); err != nil {
				return nil, 0, err
			}
		}
		return out, end, nil
	}
	type entry struct {
		key, kv []byte // the encoded key, and the key and value together
		keyStr  bool
		keyText []byte
	}
	entries := make([]entry, it.n/2)
	for i := range entries {
		var kv []byte
		if kv, end, err = canonical(b, end, depth+1, nil); err != nil {
			return nil, 0, err
		}
		klen := len(kv)
		if kv, end, err = canonical(b, end, depth+1, kv); err != nil {
			return nil, 0, err
		}
		e := entry{key: kv[:klen], kv: kv}
		if k, _ := readItem(e.key, 0); k.isStr {
			e.keyStr, e.keyText = true, e.key[k.hdr:]
		}
		entries[i] = e
	}
	slices.SortFunc(entries, func(x, y entry) int {
		switch {
		case x.keyStr && y.keyStr:
			return bytes.Compare(x.keyText, y.keyText)
		case x.keyStr != y.keyStr:
			if x.keyStr {
				return -1
			}
			return 1
		}
		return bytes.Compare(x.key, y.key)
	})
	for _, e := range entries {
		out = append(out, e.kv...)
	}
	return out, end, nil
}

// encodeTable is MarshalManifest for the section table.
func encodeTable(t *table) ([]byte, error) { return MarshalManifest(t) }

// decodeTable decodes a section table. The caller checks the entries against
// the file.
func decodeTable(b []byte) (*table, error) {
	var t table
	if err := UnmarshalManifest(b, &t); err != nil {
		return nil, err
	}
	return &t, nil
}
