package main

import (
	"fmt"
	"io"

	"github.com/rlx-project/rlx/internal/buildinfo"
	"github.com/spf13/cobra"
)

// version is the compiler version; release builds set it with -ldflags.
var version = "0.1.0-dev"

func newRootCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "rlxc",
		Short: "rlxc compiles ML models into deployable .rlx artifacts",
		Long: `rlxc is the rlx ahead-of-time compiler.

It reads models written in HIR (a small text format with symbolic dims,
see docs/hir.md), checks them, and builds them into .rlx artifacts that
rlxrun loads and runs.

  rlxc check model.hir                      parse, verify and infer shapes
  rlxc fmt -w model.hir                     rewrite a file in canonical form
  rlxc build model.hir --bind seq=128 -o m.rlx   compile an artifact
  rlxc import model.onnx -o model.hir      ONNX to HIR + safetensors
  rlxc build model.onnx --bind batch=1      build an ONNX model directly
  rlxc inspect m.rlx                        what an artifact holds
  rlxc cache stats                          the AOT cache

Exit codes: 0 ok, 1 errors in the input, 3 file not readable or
writable, 4 internal error, 5 a build tool the target needs is not
installed, 64 bad command line (2 is a crash of the Go runtime: a bug or
no memory left). docs/cli.md has the table.`,
		Version:       buildinfo.Describe(version),
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &exitError{code: exitUsage, err: err}
	})
	root.AddCommand(newCheckCmd(), newFmtCmd(), newBuildCmd(), newInspectCmd(), newTargetsCmd(), newCacheCmd(), newImportCmd(),
		&cobra.Command{Use: "version", Short: "Print the version and what this binary was built from", Args: cobra.NoArgs,
			Run: func(c *cobra.Command, _ []string) {
				fmt.Fprintln(c.OutOrStdout(), "rlxc version", buildinfo.Describe(version))
			}})
	return root
}
