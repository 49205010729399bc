package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/rlx-project/rlx/pkg/hir"
	"github.com/rlx-project/rlx/pkg/specialize"
	"github.com/spf13/cobra"
)

func newCheckCmd() *cobra.Command {
	var verbose bool
	var binds []string
	cmd := &cobra.Command{
		Use:   "check FILE...",
		Short: "Parse, verify and infer the shapes of HIR files (or ONNX models)",
		Long: `check parses each HIR file, verifies it (names, operations, attributes,
dtypes) and infers every value's symbolic shape. It writes nothing. An ONNX
model (FILE.onnx) is imported in memory first, as 'rlxc build' imports it;
line:col in its errors are in the HIR that 'rlxc import' writes.

Errors go to stderr as FILE:LINE:COL: message, all of them, not only the
first. The exit code is 0 when every file is valid and 1 otherwise.

With --bind it also checks dim values as 'rlxc build' will: each value
within its dim's bounds, and every dim relation deferred to binding time.
A list of values checks each (--bind seq=1,4096).

With -v it prints each function's signature, the inferred type of every
value, and the dim relations that can only be checked once dims are bound
(they are checked by 'rlxc build --bind').`,
		Example: `  rlxc check model.hir
  rlxc check model.onnx --bind batch=1
  rlxc check testdata/models/*.hir
  rlxc check -v encoder.hir
  rlxc check --bind batch=1 --bind seq=128,4096 encoder.hir`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			bindings, err := specialize.ParseBindings(binds)
			if err != nil {
				return &exitError{code: exitUsage, err: fmt.Errorf("rlxc check: %v", err)}
			}
			bad := 0
			for _, file := range args {
				m, err := loadChecked(file)
				if err != nil {
					var ee *exitError
					if errors.As(err, &ee) && ee.code == exitIO {
						return err
					}
					fmt.Fprintln(cmd.ErrOrStderr(), err)
					bad++
					continue
				}
				if verbose {
					describeModule(cmd.OutOrStdout(), m)
				}
				for _, b := range bindings {
					if len(b) == 0 {
						continue
					}
					if err := m.CheckBinding(b); err != nil {
						fmt.Fprintln(cmd.ErrOrStderr(), importedNote(err, file))
						bad++
					}
				}
			}
			if bad > 0 {
				return &exitError{code: exitInput, err: nil}
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&binds, "bind", nil, "check dim values `NAME=V[,V...]` (repeatable)")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "print signatures, inferred types and deferred dim checks")
	return cmd
}

// readSource reads a file, or stdin for "-"; failures are I/O errors.
func readSource(cmd *cobra.Command, file string) ([]byte, error) {
	var src []byte
	var err error
	if file == "-" {
		src, err = io.ReadAll(cmd.InOrStdin())
	} else {
		src, err = os.ReadFile(file)
	}
	if err != nil {
		return nil, &exitError{code: exitIO, err: fmt.Errorf("rlxc: %v", err)}
	}
	return src, nil
}

// loadChecked reads, parses and checks one file (an ONNX model through
// its import, in memory). Syntax errors stop before checking: a module
// that did not parse would only add noise.
func loadChecked(file string) (*hir.Module, error) {
	var src []byte
	if strings.HasSuffix(file, ".onnx") {
		res, err := importONNX(file, "", "")
		if err != nil {
			return nil, err
		}
		src = res.HIR
	} else {
		var err error
		if src, err = os.ReadFile(file); err != nil {
			return nil, &exitError{code: exitIO, err: fmt.Errorf("rlxc: %v", err)}
		}
	}
	m, err := hir.ParseFile(file, src)
	if err == nil {
		err = hir.Check(m)
	}
	if err != nil {
		return nil, importedNote(err, file)
	}
	return m, nil
}

// importedNote adds to an error that names a line of an ONNX model that
// the line is the imported HIR's.
func importedNote(err error, file string) error {
	if strings.HasSuffix(file, ".onnx") && hasPosition(err.Error(), file) {
		return fmt.Errorf("%w\nrlxc: note: line:col is in the HIR that rlxc import %s writes", err, file)
	}
	return err
}

func describeModule(w io.Writer, m *hir.Module) {
	fmt.Fprintf(w, "%s: module %s\n", m.File, hir.Quote(m.Name))
	for _, d := range m.Decls {
		f, ok := d.(*hir.FuncDecl)
		if !ok {
			continue
		}
		fmt.Fprintf(w, "  func %s\n", hir.Quote(f.Name))
		for _, a := range f.Params {
			fmt.Fprintf(w, "    in  %s : %s\n", hir.Quote(a.Name), a.Checked)
		}
		for _, s := range f.Body {
			for i, r := range s.Results {
				fmt.Fprintf(w, "    %s : %s = %s\n", hir.Quote(r.Name), s.Types[i], s.Op)
			}
		}
		for _, r := range f.Results {
			fmt.Fprintf(w, "    out %s : %s\n", hir.Quote(r.Name), r.Checked)
		}
	}
	for _, c := range m.Constraints {
		fmt.Fprintf(w, "  checked at bind time (%s): %s\n", c.Pos, c)
	}
}
