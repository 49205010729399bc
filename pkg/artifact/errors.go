package artifact

import (
	"errors"
	"fmt"
)

// Sentinel kinds of Error, for errors.Is.
var (
	ErrNotArtifact = errors.New("not an rlx artifact")
	ErrTruncated   = errors.New("artifact is truncated")
	ErrCorrupt     = errors.New("artifact is corrupt")
	ErrTooNew      = errors.New("artifact needs a newer rlxrun")
	ErrNoSection   = errors.New("no such section")
	ErrClosed      = errors.New("artifact is closed")
)

// Error describes what is wrong with an artifact, for a person: the file, the
// part that is bad (`section "weights"`, "header", "section table",
// `padding before section "weights"`) and what to do about it.
type Error struct {
	File string // the path given to Open, or "artifact" for OpenBytes
	Part string // the part of the file that is bad
	Kind error  // ErrNotArtifact, ErrTruncated, ErrCorrupt, ErrTooNew, ErrNoSection or ErrClosed
	Msg  string // the message after "File: "
}

func (e *Error) Error() string { return e.File + ": " + e.Msg }

// Unwrap returns the kind, so errors.Is(err, ErrCorrupt) works.
func (e *Error) Unwrap() error { return e.Kind }

func notArtifact(file, why string) *Error {
	return &Error{File: file, Part: "header", Kind: ErrNotArtifact,
		Msg: "not an rlx artifact (" + why + ")"}
}

// corrupt is for bytes that fail a check the writer guarantees: a digest, a
// zero padding byte.
func corrupt(file, part, why string) *Error {
	return &Error{File: file, Part: part, Kind: ErrCorrupt,
		Msg: fmt.Sprintf("%s is corrupt (%s): the file was modified or truncated; rebuild it", part, why)}
}

// malformed is for structure that no writer produces (a bad offset, an
// unknown codec), which a digest could not catch because the digests
// themselves are in that structure.
func malformed(file, part, why string) *Error {
	return &Error{File: file, Part: part, Kind: ErrCorrupt,
		Msg: fmt.Sprintf("%s is malformed (%s): the file is damaged or was not written by rlxc; rebuild it", part, why)}
}

func truncated(file, part string, end, size uint64) *Error {
	return &Error{File: file, Part: part, Kind: ErrTruncated,
		Msg: fmt.Sprintf("truncated: %s runs past the end of the file (it ends at byte %d, the file has %d bytes): the file was cut short; copy it again or rebuild it", part, end, size)}
}

func sectionPart(name string) string { return fmt.Sprintf("section %q", name) }
