package targets

import (
	"os"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/targets/cpu/kernels/qgemm"
	"github.com/rlx-project/rlx/pkg/targets/cpu/native"
	"github.com/rlx-project/rlx/pkg/targets/cpu/tuning"
	"github.com/rlx-project/rlx/pkg/targets/toolchain"
)

// memObjects is an ObjectCache in memory that counts its traffic.
type memObjects struct {
	m          map[string][]byte
	hits, puts int
}

func (c *memObjects) GetObject(d string) ([]byte, bool) {
	b, ok := c.m[d]
	if ok {
		c.hits++
	}
	return b, ok
}

func (c *memObjects) PutObject(d string, b []byte) error {
	c.m[d] = append([]byte(nil), b...)
	c.puts++
	return nil
}

// TestCPUObjectCache: the same unit for the same level is compiled once
// and then taken from the cache; a damaged object in the cache is
// recompiled and replaced, never used.
func TestCPUObjectCache(t *testing.T) {
	if err := toolchain.NativeTools(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	best, ok := native.Best()
	if !ok {
		t.Skip("needs hardware: no native level runs here")
	}
	objs := &memObjects{m: map[string][]byte{}}
	c, err := newCPU([]string{best.Name}, nil, objs)
	if err != nil {
		t.Fatal(err)
	}
	src := "#include <stdint.h>\n__attribute__((visibility(\"default\"))) void f(void *const *a, int64_t lo, int64_t hi) {}\n"
	first, err := c.compile(src, best, true)
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.compile(src, best, true)
	if err != nil {
		t.Fatal(err)
	}
	if objs.puts != 1 || objs.hits != 1 || string(first) != string(second) {
		t.Fatalf("%d puts, %d hits, want 1 and 1 (same bytes: %v)", objs.puts, objs.hits, string(first) == string(second))
	}
	for d := range objs.m {
		objs.m[d] = []byte("damaged")
	}
	third, err := c.compile(src, best, true)
	if err != nil || string(third) != string(first) || objs.puts != 2 {
		t.Fatalf("damaged object: %v, %d puts", err, objs.puts)
	}
	// Another source is another object.
	if _, err := c.compile(strings.Replace(src, "f(", "g(", 1), best, true); err != nil || len(objs.m) != 2 {
		t.Fatalf("second source: %v, %d objects", err, len(objs.m))
	}
}

// TestInt8ProductsByLevel: integer products where the build machine runs
// an integer kernel faster than f32 and every level asked for has AVX2
// (the AVX2 kernel, or VNNI's), but not for a level where an artifact's
// integer products would run the Go twin, nor across architectures (the
// cross build packs nothing).
func TestInt8ProductsByLevel(t *testing.T) {
	here := tuning.Int8Products(qgemm.Int8Kernel())
	for _, c := range []struct {
		cpu  []string
		want bool
	}{{[]string{"portable"}, here}, {[]string{"x86-64-v4"}, here}, {[]string{"x86-64-v3"}, here}, {[]string{"x86-64-v3", "x86-64-v4"}, here}, {[]string{"armv8.2-a"}, false}} {
		b, err := newCPU(c.cpu, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := b.Caps().Int8Products; got != c.want {
			t.Errorf("--cpu %v: integer products %v, want %v", c.cpu, got, c.want)
		}
	}
}
