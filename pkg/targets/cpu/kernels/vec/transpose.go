package vec

// Transpose writes dst[j*ldd+i] = src[i*lds+j] for i < rows, j < cols: in
// 8×8 blocks (one vector shuffle each where the CPU has AVX), the edges
// element by element.
func Transpose(dst []float32, ldd int, src []float32, lds int, rows, cols int) {
	if rows <= 0 || cols <= 0 {
		return
	}
	_ = src[(rows-1)*lds+cols-1]
	_ = dst[(cols-1)*ldd+rows-1]
	r8, c8 := rows&^7, cols&^7
	for i := 0; i < r8; i += 8 {
		for j := 0; j < c8; j += 8 {
			transpose8x8(dst[j*ldd+i:], ldd, src[i*lds+j:], lds)
		}
	}
	if c8 < cols {
		transposeGo(dst[c8*ldd:], ldd, src[c8:], lds, r8, cols-c8)
	}
	if r8 < rows {
		transposeGo(dst[r8:], ldd, src[r8*lds:], lds, rows-r8, cols)
	}
}

// transposeGo is transpose element by element.
func transposeGo(dst []float32, ldd int, src []float32, lds int, rows, cols int) {
	for i := 0; i < rows; i++ {
		row := src[i*lds : i*lds+cols]
		for j, v := range row {
			dst[j*ldd+i] = v
		}
	}
}
