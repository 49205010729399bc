package dim

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// simplifyTests maps input text to canonical text.
var simplifyTests = []struct{ in, want string }{
	// The examples shape inference relies on.
	{"seq*1", "seq"},
	{"2*seq/2", "seq"},
	{"(seq+1)*4", "4*seq+4"},
	{"batch*seq*256/batch", "256*seq"},
	{"batch*seq", "batch*seq"},
	{"seq*batch", "batch*seq"},
	{"seq/2", "seq/2"},
	{"(seq+1)/2", "(seq+1)/2"},
	{"256*seq", "256*seq"},
	{"seq-1", "seq-1"},
	{" batch * seq ", "batch*seq"},
	{"fc1.out/2", "fc1.out/2"},

	// Constants.
	{"0", "0"},
	{"2+3*4", "14"},
	{"(2+3)*4", "20"},
	{"10-4-3", "3"},
	{"100/7/2", "7"},
	{"2*-3", "-6"},
	{"9223372036854775807", "9223372036854775807"},
	{"-9223372036854775807-1", "(-9223372036854775807-1)"},

	// Floor division and remainder of constants: Python semantics.
	{"7/2", "3"},
	{"-7/2", "-4"},
	{"7/-2", "-4"},
	{"-7/-2", "3"},
	{"7%3", "1"},
	{"-7%2", "1"},
	{"7%-2", "-1"},
	{"-7%-2", "-1"},

	// Remainder.
	{"(2*s+1)%2", "1"},
	{"s%1", "0"},
	{"s%2", "s-2*(s/2)"},
	{"(s+4)%2", "s-2*(s/2)"},
	{"(4*s)%2", "0"},
	{"a%b", "-b*(a/b)+a"},
	{"(a*b)%b", "0"},

	// Splitting constant divisors, gcd reduction.
	{"2*s/4", "s/2"},
	{"(4*s+2)/4", "s"},
	{"(4*s+6)/4", "s+1"},
	{"(2*s+2)/4", "(s+1)/2"},
	{"(6*a+4*b)/8", "(3*a+2*b)/4"},
	{"(5*s+3)/2", "2*s+(s+1)/2+1"},
	{"(s+6)/3", "s/3+2"},

	// Negative divisors: floor(p/-c) = floor(-p/c).
	{"s/-2", "-s+s/2"},
	{"s%-2", "-s+2*(s/2)"},
	{"-s/2", "-s+s/2"},
	{"a/(-b)", "(-a)/b"},
	{"(a-1)/(1-b)", "(-a+1)/(b-1)"},

	// Unary minus.
	{"-a", "-a"},
	{"--a", "a"},
	{"-(a-b)", "-a+b"},
	{"-a*b", "-a*b"},
	{"-(a/2)", "-(a/2)"},
	{"-(a/2)-1", "-(a/2)-1"},
	{"-(a/2)+b", "b-a/2"},
	{"-a/2+b", "-a+b+a/2"},
	{"-2*a+b", "-2*a+b"},
	{"b-2*a", "-2*a+b"},

	// Like terms.
	{"a-a", "0"},
	{"a+b-a-b", "0"},
	{"3*a-2*a-a", "0"},
	{"a+a", "2*a"},
	{"(a+b+c)*2-2*c", "2*a+2*b"},
	{"(a+b)*(a-b)", "a*a-b*b"},
	{"(a+b)*(a+b)", "a*a+2*a*b+b*b"},
	{"a*(b+c)-c*a", "a*b"},

	// Exact and cancelled symbolic division.
	{"(a*a-b*b)/(a-b)", "a+b"},
	{"(a+1)/(a+1)", "1"},
	{"(2*a+2)/(a+1)", "2"},
	{"2*a/(-a)", "-2"},
	{"a*b/(2*b)", "a/2"},
	{"4*a*b/(2*a)", "2*b"},
	{"0/a", "0"},
	{"6*a/(4*b)", "3*a/(2*b)"},

	// Nested floor division.
	{"s/2/2", "s/4"},
	{"(s/2+1)/3", "(s+2)/6"},
	{"s/b/2", "s/(2*b)"},

	// Irreducible floor atoms and how they print.
	{"a/b", "a/b"},
	{"a/b/c", "a/b/c"},
	{"a/(b+1)", "a/(b+1)"},
	{"(a+1)/b", "(a+1)/b"},
	{"a*b/c", "a*b/c"},
	{"a/(b*c)", "a/(b*c)"},
	{"3*(a/2)", "3*(a/2)"},
	{"(a/2)*(a/2)", "(a/2)*(a/2)"},
	{"a/2*b", "b*(a/2)"},
	{"(a/2)/b", "a/2/b"},
	{"a/2+1", "a/2+1"},
	{"(a/2+b)/c", "(b+a/2)/c"},
	{"(a/b)*2/c", "2*(a/b)/c"},
}

func TestSimplify(t *testing.T) {
	for _, tt := range simplifyTests {
		e, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if got := e.String(); got != tt.want {
			t.Errorf("Parse(%q) = %s, want %s", tt.in, got, tt.want)
		}
		if e.Key() != e.String() {
			t.Errorf("Key(%s) = %s", e, e.Key())
		}
	}
}

// TestRoundTrip checks Parse(String()) for every table entry, that String is
// stable under it, and that the canonical form has the input's values.
func TestRoundTrip(t *testing.T) {
	for _, tt := range simplifyTests {
		e := MustParse(tt.in)
		back, err := Parse(e.String())
		if err != nil {
			t.Errorf("Parse(%q) (from %q): %v", e, tt.in, err)
			continue
		}
		if !Equal(back, e) || back.String() != e.String() {
			t.Errorf("Parse(%q) = %s, want Equal to %s", e, back, e)
		}
		ref, err := refParse(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		for a := int64(-3); a <= 5; a++ {
			for b := int64(-3); b <= 5; b++ {
				env := map[string]int64{"a": a, "b": b, "c": a - b, "s": a*7 + b, "seq": b, "batch": a, "fc1.out": a}
				want, werr := refEval(ref, env)
				got, gerr := e.Eval(env)
				if werr == nil && (gerr != nil || got != want) {
					t.Errorf("%q = %s at %v: %d, %v; want %d", tt.in, e, env, got, gerr, want)
				}
			}
		}
	}
}

func TestEqual(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"(s+4)%2", "s%2", true},
		{"2*seq/2", "seq", true},
		{"(seq+1)*4", "4*seq+4", true},
		{"batch*seq*256/batch", "256*seq", true},
		{"s/2/3", "s/6", true},
		{"(s+6)/3", "s/3+2", true},
		{"a*b", "b*a", true},
		{"(a+b)+c", "a+(b+c)", true},
		{"a*(b+c)", "a*b+a*c", true},
		{"s%2+2*(s/2)", "s", true},
		{"a/(2*b)", "a/b/2", true},
		{"a", "b", false},
		{"s/2", "s/3", false},
		{"a/b", "b/a", false},
		{"s", "s+1", false},
	}
	for _, tt := range tests {
		a, b := MustParse(tt.a), MustParse(tt.b)
		if got := Equal(a, b); got != tt.want {
			t.Errorf("Equal(%s, %s) = %v, want %v", a, b, got, tt.want)
		}
	}
}

func TestZeroValue(t *testing.T) {
	var z Expr
	if !Equal(z, Const(0)) || z.String() != "0" || !z.IsConst() {
		t.Errorf("zero Expr = %q, want the constant 0", z)
	}
	if v, ok := z.Const(); v != 0 || !ok {
		t.Errorf("zero Expr Const() = %d, %v", v, ok)
	}
	if e, err := Add(z, Sym("a")); err != nil || !Equal(e, Sym("a")) {
		t.Errorf("0 + a = %s, %v", e, err)
	}
}

func TestConstAndSyms(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 42, math.MaxInt64, math.MinInt64} {
		e := Const(v)
		if got, ok := e.Const(); !ok || got != v {
			t.Errorf("Const(%d).Const() = %d, %v", v, got, ok)
		}
		if back := MustParse(e.String()); !Equal(back, e) {
			t.Errorf("Parse(%q) = %s", e, back)
		}
	}
	if MustParse("a+1").IsConst() {
		t.Error("a+1 is constant")
	}
	tests := []struct {
		in   string
		want string
	}{
		{"3", ""},
		{"seq*batch+seq", "batch seq"},
		{"a/(b+c)", "a b c"},
		{"(x%y)*x", "x y"},
		{"a-a+b", "b"},
	}
	for _, tt := range tests {
		if got := strings.Join(MustParse(tt.in).Syms(), " "); got != tt.want {
			t.Errorf("Syms(%s) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestEval(t *testing.T) {
	tests := []struct {
		in      string
		binding map[string]int64
		want    int64
		err     string
	}{
		{"batch*seq", map[string]int64{"batch": 3, "seq": 5}, 15, ""},
		{"(seq+1)/2", map[string]int64{"seq": 6}, 3, ""},
		{"a%b", map[string]int64{"a": -7, "b": 2}, 1, ""},
		{"a/b", map[string]int64{"a": 7, "b": -2}, -4, ""},
		{"a/b", map[string]int64{"a": 1, "b": 0}, 0, "division by zero in dim expression"},
		{"a*a", map[string]int64{"a": 1 << 32}, 0, "dim expression overflows int64"},
		{"a+b", map[string]int64{"a": math.MaxInt64, "b": 1}, 0, "dim expression overflows int64"},
		{"a/b", map[string]int64{"a": math.MinInt64, "b": -1}, 0, "dim expression overflows int64"},
		{"z*y+x", map[string]int64{"z": 1}, 0, `unbound symbol "x" in dim expression`},
		{"7", nil, 7, ""},
	}
	for _, tt := range tests {
		got, err := MustParse(tt.in).Eval(tt.binding)
		switch {
		case tt.err != "" && (err == nil || err.Error() != tt.err):
			t.Errorf("Eval(%s, %v) = %d, %v; want error %q", tt.in, tt.binding, got, err, tt.err)
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("Eval(%s, %v) = %d, %v; want %d", tt.in, tt.binding, got, err, tt.want)
		}
	}
}

func TestSubstitute(t *testing.T) {
	tests := []struct {
		in   string
		by   map[string]string
		want string
		err  string
	}{
		{"batch*seq", map[string]string{"batch": "2"}, "2*seq", ""},
		{"batch*seq", map[string]string{"batch": "2", "seq": "8"}, "16", ""},
		{"(seq+1)/2", map[string]string{"seq": "2*n"}, "n", ""},
		{"(seq+1)/2", map[string]string{"seq": "7"}, "4", ""},
		{"seq%4", map[string]string{"seq": "4*k+3"}, "3", ""},
		{"a/b", map[string]string{"b": "1"}, "a", ""},
		{"a/b", map[string]string{"a": "2*b"}, "2", ""},
		{"a/(b-1)", map[string]string{"b": "1"}, "", "division by zero in dim expression"},
		{"a+b", map[string]string{"a": "b", "b": "a"}, "a+b", ""}, // simultaneous
		{"a*b", map[string]string{"c": "1"}, "a*b", ""},
		{"a*a*a*a*a*a*a*a", map[string]string{"a": "a*a*a"}, "", "dim expression too complex: degree more than 16"},
		{"a*b", map[string]string{"a": "4611686018427387904", "b": "2"}, "", "dim expression overflows int64"},
	}
	for _, tt := range tests {
		by := map[string]Expr{}
		for k, v := range tt.by {
			by[k] = MustParse(v)
		}
		got, err := Substitute(MustParse(tt.in), by)
		switch {
		case tt.err != "" && (err == nil || err.Error() != tt.err):
			t.Errorf("Substitute(%s, %v) = %s, %v; want error %q", tt.in, tt.by, got, err, tt.err)
		case tt.err == "" && (err != nil || got.String() != tt.want):
			t.Errorf("Substitute(%s, %v) = %s, %v; want %s", tt.in, tt.by, got, err, tt.want)
		}
	}
}

func TestArithmeticErrors(t *testing.T) {
	a, b := Sym("a"), Sym("b")
	big := Const(math.MaxInt64)
	check := func(name string, _ Expr, err, want error) {
		t.Helper()
		if !errors.Is(err, want) {
			t.Errorf("%s: error %v, want %v", name, err, want)
		}
	}
	e, err := FloorDiv(a, Const(0))
	check("a/0", e, err, errDivZero)
	e, err = Mod(a, Const(0))
	check("a%0", e, err, errDivZero)
	e, err = FloorDiv(Const(5), Const(0))
	check("5/0", e, err, errDivZero)
	e, err = Add(big, Const(1))
	check("max+1", e, err, errOverflow)
	e, err = Sub(Const(math.MinInt64), Const(1))
	check("min-1", e, err, errOverflow)
	e, err = Neg(Const(math.MinInt64))
	check("-min", e, err, errOverflow)
	e, err = Mul(big, Const(2))
	check("max*2", e, err, errOverflow)
	e, err = FloorDiv(Const(math.MinInt64), Const(-1))
	check("min/-1", e, err, errOverflow)
	ab, _ := Mul(a, big)
	e, err = Mul(ab, mustAdd(t, a, b))
	check("max*a*(a+b)", e, err, nil)
	e, err = Mul(ab, mustAdd(t, a, a))
	check("max*a*(a+a)", e, err, errOverflow)
	if e, err := Sub(big, big); err != nil || !Equal(e, Const(0)) {
		t.Errorf("max-max = %s, %v", e, err)
	}
}

// mustAdd is Add for arguments known to be fine.
func mustAdd(t *testing.T, a, b Expr) Expr {
	t.Helper()
	e, err := Add(a, b)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ in, err string }{
		{"", "unexpected end of dim expression"},
		{"a+", "unexpected end of dim expression"},
		{"(a", "unexpected end of dim expression"},
		{"a)", `unexpected ')' at offset 1 in dim expression`},
		{"2a", `unexpected 'a' at offset 1 in dim expression`},
		{"a b", `unexpected 'b' at offset 2 in dim expression`},
		{"1.5", `unexpected '.' at offset 1 in dim expression`},
		{"+a", `unexpected '+' at offset 0 in dim expression`},
		{"a**2", `unexpected '*' at offset 2 in dim expression`},
		{"a/0", "division by zero in dim expression"},
		{"a%(b-b)", "division by zero in dim expression"},
		{"9223372036854775808", "integer 9223372036854775808 at offset 0 overflows int64"},
		{"9223372036854775807+1", "dim expression overflows int64"},
		{"a*9223372036854775807*2", "dim expression overflows int64"},
		{"-9223372036854775808", "integer 9223372036854775808 at offset 1 overflows int64"},
	}
	for _, tt := range tests {
		e, err := Parse(tt.in)
		if err == nil || err.Error() != tt.err {
			t.Errorf("Parse(%q) = %s, %v; want error %q", tt.in, e, err, tt.err)
		}
	}
}

func TestMustParsePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("MustParse(\"a+\") did not panic")
		}
	}()
	MustParse("a+")
}

// TestComplexityLimits checks that inputs that would blow up fail fast with
// a "too complex" error.
func TestComplexityLimits(t *testing.T) {
	many := func(n int, f func(i int) string, sep string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = f(i)
		}
		return strings.Join(parts, sep)
	}
	tests := []struct{ name, in, err string }{
		{"product of sums", many(40, func(int) string { return "(a+b+c)" }, "*"), "more than 64 terms"},
		{"power", many(17, func(int) string { return "a" }, "*"), "degree more than 16"},
		{"many symbols", many(65, func(i int) string { return fmt.Sprintf("x%d", i) }, "+"), "more than 64 terms"},
		{"nested floors", "a" + many(9, func(i int) string { return fmt.Sprintf("/x%d", i) }, ""), "nested more than 8 deep"},
		{"parentheses", strings.Repeat("(", 300) + "a" + strings.Repeat(")", 300), "parentheses nested more than 256 deep"},
		{"long text", many(60, func(i int) string { return fmt.Sprintf("%s%d", strings.Repeat("x", 80), i) }, "+"), "longer than 4096 characters"},
		{"long product text", many(16, func(i int) string { return strings.Repeat("y", 300) }, "*"), "longer than 4096 characters"},
	}
	for _, tt := range tests {
		start := time.Now()
		e, err := Parse(tt.in)
		if err == nil || !strings.HasPrefix(err.Error(), "dim expression too complex: ") || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s: Parse = %.40s, %v; want error containing %q", tt.name, e, err, tt.err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: took %v", tt.name, d)
		}
	}
	// Long inputs that simplify to something small are fine.
	e, err := Parse(many(10000, func(int) string { return "a" }, "+"))
	if err != nil || e.String() != "10000*a" {
		t.Errorf("a+a+...: %s, %v", e, err)
	}
	e, err = Parse(strings.Repeat("-", 100001) + "a")
	if err != nil || e.String() != "-a" {
		t.Errorf("---...a: %s, %v", e, err)
	}
}

func TestInterval(t *testing.T) {
	tests := []struct {
		iv   Interval
		want string
	}{
		{Interval{1, 4096}, "[1, 4096]"},
		{Interval{1, math.MaxInt64}, "[1, inf)"},
		{Unbounded(), "(-inf, inf)"},
		{Interval{math.MinInt64, -5}, "(-inf, -5]"},
	}
	for _, tt := range tests {
		if got := tt.iv.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.iv, got, tt.want)
		}
	}
}

func TestRange(t *testing.T) {
	syms := map[string]Interval{"seq": {1, 4096}, "batch": {1, math.MaxInt64}, "n": {-3, 5}}
	tests := []struct {
		in   string
		want Interval
	}{
		{"seq", Interval{1, 4096}},
		{"seq+1", Interval{2, 4097}},
		{"2*seq-8192", Interval{-8190, 0}},
		{"seq/2", Interval{0, 2048}},
		{"(seq+1)/2", Interval{1, 2048}},
		{"-seq", Interval{-4096, -1}},
		{"batch*seq", Interval{1, math.MaxInt64}},
		{"-batch", Interval{math.MinInt64, -1}},
		{"free", Interval{0, math.MaxInt64}},
		{"n*n", Interval{0, 25}},
		{"seq/n", Interval{-4096, 4096}},
		{"seq*seq*seq*seq*seq*seq", Interval{1, math.MaxInt64}}, // saturates
		{"-seq*seq*seq*seq*seq*seq", Interval{math.MinInt64, -1}},
		{"7", Interval{7, 7}},
		// Remainders are recognized, whatever form they simplified to.
		{"s%2", Interval{0, 1}},
		{"(s+4)%2", Interval{0, 1}},
		{"seq%64", Interval{0, 63}},
		{"(seq+1)%8", Interval{0, 7}},
		{"2*(s%3)+1", Interval{1, 5}},
		{"s%2+t%3", Interval{0, 3}},
		{"s%-3", Interval{-2, 0}},
		{"(n*n+seq)%5", Interval{0, 4}},
		{"s-s%2", Interval{0, math.MaxInt64}},
	}
	for _, tt := range tests {
		if got := Range(MustParse(tt.in), syms); got != tt.want {
			t.Errorf("Range(%s) = %v, want %v", tt.in, got, tt.want)
		}
	}
	// Saturation never panics or wraps, whatever the bounds.
	extremes := map[string]Interval{"a": Unbounded(), "b": {math.MinInt64, math.MinInt64 + 1}, "c": {math.MaxInt64 - 1, math.MaxInt64 - 1}}
	for _, in := range []string{"a*b*c", "b*b", "c*c", "b/-1", "c+c", "b+b", "-b", "a/b", "c/a", "b-c", "c%b"} {
		r := Range(MustParse(in), extremes)
		if r.Lo > r.Hi {
			t.Errorf("Range(%s) = %v is empty", in, r)
		}
	}
}

func TestRelations(t *testing.T) {
	syms := map[string]Interval{"seq": {1, 4096}, "batch": {1, math.MaxInt64}}
	eq := []struct {
		a, b string
		want Relation
	}{
		{"seq", "8192", Never},
		{"seq", "seq+1", Never},
		{"a", "b", Unknown},
		{"seq", "seq*1", Always},
		{"2*seq/2", "seq", Always},
		{"seq", "100", Unknown},
		{"batch*seq", "0", Never},
		{"seq/8192", "0", Always}, // seq/8192 is 0 throughout [1, 4096]
		{"3", "4", Never},
		{"seq%64", "64", Never},
		{"seq%64", "0", Unknown},
	}
	for _, tt := range eq {
		if got := EqualUnder(MustParse(tt.a), MustParse(tt.b), syms); got != tt.want {
			t.Errorf("EqualUnder(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
	ge := []struct {
		a, b string
		want Relation
	}{
		{"seq", "1", Always},
		{"seq", "4096", Unknown},
		{"seq", "4097", Never},
		{"4096", "seq", Always},
		{"seq+1", "seq", Always},
		{"a", "0", Always}, // unlisted symbols are dims: >= 0
		{"a", "b", Unknown},
		{"-seq", "0", Never},
		{"batch*seq", "seq", Unknown}, // interval arithmetic loses the correlation
		{"x%4", "0", Always},
		{"3", "x%4", Always},
		{"x%4", "4", Never},
	}
	for _, tt := range ge {
		if got := GreaterEqualUnder(MustParse(tt.a), MustParse(tt.b), syms); got != tt.want {
			t.Errorf("GreaterEqualUnder(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
	if got := EqualUnder(Const(math.MaxInt64), Const(-1), nil); got != Unknown {
		t.Errorf("EqualUnder with overflowing difference = %v, want Unknown", got)
	}
}

func FuzzParse(f *testing.F) {
	for _, tt := range simplifyTests {
		f.Add(tt.in)
	}
	for _, s := range []string{"", "(", "a/(b-b)", "((a+b+c)*(a+b+c))*((a+b+c)*(a+b+c))", "a%b%c/d", "-(-(-a))", "x.y_1/ 3 % -2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := Parse(s)
		if err != nil {
			return
		}
		back, err := Parse(e.String())
		if err != nil {
			t.Fatalf("Parse(%q) = %s, which does not parse: %v", s, e, err)
		}
		if !Equal(back, e) || back.String() != e.String() {
			t.Fatalf("Parse(%q) = %s, reparsed as %s", s, e, back)
		}
		// Nothing else may panic either.
		env := map[string]int64{}
		syms := map[string]Interval{}
		for i, name := range e.Syms() {
			env[name] = int64(i) - 1
			syms[name] = Interval{int64(-i), int64(i * i)}
		}
		_, _ = e.Eval(env)
		_ = Range(e, syms)
		_, _ = Substitute(e, map[string]Expr{"a": Const(3)})
	})
}
