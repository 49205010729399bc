package cache

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rlx-project/rlx/internal/atomicfile"
)

// Objects are compiled native code, stored by the digest of what they
// were compiled from (the compiler's version and flags and the source),
// so a build whose artifact misses (other weights, another binding of
// the same shapes) reuses the code of an earlier one. An object is
// `<shard>/<digest>.so`; it has no sidecar (its name is its key), and
// List, Prune and Clear count it as an entry like an artifact. The
// compiler validates what it gets back, so a damaged object costs a
// recompile, never a wrong build.

// GetObject returns the object stored under digest, ok false when there
// is none (or it cannot be read).
func (c *Cache) GetObject(digest string) (data []byte, ok bool) {
	if c.check() != nil || !isDigest(digest) {
		return nil, false
	}
	path := c.path(digest, ".so")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	now := time.Now()
	os.Chtimes(path, now, now) // LRU order is advisory, as for artifacts
	return data, true
}

// PutObject stores data as the object for digest, replacing any.
func (c *Cache) PutObject(digest string, data []byte) error {
	if err := c.check(); err != nil {
		return err
	}
	if !isDigest(digest) {
		return fmt.Errorf("cache: object digest %q is not 64 lowercase hex digits", digest)
	}
	if err := os.MkdirAll(filepath.Join(c.Dir, digest[:2]), 0o755); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	if err := atomicfile.Write(c.path(digest, ".so"), 0o644, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	}); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	return nil
}
