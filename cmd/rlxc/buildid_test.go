package main

import (
	"encoding/binary"
	"strings"
	"testing"
)

// TestCompilerBuild reads this test binary's build ID: the AOT cache key
// must tell compiler builds apart even when the version is the same.
func TestCompilerBuild(t *testing.T) {
	id := compilerBuild()
	if id == "" {
		t.Fatal("compilerBuild() is empty: the cache key would not change with the compiler's code")
	}
	if strings.ContainsAny(id, "\x00\n\"") {
		t.Errorf("compilerBuild() = %q: not a clean ID", id)
	}
}

func TestBuildIDDecoders(t *testing.T) {
	note := binary.LittleEndian.AppendUint32(nil, 4)
	note = binary.LittleEndian.AppendUint32(note, 5)
	note = binary.LittleEndian.AppendUint32(note, 4)
	note = append(note, "Go\x00\x00abcde"...)
	if got := noteBuildID(note, binary.LittleEndian); got != "abcde" {
		t.Errorf("noteBuildID = %q, want abcde", got)
	}
	for _, bad := range [][]byte{note[:15], append(append([]byte(nil), note[:12]...), "Xo\x00\x00abcde"...), note[:18]} {
		if got := noteBuildID(bad, binary.LittleEndian); got != "" {
			t.Errorf("noteBuildID(%q) = %q, want nothing", bad, got)
		}
	}
	if got := markedBuildID([]byte("junk\xff Go build ID: \"a/b/c\"\n \xff more")); got != "a/b/c" {
		t.Errorf("markedBuildID = %q, want a/b/c", got)
	}
	for _, bad := range []string{"no marker", "\xff Go build ID: \"unterminated", "\xff Go build ID: \"\""} {
		if got := markedBuildID([]byte(bad)); got != "" {
			t.Errorf("markedBuildID(%q) = %q, want nothing", bad, got)
		}
	}
}
