package hir

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/dim"
)

// inferCase checks the inferred type of the last statement of a function
// body (all its results, joined by "; "), or the error it produces.
type inferCase struct {
	sig   string // function arguments
	body  string // statements; the last one is inspected
	want  string // inferred types, or "" when err is set
	err   string // substring of the expected error
	cons  string // substring of a constraint that must be recorded
	noCon bool   // assert that no constraint is recorded
}

const inferHeader = `hir 1
module t
dim batch
dim seq in [1, 4096]
dim m
dim n
dim h in [1, 512]
param w : f32[256, 64]
param b : f32[64]
param g : f32[256]
`

func runInfer(t *testing.T, tc inferCase) {
	t.Helper()
	src := inferHeader + "func main(" + tc.sig + ") -> () {\n" + tc.body + "\nreturn\n}\n"
	m, err := ParseFile("t.hir", []byte(src))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, src)
	}
	err = Check(m)
	if tc.err != "" {
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Fatalf("%s\nerr = %v\nwant error containing %q", tc.body, err, tc.err)
		}
		return
	}
	if err != nil {
		t.Fatalf("%s\nunexpected error: %v", tc.body, err)
	}
	f := m.Func("main")
	last := f.Body[len(f.Body)-1]
	var got []string
	for _, ty := range last.Types {
		got = append(got, ty.String())
	}
	if s := strings.Join(got, "; "); s != tc.want {
		t.Errorf("%s\ngot  %s\nwant %s", tc.body, s, tc.want)
	}
	var cons []string
	for _, c := range m.Constraints {
		cons = append(cons, c.String())
	}
	if tc.cons != "" && !strings.Contains(strings.Join(cons, "\n"), tc.cons) {
		t.Errorf("%s\nconstraints %q do not include %q", tc.body, cons, tc.cons)
	}
	if tc.noCon && len(cons) > 0 {
		t.Errorf("%s\nunexpected constraints %q", tc.body, cons)
	}
}

var inferCases = []inferCase{
	// unary elementwise
	{sig: "x: f32[batch, seq]", body: "y = exp(x)", want: "f32[batch, seq]"},
	{sig: "x: f32[4]", body: "y = log(x)", want: "f32[4]"},
	{sig: "x: f16[4]", body: "y = sqrt(x)", want: "f16[4]"},
	{sig: "x: f32[4]", body: "y = rsqrt(x)", want: "f32[4]"},
	{sig: "x: f32[4]", body: "y = recip(x)", want: "f32[4]"},
	{sig: "x: f32[4]", body: "y = tanh(x)", want: "f32[4]"},
	{sig: "x: f32[4]", body: "y = sigmoid(x)", want: "f32[4]"},
	{sig: "x: f32[4]", body: "y = relu(x)", want: "f32[4]"},
	{sig: "x: i32[4]", body: "y = relu(x)", want: "i32[4]"},
	{sig: "x: f32[4]", body: "y = gelu(x)", want: "f32[4]"},
	{sig: "x: f32[4]", body: "y = gelu_tanh(x)", want: "f32[4]"},
	{sig: "x: f32[4]", body: "y = silu(x)", want: "f32[4]"},
	{sig: "x: f32[4]", body: "y = erf(x)", want: "f32[4]"},
	{sig: "x: f32[4]", body: "y = sin(x)", want: "f32[4]"},
	{sig: "x: f32[4]", body: "y = cos(x)", want: "f32[4]"},
	{sig: "x: f32[4]", body: "y = floor(x)", want: "f32[4]"},
	{sig: "x: f32[4]", body: "y = ceil(x)", want: "f32[4]"},
	{sig: "x: f32[4]", body: "y = round(x)", want: "f32[4]"},
	{sig: "x: i64[4]", body: "y = neg(x)", want: "i64[4]"},
	{sig: "x: f32[4]", body: "y = abs(x)", want: "f32[4]"},
	{sig: "x: f32[4]", body: "y = sign(x)", want: "f32[4]"},
	{sig: "x: bool[4]", body: "y = not(x)", want: "bool[4]"},
	{sig: "x: f32[]", body: "y = leaky_relu(x, alpha=0.2)", want: "f32[]"},
	{sig: "x: f32[4]", body: "y = clamp(x, min=0, max=6)", want: "f32[4]"},
	{sig: "x: f32[4]", body: "y = clamp(x, max=6)", want: "f32[4]"},
	{sig: "x: f32[4]", body: "y = clamp(x, min=6, max=0)", err: "min 6.0 is above max 0.0"},
	{sig: "x: f32[4, n]", body: "y = cast(x, to=i64)", want: "i64[4, n]"},
	{sig: "x: i64[4]", body: "y = exp(x)", err: "exp: x must be a float type, found i64"},
	{sig: "x: bool[4]", body: "y = neg(x)", err: "must be a numeric type"},

	// binary elementwise and broadcasting
	{sig: "x: f32[batch, seq, 256], z: f32[256]", body: "y = add(x, z)", want: "f32[batch, seq, 256]", noCon: true},
	{sig: "x: f32[batch, 1, 256], z: f32[seq, 1]", body: "y = sub(x, z)", want: "f32[batch, seq, 256]"},
	{sig: "x: f32[m], z: f32[n]", body: "y = mul(x, z)", want: "f32[m]", cons: "m == n"},
	{sig: "x: f32[seq], z: f32[seq+1]", body: "y = div(x, z)", err: "shapes do not broadcast"},
	{sig: "x: f32[seq], z: f32[8192]", body: "y = div(x, z)", err: "axis 0: seq vs 8192"},
	{sig: "x: f32[2*seq/2], z: f32[seq]", body: "y = pow(x, z)", want: "f32[seq]", noCon: true},
	{sig: "x: f32[3], z: f32[4]", body: "y = max(x, z)", err: "shapes do not broadcast: x [3] and z [4]"},
	{sig: "x: i32[3], z: i32[3]", body: "y = min(x, z)", want: "i32[3]"},
	{sig: "x: i64[3], z: i64[]", body: "y = mod(x, z)", want: "i64[3]"},
	{sig: "x: f32[3], z: i32[3]", body: "y = add(x, z)", err: "use cast"},
	{sig: "x: bool[3], z: bool[3]", body: "y = eq(x, z)", want: "bool[3]"},
	{sig: "x: f32[3], z: f32[1]", body: "y = ne(x, z)", want: "bool[3]"},
	{sig: "x: f32[3], z: f32[3]", body: "y = lt(x, z)", want: "bool[3]"},
	{sig: "x: i64[3], z: i64[3]", body: "y = le(x, z)", want: "bool[3]"},
	{sig: "x: f32[3], z: f32[3]", body: "y = gt(x, z)", want: "bool[3]"},
	{sig: "x: f32[3], z: f32[3]", body: "y = ge(x, z)", want: "bool[3]"},
	{sig: "x: bool[3], z: bool[3]", body: "y = lt(x, z)", err: "must be a numeric type"},
	{sig: "x: bool[2, 3], z: bool[3]", body: "y = and(x, z)", want: "bool[2, 3]"},
	{sig: "x: bool[3], z: bool[3]", body: "y = or(x, z)", want: "bool[3]"},
	{sig: "x: bool[3], z: bool[3]", body: "y = xor(x, z)", want: "bool[3]"},
	{sig: "x: f32[3], z: f32[3]", body: "y = and(x, z)", err: "must be bool"},
	{sig: "c: bool[seq, seq], x: f32[], z: f32[batch, 1, seq]", body: "y = where(c, x, z)", want: "f32[batch, seq, seq]"},
	{sig: "c: bool[3], x: f32[3], z: f16[3]", body: "y = where(c, x, z)", err: "use cast"},

	// reductions
	{sig: "x: f32[batch, seq, 256]", body: "y = reduce_sum(x, axes=[-1])", want: "f32[batch, seq]"},
	{sig: "x: f32[batch, seq, 256]", body: "y = reduce_mean(x, axes=[1, 2], keepdims=true)", want: "f32[batch, 1, 1]"},
	{sig: "x: f32[batch, seq]", body: "y = reduce_max(x)", want: "f32[]"},
	{sig: "x: i32[4, 5]", body: "y = reduce_min(x, axes=[0])", want: "i32[5]"},
	{sig: "x: f32[4, 5]", body: "y = reduce_prod(x, axes=[1], keepdims=true)", want: "f32[4, 1]"},
	{sig: "x: i32[4]", body: "y = reduce_mean(x)", err: "must be a float type"},
	{sig: "x: f32[4, 5]", body: "y = reduce_sum(x, axes=[2])", err: "axis 2 is out of range for rank 2"},
	{sig: "x: f32[batch, seq, 512]", body: "y = argmax(x, axis=-1)", want: "i64[batch, seq]"},
	{sig: "x: f32[4, 5]", body: "y = argmin(x, axis=0, keepdims=true)", want: "i64[1, 5]"},
	{sig: "x: f32[batch, 1000]", body: "v, i = topk(x, k=5)", want: "f32[batch, 5]; i64[batch, 5]", noCon: true},
	{sig: "x: i32[seq, 8]", body: "v, i = topk(x, k=2, axis=0, largest=false)", want: "i32[2, 8]; i64[2, 8]", cons: "seq >= 2 (topk: k 2 is within axis 0 (seq))"},
	{sig: "x: f32[4, seq]", body: "v, i = topk(x, k=seq/2)", want: "f32[4, seq/2]; i64[4, seq/2]", cons: "seq/2 >= 1"},
	{sig: "x: f32[4, 5]", body: "v, i = topk(x, k=6)", err: "k 6 is larger than axis 1 of x (5)"},
	{sig: "x: f32[4, 5]", body: "v, i = topk(x, k=0)", err: "k must be at least 1, found 0"},
	{sig: "x: bool[4, 5]", body: "v, i = topk(x, k=1)", err: "must be a numeric type"},
	{sig: "x: f32[4, 5]", body: "v = topk(x, k=1)", err: "topk gives 2 results, found 1 name"},
	{sig: "x: f32[n], i: i64[m], u: f32[m]", body: "y = scatter(x, i, u)", want: "f32[n]", noCon: true},
	{sig: "x: i32[10], i: i32[seq], u: i32[m]", body: "y = scatter(x, i, u)", want: "i32[10]", cons: "seq == m"},
	{sig: "x: f32[10], i: i64[3], u: f32[4]", body: "y = scatter(x, i, u)", err: "i has 3 indices but u has 4 updates"},
	{sig: "x: f32[10], i: f32[3], u: f32[3]", body: "y = scatter(x, i, u)", err: "must be i32 or i64"},
	{sig: "x: f32[2, 5], i: i64[3], u: f32[3]", body: "y = scatter(x, i, u)", err: "must have rank 1"},
	{sig: "x: f32[10], i: i64[3], u: f16[3]", body: "y = scatter(x, i, u)", err: "use cast"},

	// normalization
	{sig: "x: f32[batch, seq, 256]", body: "y = softmax(x)", want: "f32[batch, seq, 256]"},
	{sig: "x: f32[batch, seq]", body: "y = log_softmax(x, axis=0)", want: "f32[batch, seq]"},
	{sig: "x: f32[]", body: "y = softmax(x)", err: "out of range for a scalar"},
	{sig: "x: f32[batch, seq, 256]", body: "y = layernorm(x, g, g, eps=1e-6)", want: "f32[batch, seq, 256]"},
	{sig: "x: f32[batch, seq, 256]", body: "y = layernorm(x)", want: "f32[batch, seq, 256]"},
	{sig: "x: f32[batch, seq, 256]", body: "y = layernorm(x, b)", err: "b (scale) has shape [64] but the normalized shape of x is [256]"},
	{sig: "x: f32[batch, 4, 64], s: f32[4, 64]", body: "y = layernorm(x, s, axis=1)", want: "f32[batch, 4, 64]"},
	{sig: "x: f32[batch, seq, 256]", body: "y = rmsnorm(x, g)", want: "f32[batch, seq, 256]"},
	{sig: "x: f32[batch, 64, h, h], c: f32[64]", body: "y = batchnorm(x, c, c, c, c)", want: "f32[batch, 64, h, h]"},
	{sig: "x: f32[batch, 32, h, h], c: f32[64]", body: "y = batchnorm(x, c, c, c, c)", err: "[C] for the channels of x is [32]"},

	// linear algebra
	{sig: "x: f32[batch, seq, 256]", body: "y = linear(x, w, b)", want: "f32[batch, seq, 64]"},
	{sig: "x: f32[256]", body: "y = linear(x, w)", want: "f32[64]"},
	{sig: "x: f32[batch, 128]", body: "y = linear(x, w)", err: "x has 128 features but w expects 256"},
	{sig: "x: f32[batch, 256]", body: "y = linear(x, w, g)", err: "g has shape [256] but [out] of w is [64]"},
	{sig: "a: f32[batch, 4, seq, 64], z: f32[batch, 4, 64, seq]", body: "y = matmul(a, z)", want: "f32[batch, 4, seq, seq]"},
	{sig: "a: f32[batch, 1, m, 8], z: f32[4, 8, n]", body: "y = matmul(a, z)", want: "f32[batch, 4, m, n]"},
	{sig: "a: f32[8], z: f32[8, n]", body: "y = matmul(a, z)", want: "f32[n]"},
	{sig: "a: f32[m, 8], z: f32[8]", body: "y = matmul(a, z)", want: "f32[m]"},
	{sig: "a: f32[8], z: f32[8]", body: "y = matmul(a, z)", want: "f32[]"},
	{sig: "a: f32[m, 8], z: f32[9, n]", body: "y = matmul(a, z)", err: "a has 8 columns but z has 9 rows"},
	{sig: "a: f32[m, n], z: f32[m, n]", body: "y = matmul(a, z)", want: "f32[m, n]", cons: "n == m"},
	{sig: "q: f32[batch, 4, seq, 64], k: f32[batch, 4, m, 64], v: f32[batch, 4, m, 32]", body: "y = attention(q, k, v)", want: "f32[batch, 4, seq, 32]"},
	{sig: "q: f32[batch, 4, seq, 64], k: f32[batch, 4, seq, 64], v: f32[batch, 4, seq, 64], k2: f32[seq, seq]", body: "y = attention(q, k, v, k2, causal=true, scale=0.125)", want: "f32[batch, 4, seq, 64]"},
	{sig: "q: f32[2, seq, 64], k: f32[2, seq, 32], v: f32[2, seq, 64]", body: "y = attention(q, k, v)", err: "q and k must share the head dim"},
	{sig: "q: f32[2, seq, 64], k: f32[2, seq, 64], v: f32[2, 7, 64]", body: "y = attention(q, k, v)", cons: "seq == 7", want: "f32[2, seq, 64]"},
	{sig: "q: f32[2, 5, 64], k: f32[2, 6, 64], v: f32[2, 6, 64], k2: f32[5, 5]", body: "y = attention(q, k, v, k2)", err: "does not broadcast to the scores [2, 5, 6]"},

	// convolution and pooling
	{sig: "x: f32[batch, 3, 224, 224], k: f32[64, 3, 7, 7]", body: "y = conv2d(x, k, stride=[2, 2], pad=[3, 3, 3, 3])", want: "f32[batch, 64, 112, 112]"},
	{sig: "x: f32[batch, 32, h, h], k: f32[32, 1, 3, 3]", body: "y = conv2d(x, k, pad=[1, 1, 1, 1], groups=32)", want: "f32[batch, 32, h, h]"},
	{sig: "x: f32[1, 8, h, 16], k: f32[4, 8, 3, 3]", body: "y = conv2d(x, k, stride=[2, 2], dilation=[2, 1])", want: "f32[1, 4, (h+1)/2-2, 7]", cons: "h >= 5"},
	{sig: "x: f32[1, 8, 9, 9], k: f32[6, 2, 3, 3]", body: "y = conv2d(x, k, groups=4)", err: "not divisible by groups=4"},
	{sig: "x: f32[1, 8, 9, 9], k: f32[4, 8, 3, 3], c: f32[5]", body: "y = conv2d(x, k, c)", err: "[O] of w is [4]"},
	{sig: "x: f32[batch, 64, 112, 112]", body: "y = maxpool2d(x, kernel=[3, 3], stride=[2, 2], pad=[1, 1, 1, 1])", want: "f32[batch, 64, 56, 56]"},
	{sig: "x: f32[1, 1, 5, 5]", body: "y = maxpool2d(x, kernel=[2, 2], stride=[2, 2], ceil_mode=true)", want: "f32[1, 1, 3, 3]"},
	{sig: "x: f32[1, 1, h, 5]", body: "y = maxpool2d(x, kernel=[2, 2], ceil_mode=true)", want: "f32[1, 1, h-1, 4]", cons: "h >= 2"},
	{sig: "x: f32[1, 1, h, m]", body: "y = maxpool2d(x, kernel=[3, 3], stride=[2, 2], ceil_mode=true)", want: "f32[1, 1, h/2, m/2]", cons: "m >= 3"},
	{sig: "x: f32[1, 1, h, 6]", body: "y = maxpool2d(x, kernel=[3, 3], stride=[2, 2], pad=[1, 1, 1, 1], ceil_mode=true)", want: "f32[1, 1, h/2+1, 4]"},
	{sig: "x: f32[1, 1, h, 5]", body: "y = maxpool2d(x, kernel=[1, 1], stride=[2, 2], ceil_mode=true)", err: "ceil_mode with stride 2, a window of 1 and end padding 0 needs a static height"},
	{sig: "x: f32[batch, 16, 32, 32]", body: "y = avgpool2d(x, kernel=[2, 2], stride=[2, 2], count_include_pad=true)", want: "f32[batch, 16, 16, 16]"},
	{sig: "x: f32[batch, 16, 32, 32]", body: "y = avgpool2d(x, kernel=[2, 2], pad=[2, 0, 0, 0])", err: "pad 2 must be smaller than the kernel"},
	{sig: "x: f32[batch, 512, h, h]", body: "y = global_avgpool(x)", want: "f32[batch, 512, 1, 1]"},

	// data movement
	{sig: "x: f32[batch*seq, 256]", body: "y = reshape(x, shape=[batch, seq, 4, 64])", want: "f32[batch, seq, 4, 64]", noCon: true},
	{sig: "x: f32[batch, seq, 256]", body: "y = reshape(x, shape=[batch, -1, 64])", want: "f32[batch, 4*seq, 64]", noCon: true},
	{sig: "x: f32[batch, seq, 4, 64]", body: "y = reshape(x, shape=[batch*seq, 256])", want: "f32[batch*seq, 256]", noCon: true},
	{sig: "x: f32[m, 6]", body: "y = reshape(x, shape=[n, 6])", want: "f32[n, 6]", cons: "6*m == 6*n"},
	{sig: "x: f32[6]", body: "y = reshape(x, shape=[-1, -1])", err: "more than one -1"},
	{sig: "x: f32[6]", body: "y = reshape(x, shape=[4, -1])", err: "cannot reshape x [6] (6 elements) to [4, 1] (4 elements)"},
	{sig: "x: f32[batch, seq, 4, 64]", body: "y = transpose(x, perm=[0, 2, 1, 3])", want: "f32[batch, 4, seq, 64]"},
	{sig: "x: f32[m, n, 3]", body: "y = transpose(x)", want: "f32[3, n, m]"},
	{sig: "x: f32[m, n]", body: "y = transpose(x, perm=[0, 0])", err: "lists axis 0 twice"},
	{sig: "x: f32[batch, seq, 64], z: f32[batch, 1, 64]", body: "y = concat(z, x, axis=1)", want: "f32[batch, seq+1, 64]"},
	{sig: "x: f32[batch, seq, 64], z: f32[batch, m, 64]", body: "y = concat(x, z, x, axis=-2)", want: "f32[batch, m+2*seq, 64]"},
	{sig: "x: f32[4, 64]", body: "y = concat(x, axis=0)", want: "f32[4, 64]"},
	{sig: "x: f32[4, 64], z: f32[4, 32]", body: "y = concat(x, z, axis=0)", err: "only axis 0 may differ"},
	{sig: "x: f32[batch, seq, 384]", body: "q, k, v = split(x, axis=-1, sizes=[128, 128, 128])", want: "f32[batch, seq, 128]; f32[batch, seq, 128]; f32[batch, seq, 128]"},
	{sig: "x: f32[batch, m]", body: "y, z = split(x, axis=1, sizes=[1, m-1])", want: "f32[batch, 1]; f32[batch, m-1]", noCon: true},
	{sig: "x: f32[6, 2]", body: "y, z, u = split(x)", want: "f32[2, 2]; f32[2, 2]; f32[2, 2]"},
	{sig: "x: f32[7, 2]", body: "y, z = split(x)", err: "does not split evenly into 2"},
	{sig: "x: f32[2*m, 2]", body: "y, z = split(x)", want: "f32[m, 2]; f32[m, 2]", noCon: true},
	{sig: "x: f32[m, 2]", body: "y, z = split(x)", want: "f32[m/2, 2]; f32[m/2, 2]", cons: "m divisible by 2"},
	{sig: "x: f32[4, 2]", body: "y, z = split(x, sizes=[1, 2])", err: "sizes add up to 3 but axis 0 of x is 4"},
	{sig: "x: f32[10, 20]", body: "y = slice(x, starts=[2, 0], ends=[100, -5])", want: "f32[8, 15]"},
	{sig: "x: f32[10]", body: "y = slice(x, starts=[-3], ends=[9223372036854775807])", want: "f32[3]"},
	{sig: "x: f32[10]", body: "y = slice(x, starts=[-1], ends=[-9223372036854775807], steps=[-1])", want: "f32[10]"},
	{sig: "x: f32[10]", body: "y = slice(x, starts=[8], ends=[1], steps=[-3])", want: "f32[3]"},
	{sig: "x: f32[10]", body: "y = slice(x, starts=[1], ends=[8], steps=[2])", want: "f32[4]"},
	{sig: "x: f32[10]", body: "y = slice(x, starts=[7], ends=[3])", want: "f32[0]"},
	{sig: "x: f32[batch, seq, 64]", body: "y = slice(x, starts=[0], ends=[9223372036854775807], axes=[1])", want: "f32[batch, seq, 64]", noCon: true},
	{sig: "x: f32[batch, seq, 64]", body: "y = slice(x, starts=[1], ends=[seq], axes=[1])", want: "f32[batch, seq-1, 64]", noCon: true},
	{sig: "x: f32[batch, seq, 64]", body: "y = slice(x, starts=[-1], ends=[5000], axes=[-2])", want: "f32[batch, 1, 64]"},
	{sig: "x: f32[batch, seq, 64]", body: "y = slice(x, starts=[0], ends=[10], axes=[1])", want: "f32[batch, 10, 64]", cons: "seq >= 10"},
	{sig: "x: f32[batch, m, 64]", body: "y = slice(x, starts=[0], ends=[m/2], axes=[1])", want: "f32[batch, m/2, 64]"},
	{sig: "x: f32[512, 128], i: i64[batch, seq]", body: "y = gather(x, i)", want: "f32[batch, seq, 128]"},
	{sig: "x: f32[2, 512, 128], i: i32[seq]", body: "y = gather(x, i, axis=1)", want: "f32[2, seq, 128]"},
	{sig: "x: f32[2, 512], i: i64[]", body: "y = gather(x, i, axis=-1)", want: "f32[2]"},
	{sig: "x: f32[1, 64]", body: "y = expand(x, shape=[batch, seq, 64])", want: "f32[batch, seq, 64]"},
	{sig: "x: f32[seq, 1]", body: "y = expand(x, shape=[1, 8])", want: "f32[seq, 8]"},
	{sig: "x: f32[3, 1]", body: "y = expand(x, shape=[4, 8])", err: "shapes do not broadcast"},
	{sig: "x: f32[batch, 1, 64, 1]", body: "y = squeeze(x, axes=[1, -1])", want: "f32[batch, 64]"},
	{sig: "x: f32[batch, m]", body: "y = squeeze(x, axes=[1])", want: "f32[batch]", cons: "m == 1"},
	{sig: "x: f32[batch, 64]", body: "y = unsqueeze(x, axes=[0, -1])", want: "f32[1, batch, 64, 1]"},
	{sig: "x: f32[batch, 64]", body: "y = unsqueeze(x, axes=[1])", want: "f32[batch, 1, 64]"},
	{sig: "x: f32[batch, 16, 1, 1]", body: "y = flatten(x)", want: "f32[batch, 16]"},
	{sig: "x: f32[batch, 3, m]", body: "y = flatten(x, axis=0)", want: "f32[1, 3*batch*m]"},
	{sig: "x: f32[batch, 3, m]", body: "y = flatten(x, axis=3)", want: "f32[3*batch*m, 1]"},
	{sig: "x: f32[batch, 3, h, h]", body: "y = pad(x, pads=[0, 0, 1, 2, 0, 0, 1, 2], value=-1)", want: "f32[batch, 3, h+2, h+4]"},
	{sig: "x: f32[m]", body: "y = pad(x, pads=[n, 1])", want: "f32[m+n+1]"},
	{sig: "x: f32[m]", body: "y = pad(x, pads=[1])", err: "pads wants 2 x rank = 2 values"},

	// recurrent
	{sig: "x: f32[seq, batch, 24], wi: f32[2, 64, 24], r: f32[2, 64, 16], bi: f32[2, 128], h: f32[2, batch, 16]",
		body: `y, yh, yc = lstm(x, wi, r, bi, h, h, hidden=16, direction="bidirectional")`, want: "f32[seq, 2, batch, 16]; f32[2, batch, 16]; f32[2, batch, 16]", noCon: true},
	{sig: "x: f32[seq, 3, 8], wi: f32[1, 16, 8], r: f32[1, 16, 4]", body: "y, yh, yc = lstm(x, wi, r, hidden=4)", want: "f32[seq, 1, 3, 4]; f32[1, 3, 4]; f32[1, 3, 4]"},
	{sig: "x: f32[seq, 3, 8], wi: f32[1, 12, 8], r: f32[1, 12, 4], bi: f32[1, 24]", body: `y, yh = gru(x, wi, r, bi, hidden=4, direction="reverse", linear_before_reset=true)`, want: "f32[seq, 1, 3, 4]; f32[1, 3, 4]"},
	{sig: "x: f32[seq, 3, 8], wi: f32[2, 12, 8], r: f32[1, 12, 4]", body: "y, yh = gru(x, wi, r, hidden=4)", err: "wi (w) has shape [2, 12, 8] but [dirs, 3*hidden, in] is [1, 12, 8]"},
	{sig: "x: f32[seq, 3, 8], wi: f32[1, 12, 8], r: f32[1, 12, 4]", body: `y, yh = gru(x, wi, r, hidden=4, direction="sideways")`, err: `direction must be "forward", "reverse" or "bidirectional", found "sideways"`},
	{sig: "x: f32[seq, 3, 8], wi: f32[2, 4, 8], r: f32[2, 4, 4], bi: f32[2, 8], h0: f32[2, 3, 4]", body: `y, yh = rnn(x, wi, r, bi, h0, hidden=4, direction="bidirectional", activation="relu")`, want: "f32[seq, 2, 3, 4]; f32[2, 3, 4]"},
	{sig: "x: f32[seq, 3, 8], wi: f32[1, 4, 8], r: f32[1, 4, 4]", body: `y, yh = rnn(x, wi, r, hidden=4, activation="elu")`, err: `activation must be "tanh", "relu" or "sigmoid", found "elu"`},
	{sig: "x: f32[seq, 3, 8], wi: f32[1, 12, 8], r: f32[1, 12, 4]", body: `y, yh = rnn(x, wi, r, hidden=4)`, err: "wi (w) has shape [1, 12, 8] but [dirs, 1*hidden, in] is [1, 4, 8]"},
	{sig: "x: f32[seq, 3, 8], wi: f32[1, 12, 8], r: f32[1, 12, 4]", body: "y, yh = lstm(x, wi, r, hidden=4)", err: "lstm gives 3 results, found 2 names"},
	{sig: "x: f32[seq, 3, 8], wi: f32[1, 16, 8], r: f32[1, 16, 4], h: f32[1, 2, 4]", body: "y, yh, yc = lstm(x, wi, r, wi, h, hidden=4)", err: "wi (bias) has shape [1, 16, 8] but [dirs, 8*hidden] is [1, 32]"},

	// creation
	{sig: "", body: "y = const(0.5, f32[])", want: "f32[]"},
	{sig: "", body: "y = const([1, 2, 3], i64[3])", want: "i64[3]"},
	{sig: "", body: "y = const([[true, false]], bool[1, 2])", want: "bool[1, 2]"},
	{sig: "", body: "y = const(-inf, f32[2, 2])", want: "f32[2, 2]"},
	{sig: "", body: "y = const([1, 2], i64[3])", err: "expected a list of 3 elements, found 2"},
	{sig: "", body: "y = iota(n=seq)", want: "i64[seq]"},
	{sig: "", body: "y = iota(n=seq/2+1, dtype=i32)", want: "i32[seq/2+1]"},
	{sig: "", body: "y = iota(n=seq, dtype=bool)", err: "dtype must be numeric"},

	// declared types check the inference
	{sig: "x: f32[batch*seq, 256]", body: "y : f32[batch, seq, 256] = reshape(x, shape=[batch, seq, 256])", want: "f32[batch, seq, 256]"},
	{sig: "x: f32[m]", body: "y : f32[n] = relu(x)", want: "f32[m]", cons: "m == n"},
}

func TestInfer(t *testing.T) {
	for _, tc := range inferCases {
		t.Run(tc.body, func(t *testing.T) { runInfer(t, tc) })
	}
}

// TestInferCoversEveryOp keeps the table above complete: each operation of
// HIR v1 has at least one inference case. The ops derived from lir.EwOps
// have theirs from their rows there (TestEwOpsInfer), so adding one needs
// no row here.
func TestInferCoversEveryOp(t *testing.T) {
	used := map[string]bool{}
	opRE := regexp.MustCompile(`=\s*([a-z_0-9]+)\(`)
	for _, tc := range inferCases {
		for _, m := range opRE.FindAllStringSubmatch(tc.body, -1) {
			used[m[1]] = true
		}
	}
	for _, op := range OpNames() {
		if !used[op] && !ewDerived(op) {
			t.Errorf("operation %s has no inference test", op)
		}
	}
}

// TestCeilModeSymbolic checks the symbolic ceil_mode window count against
// the static rule (which drops a last window that starts in the end
// padding) at every length, for each pool whose count can be symbolic.
func TestCeilModeSymbolic(t *testing.T) {
	check := func(sig, body string) (*Module, error) {
		src := inferHeader + "func main(" + sig + ") -> () {\n" + body + "\nreturn\n}\n"
		m, err := ParseFile("t.hir", []byte(src))
		if err != nil {
			t.Fatalf("parse: %v", err)
		}
		return m, Check(m)
	}
	outH := func(m *Module) dim.Expr {
		f := m.Func("main")
		return f.Body[len(f.Body)-1].Types[0].Shape[2]
	}
	tried := 0
	for k := int64(1); k <= 5; k++ {
		for s := int64(1); s <= 4; s++ {
			for pb := int64(0); pb < k; pb++ {
				for pe := int64(0); pe < k; pe++ {
					for d := int64(1); d <= 2; d++ {
						body := fmt.Sprintf("y = maxpool2d(x, kernel=[%d, 1], stride=[%d, 1], pad=[%d, 0, %d, 0], dilation=[%d, 1], ceil_mode=true)", k, s, pb, pe, d)
						sym, err := check("x: f32[1, 1, h, 1]", body)
						if err != nil {
							if span := d*(k-1) + 1; s <= span-pe || !strings.Contains(err.Error(), "needs a static height") {
								t.Fatalf("%s: %v", body, err)
							}
							continue
						}
						e := outH(sym)
						for h := d*(k-1) + 1 - pb - pe; h <= 40; h++ {
							if h < 1 {
								continue
							}
							st, err := check(fmt.Sprintf("x: f32[1, 1, %d, 1]", h), body)
							if err != nil {
								t.Fatalf("%s at h=%d: %v", body, h, err)
							}
							want, _ := outH(st).Const()
							got, err := e.Eval(map[string]int64{"h": h})
							if err != nil || got != want {
								t.Fatalf("%s at h=%d: symbolic %s = %d (%v), static %d", body, h, e, got, err, want)
							}
							tried++
						}
					}
				}
			}
		}
	}
	if tried < 1000 {
		t.Fatalf("only %d points compared", tried)
	}
}
