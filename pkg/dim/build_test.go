package dim

import (
	"fmt"
	"testing"
)

// evalBuilder evaluates an expression through Build, with floor division
// written out independently of the package's own.
type evalBuilder map[string]int64

func (b evalBuilder) Const(v int64) int64 { return v }
func (b evalBuilder) Sym(s string) int64  { return b[s] }
func (evalBuilder) Add(x, y int64) int64  { return x + y }
func (evalBuilder) Mul(x, y int64) int64  { return x * y }
func (evalBuilder) FloorDiv(n, d int64) int64 {
	q := n / d
	if (n%d != 0) && ((n < 0) != (d < 0)) {
		q--
	}
	return q
}

// textBuilder renders the structure Build hands out, fully parenthesized.
type textBuilder struct{}

func (textBuilder) Const(v int64) string        { return fmt.Sprint(v) }
func (textBuilder) Sym(s string) string         { return s }
func (textBuilder) Add(x, y string) string      { return "(" + x + "+" + y + ")" }
func (textBuilder) Mul(x, y string) string      { return "(" + x + "*" + y + ")" }
func (textBuilder) FloorDiv(n, d string) string { return "(" + n + "/" + d + ")" }

// TestBuild: Build's structure evaluates to what Eval gives, over
// expressions with products, powers, negative coefficients and nested
// floor divisions, at several bindings; and reparses to an equal Expr.
func TestBuild(t *testing.T) {
	for _, src := range []string{"0", "7", "-3", "seq", "2*batch*seq", "seq*seq - 3*seq + 1",
		"(seq+1)/2", "batch*((seq-1)/4) - seq/3", "(2*seq + past)/(batch+1)", "-(seq/2)", "((seq/2)+past)/3*batch"} {
		e, err := Parse(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		for _, b := range []map[string]int64{{"seq": 1, "batch": 1, "past": 0}, {"seq": 17, "batch": 3, "past": 5}, {"seq": 128, "batch": 8, "past": 31}} {
			want, err := e.Eval(b)
			if err != nil {
				t.Fatal(err)
			}
			if got := Build[int64](e, evalBuilder(b)); got != want {
				t.Errorf("%s at %v: Build gives %d, Eval %d", src, b, got, want)
			}
		}
		back, err := Parse(Build[string](e, textBuilder{}))
		if err != nil || !Equal(back, e) {
			t.Errorf("%s: Build's text %q reparses to %v (%v)", src, Build[string](e, textBuilder{}), back, err)
		}
	}
}
