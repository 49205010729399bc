package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rlx-project/rlx/pkg/artifact"
)

// TestMain doubles as the helper process of TestConcurrentProcesses: with
// RLX_CACHE_HELPER_DIR set, the test binary runs helperMain instead of the
// tests.
func TestMain(m *testing.M) {
	if dir := os.Getenv("RLX_CACHE_HELPER_DIR"); dir != "" {
		os.Exit(helperMain(dir))
	}
	os.Exit(m.Run())
}

func testKey() Key {
	return Key{
		Model:    "mlp",
		Source:   "sha256:" + strings.Repeat("1a", 32),
		Weights:  "sha256:" + strings.Repeat("2b", 32),
		Binding:  "batch=1,seq=128;batch=1,seq=512",
		Target:   "cpu/avx2,fma",
		Compiler: "rlxc 0.1.0",
		Options:  "opt=2",
	}
}

// testSections is an artifact big enough to take a while to copy, so that
// concurrent writers overlap.
func testSections(seed byte) []artifact.Section { return sectionsFor(testKey(), seed) }

// sectionsFor is testSections for an artifact built for k.
func sectionsFor(k Key, seed byte) []artifact.Section {
	w := make([]byte, 1<<20)
	for i := range w {
		w[i] = byte(i*7) ^ seed
	}
	return []artifact.Section{
		{Name: "manifest", Codec: artifact.CodecZstd, Data: manifestFor(k, seed)},
		{Name: "program/0", Codec: artifact.CodecZstd, Data: bytes.Repeat([]byte("matmul; relu\n"), 100)},
		{Name: "weights", Codec: artifact.CodecRaw, Align: artifact.WeightsAlign, Data: w},
	}
}

// manifestFor is the manifest of an artifact built for k (what Get checks
// against the key), with seed in its entry name to tell copies apart.
func manifestFor(k Key, seed byte) []byte {
	b, err := artifact.MarshalManifest(artifact.Manifest{Module: k.Model, Provenance: artifact.Provenance{
		Compiler: k.Compiler, Target: "cpu", Bindings: strings.Split(k.Binding, ";"), SourceDigest: k.Source,
		WeightsDigest: k.Weights, Entry: "main" + strconv.Itoa(int(seed))}})
	if err != nil {
		panic(err)
	}
	return b
}

func writeArtifact(t testing.TB, dir string, seed byte) string {
	t.Helper()
	p := filepath.Join(dir, fmt.Sprintf("model-%d.rlx", seed))
	if err := artifact.WriteFile(p, testSections(seed)); err != nil {
		t.Fatal(err)
	}
	return p
}

func fileSum(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestPutGet(t *testing.T) {
	c := &Cache{Dir: filepath.Join(t.TempDir(), "cache")}
	k := testKey()
	if _, ok, err := c.Get(k); ok || err != nil {
		t.Fatalf("empty cache: ok %v err %v", ok, err)
	}
	src := writeArtifact(t, t.TempDir(), 1)
	if err := c.Put(k, src); err != nil {
		t.Fatal(err)
	}
	path, ok, err := c.Get(k)
	if !ok || err != nil {
		t.Fatalf("after Put: ok %v err %v", ok, err)
	}
	d := k.Digest()
	if want := filepath.Join(c.Dir, d[:2], d+".rlx"); path != want {
		t.Errorf("path %s, want %s", path, want)
	}
	if fileSum(t, path) != fileSum(t, src) {
		t.Error("stored bytes differ")
	}
	sc, _, err := readSidecar(filepath.Join(c.Dir, d[:2], d+".json"))
	if err != nil || sc.Key != k || sc.Digest != d {
		t.Errorf("sidecar %+v, %v", sc, err)
	}
	// Putting again replaces the entry; the old one is never half there.
	if err := c.Put(k, src); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := c.Get(k); !ok {
		t.Fatal("miss after second Put")
	}
	// Nothing but the entry is left in the cache.
	var names []string
	filepath.WalkDir(c.Dir, func(p string, de os.DirEntry, err error) error {
		if !de.IsDir() {
			names = append(names, filepath.Base(p))
		}
		return nil
	})
	if len(names) != 2 {
		t.Errorf("cache holds %v", names)
	}
}

func TestPutRejectsBadArtifact(t *testing.T) {
	c := &Cache{Dir: t.TempDir()}
	bad := filepath.Join(t.TempDir(), "bad.rlx")
	os.WriteFile(bad, []byte("not an artifact"), 0o644)
	if err := c.Put(testKey(), bad); err == nil || !strings.Contains(err.Error(), "not an rlx artifact") {
		t.Fatalf("got %v", err)
	}
	if _, ok, _ := c.Get(testKey()); ok {
		t.Fatal("a bad artifact was stored")
	}
	if err := (&Cache{}).Put(testKey(), bad); err == nil {
		t.Fatal("Put with no directory succeeded")
	}
}

func TestDigest(t *testing.T) {
	k := testKey()
	if k.Digest() != testKey().Digest() || len(k.Digest()) != 64 {
		t.Fatal("digest not stable")
	}
	// Length prefixes keep field boundaries: moving a character from one
	// field to the next changes the digest.
	a, b := k, k
	a.Binding, a.Target = "batch=1", "cpu"
	b.Binding, b.Target = "batch=", "1cpu"
	if a.Digest() == b.Digest() {
		t.Fatal("field boundaries are not hashed")
	}
}

// changes modifies one field of a key each, as a later build would.
var changes = []struct {
	field  string
	change func(*Key)
	want   string // in Explain's answer
}{
	{"model", func(k *Key) { k.Model = "mlp2" }, `no earlier build of model "mlp2" in the cache`},
	{"source", func(k *Key) { k.Source = "sha256:" + strings.Repeat("3c", 32) }, "source changed: sha256:1a1a1a1a1a1a -> sha256:3c3c3c3c3c3c"},
	{"weights", func(k *Key) { k.Weights = "sha256:" + strings.Repeat("4d", 32) }, "weights changed: sha256:2b2b2b2b2b2b -> sha256:4d4d4d4d4d4d"},
	{"binding", func(k *Key) { k.Binding = "batch=2,seq=128" }, "binding changed: batch=1,seq=128;batch=1,seq=512 -> batch=2,seq=128"},
	{"target", func(k *Key) { k.Target = "cpu/avx512f" }, "target changed: cpu/avx2,fma -> cpu/avx512f"},
	{"compiler", func(k *Key) { k.Compiler = "rlxc 0.2.0" }, "compiler changed: rlxc 0.1.0 -> rlxc 0.2.0"},
	{"compiler build", func(k *Key) { k.Build = "Zq3b1lTg8sB9kq/xyz" }, `compiler build changed: "" -> Zq3b1lTg8sB9`},
	{"options", func(k *Key) { k.Options = "" }, `options changed: opt=2 -> ""`},
}

func TestMissOnEachChangedField(t *testing.T) {
	c := &Cache{Dir: t.TempDir()}
	if err := c.Put(testKey(), writeArtifact(t, t.TempDir(), 1)); err != nil {
		t.Fatal(err)
	}
	if got := c.Explain(testKey()); !strings.Contains(got, "is in the cache") {
		t.Errorf("Explain of a hit: %s", got)
	}
	for _, ch := range changes {
		k := testKey()
		ch.change(&k)
		if _, ok, err := c.Get(k); ok || err != nil {
			t.Errorf("%s changed: ok %v err %v, want a miss", ch.field, ok, err)
		}
		if got := c.Explain(k); !strings.Contains(got, ch.want) {
			t.Errorf("%s changed: Explain says %q\nwant it to contain %q", ch.field, got, ch.want)
		}
	}
}

// Explain picks the closest earlier build and names every field that differs.
func TestExplainClosest(t *testing.T) {
	c := &Cache{Dir: t.TempDir()}
	src := writeArtifact(t, t.TempDir(), 1)
	far := testKey()
	far.Binding, far.Target, far.Compiler = "batch=8", "cpu/sse4", "rlxc 0.0.1"
	near := testKey()
	near.Binding = "batch=1"
	for _, k := range []Key{far, near} {
		if err := c.Put(k, src); err != nil {
			t.Fatal(err)
		}
	}
	k := testKey()
	k.Binding, k.Options = "batch=2", "opt=3"
	got := c.Explain(k)
	want := `model "mlp": nearest of 2 earlier builds differs: binding changed: batch=1 -> batch=2; options changed: opt=2 -> opt=3`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := (&Cache{Dir: t.TempDir()}).Explain(k); got != `no earlier build of model "mlp" in the cache` {
		t.Errorf("empty cache: %s", got)
	}
}

// A damaged entry is a miss with a reason, and is gone afterwards.
// TestEntryOfAnotherBuild: a valid artifact copied over another key's
// entry (its digests all check out) is not served: Get removes it and
// reports a miss saying why, whether the sidecar came along or not.
func TestEntryOfAnotherBuild(t *testing.T) {
	c := &Cache{Dir: t.TempDir()}
	k := testKey()
	other := testKey()
	other.Model, other.Source = "encoder", "sha256:"+strings.Repeat("3c", 32)
	otherSrc := filepath.Join(t.TempDir(), "other.rlx")
	if err := artifact.WriteFile(otherSrc, sectionsFor(other, 2)); err != nil {
		t.Fatal(err)
	}
	for _, withSidecar := range []bool{false, true} {
		if err := c.Put(k, writeArtifact(t, t.TempDir(), 1)); err != nil {
			t.Fatal(err)
		}
		if err := c.Put(other, otherSrc); err != nil {
			t.Fatal(err)
		}
		d, od := k.Digest(), other.Digest()
		copyFile(t, c.path(od, ".rlx"), c.path(d, ".rlx"))
		want := `it holds model "encoder"`
		if withSidecar {
			copyFile(t, c.path(od, ".json"), c.path(d, ".json"))
			want = "its key file records another build"
		}
		path, ok, err := c.Get(k)
		if ok || !errors.Is(err, ErrCorruptEntry) || !strings.Contains(err.Error(), want) {
			t.Errorf("sidecar copied %v: Get = %q, %v, %v; want a miss saying %q", withSidecar, path, ok, err, want)
		}
		if _, err := os.Stat(c.path(d, ".rlx")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("sidecar copied %v: the foreign entry was not removed", withSidecar)
		}
		if _, ok, err := c.Get(other); !ok {
			t.Errorf("the other entry stopped being a hit: %v", err)
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCorruptEntryIsRebuilt(t *testing.T) {
	c := &Cache{Dir: t.TempDir()}
	k := testKey()
	src := writeArtifact(t, t.TempDir(), 1)
	if err := c.Put(k, src); err != nil {
		t.Fatal(err)
	}
	path, _, _ := c.Get(k)
	for _, damage := range []func(b []byte) []byte{
		func(b []byte) []byte { b[len(b)/2] ^= 0x10; return b }, // bit rot in the weights
		func(b []byte) []byte { return b[:len(b)-100] },         // interrupted copy
		func(b []byte) []byte { return nil },                    // empty file
	} {
		b, _ := os.ReadFile(src)
		// Write in place, as a disk error would (not through a rename).
		if err := os.WriteFile(path, damage(b), 0o644); err != nil {
			t.Fatal(err)
		}
		_, ok, err := c.Get(k)
		if ok || !errors.Is(err, ErrCorruptEntry) || !strings.Contains(err.Error(), "will be rebuilt") {
			t.Fatalf("damaged entry: ok %v err %v", ok, err)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Fatal("damaged entry was not removed")
		}
		if n, _, _ := c.Stats(); n != 0 {
			t.Fatalf("%d entries after removal", n)
		}
		// The next build stores it again.
		if err := c.Put(k, src); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := c.Get(k); !ok || err != nil {
			t.Fatalf("after rebuild: ok %v err %v", ok, err)
		}
	}
}

func TestListStatsPruneClear(t *testing.T) {
	c := &Cache{Dir: t.TempDir()}
	var keys []Key
	base := time.Now().Add(-10 * time.Hour)
	for i := range 5 {
		k := testKey()
		k.Binding = fmt.Sprintf("batch=%d", i)
		keys = append(keys, k)
		src := filepath.Join(t.TempDir(), "m.rlx")
		if err := artifact.WriteFile(src, sectionsFor(k, 1)); err != nil {
			t.Fatal(err)
		}
		if err := c.Put(k, src); err != nil {
			t.Fatal(err)
		}
		// Entry i was last used i hours after base.
		d := k.Digest()
		ts := base.Add(time.Duration(i) * time.Hour)
		os.Chtimes(c.path(d, ".rlx"), ts, ts)
	}
	list, err := c.List()
	if err != nil || len(list) != 5 {
		t.Fatalf("List: %d entries, %v", len(list), err)
	}
	if list[0].Key != keys[4] || list[4].Key != keys[0] {
		t.Errorf("List is not most recent first: %v ... %v", list[0].Key.Binding, list[4].Key.Binding)
	}
	n, total, err := c.Stats()
	if err != nil || n != 5 || total != 5*list[0].Size || list[0].Size <= 1<<20 {
		t.Fatalf("Stats: %d entries, %d bytes, %v", n, total, err)
	}
	// A hit makes entry 0 the most recently used, so it survives.
	if _, ok, _ := c.Get(keys[0]); !ok {
		t.Fatal("miss")
	}
	// Leftovers of a crashed Put are swept once stale.
	d0 := keys[0].Digest()
	tmp := filepath.Join(c.Dir, d0[:2], "."+d0+".rlx.tmp-123")
	orphan := filepath.Join(c.Dir, d0[:2], strings.Repeat("e", 64)+".json")
	for _, p := range []string{tmp, orphan} {
		os.WriteFile(p, []byte("x"), 0o644)
		os.Chtimes(p, base, base)
	}
	removed, freed, err := c.Prune(2*list[0].Size + list[0].Size/2)
	if err != nil || removed != 3 || freed != 3*list[0].Size {
		t.Fatalf("Prune: removed %d, freed %d, %v", removed, freed, err)
	}
	for i, k := range keys {
		_, ok, _ := c.Get(k)
		if want := i == 0 || i == 4; ok != want {
			t.Errorf("after Prune, entry %d present %v, want %v", i, ok, want)
		}
	}
	for _, p := range []string{tmp, orphan} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s was not swept", filepath.Base(p))
		}
	}
	if _, _, err := c.Prune(-1); err == nil {
		t.Error("Prune(-1) succeeded")
	}
	// A fresh leftover (a writer killed a moment ago) survives Prune, which
	// waits for it to age, but not Clear.
	fresh := filepath.Join(c.Dir, d0[:2], "."+d0+".rlx.tmp-456")
	os.WriteFile(fresh, []byte("x"), 0o644)
	if _, _, err := c.Prune(1 << 40); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("Prune removed a fresh temporary file: %v", err)
	}
	removed, err = c.Clear()
	if err != nil || removed != 2 {
		t.Fatalf("Clear: removed %d, %v", removed, err)
	}
	if n, _, _ := c.Stats(); n != 0 {
		t.Fatalf("%d entries after Clear", n)
	}
	if ents, _ := os.ReadDir(c.Dir); len(ents) != 0 {
		t.Errorf("Clear left %d files or directories", len(ents))
	}
	// A cache directory that does not exist yet is simply empty.
	if list, err := (&Cache{Dir: filepath.Join(c.Dir, "none")}).List(); err != nil || len(list) != 0 {
		t.Errorf("missing dir: %v, %v", list, err)
	}
}

func TestDefaultDir(t *testing.T) {
	t.Setenv("RLXC_CACHE_DIR", "/a/b")
	t.Setenv("XDG_CACHE_HOME", "/xdg")
	if got := DefaultDir(); got != "/a/b" {
		t.Errorf("RLXC_CACHE_DIR: %s", got)
	}
	t.Setenv("RLXC_CACHE_DIR", "")
	if got := DefaultDir(); got != filepath.Join("/xdg", "rlx") {
		t.Errorf("XDG_CACHE_HOME: %s", got)
	}
	t.Setenv("XDG_CACHE_HOME", "relative")
	home, err := os.UserHomeDir()
	if err == nil {
		if got := DefaultDir(); got != filepath.Join(home, ".cache", "rlx") {
			t.Errorf("home: %s", got)
		}
	}
}

// Goroutines storing and reading one key at once always see whole entries.
func TestConcurrentGoroutines(t *testing.T) {
	c := &Cache{Dir: t.TempDir()}
	src := writeArtifact(t, t.TempDir(), 1)
	want := fileSum(t, src)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 5 {
				if err := c.Put(testKey(), src); err != nil {
					t.Error(err)
					return
				}
				p, ok, err := c.Get(testKey())
				if !ok || err != nil {
					t.Errorf("Get: ok %v err %v", ok, err)
					return
				}
				// The entry may be replaced between Get and reading it, by
				// identical bytes.
				if b, err := os.ReadFile(p); err == nil {
					if s := sha256.Sum256(b); hex.EncodeToString(s[:]) != want {
						t.Error("read different bytes")
					}
				}
			}
		})
	}
	wg.Wait()
}

// Two processes build the same artifact and store and read the same key at
// once, as two rlxc runs in one CI job would: both succeed, and every read
// sees the same bytes.
func TestConcurrentProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	start := time.Now().Add(300 * time.Millisecond) // both start together
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for i := range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(),
			"RLX_CACHE_HELPER_DIR="+dir,
			"RLX_CACHE_HELPER_ID="+strconv.Itoa(i),
			"RLX_CACHE_HELPER_START="+strconv.FormatInt(start.UnixNano(), 10))
		out := &bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	var sums []string
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("helper %d: %v\n%s", i, err, outs[i])
		}
		sum, ok := strings.CutPrefix(strings.TrimSpace(outs[i].String()), "sum ")
		if !ok {
			t.Fatalf("helper %d said %q", i, outs[i])
		}
		sums = append(sums, sum)
	}
	if sums[0] != sums[1] {
		t.Fatalf("the processes stored different bytes: %s, %s", sums[0], sums[1])
	}
	c := &Cache{Dir: filepath.Join(dir, "cache")}
	p, ok, err := c.Get(testKey())
	if !ok || err != nil || fileSum(t, p) != sums[0] {
		t.Fatalf("final entry: ok %v err %v", ok, err)
	}
	if n, _, _ := c.Stats(); n != 1 {
		t.Fatalf("%d entries, want 1", n)
	}
}

// helperMain is one process of TestConcurrentProcesses: it builds the
// artifact itself (builds are reproducible), then stores and reads the key
// in a loop, checking every read, and prints the sum of what it read.
func helperMain(dir string) int {
	fail := func(format string, args ...any) int {
		fmt.Printf(format+"\n", args...)
		return 1
	}
	id := os.Getenv("RLX_CACHE_HELPER_ID")
	start, _ := strconv.ParseInt(os.Getenv("RLX_CACHE_HELPER_START"), 10, 64)
	build := filepath.Join(dir, "build-"+id)
	if err := os.MkdirAll(build, 0o755); err != nil {
		return fail("%v", err)
	}
	src := filepath.Join(build, "model.rlx")
	if err := artifact.WriteFile(src, testSections(1)); err != nil {
		return fail("%v", err)
	}
	time.Sleep(time.Until(time.Unix(0, start)))
	c := &Cache{Dir: filepath.Join(dir, "cache")}
	var sum string
	for i := range 30 {
		if err := c.Put(testKey(), src); err != nil {
			return fail("Put %d: %v", i, err)
		}
		p, ok, err := c.Get(testKey())
		if !ok || err != nil {
			return fail("Get %d: ok %v err %v", i, ok, err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return fail("read %d: %v", i, err)
		}
		s := sha256.Sum256(b)
		h := hex.EncodeToString(s[:])
		if sum != "" && h != sum {
			return fail("read %d: bytes changed", i)
		}
		sum = h
	}
	fmt.Println("sum", sum)
	return 0
}

// TestObjects: an object stored by digest comes back, counts as an entry
// for List and Prune, and goes with Clear; a malformed digest is refused.
func TestObjects(t *testing.T) {
	c := &Cache{Dir: t.TempDir()}
	d := strings.Repeat("ab", 32)
	if _, ok := c.GetObject(d); ok {
		t.Fatal("hit in an empty cache")
	}
	if err := c.PutObject(d, []byte("\x7fELF code")); err != nil {
		t.Fatal(err)
	}
	if got, ok := c.GetObject(d); !ok || string(got) != "\x7fELF code" {
		t.Fatalf("GetObject = %q, %v", got, ok)
	}
	if err := c.PutObject("../x", nil); err == nil {
		t.Error("a malformed digest was stored")
	}
	list, err := c.List()
	if err != nil || len(list) != 1 || !list[0].Object || list[0].Size != 9 {
		t.Fatalf("List = %+v, %v", list, err)
	}
	if n, _, err := c.Prune(0); err != nil || n != 1 {
		t.Fatalf("Prune removed %d: %v", n, err)
	}
	if _, ok := c.GetObject(d); ok {
		t.Error("the object survived Prune(0)")
	}
}
