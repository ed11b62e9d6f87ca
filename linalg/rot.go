package linalg

// rotMat accumulates the plane rotations of the tridiagonal and bidiagonal
// QR iterations: a real rows×cols matrix Z stored as panels of four rows,
// element (i, k) at data[(i/4)·4·cols + 4·k + i%4]. A rotation of two
// columns then touches four contiguous values per panel, and a sequence of
// rotations of adjacent columns walks each panel once, keeping the running
// column in registers (four rows in one AVX2 register where available).
// Rows past rows up to the next multiple of four are zero padding. A
// rotMat with no columns stands for "vectors not wanted": every method is
// then a no-op.
type rotMat struct {
	rows, cols int
	data       []float64
}

// rotEye returns the n×n identity as a rotMat.
func rotEye(n int) rotMat {
	z := rotMat{rows: n, cols: n, data: make([]float64, (n+3)/4*4*n)}
	for i := range n {
		z.data[z.index(i, i)] = 1
	}
	return z
}

func (z rotMat) index(i, k int) int { return (i/4)*4*z.cols + 4*k + i%4 }
func (z rotMat) panels() int        { return (z.rows + 3) / 4 }

// seq applies the rotations of the column pairs (p+k, p+k+1), k = 0, 1, …
// in turn, the k-th being col(p+k), col(p+k+1) = c[k]·col(p+k) +
// s[k]·col(p+k+1), c[k]·col(p+k+1) − s[k]·col(p+k).
func (z rotMat) seq(p int, c, s []float64) {
	n := len(c)
	if n == 0 || z.cols == 0 || z.rows == 0 {
		return
	}
	s = s[:n]
	parallelFor(z.panels(), 4*n, func(lo, hi int) { z.seqPanels(lo, hi, p, c, s) })
}

// seqPanels is seq on the panels [lo, hi).
func (z rotMat) seqPanels(lo, hi, p int, c, s []float64) {
	n := len(c)
	if rotPanelsAsm != nil {
		rotPanelsAsm(&z.data[lo*4*z.cols+4*p], hi-lo, 4*z.cols, n, &c[0], &s[0])
		return
	}
	for pn := lo; pn < hi; pn++ {
		b := z.data[pn*4*z.cols+4*p : pn*4*z.cols+4*(p+n+1)]
		x0, x1, x2, x3 := b[0], b[1], b[2], b[3]
		for k, ck := range c {
			sk := s[k]
			y := b[4*k+4 : 4*k+8]
			y0, y1, y2, y3 := y[0], y[1], y[2], y[3]
			r := b[4*k : 4*k+4]
			r[0] = ck*x0 + sk*y0
			r[1] = ck*x1 + sk*y1
			r[2] = ck*x2 + sk*y2
			r[3] = ck*x3 + sk*y3
			x0 = ck*y0 - sk*x0
			x1 = ck*y1 - sk*x1
			x2 = ck*y2 - sk*x2
			x3 = ck*y3 - sk*x3
		}
		b[4*n], b[4*n+1], b[4*n+2], b[4*n+3] = x0, x1, x2, x3
	}
}

// pair applies col(j), col(k) = c·col(j) + s·col(k), c·col(k) − s·col(j).
func (z rotMat) pair(j, k int, c, s float64) {
	if z.cols == 0 {
		return
	}
	for pn := range z.panels() {
		x := z.data[pn*4*z.cols+4*j : pn*4*z.cols+4*j+4]
		y := z.data[pn*4*z.cols+4*k : pn*4*z.cols+4*k+4]
		for l := range 4 {
			x[l], y[l] = c*x[l]+s*y[l], c*y[l]-s*x[l]
		}
	}
}

// negate negates column j.
func (z rotMat) negate(j int) {
	if z.cols == 0 {
		return
	}
	for pn := range z.panels() {
		x := z.data[pn*4*z.cols+4*j : pn*4*z.cols+4*j+4]
		for l := range 4 {
			x[l] = -x[l]
		}
	}
}

// permute reorders the columns so that the new column i is the old idx[i].
func (z rotMat) permute(idx []int) {
	if z.cols == 0 {
		return
	}
	tmp := make([]float64, 4*z.cols)
	for pn := range z.panels() {
		b := z.data[pn*4*z.cols : (pn+1)*4*z.cols]
		for i, j := range idx {
			copy(tmp[4*i:4*i+4], b[4*j:4*j+4])
		}
		copy(b, tmp)
	}
}

// toMat returns Z as a column-major matrix of T.
func toMat[T scalar](z rotMat) mat[T] {
	out := newMat[T](z.rows, z.cols)
	for k := range z.cols {
		col := out.col(k)
		for i := range col {
			col[i] = fromReal[T](z.data[z.index(i, k)])
		}
	}
	return out
}

// rotPanelsAsm, when set, is seq's kernel: n rotations on each of panels
// panels, panel stride elements apart, starting at z (the first rotated
// column of the first panel).
var rotPanelsAsm func(z *float64, panels, stride, n int, c, s *float64)
