package gemm

// This file holds the portable (pure Go) Gemm micro-kernel. Its shape (4 rows
// × 2 columns, k unrolled 4×) was chosen by measurement on amd64: wider
// tiles spill, because Go keeps at most about 15 floats in registers and
// copies before each multiply. Assembly kernels (gemm_amd64.s: AVX2+FMA)
// replace it through gemmKernel where the CPU runs them; this one remains
// the fallback and the purego build's kernel.

// kernel4x2 is the portable micro-kernel: it computes the 4×2 tile
// sum over p < kc of a[p*4+i]·b[p*2+j] (a and b are packed panels) and stores
// it into c[i*ldc+j], or adds it there when accumulate is set.
func kernel4x2(kc int, a, b, c []float32, ldc int, accumulate bool) {
	var c00, c01, c10, c11, c20, c21, c30, c31 float32
	a = a[:kc*4]
	b = b[:kc*2]
	p := 0
	for ; p+4 <= kc; p += 4 {
		aa := a[p*4 : p*4+16 : p*4+16]
		bb := b[p*2 : p*2+8 : p*2+8]
		b0, b1 := bb[0], bb[1]
		c00 += aa[0] * b0
		c01 += aa[0] * b1
		c10 += aa[1] * b0
		c11 += aa[1] * b1
		c20 += aa[2] * b0
		c21 += aa[2] * b1
		c30 += aa[3] * b0
		c31 += aa[3] * b1
		b0, b1 = bb[2], bb[3]
		c00 += aa[4] * b0
		c01 += aa[4] * b1
		c10 += aa[5] * b0
		c11 += aa[5] * b1
		c20 += aa[6] * b0
		c21 += aa[6] * b1
		c30 += aa[7] * b0
		c31 += aa[7] * b1
		b0, b1 = bb[4], bb[5]
		c00 += aa[8] * b0
		c01 += aa[8] * b1
		c10 += aa[9] * b0
		c11 += aa[9] * b1
		c20 += aa[10] * b0
		c21 += aa[10] * b1
		c30 += aa[11] * b0
		c31 += aa[11] * b1
		b0, b1 = bb[6], bb[7]
		c00 += aa[12] * b0
		c01 += aa[12] * b1
		c10 += aa[13] * b0
		c11 += aa[13] * b1
		c20 += aa[14] * b0
		c21 += aa[14] * b1
		c30 += aa[15] * b0
		c31 += aa[15] * b1
	}
	for ; p < kc; p++ {
		aa := a[p*4 : p*4+4 : p*4+4]
		bb := b[p*2 : p*2+2 : p*2+2]
		c00 += aa[0] * bb[0]
		c01 += aa[0] * bb[1]
		c10 += aa[1] * bb[0]
		c11 += aa[1] * bb[1]
		c20 += aa[2] * bb[0]
		c21 += aa[2] * bb[1]
		c30 += aa[3] * bb[0]
		c31 += aa[3] * bb[1]
	}
	r0 := c[0*ldc : 0*ldc+2 : 0*ldc+2]
	r1 := c[1*ldc : 1*ldc+2 : 1*ldc+2]
	r2 := c[2*ldc : 2*ldc+2 : 2*ldc+2]
	r3 := c[3*ldc : 3*ldc+2 : 3*ldc+2]
	if accumulate {
		r0[0] += c00
		r0[1] += c01
		r1[0] += c10
		r1[1] += c11
		r2[0] += c20
		r2[1] += c21
		r3[0] += c30
		r3[1] += c31
		return
	}
	r0[0] = c00
	r0[1] = c01
	r1[0] = c10
	r1[1] = c11
	r2[0] = c20
	r2[1] = c21
	r3[0] = c30
	r3[1] = c31
}
