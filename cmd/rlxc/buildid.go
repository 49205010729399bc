package main

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"io"
	"os"
)

// compilerBuild identifies this rlxc build for the AOT cache key: the Go
// build ID of the running executable, which changes whenever any of its
// code does (so a development build never reuses artifacts an older one
// cached under the same version), or the executable's sha256 where no
// build ID can be read. "" when the executable cannot be read at all.
func compilerBuild() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if id := elfBuildID(exe); id != "" {
		return id
	}
	f, err := os.Open(exe)
	if err != nil {
		return ""
	}
	defer f.Close()
	// Other formats carry the ID near the start of the text, after a marker.
	head := make([]byte, 64<<10)
	n, _ := io.ReadFull(f, head)
	if id := markedBuildID(head[:n]); id != "" {
		return id
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return ""
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// elfBuildID reads the Go build ID note of an ELF executable.
func elfBuildID(path string) string {
	f, err := elf.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	s := f.Section(".note.go.buildid")
	if s == nil {
		return ""
	}
	data, err := s.Data()
	if err != nil {
		return ""
	}
	return noteBuildID(data, f.ByteOrder)
}

// noteBuildID decodes a Go build ID note: name size, description size and
// type (4), the name "Go\0\0", then the ID.
func noteBuildID(data []byte, order binary.ByteOrder) string {
	if len(data) < 16 {
		return ""
	}
	nameSize, descSize, typ := order.Uint32(data), order.Uint32(data[4:]), order.Uint32(data[8:])
	if nameSize != 4 || typ != 4 || string(data[12:16]) != "Go\x00\x00" || uint64(descSize) > uint64(len(data)-16) {
		return ""
	}
	return string(data[16 : 16+descSize])
}

// markedBuildID finds `\xff Go build ID: "ID"` in data.
func markedBuildID(data []byte) string {
	marker := []byte("\xff Go build ID: \"")
	i := bytes.Index(data, marker)
	if i < 0 {
		return ""
	}
	rest := data[i+len(marker):]
	j := bytes.IndexByte(rest, '"')
	if j <= 0 || j > 256 {
		return ""
	}
	return string(rest[:j])
}
