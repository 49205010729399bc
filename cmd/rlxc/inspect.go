package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/rlx-project/rlx/internal/bytesize"
	"github.com/rlx-project/rlx/pkg/artifact"
	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/spf13/cobra"
	"github.com/spf13/viper"
)

func newInspectCmd() *cobra.Command {
	var asJSON, showLIR bool
	cmd := &cobra.Command{
		Use:   "inspect FILE.rlx | FILE.hir | FILE.onnx",
		Short: "Show what an artifact (or a HIR file) holds",
		Long: `inspect prints an artifact's provenance (compiler, target, bindings,
digests of the source and weights), its signature, its variants (kernels and
arena bytes each), its sections (codec, stored and raw sizes) and a count of
kernels by kind; for GPU targets, every kernel (language, workgroup size,
workgroup memory, compiled form, launches, the operation it runs for).
Every section is verified first. With --lir it prints each variant's
program instead: the buffer table, then one line per kernel launch with
its concrete geometry and the HIR line it came from. For a .hir file (or
an ONNX model, imported in memory) it prints the checked signature and
inferred types, as 'rlxc check -v' does.`,
		Example: `  rlxc inspect model.rlx
  rlxc inspect model.rlx --lir     # the launches of every variant
  rlxc inspect model.rlx --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			file := args[0]
			if strings.HasSuffix(file, ".hir") || strings.HasSuffix(file, ".onnx") {
				m, err := loadChecked(file)
				if err != nil {
					return checkError(err)
				}
				describeModule(cmd.OutOrStdout(), m)
				return nil
			}
			f, err := artifact.Open(file)
			if err != nil {
				return &exitError{code: exitIO, err: fmt.Errorf("rlxc: %v", err)}
			}
			defer f.Close()
			info, err := readArtifactInfo(f)
			if err != nil {
				return &exitError{code: exitIO, err: fmt.Errorf("rlxc: %s: %v", file, err)}
			}
			if showLIR {
				return printLIR(cmd.OutOrStdout(), info)
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(info)
			}
			printArtifactInfo(cmd.OutOrStdout(), file, info)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&showLIR, "lir", false, "print each variant's LIR program (its kernel launches)")
	return cmd
}

// printLIR prints every variant's program.
func printLIR(w io.Writer, info *artifactInfo) error {
	for i, v := range info.Manifest.Variants {
		if _, err := fmt.Fprintf(w, "variant %s (section %s)\n", artifact.BindingText(v.Binding), v.Section); err != nil {
			return err
		}
		if err := lir.Fprint(w, &info.programs[i]); err != nil {
			return err
		}
	}
	return nil
}

// checkError keeps an I/O exitError and makes anything else an input error.
func checkError(err error) error {
	if ee, ok := err.(*exitError); ok {
		return ee
	}
	return &exitError{code: exitInput, err: err}
}

type artifactInfo struct {
	Format   uint32                 `json:"format_version"`
	Size     int64                  `json:"bytes"`
	Manifest artifact.Manifest      `json:"manifest"`
	Sections []artifact.SectionInfo `json:"sections"`
	Kernels  []map[string]int       `json:"kernels_per_variant"`
	// GPU lists each variant's GPU kernels (empty for cpu artifacts).
	GPU [][]gpuKernelInfo `json:"gpu_kernels_per_variant,omitempty"`

	programs []lir.Program // each variant's, for --lir
}

// gpuKernelInfo summarizes one GPU kernel of a program.
type gpuKernelInfo struct {
	Name        string   `json:"name"`
	Lang        string   `json:"lang"`
	Entry       string   `json:"entry"`
	Local       [3]int64 `json:"local"`
	SharedBytes int64    `json:"shared_bytes"`
	Params      int      `json:"params"`
	SourceBytes int      `json:"source_bytes"`
	BinaryKind  string   `json:"binary_kind,omitempty"`
	BinaryBytes int      `json:"binary_bytes"`
	Launches    int      `json:"launches"`
	Src         string   `json:"src"` // the first operation it runs for
}

func gpuKernels(p *lir.Program) []gpuKernelInfo {
	out := make([]gpuKernelInfo, len(p.Kernels))
	for i, k := range p.Kernels {
		out[i] = gpuKernelInfo{Name: k.Name, Lang: k.Lang, Entry: k.Entry, Local: k.Local, SharedBytes: k.Shared, Params: len(k.Params),
			SourceBytes: len(k.Source), BinaryKind: k.BinaryKind, BinaryBytes: len(k.Binary)}
	}
	for _, s := range p.Steps {
		d, ok := s.Op.(*lir.Dispatch)
		if !ok || d.Kernel < 0 || d.Kernel >= len(out) {
			continue
		}
		k := &out[d.Kernel]
		if k.Launches == 0 {
			k.Src = s.Src
		}
		k.Launches++
	}
	return out
}

func readArtifactInfo(f *artifact.File) (*artifactInfo, error) {
	info := &artifactInfo{Format: f.FormatVersion(), Size: f.Size(), Sections: f.Sections()}
	raw, err := f.Section("manifest")
	if err != nil {
		return nil, err
	}
	if err := artifact.UnmarshalManifest(raw, &info.Manifest); err != nil {
		return nil, fmt.Errorf("manifest: %v", err)
	}
	for _, v := range info.Manifest.Variants {
		raw, err := f.Section(v.Section)
		if err != nil {
			return nil, err
		}
		var p lir.Program
		if err := artifact.UnmarshalManifest(raw, &p); err != nil {
			return nil, fmt.Errorf("section %q: %v", v.Section, err)
		}
		counts := map[string]int{}
		for _, s := range p.Steps {
			counts[s.Kind()]++
		}
		info.Kernels = append(info.Kernels, counts)
		info.programs = append(info.programs, p)
		if len(p.Kernels) > 0 {
			info.GPU = append(info.GPU, gpuKernels(&p))
		}
	}
	return info, nil
}

func printArtifactInfo(w io.Writer, file string, info *artifactInfo) {
	m := info.Manifest
	p := m.Provenance
	fmt.Fprintf(w, "%s: rlx artifact, format %d, %d bytes\n", file, info.Format, info.Size)
	fmt.Fprintf(w, "module      %s (entry %s)\n", m.Module, p.Entry)
	fmt.Fprintf(w, "compiler    %s\n", p.Compiler)
	fmt.Fprintf(w, "target      %s\n", strings.TrimSpace(p.Target+" "+strings.Join(p.Features, ",")))
	fmt.Fprintf(w, "source      sha256:%s\n", p.SourceDigest)
	fmt.Fprintf(w, "weights     sha256:%s (%d tensors)\n", p.WeightsDigest, len(m.Weights))
	fmt.Fprintln(w, "signature")
	for _, d := range m.Signature.Dims {
		if d.Hi == 1<<63-1 {
			fmt.Fprintf(w, "  dim %s in [%d, inf)\n", d.Name, d.Lo)
		} else {
			fmt.Fprintf(w, "  dim %s in [%d, %d]\n", d.Name, d.Lo, d.Hi)
		}
	}
	for _, t := range m.Signature.Inputs {
		fmt.Fprintf(w, "  in  %s : %s[%s]\n", t.Name, t.DType, strings.Join(t.Shape, ", "))
	}
	for _, t := range m.Signature.Outputs {
		fmt.Fprintf(w, "  out %s : %s[%s]\n", t.Name, t.DType, strings.Join(t.Shape, ", "))
	}
	fmt.Fprintln(w, "variants")
	for i, v := range m.Variants {
		bind := artifact.BindingText(v.Binding)
		fmt.Fprintf(w, "  %-24s %3d kernels, arena %d bytes (intermediates %d bytes), section %s\n", bind, v.Steps, v.ArenaBytes, v.TempBytes, v.Section)
		if i < len(info.Kernels) {
			kinds := make([]string, 0, len(info.Kernels[i]))
			for k := range info.Kernels[i] {
				kinds = append(kinds, k)
			}
			sort.Strings(kinds)
			var parts []string
			for _, k := range kinds {
				parts = append(parts, fmt.Sprintf("%s x%d", k, info.Kernels[i][k]))
			}
			fmt.Fprintf(w, "  %-24s kernels: %s\n", "", strings.Join(parts, ", "))
		}
		if i < len(info.GPU) {
			for _, k := range info.GPU[i] {
				bin := "source only"
				if k.BinaryKind != "" {
					bin = fmt.Sprintf("%s %d B", k.BinaryKind, k.BinaryBytes)
				}
				fmt.Fprintf(w, "    %-28s %-4s local %dx%dx%d shared %5d B  %-14s x%-3d %s\n", k.Name, k.Lang, k.Local[0], k.Local[1], k.Local[2], k.SharedBytes, bin, k.Launches, k.Src)
			}
		}
	}
	fmt.Fprintln(w, "sections")
	for _, s := range info.Sections {
		fmt.Fprintf(w, "  %-12s %-4s %10d stored %10d raw  align %-4d sha256:%s\n", s.Name, s.Codec, s.Stored, s.Raw, s.Align, s.Digest[:16])
	}
}

func newCacheCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cache ls|stats|prune|clear",
		Short: "Look at and manage the AOT cache",
		Long: `The AOT cache keeps built artifacts keyed by everything that determines
their bytes: the canonical HIR, the weights, the bindings, the target, the
compiler version and the options. Its directory is --cache-dir, else
$RLXC_CACHE_DIR, else $XDG_CACHE_HOME/rlx, else ~/.cache/rlx.`,
	}
	cmd.PersistentFlags().String("cache-dir", "", "AOT cache directory")
	open := func(c *cobra.Command) (*viper.Viper, error) { return config(c) }
	cmd.AddCommand(&cobra.Command{
		Use: "ls", Short: "List cache entries, most recently used first", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			v, err := open(c)
			if err != nil {
				return err
			}
			entries, err := cacheFrom(v).List()
			if err != nil {
				return &exitError{code: exitIO, err: fmt.Errorf("rlxc: %v", err)}
			}
			sort.Slice(entries, func(i, j int) bool { return entries[i].Used.After(entries[j].Used) })
			for _, e := range entries {
				if e.Object {
					fmt.Fprintf(c.OutOrStdout(), "%s  %-12s %10d bytes  %s  native code\n", e.Digest[:12], "(object)", e.Size, e.Used.Format("2006-01-02 15:04"))
					continue
				}
				fmt.Fprintf(c.OutOrStdout(), "%s  %-12s %10d bytes  %s  %s  %s\n", e.Digest[:12], e.Key.Model, e.Size, e.Used.Format("2006-01-02 15:04"), e.Key.Target, e.Key.Binding)
			}
			return nil
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use: "stats", Short: "Print the number of entries and their size", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			v, err := open(c)
			if err != nil {
				return err
			}
			cc := cacheFrom(v)
			n, size, err := cc.Stats()
			if err != nil {
				return &exitError{code: exitIO, err: fmt.Errorf("rlxc: %v", err)}
			}
			fmt.Fprintf(c.OutOrStdout(), "%s: %d entries, %d bytes\n", cc.Dir, n, size)
			return nil
		},
	})
	prune := &cobra.Command{
		Use: "prune --max-size SIZE", Short: "Remove least recently used entries until the cache fits", Args: cobra.NoArgs,
		Example: "  rlxc cache prune --max-size 500MiB\n  rlxc cache prune --max-size 2GB",
		RunE: func(c *cobra.Command, args []string) error {
			v, err := open(c)
			if err != nil {
				return err
			}
			max, err := bytesize.Parse(v.GetString("max-size"))
			if err != nil {
				return &exitError{code: exitUsage, err: fmt.Errorf("rlxc cache prune: --max-size: %v", err)}
			}
			removed, freed, err := cacheFrom(v).Prune(max)
			if err != nil {
				return &exitError{code: exitIO, err: fmt.Errorf("rlxc: %v", err)}
			}
			fmt.Fprintf(c.OutOrStdout(), "removed %d entries, freed %s\n", removed, bytesize.Format(freed))
			return nil
		},
	}
	prune.Flags().String("max-size", "1GiB", "keep at most this much: bytes, or with a unit (500MiB, 2GB)")
	cmd.AddCommand(prune)
	cmd.AddCommand(&cobra.Command{
		Use: "clear", Short: "Remove every entry", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			v, err := open(c)
			if err != nil {
				return err
			}
			removed, err := cacheFrom(v).Clear()
			if err != nil {
				return &exitError{code: exitIO, err: fmt.Errorf("rlxc: %v", err)}
			}
			fmt.Fprintf(c.OutOrStdout(), "removed %d entries\n", removed)
			return nil
		},
	})
	return cmd
}
