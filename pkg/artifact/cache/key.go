// Package cache is the AOT cache: a content-addressed store of built
// artifacts, so that rlxc does not rebuild what it has built before.
//
// An entry is stored under the digest of its Key, which holds everything
// that determines the artifact's bytes:
//
//	<dir>/<digest[:2]>/<digest>.rlx    the artifact (its program sections are zstd-compressed)
//	<dir>/<digest[:2]>/<digest>.json   a sidecar with the Key's fields, for listings and Explain
//
// Files are written through a temporary file and a rename, so a reader sees a
// whole entry or none, and several processes may build and store the same key
// at once: builds are reproducible, so whichever rename lands last stores the
// same bytes. Nothing is locked. Get verifies an entry (every digest) before
// reporting a hit and deletes one that fails, so a damaged entry is rebuilt,
// never used. A hit updates the entry's modification time, which Prune uses
// to remove the least recently used entries first.
package cache

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// Key is everything that determines an artifact's bytes.
type Key struct {
	Model    string `json:"model"`    // module name: for listings and Explain (also hashed)
	Source   string `json:"source"`   // digest of the canonical HIR text
	Weights  string `json:"weights"`  // digest of the weights
	Binding  string `json:"binding"`  // sorted binding text, e.g. "batch=1,seq=128;batch=1,seq=512"
	Target   string `json:"target"`   // target name and CPU features, e.g. "cpu/avx2,fma"
	Compiler string `json:"compiler"` // compiler version
	// Build identifies the compiler's build (its Go build ID): between
	// releases the version stays put while the code generators change, and
	// an artifact cached by an older build must not be served.
	Build   string `json:"build,omitempty"`
	Options string `json:"options"` // canonical options text
}

// field is one named field of a Key, in a fixed order.
type field struct{ name, value string }

func (k Key) fields() []field {
	return []field{
		{"model", k.Model},
		{"source", k.Source},
		{"weights", k.Weights},
		{"binding", k.Binding},
		{"target", k.Target},
		{"compiler", k.Compiler},
		{"compiler build", k.Build},
		{"options", k.Options},
	}
}

// keyDomain versions the digest: changing how keys hash changes it.
const keyDomain = "rlx-aot-cache-key/v1"

// Digest returns the hex sha256 of the key. Each field is hashed with its
// length in front, so no two different keys hash the same bytes (without the
// lengths, Binding "a" + Target "bc" would equal Binding "ab" + Target "c").
func (k Key) Digest() string {
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	write := func(s string) {
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
		h.Write([]byte(s))
	}
	write(keyDomain)
	for _, f := range k.fields() {
		write(f.value)
	}
	return hex.EncodeToString(h.Sum(nil))
}
