package lir

import (
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/rlx-project/rlx/pkg/tensor"
)

// Fprint writes p as text, one line per buffer, slot and step, for golden
// tests and `rlxc inspect`. Every field of every operation is printed
// (by reflection, so a new kind needs no printer code); zero numbers,
// false flags, absent buffers and empty lists are left out.
func Fprint(w io.Writer, p *Program) error {
	var b strings.Builder
	fmt.Fprintf(&b, "arena %d bytes\n", p.ArenaBytes)
	for i, buf := range p.Buffers {
		fmt.Fprintf(&b, "b%d = %s", i, buf.Kind)
		if buf.Kind != BufArena {
			fmt.Fprintf(&b, "[%d]", buf.Index)
		}
		fmt.Fprintf(&b, " +%d %d bytes\n", buf.Offset, buf.Bytes)
	}
	for _, s := range p.Inputs {
		fmt.Fprintf(&b, "input %s: %s%v = b%d\n", s.Name, s.DType, s.Shape, s.Buffer)
	}
	for _, s := range p.Outputs {
		fmt.Fprintf(&b, "output %s: %s%v = b%d\n", s.Name, s.DType, s.Shape, s.Buffer)
	}
	for i, k := range p.Kernels {
		fmt.Fprintf(&b, "kernel %d %s (%s, local %v, %d params)\n", i, k.Name, k.Lang, k.Local, len(k.Params))
	}
	if n := p.Native; n != nil {
		for i, f := range n.Funcs {
			fmt.Fprintf(&b, "native %d %s (range %d, grain %d, in %v bytes, out %v bytes)\n", i, f.Name, f.N, f.Grain, f.In, f.Out)
		}
		for _, o := range n.Objects {
			fmt.Fprintf(&b, "native code %s (%d bytes)\n", o.Level, len(o.ELF))
		}
	}
	for i := range p.Steps {
		s := &p.Steps[i]
		fmt.Fprintf(&b, "%d: %s", i, FormatOp(s.Op))
		if s.Src != "" {
			fmt.Fprintf(&b, "  # %s", s.Src)
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// FormatOp prints one operation: its kind, then field=value pairs.
func FormatOp(op Op) string {
	if op == nil {
		return "<nil>"
	}
	var b strings.Builder
	b.WriteString(string(op.Kind()))
	writeFields(&b, "", reflect.ValueOf(op).Elem())
	return b.String()
}

var (
	bufType   = reflect.TypeOf(Buf(0))
	dtypeType = reflect.TypeOf(tensor.DType(0))
)

func writeFields(b *strings.Builder, prefix string, v reflect.Value) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f, fv := t.Field(i), v.Field(i)
		name := prefix + snake(f.Name)
		if f.Type.Kind() == reflect.Struct {
			writeFields(b, name+".", fv)
			continue
		}
		if s, ok := formatValue(fv); ok {
			fmt.Fprintf(b, " %s=%s", name, s)
		}
	}
}

// formatValue prints a field's value, or reports false for one left out:
// zero numbers, false flags, absent buffers and empty lists. Enumerations
// (Stringers) always print.
func formatValue(v reflect.Value) (string, bool) {
	switch v.Kind() {
	case reflect.Slice, reflect.Array:
		if v.Len() == 0 || v.Kind() == reflect.Array && v.IsZero() {
			return "", false
		}
	case reflect.Bool:
		if !v.Bool() {
			return "", false
		}
	default:
		if v.Type() == bufType {
			if Buf(v.Int()) == NoBuf {
				return "", false
			}
		} else if _, ok := v.Interface().(fmt.Stringer); !ok && v.IsZero() {
			return "", false
		}
	}
	return valueString(v), true
}

func valueString(v reflect.Value) string {
	if v.Type() == dtypeType {
		return tensor.DType(v.Uint()).String()
	}
	if s, ok := v.Interface().(fmt.Stringer); ok {
		return s.String()
	}
	switch v.Kind() {
	case reflect.Slice, reflect.Array:
		sep := ","
		if v.Type().Elem() == reflect.TypeOf(Instr{}) {
			sep = "; "
		}
		parts := make([]string, v.Len())
		for i := range parts {
			e := v.Index(i)
			if _, ok := e.Interface().(fmt.Stringer); !ok && e.Kind() == reflect.Struct {
				var b strings.Builder
				writeFields(&b, "", e)
				parts[i] = "{" + strings.TrimSpace(b.String()) + "}"
				sep = " "
			} else {
				parts[i] = valueString(e)
			}
		}
		return "[" + strings.Join(parts, sep) + "]"
	}
	return fmt.Sprint(v.Interface())
}

// snake spells a Go field name in snake case, keeping initialisms whole:
// CountIncludePad is count_include_pad, ToNHWC to_nhwc, DType dtype.
func snake(name string) string {
	name = strings.ReplaceAll(name, "DType", "Dtype")
	var b strings.Builder
	rs := []rune(name)
	for i, r := range rs {
		up := r >= 'A' && r <= 'Z'
		if up && i > 0 {
			prevLower := rs[i-1] >= 'a' && rs[i-1] <= 'z'
			nextLower := i+1 < len(rs) && rs[i+1] >= 'a' && rs[i+1] <= 'z'
			prevUpper := rs[i-1] >= 'A' && rs[i-1] <= 'Z'
			if prevLower || prevUpper && nextLower {
				b.WriteByte('_')
			}
		}
		if up {
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
