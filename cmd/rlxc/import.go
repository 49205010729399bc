package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rlx-project/rlx/pkg/onnx"
	"github.com/rlx-project/rlx/pkg/onnx/onnxpb"
	"github.com/rlx-project/rlx/pkg/tensor/safetensors"
	"github.com/spf13/cobra"
)

func newImportCmd() *cobra.Command {
	var out, module string
	cmd := &cobra.Command{
		Use:   "import MODEL.onnx -o MODEL.hir",
		Short: "Convert an ONNX model to HIR plus a safetensors file of its weights",
		Long: `import reads an ONNX model (opset 7 and newer; whole models are tested
at opsets 13 to 17, single operators from 7 to 24) and writes a HIR
module and, beside it, a safetensors file with the weights, which the
HIR's params reference by name. Named dynamic dims (dim_param) become
HIR dims; unnamed ones get generated names and a warning.
Shape arithmetic (Shape, Gather, Concat, Reshape chains, Slice with computed
ends, Range) is resolved into symbolic attributes. docs/onnx.md lists the
supported operators. Nothing is written when the model has an unsupported
operator, attribute or dtype.`,
		Example: `  rlxc import resnet.onnx -o resnet.hir     # writes resnet.hir and resnet.safetensors
  rlxc build resnet.onnx --bind batch=1 -o resnet.rlx   # or build it directly`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			file := args[0]
			if out == "" {
				out = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)) + ".hir"
			}
			if fi, err := os.Stat(out); err == nil && !fi.Mode().IsRegular() {
				// The weights go beside the HIR: a device, a pipe or a
				// directory has no "beside" (-o /dev/null would write
				// /dev/null.safetensors).
				return &exitError{code: exitUsage, err: fmt.Errorf("rlxc import: -o %s is not a regular file: give the HIR file's path (the weights go beside it as .safetensors)", out)}
			}
			weights := strings.TrimSuffix(out, filepath.Ext(out)) + ".safetensors"
			res, err := importONNX(file, module, filepath.Base(weights))
			if err != nil {
				return err
			}
			for _, w := range res.Warnings {
				fmt.Fprintf(cmd.ErrOrStderr(), "rlxc: warning: %s: %s\n", file, w)
			}
			if err := safetensors.Write(weights, res.Names, res.Weights, map[string]string{"source": filepath.Base(file)}); err != nil {
				return &exitError{code: exitIO, err: fmt.Errorf("rlxc: %v", err)}
			}
			if err := writeFileAtomic(out, res.HIR); err != nil {
				os.Remove(weights)
				return &exitError{code: exitIO, err: fmt.Errorf("rlxc: %v", err)}
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "rlxc: wrote %s and %s (%d params)\n", out, weights, len(res.Names))
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "the HIR file to write (default: MODEL.hir); weights go beside it as .safetensors")
	cmd.Flags().StringVar(&module, "module", "", "module name (default: the file's base name)")
	return cmd
}

// importONNX decodes and imports a model; weightsFile is what params
// reference ("" for none: the weights stay in memory).
func importONNX(file, module, weightsFile string) (*onnx.Result, error) {
	m, err := onnxpb.DecodeFile(file)
	if err != nil {
		if os.IsNotExist(err) || isPathError(err) {
			return nil, &exitError{code: exitIO, err: fmt.Errorf("rlxc: %v", err)}
		}
		if strings.Contains(err.Error(), file) {
			return nil, &exitError{code: exitInput, err: fmt.Errorf("rlxc: %v", err)}
		}
		return nil, &exitError{code: exitInput, err: fmt.Errorf("rlxc: %s: %v", file, err)}
	}
	if module == "" {
		module = moduleName(file)
	}
	res, err := onnx.Import(m, onnx.Options{Module: module, Source: filepath.Base(file), WeightsFile: weightsFile})
	if err != nil {
		return nil, &exitError{code: exitInput, err: fmt.Errorf("rlxc: %s: %v", file, err)}
	}
	return res, nil
}

// isPathError reports an error of opening or reading a file, however
// wrapped (the model's, or an external data file beside it).
func isPathError(err error) bool {
	var pe *os.PathError
	return errors.As(err, &pe)
}

// moduleName makes a module name from a file name: mobilenet_v2.onnx ->
// mobilenet_v2.
func moduleName(file string) string {
	base := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	out := strings.Map(func(r rune) rune {
		if r == '_' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, base)
	if out == "" || out[0] >= '0' && out[0] <= '9' {
		out = "m_" + out
	}
	return out
}
