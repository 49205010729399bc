// Package atomicfile writes a file so that readers see either the old file or
// the complete new one, never a prefix: the bytes go to a temporary file in the
// same directory (so the rename cannot cross file systems), are synced to disk,
// and the temporary file is renamed over the destination. Both the artifact
// writer and the AOT cache rely on this; the cache also relies on rename being
// atomic to make concurrent builds of the same key safe.
package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// TempMarker is part of every temporary file name, so that a cache can tell
// leftovers of a crashed writer from real entries.
const TempMarker = ".tmp-"

// IsTemp reports whether name (a base name) is a temporary file of Write.
func IsTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, TempMarker)
}

// Perm is the mode to replace path with: its own where path is a regular
// file, else def (a new file).
func Perm(path string, def os.FileMode) os.FileMode {
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		return fi.Mode().Perm()
	}
	return def
}

// Write creates or replaces path with the bytes that fill writes into f. If
// fill or any later step fails, the temporary file is removed and path is left
// as it was. perm is applied as given (not masked by the umask): artifacts are
// meant to be readable by the services that run them.
//
// A path that names a device, a pipe or a socket (-o /dev/null, /dev/stdout,
// a FIFO) is written in place: there is no file to replace atomically, and a
// rename would replace the device node itself (run as root, a build with
// -o /dev/null turned /dev/null into a regular file). A directory is an
// error.
func Write(path string, perm os.FileMode, fill func(f *os.File) error) (err error) {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		if fi.IsDir() {
			return &os.PathError{Op: "write", Path: path, Err: errIsDir}
		}
		return writeInPlace(path, fill)
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+TempMarker+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	closed := false
	defer func() {
		if err != nil {
			if !closed {
				f.Close()
			}
			os.Remove(tmp)
		}
	}()
	if err = fill(f); err != nil {
		return err
	}
	if err = f.Chmod(perm); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	closed = true
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	syncDir(dir)
	return nil
}

// syncDir makes the rename itself durable. It is best effort: some platforms
// and file systems cannot sync a directory, and the data is already safe.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	d.Sync()
	d.Close()
}

var errIsDir = errors.New("is a directory")

// writeInPlace writes fill's bytes to an existing file that is not a
// regular one.
func writeInPlace(path string, fill func(f *os.File) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if err := fill(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
