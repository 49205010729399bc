package lower

import (
	"fmt"

	"github.com/rlx-project/rlx/pkg/hir"
	"github.com/rlx-project/rlx/pkg/tensor"
)

// literalTensor converts a checked literal (a scalar, which fills the tensor,
// or nested lists matching the static shape) to tensor data.
func literalTensor(x hir.Expr, t hir.Type) (*tensor.Tensor, error) {
	shape := make([]int64, t.Rank())
	for i, d := range t.Shape {
		v, ok := d.Const()
		if !ok {
			return nil, fmt.Errorf("literal with a symbolic shape %s", t)
		}
		shape[i] = v
	}
	out := tensor.New(t.DType, shape...)
	n := out.Len()
	if _, isList := x.(*hir.ListLit); !isList {
		v, err := scalarValue(x)
		if err != nil {
			return nil, err
		}
		for i := 0; i < n; i++ {
			setElem(out, i, v)
		}
		return out, nil
	}
	i := 0
	var walk func(e hir.Expr) error
	walk = func(e hir.Expr) error {
		if l, ok := e.(*hir.ListLit); ok {
			for _, el := range l.Elems {
				if err := walk(el); err != nil {
					return err
				}
			}
			return nil
		}
		v, err := scalarValue(e)
		if err != nil {
			return err
		}
		if i >= n {
			return fmt.Errorf("literal has more elements than %s", t)
		}
		setElem(out, i, v)
		i++
		return nil
	}
	if err := walk(x); err != nil {
		return nil, err
	}
	if i != n {
		return nil, fmt.Errorf("literal has %d elements, %s needs %d", i, t, n)
	}
	return out, nil
}

func scalarValue(x hir.Expr) (float64, error) {
	switch v := x.(type) {
	case *hir.IntLit:
		return float64(v.Value), nil
	case *hir.FloatLit:
		return v.Value, nil
	case *hir.BoolLit:
		if v.Value {
			return 1, nil
		}
		return 0, nil
	}
	return 0, fmt.Errorf("not a literal value: %s", hir.FormatExpr(x))
}
