package cache

import (
	"fmt"
	"strings"
)

// Explain says why a lookup of k would miss, for --explain-cache: it finds
// the earlier build of the same model whose key is closest to k (fewest
// differing fields, then the most recently used) and names each field that
// differs, e.g. `binding changed: batch=1 -> batch=2`.
func (c *Cache) Explain(k Key) string {
	list, err := c.List()
	if err != nil {
		return fmt.Sprintf("cannot read the cache: %v", err)
	}
	d := k.Digest()
	var best []string
	builds := 0
	for _, e := range list { // most recently used first, so ties keep the newest
		if e.Digest == d {
			return fmt.Sprintf("model %q is in the cache as %s", k.Model, d[:12])
		}
		if e.Key.Model != k.Model {
			continue
		}
		builds++
		if diff := diffKeys(e.Key, k); best == nil || len(diff) < len(best) {
			best = diff
		}
	}
	if builds == 0 {
		return fmt.Sprintf("no earlier build of model %q in the cache", k.Model)
	}
	if len(best) == 0 {
		// Same fields, different digest: the sidecar was written under
		// another key hashing (another rlxc version) or edited.
		return fmt.Sprintf("model %q: an entry has the same key fields under another digest; it was written by a different rlxc", k.Model)
	}
	return fmt.Sprintf("model %q: nearest of %d earlier builds differs: %s", k.Model, builds, strings.Join(best, "; "))
}

// diffKeys describes each field that differs from old to new.
func diffKeys(old, new Key) []string {
	of, nf := old.fields(), new.fields()
	var out []string
	for i := range of {
		if of[i].value == nf[i].value {
			continue
		}
		short := of[i].name == "source" || of[i].name == "weights" || of[i].name == "compiler build" // digests, IDs
		out = append(out, fmt.Sprintf("%s changed: %s -> %s", of[i].name, show(of[i].value, short), show(nf[i].value, short)))
	}
	return out
}

// show abbreviates a value for a one-line message: digests to 12 characters,
// anything else to 60.
func show(v string, digest bool) string {
	switch {
	case v == "":
		return `""`
	case digest:
		// Keep an "algorithm:" prefix and 12 hex digits, enough to tell
		// two digests apart.
		if n := strings.LastIndexByte(v, ':') + 1 + 12; n < len(v) {
			return v[:n]
		}
		return v
	case len(v) > 60:
		return v[:57] + "..."
	}
	return v
}
