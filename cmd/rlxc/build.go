package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/rlx-project/rlx/internal/bytesize"
	"github.com/rlx-project/rlx/internal/suggest"
	"github.com/rlx-project/rlx/pkg/artifact/cache"
	"github.com/rlx-project/rlx/pkg/driver"
	"github.com/rlx-project/rlx/pkg/hir"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// config reads settings from flags, then RLXC_* environment variables, then
// rlxc.yaml in the working directory: cobra flags bound into one viper.
func config(cmd *cobra.Command) (*viper.Viper, error) {
	v := viper.New()
	v.SetEnvPrefix("RLXC")
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()
	// Only rlxc.yaml itself: viper's search by base name would also take a
	// file named just "rlxc" (the binary, say) for a config.
	if _, err := os.Stat("rlxc.yaml"); err == nil {
		v.SetConfigFile("rlxc.yaml")
		if err := v.ReadInConfig(); err != nil {
			return nil, &exitError{code: exitUsage, err: fmt.Errorf("rlxc: rlxc.yaml: %v", err)}
		}
	}
	if err := checkSettings(cmd.Root(), v.AllKeys(), os.Environ()); err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	if err := v.BindPFlags(cmd.Flags()); err != nil {
		return nil, err
	}
	return v, nil
}

// checkSettings refuses settings no command of rlxc takes: a key of
// rlxc.yaml (keys, before flags are bound) or an RLXC_* variable in env
// that names no flag of any command, with the nearest one that does, so
// a typo (targt: vulkan) is an error rather than a build for cpu.
func checkSettings(root *cobra.Command, keys, env []string) error {
	known := map[string]bool{}
	var names []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, fs := range []*pflag.FlagSet{c.Flags(), c.PersistentFlags()} {
			fs.VisitAll(func(f *pflag.Flag) {
				if !known[f.Name] {
					known[f.Name] = true
					names = append(names, f.Name)
				}
			})
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	sort.Strings(names)
	hint := func(k string) string {
		if n := suggest.Nearest(k, names); n != "" {
			return fmt.Sprintf(" (did you mean %s?)", n)
		}
		return ""
	}
	for _, k := range keys {
		if !known[k] {
			return fmt.Errorf("rlxc: rlxc.yaml: unknown setting %q%s; the settings are the flags' long names (rlxc help build)", k, hint(k))
		}
	}
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		suffix, ok := strings.CutPrefix(name, "RLXC_")
		if !ok {
			continue
		}
		k := strings.ReplaceAll(strings.ToLower(suffix), "_", "-")
		if !known[k] {
			envHint := ""
			if n := suggest.Nearest(k, names); n != "" {
				envHint = fmt.Sprintf(" (did you mean RLXC_%s?)", strings.ToUpper(strings.ReplaceAll(n, "-", "_")))
			}
			return fmt.Errorf("rlxc: unknown environment setting %s%s; RLXC_* variables name the flags' long names (RLXC_CACHE_DIR for --cache-dir)", name, envHint)
		}
	}
	return nil
}

// defaultCacheMaxSize bounds the AOT cache after each build: enough for
// hundreds of typical artifacts, small next to a CI machine's disk.
const defaultCacheMaxSize = "2GiB"

// cacheLimit is --cache-max-size in bytes, -1 for none.
func cacheLimit(v *viper.Viper) (int64, error) {
	s := v.GetString("cache-max-size")
	if s == "none" {
		return -1, nil
	}
	n, err := bytesize.Parse(s)
	if err != nil {
		return 0, &exitError{code: exitUsage, err: fmt.Errorf("rlxc build: --cache-max-size: %v (or none)", err)}
	}
	return n, nil
}

// cacheFrom returns the cache the flags and environment select, or nil.
func cacheFrom(v *viper.Viper) *cache.Cache {
	if v.GetBool("no-cache") {
		return nil
	}
	dir := v.GetString("cache-dir")
	if dir == "" {
		dir = cache.DefaultDir()
	}
	return &cache.Cache{Dir: dir}
}

func newBuildCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "build FILE.hir|FILE.onnx -o OUT.rlx [--bind NAME=V[,V...]]...",
		Short: "Compile a HIR model into a .rlx artifact",
		Long: `build compiles a model into one deployable artifact: it checks the HIR,
lowers it, runs the fusion passes, specializes it for each dim binding (one
variant per binding), plans memory, generates the target's kernels and writes
the .rlx file. Builds go through an on-disk cache: the same inputs give a
cache hit and byte-identical output.

Bindings: --bind seq=128 makes one variant; --bind seq=128,512 makes two;
several dims make the product (--bind batch=1,8 --bind seq=128). Every dim
the model uses must be bound, within its declared bounds.

Targets: cpu (the default), and the GPU targets vulkan (SPIR-V), cuda (PTX,
or CUDA C for NVRTC) and metal (MSL source); rlxc targets says what each
needs. A model with an operation a target has no kernel for fails here,
naming the operation and the target.

Precision: products compute exactly in fp32 by default. --precision tf32
lets the cuda target multiply matmuls and convolutions on tensor cores
(compute capability 8.0 or later), their operands rounded to tf32 (10
fraction bits, like PyTorch's allow_tf32) and their sums kept in fp32;
--precision bf16 rounds them to bf16 (7 fraction bits) for twice the
tensor-core rate again. Both are faster and less exact (docs/gpu.md
gives the bars they are tested to).

Weights come from, in order: an inline literal or a file reference in the
HIR, --weights FILE.safetensors (matched by name), or --random-weights SEED.

Progress: on a terminal a bar shows the variants generated and the native
code compiled; -v prints each stage with its time instead; -q prints only
errors. Off a terminal (a log, a CI job) only the final lines are printed.

Settings may also come from RLXC_* environment variables (RLXC_CACHE_DIR,
RLXC_TARGET, ...) and from rlxc.yaml in the working directory; flags win.`,
		Example: `  rlxc build testdata/models/mlp.hir --bind batch=1,8 --random-weights 1 -o mlp.rlx
  rlxc build encoder.hir --bind batch=1 --bind seq=128 --weights encoder.safetensors -o enc.rlx
  rlxc build mlp.hir --bind batch=1 --random-weights 1 --fusion-report -o mlp.rlx
  rlxc build model.hir --target metal --bind seq=128 --emit-kernels kernels/ -o model.rlx`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, err := config(cmd)
			if err != nil {
				return err
			}
			file := args[0]
			src, err := readSource(cmd, file)
			if err != nil {
				return err
			}
			out := v.GetString("output")
			if out == "" {
				out = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)) + ".rlx"
			}
			bindings, err := specialize.ParseBindings(v.GetStringSlice("bind"))
			if err != nil {
				return &exitError{code: exitUsage, err: fmt.Errorf("rlxc build: %v", err)}
			}
			if v.GetBool("require-ptx") {
				if v.GetString("target") != "cuda" {
					return &exitError{code: exitUsage, err: fmt.Errorf("rlxc build: --require-ptx is for --target cuda")}
				}
				if note := driver.BuildTools("cuda"); note != "" {
					return &exitError{code: exitTool, err: fmt.Errorf("rlxc build: --require-ptx: %s", note)}
				}
			}
			precision := v.GetString("precision")
			if !slices.Contains(driver.Precisions(), precision) {
				return &exitError{code: exitUsage, err: fmt.Errorf("rlxc build: --precision %q: want one of %s", precision, strings.Join(driver.Precisions(), ", "))}
			}
			if precision != "fp32" && v.GetString("target") != "cuda" {
				return &exitError{code: exitUsage, err: fmt.Errorf("rlxc build: --precision %s is for --target cuda (its tensor cores); target %s computes in fp32", precision, v.GetString("target"))}
			}
			if v.GetString("emit-kernels") != "" && v.GetString("target") == "cpu" && slices.Equal(v.GetStringSlice("cpu"), []string{"portable"}) {
				return &exitError{code: exitUsage, err: fmt.Errorf("rlxc build: --emit-kernels writes generated code, and --cpu portable generates none (its kernels are part of rlxrun): drop --cpu portable, or name CPU levels")}
			}
			opts := driver.Options{
				Target:           v.GetString("target"),
				CPU:              v.GetStringSlice("cpu"),
				Precision:        precision,
				Bindings:         bindings,
				Func:             v.GetString("func"),
				WeightsPath:      v.GetString("weights"),
				AllowOutsideRefs: v.GetBool("allow-outside-refs"),
				Compiler:         "rlxc " + version,
				CompilerBuild:    compilerBuild(),
				Cache:            cacheFrom(v),
				ExplainCache:     v.GetBool("explain-cache"),
			}
			var bar *progressBar
			switch {
			case v.GetBool("quiet"):
			case v.GetBool("verbose"):
				opts.Log = cmd.ErrOrStderr()
				opts.Observer = stageLog{cmd.ErrOrStderr()}
			default:
				opts.Log = cmd.ErrOrStderr()
				if bar = newProgress(cmd.ErrOrStderr()); bar != nil {
					opts.Observer = bar
				}
			}
			if v.GetBool("fusion-report") {
				opts.FusionReport = cmd.OutOrStdout()
			}
			if s := v.GetString("random-weights"); s != "" {
				seed, err := strconv.ParseUint(s, 10, 64)
				if err != nil {
					return &exitError{code: exitUsage, err: fmt.Errorf("rlxc build: --random-weights wants a non-negative integer seed, found %q", s)}
				}
				opts.RandomSeed = &seed
			}
			fromONNX := strings.HasSuffix(file, ".onnx")
			if fromONNX {
				// Import in memory; the canonical HIR is what gets built and
				// cached. Errors keep naming the file the user gave.
				res, err := importONNX(file, "", "")
				if err != nil {
					return err
				}
				for _, w := range res.Warnings {
					fmt.Fprintf(cmd.ErrOrStderr(), "rlxc: warning: %s: %s\n", file, w)
				}
				src, opts.Params = res.HIR, res.Weights
			}
			maxCache, err := cacheLimit(v)
			if err != nil {
				return err
			}
			_, err = driver.Build(file, src, out, opts)
			bar.finish()
			if err != nil {
				return buildError(importedNote(err, file))
			}
			if opts.Cache != nil && maxCache >= 0 {
				// The limit holds after every build: a CI cache directory
				// stays bounded without a separate prune step.
				if removed, freed, err := opts.Cache.Prune(maxCache); err != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "rlxc: warning: could not keep the cache under %s: %v\n", bytesize.Format(maxCache), err)
				} else if removed > 0 && opts.Log != nil {
					fmt.Fprintf(opts.Log, "rlxc: cache: removed %d least recently used entries (%s) to stay under %s\n", removed, bytesize.Format(freed), bytesize.Format(maxCache))
				}
			}
			if dir := v.GetString("emit-kernels"); dir != "" {
				n, err := emitKernels(out, dir)
				if errors.Is(err, errNoNativeCode) {
					return &exitError{code: exitTool, err: fmt.Errorf("rlxc build: --emit-kernels: %v", err)}
				}
				if err != nil {
					return &exitError{code: exitIO, err: fmt.Errorf("rlxc build: --emit-kernels: %v", err)}
				}
				if opts.Log != nil {
					fmt.Fprintf(opts.Log, "rlxc: wrote %d kernel files under %s\n", n, dir)
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringP("output", "o", "", "the artifact to write (default: FILE's base name with .rlx)")
	f.String("target", "cpu", "target to build for: cpu, vulkan, cuda or metal (see rlxc targets)")
	f.Bool("require-ptx", false, "cuda target: fail (exit 5) rather than write CUDA C for NVRTC when clang cannot compile PTX here")
	f.StringSlice("cpu", nil, "the cpu target's native code: CPU `LEVELS` to compile fused regions for (x86-64-v3, x86-64-v4, armv8.2-a, native; a list puts several in one artifact, chosen at load), or portable for none (default: native where clang and lld are installed, else portable)")
	f.String("precision", "fp32", "what products compute in: fp32 (exact), or tf32 or bf16 (cuda only: tensor cores, operands rounded to that type, sums in fp32)")
	f.String("emit-kernels", "", "also write the generated kernels to `DIR`/<binding>/: a GPU target's one file per kernel (.comp, .cu, .metal) and per compiled form (.spv, .ptx); the cpu target's native code as kernels.c (every generated C function of the variant) and kernels.<level>.so per CPU level")
	f.StringArray("bind", nil, "bind dims: `NAME=V[,V...]` (repeatable; lists make one variant per value)")
	f.String("weights", "", "safetensors file with the params' data, matched by name")
	f.Bool("allow-outside-refs", false, "let the model's @\"file\" references be absolute or leave its directory")
	f.String("random-weights", "", "fill params without data with deterministic random values from `SEED`")
	f.String("func", "main", "the function to compile")
	f.String("cache-dir", "", "AOT cache directory (default $RLXC_CACHE_DIR, $XDG_CACHE_HOME/rlx or ~/.cache/rlx)")
	f.Bool("no-cache", false, "neither read nor write the AOT cache")
	f.String("cache-max-size", defaultCacheMaxSize, "after the build, remove least recently used cache entries until the cache takes at most `SIZE` (500MiB, 2GB), or none")
	f.Bool("explain-cache", false, "say why the cache missed")
	f.Bool("fusion-report", false, "print what each fusion pass did")
	f.BoolP("quiet", "q", false, "print nothing but errors")
	f.BoolP("verbose", "v", false, "print each stage of the build with its time, and each variant as it is generated")
	return cmd
}

// hasPosition reports whether msg names a line of file (file:LINE:COL).
func hasPosition(msg, file string) bool {
	for rest := msg; ; {
		i := strings.Index(rest, file+":")
		if i < 0 {
			return false
		}
		rest = rest[i+len(file)+1:]
		if rest != "" && rest[0] >= '0' && rest[0] <= '9' {
			return true
		}
	}
}

// buildError maps a build failure to an exit code: the user's input (1),
// files (3), rlxc itself (4), or a missing build tool (5).
func buildError(err error) error {
	var ie *driver.InputError
	var te *driver.ToolError
	var el hir.ErrorList
	var pe *os.PathError
	switch {
	case errors.As(err, &el), errors.As(err, &ie):
		return &exitError{code: exitInput, err: err}
	case errors.As(err, &te):
		return &exitError{code: exitTool, err: fmt.Errorf("rlxc: %v", err)}
	case errors.As(err, &pe):
		return &exitError{code: exitIO, err: fmt.Errorf("rlxc: %v", err)}
	}
	return &exitError{code: exitInternal, err: fmt.Errorf("rlxc: %v", err)}
}

func newTargetsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "targets",
		Short: "List the targets rlxc builds for and what each needs to run",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, t := range driver.Targets() {
				fmt.Fprintf(cmd.OutOrStdout(), "%-8s %s\n", t.Name, t.Status)
				if note := driver.BuildTools(t.Name); note != "" {
					fmt.Fprintf(cmd.OutOrStdout(), "%-8s note: %s\n", "", note)
				}
				if t.Name == "cpu" {
					printLevels(cmd.OutOrStdout())
					fmt.Fprintf(cmd.OutOrStdout(), "%-8s %s\n", "", driver.Int8Status())
				}
			}
			return nil
		},
	}
}

// printLevels writes the cpu target's native code levels, what this
// machine does with each, for rlxc targets.
func printLevels(w io.Writer) {
	for _, l := range driver.CPULevels() {
		build, run := "builds here", "runs here"
		if l.Build != nil {
			build = "does not build here: " + l.Build.Error()
		}
		if l.Run != nil {
			run = "does not run here: " + l.Run.Error()
		}
		def := ""
		if l.Default {
			def = " (the default)"
		}
		fmt.Fprintf(w, "%-8s --cpu %s%s: %s; %s\n", "", l.Name, def, build, run)
	}
}
