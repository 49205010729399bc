package cache

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rlx-project/rlx/internal/atomicfile"
)

// Entry is one stored artifact, or one compiled object (Object).
type Entry struct {
	Object bool      // native code (GetObject), not an artifact
	Key    Key       // from the sidecar; zero if the sidecar is missing or unreadable, and for objects
	Digest string    // the key's digest, the entry's name
	Size   int64     // bytes on disk, artifact and sidecar
	Used   time.Time // when it was last stored or hit
	Path   string    // the artifact
}

// staleAge is how old a temporary file or a sidecar without an artifact must
// be before Prune and Clear delete it: younger ones may belong to a Put in
// progress in another process.
const staleAge = time.Hour

// List returns the entries, most recently used first. An empty or missing
// cache directory has no entries.
func (c *Cache) List() ([]Entry, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	var out []Entry
	err := c.walk(func(dir, name string, info fs.FileInfo) {
		if d, ok := strings.CutSuffix(name, ".so"); ok && isDigest(d) && d[:2] == filepath.Base(dir) {
			out = append(out, Entry{Object: true, Digest: d, Size: info.Size(), Used: info.ModTime(), Path: filepath.Join(dir, name)})
			return
		}
		d, ok := strings.CutSuffix(name, ".rlx")
		if !ok || !isDigest(d) || d[:2] != filepath.Base(dir) {
			return
		}
		e := Entry{Digest: d, Size: info.Size(), Used: info.ModTime(), Path: filepath.Join(dir, name)}
		if sc, n, err := readSidecar(c.path(d, ".json")); err == nil && sc.Digest == d {
			e.Key, e.Size = sc.Key, e.Size+n
		}
		out = append(out, e)
	})
	slices.SortFunc(out, func(a, b Entry) int {
		if c := b.Used.Compare(a.Used); c != 0 {
			return c
		}
		return strings.Compare(a.Digest, b.Digest)
	})
	return out, err
}

// walk calls fn for each regular file in the shard directories. Files that
// vanish meanwhile (another process pruning) are skipped.
func (c *Cache) walk(fn func(dir, name string, info fs.FileInfo)) error {
	shards, err := os.ReadDir(c.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	for _, s := range shards {
		if !s.IsDir() || len(s.Name()) != 2 || !isHex(s.Name()) {
			continue
		}
		dir := filepath.Join(c.Dir, s.Name())
		files, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("cache: %w", err)
		}
		for _, f := range files {
			info, err := f.Info()
			if err != nil || !info.Mode().IsRegular() {
				continue
			}
			fn(dir, f.Name(), info)
		}
	}
	return nil
}

// Stats returns the number of entries and their size on disk.
func (c *Cache) Stats() (entries int, bytes int64, err error) {
	list, err := c.List()
	for _, e := range list {
		bytes += e.Size
	}
	return len(list), bytes, err
}

// Prune removes the least recently used entries until the entries take at
// most maxBytes, and removes leftovers of interrupted writes.
func (c *Cache) Prune(maxBytes int64) (removed int, freed int64, err error) {
	if maxBytes < 0 {
		return 0, 0, fmt.Errorf("cache: prune to %d bytes: the size must not be negative", maxBytes)
	}
	list, err := c.List()
	if err != nil {
		return 0, 0, err
	}
	var total int64
	for _, e := range list {
		total += e.Size
	}
	for i := len(list) - 1; i >= 0 && total > maxBytes; i-- { // oldest last in list
		e := list[i]
		if err := c.remove(e.Digest); err != nil {
			return removed, freed, fmt.Errorf("cache: %w", err)
		}
		removed++
		freed += e.Size
		total -= e.Size
	}
	return removed, freed, c.sweep(staleAge)
}

// Clear removes every entry, and leftovers of interrupted writes.
func (c *Cache) Clear() (removed int, err error) {
	list, err := c.List()
	if err != nil {
		return 0, err
	}
	for _, e := range list {
		if err := c.remove(e.Digest); err != nil {
			return removed, fmt.Errorf("cache: %w", err)
		}
		removed++
	}
	// Every leftover goes, however fresh: a writer still running loses
	// only its store into the cache (a warning), never its build.
	if err := c.sweep(0); err != nil {
		return removed, err
	}
	// Empty shard directories go too; os.Remove leaves non-empty ones.
	shards, _ := os.ReadDir(c.Dir)
	for _, s := range shards {
		if s.IsDir() && len(s.Name()) == 2 && isHex(s.Name()) {
			os.Remove(filepath.Join(c.Dir, s.Name()))
		}
	}
	return removed, nil
}

// sweep deletes temporary files of crashed writers and sidecars whose
// artifact is gone, once they are older than age.
func (c *Cache) sweep(age time.Duration) error {
	old := time.Now().Add(-age)
	return c.walk(func(dir, name string, info fs.FileInfo) {
		if info.ModTime().After(old) {
			return
		}
		if d, ok := strings.CutSuffix(name, ".json"); ok && isDigest(d) {
			if _, err := os.Stat(filepath.Join(dir, d+".rlx")); !errors.Is(err, fs.ErrNotExist) {
				return
			}
		} else if !atomicfile.IsTemp(name) {
			return
		}
		os.Remove(filepath.Join(dir, name))
	})
}

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

func isDigest(s string) bool { return len(s) == 64 && isHex(s) }
