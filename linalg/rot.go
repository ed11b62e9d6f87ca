package linalg

// rotMat accumulates the plane rotations of the tridiagonal and bidiagonal
// QR iterations: a real rows×cols matrix Z stored as panels of panelRows
// rows, element (i, k) at data[(i/8)·8·cols + 8·k + i%8]. A rotation of
// two columns then touches eight contiguous values per panel, and a
// sequence of rotations of adjacent columns walks each panel once, keeping
// the running column in registers (one AVX-512 register, or two AVX2 ones,
// where available). Rows past rows up to the next multiple of panelRows
// are zero padding. A rotMat with no columns stands for "vectors not
// wanted": every method is then a no-op.
type rotMat struct {
	rows, cols int
	data       []float64
}

// panelRows is the height of a rotMat's panels.
const panelRows = 8

// rotEye returns the n×n identity as a rotMat.
func rotEye(n int) rotMat {
	z := rotMat{rows: n, cols: n, data: make([]float64, (n+panelRows-1)/panelRows*panelRows*n)}
	for i := range n {
		z.data[z.index(i, i)] = 1
	}
	return z
}

func (z rotMat) index(i, k int) int {
	return (i/panelRows)*panelRows*z.cols + panelRows*k + i%panelRows
}
func (z rotMat) panels() int { return (z.rows + panelRows - 1) / panelRows }

// column returns the panelRows values of column k in panel pn.
func (z rotMat) column(pn, k int) []float64 {
	at := pn*panelRows*z.cols + panelRows*k
	return z.data[at : at+panelRows]
}

// seq applies the rotations of the column pairs (p+k, p+k+1), k = 0, 1, …
// in turn, the k-th being col(p+k), col(p+k+1) = c[k]·col(p+k) +
// s[k]·col(p+k+1), c[k]·col(p+k+1) − s[k]·col(p+k).
func (z rotMat) seq(p int, c, s []float64) {
	n := len(c)
	if n == 0 || z.cols == 0 || z.rows == 0 {
		return
	}
	s = s[:n]
	parallelFor(z.panels(), panelRows*n, func(lo, hi int) { z.seqPanels(lo, hi, p, c, s) })
}

// seqPanels is seq on the panels [lo, hi).
func (z rotMat) seqPanels(lo, hi, p int, c, s []float64) {
	n := len(c)
	if rotPanelsAsm != nil {
		rotPanelsAsm(&z.column(lo, p)[0], hi-lo, panelRows*z.cols, n, &c[0], &s[0])
		return
	}
	for pn := lo; pn < hi; pn++ {
		var x [panelRows]float64
		copy(x[:], z.column(pn, p))
		for k, ck := range c {
			sk := s[k]
			r, y := z.column(pn, p+k), z.column(pn, p+k+1)
			for l, yl := range y {
				r[l] = ck*x[l] + sk*yl
				x[l] = ck*yl - sk*x[l]
			}
		}
		copy(z.column(pn, p+n), x[:])
	}
}

// rotBatch queues sequences of rotations for a rotMat and applies them
// together: one pass over the panels applies every queued sequence to a
// few panels at a time while they are in cache, and the threads start once
// per batch rather than once per sequence. The result is the same, to the
// bit, as calling seq for each sequence in turn.
type rotBatch struct {
	z     rotMat
	first []int // the first column each queued sequence rotates
	end   []int // where each sequence ends in c and s
	c, s  []float64
}

// rotBatchLen is the number of sequences of the longest length a rotBatch
// holds before it applies them.
const rotBatchLen = 8

// rotBlock is the number of panels a batch takes through all its
// sequences at a time: 32 rows, 256 KiB of a 1024-column matrix, which
// stay in the core's L2 cache.
const rotBlock = 4

// newRotBatch returns an empty batch for z and sequences of at most n
// rotations.
func newRotBatch(z rotMat, n int) *rotBatch {
	return &rotBatch{z: z, c: make([]float64, 0, rotBatchLen*n), s: make([]float64, 0, rotBatchLen*n)}
}

// push queues the sequence of n rotations of the column pairs (p+k,
// p+k+1), as seq applies them, first applying the queue if it is full, and
// returns the sequence's cosines and sines for the caller to fill in
// before the next push or flush.
func (b *rotBatch) push(p, n int) (c, s []float64) {
	if len(b.c)+n > cap(b.c) {
		b.flush()
	}
	at := len(b.c)
	b.c, b.s = b.c[:at+n], b.s[:at+n]
	b.first, b.end = append(b.first, p), append(b.end, at+n)
	return b.c[at:], b.s[at:]
}

// flush applies the queued sequences in order and empties the queue.
func (b *rotBatch) flush() {
	z := b.z
	if z.cols > 0 && z.rows > 0 && len(b.c) > 0 {
		parallelFor(z.panels(), panelRows*len(b.c), func(lo, hi int) {
			for pn := lo; pn < hi; pn += rotBlock {
				start := 0
				for k, p := range b.first {
					if start < b.end[k] {
						z.seqPanels(pn, min(pn+rotBlock, hi), p, b.c[start:b.end[k]], b.s[start:b.end[k]])
					}
					start = b.end[k]
				}
			}
		})
	}
	b.first, b.end, b.c, b.s = b.first[:0], b.end[:0], b.c[:0], b.s[:0]
}

// pair applies col(j), col(k) = c·col(j) + s·col(k), c·col(k) − s·col(j).
func (z rotMat) pair(j, k int, c, s float64) {
	if z.cols == 0 {
		return
	}
	for pn := range z.panels() {
		x, y := z.column(pn, j), z.column(pn, k)
		for l := range x {
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
		x := z.column(pn, j)
		for l := range x {
			x[l] = -x[l]
		}
	}
}

// permute reorders the columns so that the new column i is the old idx[i].
func (z rotMat) permute(idx []int) {
	if z.cols == 0 {
		return
	}
	tmp := make([]float64, panelRows*z.cols)
	for pn := range z.panels() {
		for i, j := range idx {
			copy(tmp[panelRows*i:panelRows*(i+1)], z.column(pn, j))
		}
		copy(z.data[pn*panelRows*z.cols:(pn+1)*panelRows*z.cols], tmp)
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
// panels of panelRows rows, panel stride elements apart, starting at z
// (the first rotated column of the first panel).
var rotPanelsAsm func(z *float64, panels, stride, n int, c, s *float64)

// rotKernels are the assembly kernels this CPU can run, AVX2 then
// AVX-512; tests check each.
var rotKernels []func(z *float64, panels, stride, n int, c, s *float64)

// kernelPath names the kernels rotPanelsAsm and the level-1 kernels use:
// "avx512", "avx2" or "generic" (the Go loops). It follows isa.Active,
// the path of every package with kernels, which GOFERRO_GEMM_ISA forces.
var kernelPath = "generic"
