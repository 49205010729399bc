package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rlx-project/rlx/pkg/artifact"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/rlx-project/rlx/pkg/targets/cpu/cgen"
)

// langExt is the usual file extension of each kernel language, and of
// each compiled form.
var langExt = map[string]string{"glsl": ".comp", "cuda": ".cu", "msl": ".metal", "spirv": ".spv", "ptx": ".ptx"}

// errNoNativeCode is emitKernels' error for a cpu artifact built without
// generated code: rlxc build refuses --cpu portable with --emit-kernels
// up front, so here the build degraded for want of clang and lld.
var errNoNativeCode = errors.New("the artifact has no generated code: its build is portable (native code needs clang and lld: apt-get install clang lld), so its kernels are all part of rlxrun")

// emitKernels writes the kernels an artifact carries under dir, one folder
// per variant (named by its binding): for GPU targets one file per kernel
// source and one per compiled form; for the cpu target the generated C
// (kernels.c: the prelude, the math header and every function, which the
// build compiled as several units) and the shared object of each CPU
// level (kernels.<level>.so). It returns how many files it wrote.
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
	kernels := 0
	for _, p := range info.programs {
		kernels += len(p.Kernels)
		if p.Native != nil {
			kernels += len(p.Native.Funcs)
		}
	}
	if kernels == 0 {
		if info.Manifest.Provenance.Target == "cpu" {
			return 0, errNoNativeCode
		}
		return 0, fmt.Errorf("target %s has no kernel sources to emit", info.Manifest.Provenance.Target)
	}
	n := 0
	for i, v := range info.Manifest.Variants {
		p := &info.programs[i] // readArtifactInfo decoded each variant's program
		sub := filepath.Join(dir, variantDir(v.Binding))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return n, err
		}
		files := map[string][]byte{}
		if p.Native != nil {
			files["kernels.c"] = []byte(cgen.Source(p.Native))
			for _, o := range p.Native.Objects {
				files["kernels."+o.Level+".so"] = o.ELF
			}
		}
		for _, k := range p.Kernels {
			files[k.Name+langExt[k.Lang]] = []byte(k.Source)
			if len(k.Binary) > 0 {
				files[k.Name+langExt[k.BinaryKind]] = k.Binary
			}
		}
		for name, data := range files {
			if err := writeFileAtomic(filepath.Join(sub, name), data); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

// variantDir names a variant's folder: "batch=1,seq=128", or "static".
func variantDir(b map[string]int64) string {
	if len(b) == 0 {
		return "static"
	}
	return specialize.Binding(b).String()
}
