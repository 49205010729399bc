package npy

import (
	"archive/zip"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/rlx-project/rlx/internal/atomicfile"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// ReadNPZ reads a .npz archive (np.savez or np.savez_compressed: stored or
// deflated members). It returns the tensors by name (the member "x.npy" is
// "x") and the names in archive order. A member that is not a .npy file is
// an error.
func ReadNPZ(path string) (map[string]*tensor.Tensor, []string, error) {
	return ReadNPZLimit(path, -1)
}

// ReadNPZLimit is ReadNPZ refusing an archive whose members expand to more
// than limit bytes (< 0: no limit), before it decompresses any: a small
// deflated file can claim gigabytes. The sizes are the archive's own
// declarations, which the zip reader holds each member to.
func ReadNPZLimit(path string, limit int64) (map[string]*tensor.Tensor, []string, error) {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return nil, nil, fmt.Errorf("npz: %s: %w", path, err)
	}
	defer zr.Close()
	if limit >= 0 {
		total := uint64(0)
		for _, f := range zr.File {
			total += f.UncompressedSize64
			if total > uint64(limit) || total < f.UncompressedSize64 {
				return nil, nil, fmt.Errorf("npz: %s: its members expand to more than the limit of %d bytes", path, limit)
			}
		}
	}
	ts := make(map[string]*tensor.Tensor, len(zr.File))
	names := make([]string, 0, len(zr.File))
	for _, f := range zr.File {
		t, name, err := readMember(path, f)
		if err != nil {
			return nil, nil, err
		}
		if _, dup := ts[name]; dup {
			return nil, nil, fmt.Errorf("npz: %s: the archive has two members named %q", path, f.Name)
		}
		ts[name] = t
		names = append(names, name)
	}
	return ts, names, nil
}

func readMember(path string, f *zip.File) (*tensor.Tensor, string, error) {
	name, ok := strings.CutSuffix(f.Name, ".npy")
	if !ok {
		return nil, "", fmt.Errorf("npz: %s: member %q is not a .npy file", path, f.Name)
	}
	if f.Method != zip.Store && f.Method != zip.Deflate {
		return nil, "", fmt.Errorf("npz: %s: member %q uses zip compression method %d; only stored and deflated members are supported", path, f.Name, f.Method)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, "", fmt.Errorf("npz: %s: member %q: %w", path, f.Name, err)
	}
	defer rc.Close()
	// The declared size rejects a lying header early, but it is not trusted
	// for allocation: the data is read in growing chunks.
	s := &source{r: rc, pkg: "npz", name: fmt.Sprintf("%s: member %q", path, f.Name), what: "member", size: -1}
	if f.UncompressedSize64 <= math.MaxInt64 {
		s.size = int64(f.UncompressedSize64)
	}
	t, err := s.decode()
	if err != nil {
		return nil, "", err
	}
	// Reading to the end also makes the zip reader check the CRC.
	if err := s.expectEnd(); err != nil {
		return nil, "", err
	}
	return t, name, nil
}

// zipTime is the modification time of every member, so equal tensors give
// equal archives.
var zipTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// WriteNPZ writes the tensors named in names, in that order, as stored
// members "name.npy" of a .npz archive, as np.savez does. Names must be
// non-empty and distinct, and every tensor in ts must be named; a nil names
// writes all of ts in sorted order. The file is written through a temporary
// file and a rename.
func WriteNPZ(path string, names []string, ts map[string]*tensor.Tensor) error {
	if names == nil {
		names = make([]string, 0, len(ts))
		for name := range ts {
			names = append(names, name)
		}
		slices.Sort(names)
	}
	headers := make([][]byte, len(names))
	seen := make(map[string]bool, len(names))
	for i, name := range names {
		if name == "" {
			return fmt.Errorf("npz: %s: empty tensor name", path)
		}
		if seen[name] {
			return fmt.Errorf("npz: %s: the name %q is given twice", path, name)
		}
		seen[name] = true
		t, ok := ts[name]
		if !ok || t == nil {
			return fmt.Errorf("npz: %s: no tensor named %q", path, name)
		}
		hdr, err := encodeHeader(t)
		if err != nil {
			return fmt.Errorf("npz: %s: tensor %q: %w", path, name, err)
		}
		headers[i] = hdr
	}
	for name := range ts {
		if !seen[name] {
			return fmt.Errorf("npz: %s: tensor %q is not in the list of names", path, name)
		}
	}
	return writeAtomic(path, func(w io.Writer) error {
		zw := zip.NewWriter(w)
		for i, name := range names {
			t := ts[name]
			size := uint64(len(headers[i]) + len(t.Data))
			fh := &zip.FileHeader{
				Name:               name + ".npy",
				Method:             zip.Store,
				Modified:           zipTime,
				CRC32:              crc32.Update(crc32.ChecksumIEEE(headers[i]), crc32.IEEETable, t.Data),
				CompressedSize64:   size,
				UncompressedSize64: size,
			}
			fh.SetMode(0o644)
			mw, err := zw.CreateRaw(fh)
			if err != nil {
				return fmt.Errorf("npz: %s: %w", path, err)
			}
			if _, err := mw.Write(headers[i]); err != nil {
				return fmt.Errorf("npz: %s: %w", path, err)
			}
			if _, err := mw.Write(t.Data); err != nil {
				return fmt.Errorf("npz: %s: %w", path, err)
			}
		}
		if err := zw.Close(); err != nil {
			return fmt.Errorf("npz: %s: %w", path, err)
		}
		return nil
	})
}

// writeAtomic writes path through a temporary file in the same directory, a
// sync and a rename (internal/atomicfile). On any error path is untouched. A
// new file gets mode 0644; a replaced file keeps its mode.
func writeAtomic(path string, write func(io.Writer) error) error {
	var werr error // write's own error, returned as it is
	err := atomicfile.Write(path, atomicfile.Perm(path, 0o644), func(f *os.File) error {
		werr = write(f)
		return werr
	})
	switch {
	case werr != nil:
		return werr
	case err != nil:
		return fmt.Errorf("npy: %w", err)
	}
	return nil
}
