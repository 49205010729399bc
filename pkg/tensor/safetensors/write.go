package safetensors

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/rlx-project/rlx/internal/atomicfile"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// headerEntry is one tensor of a header being written; its fields are in
// key order so that every object of the header has sorted keys.
type headerEntry struct {
	DataOffsets [2]uint64 `json:"data_offsets"`
	DType       string    `json:"dtype"`
	Shape       []int64   `json:"shape"`
}

// layout is a checked plan of a file: its header and its tensors in data
// order.
type layout struct {
	header []byte // padded
	order  []*tensor.Tensor
}

// plan checks the tensors and lays the file out. names selects the tensors
// of ts to write (all of them when names is nil).
//
// The bytes depend only on the tensors and metadata, not on the order of
// names: the header is JSON with sorted keys, padded with spaces so that the
// data buffer starts at a multiple of 8 bytes, and the data holds the
// tensors by element size, largest first, then by name, so that each starts
// at a multiple of its element size (the reference implementation's order).
func plan(names []string, ts map[string]*tensor.Tensor, meta map[string]string) (*layout, error) {
	if names == nil {
		for n := range ts {
			names = append(names, n)
		}
	}
	seen := make(map[string]bool, len(names))
	sorted := make([]string, 0, len(names))
	for _, n := range names {
		if seen[n] {
			return nil, fmt.Errorf("tensor %q is named twice", n)
		}
		seen[n] = true
		if n == metadataKey {
			return nil, fmt.Errorf("a tensor cannot be named %s", metadataKey)
		}
		t, ok := ts[n]
		if !ok || t == nil {
			return nil, fmt.Errorf("no tensor %q to write", n)
		}
		if _, ok := dtypeToName[t.DType]; !ok {
			return nil, fmt.Errorf("tensor %q: dtype %s has no safetensors name", n, t.DType)
		}
		for _, d := range t.Shape {
			if d < 0 {
				return nil, fmt.Errorf("tensor %q: shape %s has a negative dim", n, tensor.ShapeString(t.Shape))
			}
		}
		if err := t.Check(); err != nil {
			return nil, fmt.Errorf("tensor %q: %v", n, err)
		}
		sorted = append(sorted, n)
	}
	sort.Slice(sorted, func(i, j int) bool {
		si, sj := ts[sorted[i]].DType.Size(), ts[sorted[j]].DType.Size()
		if si != sj {
			return si > sj
		}
		return sorted[i] < sorted[j]
	})

	hdr := make(map[string]any, len(sorted)+1)
	order := make([]*tensor.Tensor, len(sorted))
	var off uint64
	for i, n := range sorted {
		t := ts[n]
		shape := t.Shape
		if shape == nil {
			shape = []int64{}
		}
		end := off + uint64(len(t.Data))
		hdr[n] = headerEntry{DataOffsets: [2]uint64{off, end}, DType: dtypeToName[t.DType], Shape: shape}
		order[i] = t
		off = end
	}
	if len(meta) > 0 {
		hdr[metadataKey] = meta // encoding/json sorts map keys
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(hdr); err != nil {
		return nil, err
	}
	h := bytes.TrimRight(buf.Bytes(), "\n")
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	if len(h) > MaxHeaderSize {
		return nil, fmt.Errorf("header of %d bytes is over the limit of %d", len(h), MaxHeaderSize)
	}
	return &layout{header: h, order: order}, nil
}

func (l *layout) writeTo(w io.Writer) error {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(l.header)))
	if _, err := w.Write(n[:]); err != nil {
		return err
	}
	if _, err := w.Write(l.header); err != nil {
		return err
	}
	for _, t := range l.order {
		if _, err := w.Write(t.Data); err != nil {
			return err
		}
	}
	return nil
}

// Encode writes a safetensors file to w: the tensors of ts that names
// selects (all of ts when names is nil), and meta as __metadata__ (left out
// when empty). The bytes are the same as Write's.
func Encode(w io.Writer, names []string, ts map[string]*tensor.Tensor, meta map[string]string) error {
	l, err := plan(names, ts, meta)
	if err != nil {
		return fmt.Errorf("safetensors: %w", err)
	}
	return l.writeTo(w)
}

// Write writes a safetensors file at path, as Encode does, atomically: to a
// temporary file in the same directory, renamed over path once complete.
// It checks every tensor before it creates anything. Equal inputs give
// identical bytes.
func Write(path string, names []string, ts map[string]*tensor.Tensor, meta map[string]string) (err error) {
	l, err := plan(names, ts, meta)
	if err != nil {
		return fmt.Errorf("safetensors: write %s: %w", path, err)
	}
	err = atomicfile.Write(path, 0o644, func(f *os.File) error {
		bw := bufio.NewWriterSize(f, 1<<20)
		if err := l.writeTo(bw); err != nil {
			return err
		}
		return bw.Flush()
	})
	if err != nil {
		return fmt.Errorf("safetensors: write %s: %w", path, err)
	}
	return nil
}
