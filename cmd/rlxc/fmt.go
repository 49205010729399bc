package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/rlx-project/rlx/internal/atomicfile"

	"github.com/rlx-project/rlx/pkg/hir"
	"github.com/spf13/cobra"
)

func newFmtCmd() *cobra.Command {
	var write, list, check bool
	cmd := &cobra.Command{
		Use:   "fmt [-w | -l | --check] FILE...",
		Short: "Print HIR files in canonical form",
		Long: `fmt prints each HIR file in canonical form: one spelling for every
expression, two-space indentation in function bodies, end-of-line comments
aligned, one blank line around functions. Comments are kept. Formatting a
formatted file changes nothing.

By default the result goes to stdout. -w rewrites the files in place
(atomically: a temp file renamed over the original, and only when the text
changes). -l lists the files whose formatting differs. --check is -l for
CI: it exits 1 when any file is not formatted. A file name of - reads stdin.

fmt needs the file to parse; it does not need it to check.`,
		Example: `  rlxc fmt model.hir
  rlxc fmt -w testdata/models/*.hir
  rlxc fmt --check testdata/models/*.hir`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if write && (list || check) {
				return &exitError{code: exitUsage, err: fmt.Errorf("rlxc fmt: -w cannot be combined with -l or --check")}
			}
			bad, unformatted := 0, 0
			for _, file := range args {
				if strings.HasSuffix(file, ".onnx") {
					fmt.Fprintf(cmd.ErrOrStderr(), "rlxc fmt: %s is an ONNX model; fmt formats HIR text (rlxc import %s -o FILE.hir writes it)\n", file, file)
					bad++
					continue
				}
				src, err := readSource(cmd, file)
				if err != nil {
					return err
				}
				m, err := hir.ParseFile(file, src)
				if err != nil {
					fmt.Fprintln(cmd.ErrOrStderr(), err)
					bad++
					continue
				}
				out := hir.Format(m)
				same := bytes.Equal(out, src)
				switch {
				case list || check:
					if !same {
						fmt.Fprintln(cmd.OutOrStdout(), file)
						unformatted++
					}
				case write && file != "-":
					if !same {
						if err := writeFileAtomic(file, out); err != nil {
							return &exitError{code: exitIO, err: fmt.Errorf("rlxc: %v", err)}
						}
					}
				default:
					cmd.OutOrStdout().Write(out)
				}
			}
			if bad > 0 || check && unformatted > 0 {
				return &exitError{code: exitInput}
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&write, "write", "w", false, "rewrite the files in place")
	cmd.Flags().BoolVarP(&list, "list", "l", false, "list files whose formatting differs")
	cmd.Flags().BoolVar(&check, "check", false, "like -l, and exit 1 when any file needs formatting")
	return cmd
}

// writeFileAtomic replaces path with data through a temp file in the same
// directory, so a crash never leaves a half-written file; an existing file
// keeps its permissions.
func writeFileAtomic(path string, data []byte) error {
	return atomicfile.Write(path, atomicfile.Perm(path, 0o644), func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}
