package kir

import (
	"fmt"
	"strings"
)

// Language is a kernel language a printer writes.
type Language string

// The languages kernels print in.
const (
	GLSL Language = "glsl" // Vulkan GLSL 4.50, compiled to SPIR-V
	CUDA Language = "cuda" // CUDA C, compiled to PTX
	MSL  Language = "msl"  // Metal Shading Language 2
)

// Ext is the usual file extension of a language's source.
func (l Language) Ext() string {
	switch l {
	case GLSL:
		return ".comp"
	case CUDA:
		return ".cu"
	case MSL:
		return ".metal"
	}
	return ".txt"
}

// Entry is the entry point name of kernel k in language l (GLSL's is main).
func (l Language) Entry(k *Kernel) string {
	if l == GLSL {
		return "main"
	}
	return k.Name
}

// Print writes kernel k as one self-contained source file in language l.
// It checks k, then hoists shared subexpressions into variables (see
// Hoist), which changes k, and checks the result.
func Print(l Language, k *Kernel) (string, error) {
	if err := Check(k); err != nil {
		return "", err
	}
	Hoist(k)
	if err := Check(k); err != nil {
		return "", fmt.Errorf("after Hoist: %v", err)
	}
	if l != CUDA && HasMMA(k) {
		return "", fmt.Errorf("kernel %s: tensor-core products (mma) print only as CUDA, not %s", k.Name, l)
	}
	switch l {
	case GLSL:
		return printGLSL(k), nil
	case CUDA:
		return printCUDA(k), nil
	case MSL:
		return printMSL(k), nil
	}
	return "", fmt.Errorf("no printer for language %q", l)
}

// HasMMA reports whether k has a tensor-core product (SMMA), which only
// the CUDA printer writes.
func HasMMA(k *Kernel) bool { return len(mmaKindsOf(k)) > 0 }

// mmaKindsOf are the kinds of k's tensor-core products.
func mmaKindsOf(k *Kernel) map[MMAKind]bool {
	kinds := map[MMAKind]bool{}
	var walk func(ss []*Stmt)
	walk = func(ss []*Stmt) {
		for _, s := range ss {
			if s == nil {
				continue
			}
			if s.Op == SMMA {
				kinds[MMAKind(s.I)] = true
			}
			walk(s.Body)
			walk(s.Else)
		}
	}
	walk(k.Body)
	return kinds
}

func (p *printer) body(k *Kernel) {
	p.ind++
	p.stmts(k.Body)
	p.ind--
}

func printGLSL(k *Kernel) string {
	d := &dialect{
		types:   map[Type]string{Bool: "bool", I32: "int", U32: "uint", I64: "int64_t", F32: "float"},
		storage: map[Type]string{Bool: "uint8_t", U8: "uint8_t", I8: "int8_t", I16: "int16_t", F16: "uint16_t", BF16: "uint16_t", I32: "int", U32: "uint", I64: "int64_t", F32: "float"},
		funcs: map[string]string{"exp": "exp", "log": "log", "sqrt": "sqrt", "sin": "sin", "cos": "cos",
			"floor": "floor", "ceil": "ceil", "trunc": "trunc", "rint": "roundEven", "abs": "abs",
			"isnan": "isnan", "isinf": "isinf", "exp2": "exp2", "log2": "log2", "fma": "fma"},
		i64Lit: "l", u32Lit: "u",
		conv: func(t, e string) string { return t + "(" + e + ")" },
		bitcast: func(to, from Type, e string) string {
			switch {
			case from == F32 && to == U32:
				return "floatBitsToUint(" + e + ")"
			case from == F32 && to == I32:
				return "floatBitsToInt(" + e + ")"
			case to == F32 && from == U32:
				return "uintBitsToFloat(" + e + ")"
			case to == F32 && from == I32:
				return "intBitsToFloat(" + e + ")"
			case to == U32:
				return "uint(" + e + ")"
			}
			return "int(" + e + ")"
		},
		index: func(kind string, axis int64) string {
			v := map[string]string{"global": "gl_GlobalInvocationID", "local": "gl_LocalInvocationID", "group": "gl_WorkGroupID"}[kind]
			return "int(" + v + "." + "xyz"[axis:axis+1] + ")"
		},
		elem:      func(p int) string { return fmt.Sprintf("p%d.v", p) },
		offset:    func(p int) string { return fmt.Sprintf("rlx_off.o%d", p) },
		nonFinite: func(bits uint32) string { return fmt.Sprintf("uintBitsToFloat(0x%08xu)", bits) },
		barrier:   "memoryBarrierShared(); barrier();",
	}
	p := &printer{d: d, k: k}
	p.line("// rlx kernel %s (GLSL for Vulkan; generated, do not edit)", k.Name)
	p.line("#version 450")
	if k.UsesType(I64) {
		p.line("#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require")
	}
	if hasParam(k, Bool) || hasParam(k, U8) || hasParam(k, I8) {
		p.line("#extension GL_EXT_shader_8bit_storage : require")
		p.line("#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require")
	}
	if hasParam(k, I16) || hasParam(k, F16) || hasParam(k, BF16) {
		p.line("#extension GL_EXT_shader_16bit_storage : require")
		p.line("#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require")
	}
	p.line("layout(local_size_x = %d, local_size_y = %d, local_size_z = %d) in;", k.Local[0], k.Local[1], k.Local[2])
	for i, par := range k.Params {
		ro := "readonly "
		if par.Write {
			ro = ""
		}
		p.line("layout(std430, set = 0, binding = %d) %sbuffer P%d { %s v[]; } p%d; // %s", i, ro, i, d.storage[par.Elem], i, par.Name)
	}
	if k.Offsets {
		var ms []string
		for i := range k.Params {
			ms = append(ms, fmt.Sprintf("int o%d;", i))
		}
		p.line("layout(push_constant) uniform Offsets { %s } rlx_off; // element offset of each parameter", strings.Join(ms, " "))
	}
	for i, s := range k.Shared {
		p.line("shared %s s%d[%d]; // %s", d.types[s.Elem], i, s.Len, s.Name)
	}
	p.line("void main() {")
	p.body(k)
	p.line("}")
	return p.b.String()
}

func hasParam(k *Kernel, t Type) bool {
	for _, p := range k.Params {
		if p.Elem == t {
			return true
		}
	}
	return false
}

// cudaPrelude is the small header every CUDA kernel carries: NVRTC has the
// CUDA built-ins; clang with -nocudainc -nocudalib has neither the headers
// nor libdevice, so the same names are defined from NVVM built-ins.
const cudaPrelude = `#ifdef __CUDACC_RTC__
#define RLX_DEV static __device__ __forceinline__
RLX_DEV int rlx_global_x() { return (int)(blockIdx.x * blockDim.x + threadIdx.x); }
RLX_DEV int rlx_global_y() { return (int)(blockIdx.y * blockDim.y + threadIdx.y); }
RLX_DEV int rlx_global_z() { return (int)(blockIdx.z * blockDim.z + threadIdx.z); }
RLX_DEV int rlx_local_x() { return (int)threadIdx.x; }
RLX_DEV int rlx_local_y() { return (int)threadIdx.y; }
RLX_DEV int rlx_local_z() { return (int)threadIdx.z; }
RLX_DEV int rlx_group_x() { return (int)blockIdx.x; }
RLX_DEV int rlx_group_y() { return (int)blockIdx.y; }
RLX_DEV int rlx_group_z() { return (int)blockIdx.z; }
RLX_DEV float rlx_exp(float x) { return expf(x); }
RLX_DEV float rlx_log(float x) { return logf(x); }
RLX_DEV float rlx_exp2(float x) { return exp2f(x); }
RLX_DEV float rlx_log2(float x) { return log2f(x); }
RLX_DEV float rlx_sin(float x) { return sinf(x); }
RLX_DEV float rlx_cos(float x) { return cosf(x); }
RLX_DEV float rlx_sqrt(float x) { return sqrtf(x); }
RLX_DEV float rlx_floor(float x) { return floorf(x); }
RLX_DEV float rlx_ceil(float x) { return ceilf(x); }
RLX_DEV float rlx_trunc(float x) { return truncf(x); }
RLX_DEV float rlx_rint(float x) { return rintf(x); }
RLX_DEV float rlx_abs(float x) { return fabsf(x); }
RLX_DEV float rlx_fma(float a, float b, float c) { return fmaf(a, b, c); }
RLX_DEV float rlx_u2f(unsigned int u) { return __uint_as_float(u); }
RLX_DEV float rlx_i2f(int i) { return __int_as_float(i); }
RLX_DEV unsigned int rlx_f2u(float f) { return __float_as_uint(f); }
RLX_DEV int rlx_f2i(float f) { return __float_as_int(f); }
#define rlx_barrier() __syncthreads()
#else
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define RLX_DEV static __device__ __attribute__((always_inline))
RLX_DEV int rlx_global_x() { return __nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x() + __nvvm_read_ptx_sreg_tid_x(); }
RLX_DEV int rlx_global_y() { return __nvvm_read_ptx_sreg_ctaid_y() * __nvvm_read_ptx_sreg_ntid_y() + __nvvm_read_ptx_sreg_tid_y(); }
RLX_DEV int rlx_global_z() { return __nvvm_read_ptx_sreg_ctaid_z() * __nvvm_read_ptx_sreg_ntid_z() + __nvvm_read_ptx_sreg_tid_z(); }
RLX_DEV int rlx_local_x() { return __nvvm_read_ptx_sreg_tid_x(); }
RLX_DEV int rlx_local_y() { return __nvvm_read_ptx_sreg_tid_y(); }
RLX_DEV int rlx_local_z() { return __nvvm_read_ptx_sreg_tid_z(); }
RLX_DEV int rlx_group_x() { return __nvvm_read_ptx_sreg_ctaid_x(); }
RLX_DEV int rlx_group_y() { return __nvvm_read_ptx_sreg_ctaid_y(); }
RLX_DEV int rlx_group_z() { return __nvvm_read_ptx_sreg_ctaid_z(); }
RLX_DEV float rlx_exp2(float x) { return __nvvm_ex2_approx_f(x); }
RLX_DEV float rlx_log2(float x) { return __nvvm_lg2_approx_f(x); }
RLX_DEV float rlx_exp(float x) { return __nvvm_ex2_approx_f(x * 1.4426950408889634f); }
RLX_DEV float rlx_log(float x) { return __nvvm_lg2_approx_f(x) * 0.6931471805599453f; }
RLX_DEV float rlx_sin(float x) { return __nvvm_sin_approx_f(x); }
RLX_DEV float rlx_cos(float x) { return __nvvm_cos_approx_f(x); }
RLX_DEV float rlx_sqrt(float x) { return __nvvm_sqrt_rn_f(x); }
RLX_DEV float rlx_floor(float x) { return __builtin_floorf(x); }
RLX_DEV float rlx_ceil(float x) { return __builtin_ceilf(x); }
RLX_DEV float rlx_trunc(float x) { return __builtin_truncf(x); }
RLX_DEV float rlx_rint(float x) { return __builtin_rintf(x); }
RLX_DEV float rlx_abs(float x) { return __builtin_fabsf(x); }
RLX_DEV float rlx_fma(float a, float b, float c) { return __nvvm_fma_rn_f(a, b, c); }
RLX_DEV float rlx_u2f(unsigned int u) { return __nvvm_bitcast_i2f((int)u); }
RLX_DEV float rlx_i2f(int i) { return __nvvm_bitcast_i2f(i); }
RLX_DEV unsigned int rlx_f2u(float f) { return (unsigned int)__nvvm_bitcast_f2i(f); }
RLX_DEV int rlx_f2i(float f) { return __nvvm_bitcast_f2i(f); }
#define rlx_barrier() __syncthreads()
#endif
RLX_DEV bool rlx_isnan(float x) { return x != x; }
RLX_DEV bool rlx_isinf(float x) { return rlx_abs(x) == rlx_u2f(0x7f800000u); }
`

// cudaMMA is what a kernel with tensor-core products (SMMA) of a kind
// adds to the prelude, as inline PTX, which NVRTC and clang both pass
// through to ptxas (sm_80 and later, PTX ISA 7.0): each operand rounded
// to the product's type (cvt.rna to tf32; cvt.rn to bf16, two to a
// register, the lower index in the lower half), then one mma.sync.
var cudaMMA = map[MMAKind]string{
	MMATF32: `RLX_DEV unsigned int rlx_tf32(float x) { unsigned int r; asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x)); return r; }
RLX_DEV void rlx_mma_tf32(float& c0, float& c1, float& c2, float& c3, float a0, float a1, float a2, float a3, float b0, float b1) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
    : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
    : "r"(rlx_tf32(a0)), "r"(rlx_tf32(a1)), "r"(rlx_tf32(a2)), "r"(rlx_tf32(a3)), "r"(rlx_tf32(b0)), "r"(rlx_tf32(b1)));
}
`,
	MMABF16: `RLX_DEV unsigned int rlx_bf16x2(float lo, float hi) { unsigned int r; asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo)); return r; }
RLX_DEV void rlx_mma_bf16(float& c0, float& c1, float& c2, float& c3, float a0, float a1, float a2, float a3, float a4, float a5, float a6, float a7, float b0, float b1, float b2, float b3) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
    : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
    : "r"(rlx_bf16x2(a0, a1)), "r"(rlx_bf16x2(a2, a3)), "r"(rlx_bf16x2(a4, a5)), "r"(rlx_bf16x2(a6, a7)), "r"(rlx_bf16x2(b0, b1)), "r"(rlx_bf16x2(b2, b3)));
}
`,
}

func printCUDA(k *Kernel) string {
	d := &dialect{
		types:   map[Type]string{Bool: "bool", I32: "int", U32: "unsigned int", I64: "long long", F32: "float"},
		storage: map[Type]string{Bool: "unsigned char", U8: "unsigned char", I8: "signed char", I16: "short", F16: "unsigned short", BF16: "unsigned short", I32: "int", U32: "unsigned int", I64: "long long", F32: "float"},
		funcs:   map[string]string{},
		i64Lit:  "LL", u32Lit: "u", f32Lit: "f",
		conv: func(t, e string) string { return "((" + t + ")(" + e + "))" },
		bitcast: func(to, from Type, e string) string {
			switch {
			case from == F32 && to == U32:
				return "rlx_f2u(" + e + ")"
			case from == F32 && to == I32:
				return "rlx_f2i(" + e + ")"
			case to == F32 && from == U32:
				return "rlx_u2f(" + e + ")"
			case to == F32 && from == I32:
				return "rlx_i2f(" + e + ")"
			case to == U32:
				return "((unsigned int)(" + e + "))"
			}
			return "((int)(" + e + "))"
		},
		index:     func(kind string, axis int64) string { return "rlx_" + kind + "_" + "xyz"[axis:axis+1] + "()" },
		elem:      func(p int) string { return fmt.Sprintf("p%d", p) },
		offset:    func(p int) string { return fmt.Sprintf("rlx_o%d", p) },
		nonFinite: func(bits uint32) string { return fmt.Sprintf("rlx_u2f(0x%08xu)", bits) },
		barrier:   "rlx_barrier();",
		mma:       map[MMAKind]string{MMATF32: "rlx_mma_tf32", MMABF16: "rlx_mma_bf16"},
	}
	for name := range Funcs {
		d.funcs[name] = "rlx_" + name
	}
	p := &printer{d: d, k: k}
	p.line("// rlx kernel %s (CUDA C; generated, do not edit)", k.Name)
	p.b.WriteString(cudaPrelude)
	kinds := mmaKindsOf(k)
	for _, m := range []MMAKind{MMATF32, MMABF16} {
		if kinds[m] {
			p.b.WriteString(cudaMMA[m])
		}
	}
	var params []string
	for i, par := range k.Params {
		c := "const "
		if par.Write {
			c = ""
		}
		params = append(params, fmt.Sprintf("%s%s* p%d", c, d.storage[par.Elem], i))
	}
	if k.Offsets {
		for i := range k.Params {
			params = append(params, fmt.Sprintf("int rlx_o%d", i))
		}
	}
	p.line("extern \"C\" __global__ void %s(%s) {", k.Name, strings.Join(params, ", "))
	for i, s := range k.Shared {
		p.line("  __shared__ %s s%d[%d]; // %s", d.types[s.Elem], i, s.Len, s.Name)
	}
	p.body(k)
	p.line("}")
	return p.b.String()
}

func printMSL(k *Kernel) string {
	d := &dialect{
		types:   map[Type]string{Bool: "bool", I32: "int", U32: "uint", I64: "long", F32: "float"},
		storage: map[Type]string{Bool: "uchar", U8: "uchar", I8: "char", I16: "short", F16: "ushort", BF16: "ushort", I32: "int", U32: "uint", I64: "long", F32: "float"},
		funcs: map[string]string{"exp": "precise::exp", "log": "precise::log", "sqrt": "precise::sqrt", "sin": "precise::sin", "cos": "precise::cos",
			"floor": "floor", "ceil": "ceil", "trunc": "trunc", "rint": "rint", "abs": "fabs",
			"isnan": "isnan", "isinf": "isinf", "exp2": "precise::exp2", "log2": "precise::log2", "fma": "fma"},
		i64Lit: "L", u32Lit: "u", f32Lit: "f",
		conv: func(t, e string) string { return t + "(" + e + ")" },
		bitcast: func(to, from Type, e string) string {
			return "as_type<" + map[Type]string{I32: "int", U32: "uint", F32: "float"}[to] + ">(" + e + ")"
		},
		index: func(kind string, axis int64) string {
			return "int(rlx_" + kind + "." + "xyz"[axis:axis+1] + ")"
		},
		elem:      func(p int) string { return fmt.Sprintf("p%d", p) },
		offset:    func(p int) string { return fmt.Sprintf("rlx_off[%d]", p) },
		nonFinite: func(bits uint32) string { return fmt.Sprintf("as_type<float>(0x%08xu)", bits) },
		barrier:   "threadgroup_barrier(mem_flags::mem_threadgroup);",
	}
	p := &printer{d: d, k: k}
	p.line("// rlx kernel %s (Metal Shading Language; generated, do not edit)", k.Name)
	p.line("#include <metal_stdlib>")
	p.line("using namespace metal;")
	var params []string
	for i, par := range k.Params {
		c := "const "
		if par.Write {
			c = ""
		}
		params = append(params, fmt.Sprintf("%sdevice %s* p%d [[buffer(%d)]]", c, d.storage[par.Elem], i, i))
	}
	if k.Offsets {
		params = append(params, fmt.Sprintf("constant int* rlx_off [[buffer(%d)]]", len(k.Params)))
	}
	params = append(params, "uint3 rlx_global [[thread_position_in_grid]]", "uint3 rlx_local [[thread_position_in_threadgroup]]", "uint3 rlx_group [[threadgroup_position_in_grid]]")
	p.line("kernel void %s(%s) {", k.Name, strings.Join(params, ",\n    "))
	for i, s := range k.Shared {
		p.line("  threadgroup %s s%d[%d]; // %s", d.types[s.Elem], i, s.Len, s.Name)
	}
	p.body(k)
	p.line("}")
	return p.b.String()
}
