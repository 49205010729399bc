package onnxpb

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// External data.
//
// A model over protobuf's 2 GB limit, and any model saved with
// onnx.save_model(save_as_external_data=True) or PyTorch's exporter with
// external_data, keeps its tensors' bytes in other files: each such
// TensorProto has data_location EXTERNAL and external_data entries
// location (a path relative to the model's directory), offset and length
// (bytes; the rest of the file when length is absent) and an optional
// SHA-1 checksum (onnx.proto, docs/ExternalData.md). LoadExternal reads
// them into RawData, so that everything after decoding sees ordinary
// tensors.
//
// A location is a path inside the model's directory: an absolute one, one
// that leaves the directory through "..", or one a symbolic link leads
// out of, is refused, as the ONNX checker refuses them (a model is input
// that may come from anywhere, and must not make the compiler read files
// it was not given).

// LoadExternal reads the data of every tensor of m stored in an external
// file (initializers, tensor attributes, subgraphs' alike) into its
// RawData, resolving locations against dir, the model file's directory.
// A tensor it reads is no longer External.
func (m *Model) LoadExternal(dir string) error {
	files := map[string]*os.File{}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	var walk func(g *Graph) error
	load := func(t *Tensor) error {
		if t == nil || !t.External {
			return nil
		}
		if err := loadExternal(t, dir, files); err != nil {
			return fmt.Errorf("tensor %q: external data: %w", t.Name, err)
		}
		return nil
	}
	walk = func(g *Graph) error {
		if g == nil {
			return nil
		}
		for _, t := range g.Initializers {
			if err := load(t); err != nil {
				return err
			}
		}
		for _, n := range g.Nodes {
			for _, a := range n.Attrs {
				if err := load(a.T); err != nil {
					return err
				}
				if err := walk(a.G); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(m.Graph)
}

// loadExternal reads one tensor's external data; files caches the files
// opened so far, by path.
func loadExternal(t *Tensor, dir string, files map[string]*os.File) error {
	loc := t.ExternalData["location"]
	if loc == "" {
		return errors.New("no location")
	}
	// Locations are POSIX paths whatever the platform (onnx.proto).
	rel := filepath.FromSlash(loc)
	if !filepath.IsLocal(rel) {
		return fmt.Errorf("location %q is not a path inside the model's directory", loc)
	}
	offset, err := externalInt(t.ExternalData, "offset")
	if err != nil {
		return err
	}
	length, err := externalInt(t.ExternalData, "length")
	if err != nil {
		return err
	}
	path := filepath.Join(dir, rel)
	f, ok := files[path]
	if !ok {
		if err := inside(dir, path, loc); err != nil {
			return err
		}
		if f, err = os.Open(path); err != nil {
			return err
		}
		files[path] = f
	}
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", loc)
	}
	size := st.Size()
	if offset > size {
		return fmt.Errorf("offset %d is past the end of %s (%d bytes)", offset, loc, size)
	}
	if _, has := t.ExternalData["length"]; !has {
		length = size - offset
	}
	if length > size-offset {
		return fmt.Errorf("%d bytes at offset %d run past the end of %s (%d bytes)", length, offset, loc, size)
	}
	data := make([]byte, length)
	if _, err := f.ReadAt(data, offset); err != nil && !(errors.Is(err, io.EOF) && length == 0) {
		return fmt.Errorf("reading %s: %w", loc, err)
	}
	if sum, has := t.ExternalData["checksum"]; has {
		got := sha1.Sum(data)
		if !strings.EqualFold(sum, hex.EncodeToString(got[:])) {
			return fmt.Errorf("SHA-1 of %d bytes at offset %d of %s is %x, the model says %s", length, offset, loc, got, sum)
		}
	}
	t.RawData, t.External, t.ExternalData = data, false, nil
	return nil
}

// inside checks that path, with its symbolic links followed, is still
// inside dir: a link in the model's directory must not lead the compiler
// to read a file elsewhere.
func inside(dir, path, loc string) error {
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	base, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	if rel, err := filepath.Rel(base, target); err != nil || !filepath.IsLocal(rel) {
		return fmt.Errorf("location %q leads out of the model's directory (to %s)", loc, target)
	}
	return nil
}

// externalInt parses an optional byte count of an external_data entry
// (0 when absent).
func externalInt(kv map[string]string, key string) (int64, error) {
	s, ok := kv[key]
	if !ok {
		return 0, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%s %q is not a byte count", key, s)
	}
	return v, nil
}
