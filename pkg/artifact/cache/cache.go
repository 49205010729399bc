package cache

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rlx-project/rlx/internal/atomicfile"
	"github.com/rlx-project/rlx/pkg/artifact"
)

// ErrCorruptEntry is wrapped by the error Get returns when it found an entry
// that failed verification and removed it. Callers treat it as a miss: they
// rebuild, and may show the error as the reason.
var ErrCorruptEntry = errors.New("corrupt cache entry")

// Cache is an AOT cache rooted at Dir (see DefaultDir). The zero value has
// no directory and fails every call; methods are safe to call from several
// goroutines and processes at once.
type Cache struct {
	Dir string
}

// sidecarVersion versions the JSON sidecar's layout.
const sidecarVersion = 1

// sidecar is the JSON file next to each entry.
type sidecar struct {
	Version int    `json:"version"`
	Digest  string `json:"digest"`
	Key     Key    `json:"key"`
}

func (c *Cache) check() error {
	if c.Dir == "" {
		return errors.New("cache: no cache directory set")
	}
	return nil
}

// path returns the path of digest's file with the given extension.
func (c *Cache) path(digest, ext string) string {
	return filepath.Join(c.Dir, digest[:2], digest+ext)
}

// Get returns the path of the artifact stored for k. ok is true only if the
// entry exists and verifies as an artifact (every digest checked). An entry
// that fails verification is removed and reported as a miss, with an error
// wrapping ErrCorruptEntry that says why. Other errors (an unreadable cache
// directory) are returned as they are, also with ok false.
//
// Another process may prune the entry between Get and the caller opening it;
// callers treat a failed open as a miss too.
func (c *Cache) Get(k Key) (path string, ok bool, err error) {
	if err := c.check(); err != nil {
		return "", false, err
	}
	d := k.Digest()
	path = c.path(d, ".rlx")
	f, err := artifact.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if ae := (*artifact.Error)(nil); errors.As(err, &ae) {
		c.remove(d)
		return "", false, fmt.Errorf("%w: the entry %s for model %q failed verification and was removed, so it will be rebuilt: %w",
			ErrCorruptEntry, d[:12], k.Model, err)
	}
	if err != nil {
		return "", false, err
	}
	why := c.belongsTo(f, d, k)
	f.Close()
	if why != "" {
		c.remove(d)
		return "", false, fmt.Errorf("%w: the entry %s for model %q is not this build's (%s) and was removed, so it will be rebuilt",
			ErrCorruptEntry, d[:12], k.Model, why)
	}
	// Best effort: LRU order is advisory, and a read-only shared cache must
	// still give hits.
	now := time.Now()
	os.Chtimes(path, now, now)
	return path, true, nil
}

// belongsTo checks that the open entry f, stored under digest d, is the
// build of k: its sidecar records k itself, and its manifest the model,
// source, weights, bindings and compiler that k names. A valid artifact
// copied over another key's entry passes every digest; this is what tells.
// It returns why not, or "".
func (c *Cache) belongsTo(f *artifact.File, d string, k Key) string {
	sc, _, err := readSidecar(c.path(d, ".json"))
	switch {
	case err != nil:
		return "its key file is missing or unreadable"
	case sc.Digest != d || sc.Key != k:
		return "its key file records another build"
	}
	raw, err := f.Section("manifest")
	if err != nil {
		return "no manifest"
	}
	var m artifact.Manifest
	if err := artifact.UnmarshalManifest(raw, &m); err != nil {
		return "an unreadable manifest"
	}
	p := m.Provenance
	switch {
	case m.Module != k.Model:
		return fmt.Sprintf("it holds model %q", m.Module)
	case p.SourceDigest != k.Source:
		return "it was built from another source"
	case p.WeightsDigest != k.Weights:
		return "it was built with other weights"
	case strings.Join(p.Bindings, ";") != k.Binding:
		return fmt.Sprintf("it was built for %s", strings.Join(p.Bindings, ";"))
	case p.Compiler != k.Compiler:
		return fmt.Sprintf("it was built by compiler %s", p.Compiler)
	}
	return ""
}

// Put stores a copy of the artifact at artifactPath as the entry for k,
// replacing any entry there. The copy is verified before it is renamed into
// place, so the cache never holds an artifact that fails to open. Several
// processes may Put the same key at once.
func (c *Cache) Put(k Key, artifactPath string) error {
	if err := c.check(); err != nil {
		return err
	}
	d := k.Digest()
	if err := os.MkdirAll(filepath.Join(c.Dir, d[:2]), 0o755); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	src, err := os.Open(artifactPath)
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	defer src.Close()

	// The sidecar goes first: an artifact is then never listed without its
	// key for longer than a Put takes.
	sc, err := json.MarshalIndent(sidecar{Version: sidecarVersion, Digest: d, Key: k}, "", "  ")
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	sc = append(sc, '\n')
	if err := atomicfile.Write(c.path(d, ".json"), 0o644, func(f *os.File) error {
		_, err := f.Write(sc)
		return err
	}); err != nil {
		return fmt.Errorf("cache: %w", err)
	}

	final := c.path(d, ".rlx")
	err = atomicfile.Write(final, 0o644, func(f *os.File) error {
		if _, err := io.Copy(f, src); err != nil {
			return err
		}
		// Verify the copy rather than the source, so what is checked is
		// what is stored.
		a, err := artifact.Open(f.Name())
		if err != nil {
			return fmt.Errorf("not storing %s: %w", artifactPath, err)
		}
		return a.Close()
	})
	if le := (*os.LinkError)(nil); errors.As(err, &le) {
		// Windows refuses to rename over a file another process has open.
		// That file is an entry for the same key, as good as ours if intact.
		if a, err2 := artifact.Open(final); err2 == nil {
			a.Close()
			return nil
		}
	}
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	return nil
}

// remove deletes an entry's files, the artifact first so that the entry
// stops being a hit before its key is forgotten (or the entry's object).
func (c *Cache) remove(digest string) error {
	var first error
	for _, ext := range []string{".rlx", ".json", ".so"} {
		if err := os.Remove(c.path(digest, ext)); err != nil && !errors.Is(err, fs.ErrNotExist) && first == nil {
			first = err
		}
	}
	return first
}

func readSidecar(path string) (*sidecar, int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	var sc sidecar
	if err := json.Unmarshal(b, &sc); err != nil {
		return nil, 0, err
	}
	return &sc, int64(len(b)), nil
}
