package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rlx-project/rlx/pkg/artifact"
)

// langExt is the usual file extension of each kernel language, and of
// each compiled form.
var langExt = map[string]string{"glsl": ".comp", "cuda": ".cu", "msl": ".metal", "spirv": ".spv", "ptx": ".ptx"}

// emitKernels writes every GPU kernel of an artifact under dir, one folder
// per variant (named by its binding), one file per kernel source and one
// per compiled form. It returns how many files it wrote.
func emitKernels(path, dir string) (int, error) {
	f, err := artifact.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	info, err := readArtifactInfo(f)
	if err != nil {
		return 0, err
	}
	if info.Manifest.Provenance.Target == "cpu" {
		return 0, fmt.Errorf("target cpu has no kernel sources to emit (its kernels are part of rlxrun); --emit-kernels is for vulkan, cuda and metal")
	}
	n := 0
	for _, v := range info.Manifest.Variants {
		raw, err := f.Section(v.Section)
		if err != nil {
			return n, err
		}
		var p artifact.Program
		if err := artifact.UnmarshalManifest(raw, &p); err != nil {
			return n, fmt.Errorf("section %q: %v", v.Section, err)
		}
		sub := filepath.Join(dir, variantDir(v.Binding))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return n, err
		}
		for _, k := range p.Kernels {
			files := map[string][]byte{k.Name + langExt[k.Lang]: []byte(k.Source)}
			if len(k.Binary) > 0 {
				files[k.Name+langExt[k.BinaryKind]] = k.Binary
			}
			for name, data := range files {
				if err := writeAtomic(filepath.Join(sub, name), data); err != nil {
					return n, err
				}
				n++
			}
		}
	}
	return n, nil
}

// variantDir names a variant's folder: "batch=1,seq=128", or "static".
func variantDir(b map[string]int64) string {
	if len(b) == 0 {
		return "static"
	}
	names := make([]string, 0, len(b))
	for k := range b {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%s=%d", k, b[k])
	}
	return strings.Join(parts, ",")
}

// writeAtomic writes through a temporary file and a rename, so a reader
// never sees half a file.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
