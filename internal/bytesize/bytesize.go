// Package bytesize parses and prints byte counts the way people write
// them: 512MiB, 8GB, 1.5GiB, 4096.
package bytesize

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

var units = []struct {
	suffix string
	mult   float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40},
	{"B", 1},
}

// Parse reads a non-negative byte count: a number, optionally with a
// decimal part, then optionally a unit (KiB MiB GiB TiB are powers of
// 1024, KB MB GB TB powers of 1000, K M G T powers of 1024, B bytes;
// case-insensitive).
func Parse(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := 1.0
	for _, u := range units {
		if len(t) > len(u.suffix) && strings.EqualFold(t[len(t)-len(u.suffix):], u.suffix) {
			t, mult = strings.TrimSpace(t[:len(t)-len(u.suffix)]), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 || math.IsNaN(v) {
		return 0, fmt.Errorf("%q is not a byte size (write e.g. 512MiB, 8GB or 4096)", s)
	}
	b := v * mult
	if b >= math.MaxInt64 {
		return 0, fmt.Errorf("%q is more bytes than this tool counts", s)
	}
	return int64(b), nil
}

// Format prints n with a binary unit and three significant digits.
func Format(n int64) string {
	v := float64(n)
	for _, u := range []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"} {
		if math.Abs(v) < 1024 || u == "PiB" {
			if u == "B" {
				return strconv.FormatInt(n, 10) + " B"
			}
			return strconv.FormatFloat(v, 'g', 3, 64) + " " + u
		}
		v /= 1024
	}
	return ""
}
