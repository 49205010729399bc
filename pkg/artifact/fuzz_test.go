package artifact

import (
	"runtime"
	"testing"
)

// allocBound is how much a call may allocate on an input of n bytes: the
// decoded size of a zstd section is bounded by MaxZstdRatio times its stored
// size, plus fixed costs (the zstd decoder's tables and buffers, created on
// first use).
func allocBound(n int) uint64 { return 32<<20 + uint64(n)*(MaxZstdRatio+64) }

// openAll opens b and reads every section, and fails if that allocated more
// than allocBound. Errors are fine; panics and huge allocations are not.
func openAll(t *testing.T, b []byte) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if f, err := OpenBytes(b); err == nil {
		for _, s := range f.Sections() {
			f.Section(s.Name)
		}
		f.Close()
	}
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > allocBound(len(b)) {
		t.Fatalf("allocated %d bytes for an input of %d", d, len(b))
	}
}

// FuzzOpenBytes feeds damaged files to OpenBytes. Almost every mutation
// breaks a digest, so this mostly exercises the header and digest checks;
// FuzzCraftedSection reaches the code behind them.
func FuzzOpenBytes(f *testing.F) {
	f.Add(encode(f, testSections(f)))
	f.Add(encode(f, nil))
	f.Add(encode(f, []Section{{Name: "p", Codec: CodecZstd, Data: []byte("hello hello hello")}}))
	f.Add([]byte(Magic))
	f.Fuzz(func(t *testing.T, b []byte) { openAll(t, b) })
}

// FuzzCraftedSection builds signed files around one section with fuzzed
// codec, sizes, alignment and bytes: what someone who knows the format could
// craft. zstd frames with lying sizes must fail cleanly, without allocating
// what they claim.
func FuzzCraftedSection(f *testing.F) {
	z, _ := compress([]byte("a program, a program, a program"))
	f.Add("zstd", uint64(31), uint64(1), uint(0), z, []byte{})
	f.Add("zstd", uint64(1<<30), uint64(64), uint(3), z, []byte{0})
	f.Add("raw", uint64(4), uint64(4096), uint(0), []byte("abcd"), []byte("tail"))
	f.Fuzz(func(t *testing.T, codec string, raw, align uint64, pad uint, stored, tail []byte) {
		pad %= 4096
		e := entry("s", Codec(codec), 0, stored, 0)
		e["raw"], e["align"] = raw, align
		top := map[string]any{"sections": []any{e}}
		for n := 0; ; {
			e["offset"] = HeaderSize + n + int(pad)
			if m := tableSize(top); m != n {
				n = m
				continue
			}
			break
		}
		openAll(t, craft(top, make([]byte, pad), stored, tail))
	})
}
