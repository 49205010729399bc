package artifact

import (
	"bytes"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

type manifestV1 struct {
	Compiler string            `msgpack:"compiler"`
	Bindings []map[string]int  `msgpack:"bindings"`
	Shapes   map[string][]int  `msgpack:"shapes"`
	Extra    map[int]string    `msgpack:"extra"`
	Nested   map[string]nested `msgpack:"nested"`
}

type nested struct {
	Z int            `msgpack:"z"`
	A map[string]int `msgpack:"a"`
}

// manifestV2 is what a newer compiler might write: one more field.
type manifestV2 struct {
	manifestV1 `msgpack:",inline"`
	Future     []string `msgpack:"future"`
}

func sampleManifest() manifestV1 {
	m := manifestV1{
		Compiler: "rlxc 0.1",
		Shapes:   map[string][]int{},
		Extra:    map[int]string{},
		Nested:   map[string]nested{},
	}
	for i := range 40 {
		k := strings.Repeat(string(rune('a'+i%26)), 1+i%3)
		m.Bindings = append(m.Bindings, map[string]int{k: i, "batch": i, "seq": 128})
		m.Shapes[k] = []int{i, 2 * i}
		m.Extra[i*7919%1000-500] = k
		m.Nested[k] = nested{Z: i, A: map[string]int{k: i, "x": 1}}
	}
	return m
}

// Maps of every type encode in one order, whatever order Go iterates them in.
func TestMarshalManifestCanonical(t *testing.T) {
	want, err := MarshalManifest(sampleManifest())
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		got, err := MarshalManifest(sampleManifest())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatal("MarshalManifest is not deterministic")
		}
	}
	var back manifestV1
	if err := UnmarshalManifest(want, &back); err != nil {
		t.Fatal(err)
	}
	again, _ := MarshalManifest(back)
	if !bytes.Equal(again, want) {
		t.Fatal("decode and encode changed the bytes")
	}
	// Keys come out sorted.
	b, _ := MarshalManifest(map[string]int{"b": 1, "a": 2, "aa": 3, "B": 4})
	var keys []string
	dec := msgpack.NewDecoder(bytes.NewReader(b))
	n, _ := dec.DecodeMapLen()
	for range n {
		k, _ := dec.DecodeString()
		dec.Skip()
		keys = append(keys, k)
	}
	if got := strings.Join(keys, ","); got != "B,a,aa,b" {
		t.Errorf("keys in order %s", got)
	}
}

func TestUnmarshalManifestIgnoresUnknownFields(t *testing.T) {
	v2 := manifestV2{manifestV1: sampleManifest(), Future: []string{"x"}}
	b, err := MarshalManifest(v2)
	if err != nil {
		t.Fatal(err)
	}
	var v1 manifestV1
	if err := UnmarshalManifest(b, &v1); err != nil {
		t.Fatal(err)
	}
	if v1.Compiler != "rlxc 0.1" || len(v1.Bindings) != 40 {
		t.Fatalf("decoded %+v", v1.Compiler)
	}
}

func TestUnmarshalManifestRejects(t *testing.T) {
	deep := bytes.Repeat([]byte{0x91}, 10000)
	deep = append(deep, 0x01)
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "unexpected end"},
		{"trailing", []byte{0x01, 0x02}, "unexpected bytes after"},
		{"huge array", []byte{0xdd, 0xff, 0xff, 0xff, 0xff, 0x01}, "runs past the end"},
		{"huge map", []byte{0x81, 0xa1, 'a', 0xdf, 0xff, 0xff, 0xff, 0xff}, "runs past the end"},
		{"huge string", []byte{0xdb, 0xff, 0xff, 0xff, 0xff, 'a'}, "runs past the end"},
		{"deep", deep, "nested deeper"},
		{"bad code", []byte{0xc1}, "invalid code"},
	} {
		var v any
		if err := UnmarshalManifest(tc.b, &v); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
		var m manifestV1
		if err := UnmarshalManifest(tc.b, &m); err == nil {
			t.Errorf("%s: decoded into a struct", tc.name)
		}
	}
}

func FuzzUnmarshalManifest(f *testing.F) {
	b, _ := MarshalManifest(sampleManifest())
	f.Add(b)
	t, _ := MarshalManifest(&table{Sections: []tableEntry{{Name: "a", Codec: CodecZstd, SHA256: make([]byte, 32)}}})
	f.Add(t)
	f.Fuzz(func(t *testing.T, b []byte) {
		var v any
		UnmarshalManifest(b, &v)
		var m manifestV1
		UnmarshalManifest(b, &m)
		var tb table
		if UnmarshalManifest(b, &tb) == nil {
			// What decodes must encode again, canonically.
			if _, err := MarshalManifest(&tb); err != nil {
				t.Fatal(err)
			}
		}
	})
}
