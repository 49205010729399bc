package kernels

import "fmt"

// Gemm is a packed-panel design (the BLIS loop nest):
//
//	for jc in steps of gemmNC over n          (B block)
//	  for pc in steps of gemmKC over k        (pack B[pc:+kc, jc:+nc] into nr-wide panels)
//	    for ic in steps of gemmMC over m      (pack A[ic:+mc, pc:+kc] into mr-high panels; parallel tasks)
//	      for each B panel, each A panel      (the mr×nr micro-kernel, k = kc)
//
// The micro-kernel is a gemmKernel value: the portable Go one now, assembly
// ones later; packing formats follow its mr and nr. Every output element is
// summed in the same order whatever the thread count, so results do not
// depend on Pool.Threads.

// Blocking. gemmKC·nr floats of B panel stay in L1 while a gemmMC×gemmKC A
// block (64 KiB) stays in L2.
const (
	gemmKC = 256
	gemmMC = 64 // rounded down to a multiple of the kernel's mr
	gemmNC = 2048
	// Below this many multiply-adds a Gemm runs on the calling goroutine.
	gemmSerialWork = 1 << 15
	// Panels of B packed per parallel chunk.
	gemmPackGrain = 32
	// Output columns per chunk on the few-rows path.
	gemvGrain = 256
)

// gemmKernel is a micro-kernel and its tile shape. fn computes the mr×nr
// tile sum over p < kc of a[p*mr+i]·b[p*nr+j] from packed panels and stores
// it at c[i*ldc+j] (or adds it there when accumulate is set).
type gemmKernel struct {
	mr, nr int
	fn     func(kc int, a, b, c []float32, ldc int, accumulate bool)
}

// maxTile bounds mr·nr over all kernels (the edge-tile scratch lives on the stack).
const maxTile = 256

// defaultKernel returns the micro-kernel for this machine.
func defaultKernel() gemmKernel { return gemmKernel{mr: 4, nr: 2, fn: kernel4x2} }

// bSource is the k×n right operand, read only through packing, so that
// convolution (im2col on the fly) and attention (Kᵀ) reuse the Gemm.
type bSource interface {
	// pack writes columns [j0, j0+w) of rows [p0, p0+kb) as nr-wide panels:
	// panel q holds columns j0+q·nr.. at dst[q·nr·kb:], element (p, c) at
	// p·nr+c; columns past w in the last panel are zero.
	pack(dst []float32, nr, p0, kb, j0, w int)
}

// denseB is a row-major B: B[p][j] = b[p·ldb+j].
type denseB struct {
	b   []float32
	ldb int
}

func (s denseB) pack(dst []float32, nr, p0, kb, j0, w int) {
	full := w / nr * nr
	for p := 0; p < kb; p++ {
		src := s.b[(p0+p)*s.ldb+j0 : (p0+p)*s.ldb+j0+w]
		d := p * nr
		if nr == 2 {
			for j := 0; j < full; j += 2 {
				o := d + j*kb
				dst[o] = src[j]
				dst[o+1] = src[j+1]
			}
		} else {
			for j := 0; j < full; j += nr {
				copy(dst[d+j*kb:d+j*kb+nr], src[j:j+nr])
			}
		}
		if full < w {
			o := d + full*kb
			tail := dst[o : o+nr]
			n := copy(tail, src[full:])
			clear(tail[n:])
		}
	}
}

// transB is B = Xᵀ for a row-major X: B[p][j] = b[j·ldb+p].
type transB struct {
	b   []float32
	ldb int
}

func (s transB) pack(dst []float32, nr, p0, kb, j0, w int) {
	for q := 0; q*nr < w; q++ {
		panel := dst[q*nr*kb : (q+1)*nr*kb]
		for c := 0; c < nr; c++ {
			j := q*nr + c
			if j >= w {
				for p := 0; p < kb; p++ {
					panel[p*nr+c] = 0
				}
				continue
			}
			src := s.b[(j0+j)*s.ldb+p0 : (j0+j)*s.ldb+p0+kb]
			for p, v := range src {
				panel[p*nr+c] = v
			}
		}
	}
}

// gemmArgs is one C = A·B (+ C when accumulate) with an epilogue applied
// to the final values.
type gemmArgs struct {
	m, n, k    int
	a          []float32
	lda        int
	b          bSource
	c          []float32
	ldc        int
	accumulate bool
	ep         epi
}

// gemmWork holds packing buffers that a serial caller reuses across calls.
type gemmWork struct{ ap, bp []float32 }

func grow(buf []float32, n int) []float32 {
	if cap(buf) < n {
		return make([]float32, n)
	}
	return buf[:n]
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// Gemm computes C = A·B for row-major A [m,k] (leading dimension lda), B
// [k,n] (ldb) and C [m,n] (ldc), overwriting C, then applies ep: Bias is
// indexed by column, Residual is laid out like C (leading dimension ldc).
// k == 0 gives C = ep applied to zeros. C must not overlap A, B, Bias or
// Residual.
func Gemm(p *Pool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, ep Epilogue) {
	checkMatrix("Gemm", "a", a, m, k, lda)
	checkMatrix("Gemm", "b", b, k, n, ldb)
	checkMatrix("Gemm", "c", c, m, n, ldc)
	if ep.Bias != nil && len(ep.Bias) < n {
		panic(fmt.Sprintf("kernels: Gemm: bias has %d elements, want %d", len(ep.Bias), n))
	}
	if ep.Residual != nil {
		checkMatrix("Gemm", "residual", ep.Residual, m, n, ldc)
	}
	g := gemmArgs{m: m, n: n, k: k, a: a, lda: lda, b: denseB{b, ldb}, c: c, ldc: ldc, ep: colEpi(&ep, ldc)}
	gemm(p, defaultKernel(), &g, nil)
}

func checkMatrix(fn, name string, s []float32, rows, cols, ld int) {
	if rows < 0 || cols < 0 || ld < cols {
		panic(fmt.Sprintf("kernels: %s: %s is %d×%d with leading dimension %d", fn, name, rows, cols, ld))
	}
	if rows > 0 && cols > 0 && len(s) < (rows-1)*ld+cols {
		panic(fmt.Sprintf("kernels: %s: %s has %d elements, %d×%d with leading dimension %d needs %d",
			fn, name, len(s), rows, cols, ld, (rows-1)*ld+cols))
	}
}

// gemm runs g on p (nil for the calling goroutine), reusing w's buffers
// when w is not nil.
func gemm(p *Pool, kn gemmKernel, g *gemmArgs, w *gemmWork) {
	m, n, k := g.m, g.n, g.k
	if m <= 0 || n <= 0 {
		return
	}
	if k <= 0 {
		if !g.accumulate {
			for i := 0; i < m; i++ {
				clear(g.c[i*g.ldc : i*g.ldc+n])
			}
		}
		g.ep.apply(g.c, g.ldc, 0, 0, m, n)
		return
	}
	if p.Threads() > 1 && m*n*k < gemmSerialWork {
		p = nil
	}
	if d, ok := g.b.(denseB); ok && m < kn.mr {
		gemvRows(p, g, d)
		return
	}
	threads := p.Threads()
	mr, nr := kn.mr, kn.nr
	kcb := min(k, gemmKC)
	var ws gemmWork
	if w == nil {
		w = &ws
	}
	w.bp = grow(w.bp, ceilDiv(min(n, gemmNC), nr)*nr*kcb)
	bp := w.bp
	mc := max(mr, gemmMC/mr*mr)
	// A-block buffers: one per running chunk, recycled within this call.
	aLen := ceilDiv(min(m, mc), mr) * mr * kcb
	bufs := make(chan []float32, threads)
	if w.ap != nil && cap(w.ap) >= aLen {
		bufs <- w.ap[:aLen]
	}
	mBlocks := ceilDiv(m, mc)
	for jc := 0; jc < n; jc += gemmNC {
		nb := min(gemmNC, n-jc)
		nPanels := ceilDiv(nb, nr)
		nGroups := 1
		if threads > 1 {
			nGroups = min(nPanels, ceilDiv(4*threads, mBlocks))
		}
		for pc := 0; pc < k; pc += gemmKC {
			kb := min(gemmKC, k-pc)
			acc := pc > 0 || g.accumulate
			last := pc+kb == k
			p.For(nPanels, gemmPackGrain, func(lo, hi int) {
				j0 := lo * nr
				g.b.pack(bp[j0*kb:], nr, pc, kb, jc+j0, min(hi*nr, nb)-j0)
			})
			p.For(mBlocks*nGroups, 1, func(lo, hi int) {
				var ap []float32
				select {
				case ap = <-bufs:
				default:
					ap = make([]float32, aLen)
				}
				packed := -1
				for t := lo; t < hi; t++ {
					ib, gi := t/nGroups, t%nGroups
					i0 := ib * mc
					mb := min(mc, m-i0)
					if ib != packed {
						packA(ap, g.a, g.lda, i0, pc, mb, kb, mr)
						packed = ib
					}
					q0, q1 := gi*nPanels/nGroups, (gi+1)*nPanels/nGroups
					macroKernel(kn, ap, bp, g.c, g.ldc, i0, mb, jc, q0, q1, nb, kb, acc)
					if last {
						j0 := q0 * nr
						g.ep.apply(g.c, g.ldc, i0, jc+j0, mb, min(q1*nr, nb)-j0)
					}
				}
				select {
				case bufs <- ap:
				default:
				}
			})
		}
	}
	if w == &ws {
		return
	}
	select {
	case ap := <-bufs:
		w.ap = ap
	default:
	}
}

// packA packs rows [i0, i0+mb) and columns [pc, pc+kb) of A into mr-high
// panels: panel r/mr at dst[r·kb:], element (p, i) at p·mr+i; rows past mb
// are zero.
func packA(dst, a []float32, lda, i0, pc, mb, kb, mr int) {
	for ir := 0; ir < mb; ir += mr {
		panel := dst[ir*kb : ir*kb+mr*kb]
		if mr == 4 && ir+4 <= mb {
			r0 := a[(i0+ir)*lda+pc : (i0+ir)*lda+pc+kb]
			r1 := a[(i0+ir+1)*lda+pc : (i0+ir+1)*lda+pc+kb]
			r2 := a[(i0+ir+2)*lda+pc : (i0+ir+2)*lda+pc+kb]
			r3 := a[(i0+ir+3)*lda+pc : (i0+ir+3)*lda+pc+kb]
			for p := range r0 {
				d := panel[p*4 : p*4+4 : p*4+4]
				d[0], d[1], d[2], d[3] = r0[p], r1[p], r2[p], r3[p]
			}
			continue
		}
		for r := 0; r < mr; r++ {
			if ir+r >= mb {
				for p := 0; p < kb; p++ {
					panel[p*mr+r] = 0
				}
				continue
			}
			src := a[(i0+ir+r)*lda+pc : (i0+ir+r)*lda+pc+kb]
			for p, v := range src {
				panel[p*mr+r] = v
			}
		}
	}
}

// macroKernel runs the micro-kernel over B panels [q0, q1) and all A panels
// of one packed block: rows [i0, i0+mb) of C, columns jc+q·nr...
func macroKernel(kn gemmKernel, ap, bp, c []float32, ldc, i0, mb, jc, q0, q1, nb, kb int, acc bool) {
	mr, nr := kn.mr, kn.nr
	var tmp [maxTile]float32
	for q := q0; q < q1; q++ {
		j0 := jc + q*nr
		w := min(nr, nb-q*nr)
		bpan := bp[q*nr*kb : (q+1)*nr*kb]
		for ir := 0; ir < mb; ir += mr {
			h := min(mr, mb-ir)
			apan := ap[ir*kb : ir*kb+mr*kb]
			ci := (i0+ir)*ldc + j0
			if h == mr && w == nr {
				kn.fn(kb, apan, bpan, c[ci:], ldc, acc)
				continue
			}
			kn.fn(kb, apan, bpan, tmp[:], nr, false)
			for r := 0; r < h; r++ {
				dst := c[ci+r*ldc : ci+r*ldc+w]
				src := tmp[r*nr : r*nr+w]
				if acc {
					for j, v := range src {
						dst[j] += v
					}
				} else {
					copy(dst, src)
				}
			}
		}
	}
}

// gemvRows is the path for fewer rows than the micro-kernel's mr (a
// matrix-vector product in the m == 1 case): no packing, rows of B streamed
// four at a time into each row of C; columns are split across the pool.
func gemvRows(p *Pool, g *gemmArgs, d denseB) {
	m, n, k := g.m, g.n, g.k
	p.For(n, gemvGrain, func(lo, hi int) {
		w := hi - lo
		for i := 0; i < m; i++ {
			crow := g.c[i*g.ldc+lo : i*g.ldc+hi]
			arow := g.a[i*g.lda : i*g.lda+k]
			if !g.accumulate {
				clear(crow)
			}
			pk := 0
			for ; pk+4 <= k; pk += 4 {
				a0, a1, a2, a3 := arow[pk], arow[pk+1], arow[pk+2], arow[pk+3]
				b0 := d.b[pk*d.ldb+lo : pk*d.ldb+lo+w]
				b1 := d.b[(pk+1)*d.ldb+lo : (pk+1)*d.ldb+lo+w]
				b2 := d.b[(pk+2)*d.ldb+lo : (pk+2)*d.ldb+lo+w]
				b3 := d.b[(pk+3)*d.ldb+lo : (pk+3)*d.ldb+lo+w]
				for j := range crow {
					crow[j] += a0*b0[j] + a1*b1[j] + a2*b2[j] + a3*b3[j]
				}
			}
			for ; pk < k; pk++ {
				a0 := arow[pk]
				b0 := d.b[pk*d.ldb+lo : pk*d.ldb+lo+w]
				for j := range crow {
					crow[j] += a0 * b0[j]
				}
			}
		}
		g.ep.apply(g.c, g.ldc, 0, lo, m, w)
	})
}
