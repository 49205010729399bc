package cache

import (
	"os"
	"path/filepath"
)

// DefaultDir returns the cache directory to use when none is given (the CLI's
// --cache-dir comes first). In order of precedence:
//
//  1. $RLXC_CACHE_DIR, if set and not empty;
//  2. $XDG_CACHE_HOME/rlx, if XDG_CACHE_HOME is an absolute path (the XDG
//     spec says to ignore a relative one);
//  3. ~/.cache/rlx, on every platform, so one documented place holds;
//  4. <temp dir>/rlx-cache if there is no home directory (a service account
//     or a bare container).
func DefaultDir() string {
	if d := os.Getenv("RLXC_CACHE_DIR"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "rlx")
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		return filepath.Join(home, ".cache", "rlx")
	}
	return filepath.Join(os.TempDir(), "rlx-cache")
}
