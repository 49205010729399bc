package native

import (
	"fmt"
	"runtime"
	"strings"
)

// A Level is an instruction-set level native code is built for: the
// compiler compiles a kernel once per level with Clang's flags, and the
// runtime runs the highest level the CPU it finds itself on runs ([Best]).
type Level struct {
	// Name names the level in artifacts and messages, as clang's -march
	// does ("x86-64-v3").
	Name string
	// GOARCH is the Go architecture whose processes run the level's code.
	GOARCH string
	// Clang holds the clang flags that select the level: the target
	// triple and -march, so a build does not depend on the host clang
	// runs on.
	Clang []string
	// Features names the CPU features code of the level may use, each of
	// which [Level.Runs] checks on the running CPU.
	Features []string
}

// Levels returns the levels native code is built for, each
// architecture's in increasing order (a later level of an architecture
// runs on fewer CPUs and is preferred where it runs). It returns a new
// slice on each call.
func Levels() []Level {
	cat := func(lists ...[]string) []string {
		var all []string
		for _, l := range lists {
			all = append(all, l...)
		}
		return all
	}
	// x86-64-v1 and -v2 features every x86-64-v3 CPU has: -march=x86-64-v3
	// lets clang use them too. (SSE and SSE2 are baseline amd64, which Go
	// itself requires.)
	x86v2 := []string{"cx16", "lahf", "popcnt", "sse3", "ssse3", "sse4.1", "sse4.2"}

	// x86-64-v3 adds AVX2 with FMA3, BMI1/2, F16C, LZCNT and MOVBE; "avx" is
	// AVX with the OS saving the ymm registers (OSXSAVE, XCR0), the check
	// the others' usability hangs on.
	x86v3 := []string{"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "lzcnt", "movbe", "osxsave"}

	// x86-64-v4 adds AVX-512 F, BW, CD, DQ and VL, with the OS saving the
	// zmm and opmask registers.
	x86v4 := []string{"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}
	return []Level{
		{
			Name:     "x86-64-v3",
			GOARCH:   "amd64",
			Clang:    []string{"--target=x86_64-linux-gnu", "-march=x86-64-v3"},
			Features: cat(x86v2, x86v3),
		},
		{
			Name:   "x86-64-v4",
			GOARCH: "amd64",
			// Without -mprefer-vector-width=512 clang vectorizes for
			// x86-64-v4 with 256-bit ymm registers (it keeps away from
			// zmm by default for the frequency drop of older Intel
			// parts), and the level would buy little over x86-64-v3.
			Clang:    []string{"--target=x86_64-linux-gnu", "-march=x86-64-v4", "-mprefer-vector-width=512"},
			Features: cat(x86v2, x86v3, x86v4),
		},
		{
			Name:   "armv8.2-a",
			GOARCH: "arm64",
			Clang:  []string{"--target=aarch64-linux-gnu", "-march=armv8.2-a"},
			// armv8.2-a has clang use ARMv8.1's LSE atomics, the
			// rounding doubling multiply-accumulate (RDM) and CRC32 on
			// top of ARMv8.0's FP and Advanced SIMD. Its other
			// mandatory parts are system-level (RAS, PAN, LOR, VHE,
			// UAO) or DC CVAP (DCPOP), which compiled C never emits,
			// so they are not checked: some kernels do not report
			// DCPOP on CPUs that run all the code we build.
			Features: []string{"fp", "asimd", "atomics", "asimdrdm", "crc32"},
		},
	}
}

// LookupLevel returns the level of that name.
func LookupLevel(name string) (Level, error) {
	var names []string
	for _, l := range Levels() {
		if l.Name == name {
			return l, nil
		}
		names = append(names, l.Name)
	}
	return Level{}, fmt.Errorf("unknown native CPU level %q (the levels are %s)", name, strings.Join(names, ", "))
}

// Runs reports whether this process's CPU runs code of level l: nil if
// it does, else an error naming the level and what is missing, the
// CPU features or the architecture.
func (l Level) Runs() error {
	if l.GOARCH != runtime.GOARCH {
		return fmt.Errorf("native code for %s runs on %s, and this process runs on %s", l.Name, l.GOARCH, runtime.GOARCH)
	}
	var missing []string
	for _, f := range l.Features {
		if !hasFeature(f) {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("this CPU lacks %s needed by %s", strings.Join(missing, ", "), l.Name)
	}
	return nil
}

// Best returns the highest level this process's CPU runs, and false if
// it runs none.
func Best() (Level, bool) {
	var best Level
	ok := false
	for _, l := range Levels() {
		if l.Runs() == nil {
			best, ok = l, true
		}
	}
	return best, ok
}
