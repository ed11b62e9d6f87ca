package linalg

import (
	"slices"

	"github.com/goferro/goferro/internal/reuse"
)

// rotMat accumulates the plane rotations of the tridiagonal and bidiagonal
// QR iterations: a real rows×cols matrix Z stored as panels of panelRows
// rows, element (i, k) at data[(i/8)·8·cols + 8·k + i%8]. A rotation of
// two columns then touches eight contiguous values per panel, and a
// sequence of rotations of adjacent columns walks each panel once, keeping
// the running column in registers (one AVX-512 register, or two AVX2 ones,
// where available). Rows past rows up to the next multiple of panelRows
// are zero padding. A rotMat with no columns stands for "vectors not
// wanted": every method is then a no-op.
//
// bottom, when not nil, bounds the rows of each column that may be
// nonzero: column k is zero from row bottom[k] down. Starting from the
// identity, a rotation sequence fills each column only down to the lowest
// row either of its columns reached, so during the first sweeps of a QR
// iteration the lower panels hold long runs of zero columns, which a
// rotBatch skips.
type rotMat struct {
	rows, cols int
	data       []float64
	bottom     []int
}

// panelRows is the height of a rotMat's panels.
const panelRows = 8

// rotEye returns the n×n identity as a rotMat.
func rotEye(n int) rotMat {
	data := zeroScratch[float64]((n+panelRows-1)/panelRows*panelRows, n).data
	z := rotMat{rows: n, cols: n, data: data, bottom: make([]int, n)}
	for i := range n {
		z.data[z.index(i, i)] = 1
		z.bottom[i] = i + 1
	}
	return z
}

// release hands z's buffer back to the scratch pool (see recycle); z
// must not be used after.
func (z rotMat) release() {
	recycle(mat[float64]{data: z.data})
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
	z.fill(p, n, nil)
	parallelFor(z.panels(), panelRows*n, func(lo, hi int) { z.seqPanels(lo, hi, p, c, s) })
}

// fill records in bottom what the sequence of n rotations from column p
// (as seq applies them) fills: after it, column p+k is nonzero at most
// down to the lowest bottom of columns p…p+k+1 (the last column, p+n, as
// far as p+n−1). It sets reach[k], when reach is not nil, to that bound
// for rotation k: the rotation changes no row from there down. reach is
// then non-decreasing.
func (z rotMat) fill(p, n int, reach []int) {
	if z.bottom == nil {
		for k := range reach {
			reach[k] = z.rows
		}
		return
	}
	low := z.bottom[p]
	for k := range n {
		low = max(low, z.bottom[p+k+1])
		z.bottom[p+k] = low
		if reach != nil {
			reach[k] = low
		}
	}
	z.bottom[p+n] = low
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
	reach []int // for each rotation, the row from which it changes nothing (see fill)
}

// rotBatchLen is the number of sequences of the longest length a rotBatch
// holds before it applies them.
const rotBatchLen = 8

// rotBlock is the number of panels a batch takes through all its
// sequences at a time: 32 rows, 256 KiB of a 1024-column matrix, which
// stay in the core's L2 cache.
const rotBlock = 4

// rotBatches keeps bdsqr's batches between calls: their queues were a
// third of the bytes, and a third of the allocations, of an 8×8 SVD.
var rotBatches reuse.Pool[rotBatch]

// newRotBatch returns an empty batch for z and sequences of at most n
// rotations. Release it when done.
func newRotBatch(z rotMat, n int) *rotBatch {
	b := rotBatches.Get()
	if b == nil {
		b = new(rotBatch)
	}
	// Capacities exactly size: push flushes when c is full, and a batch
	// kept from a larger n would otherwise queue more than rotBatchLen
	// sequences (and reach, of ints, may round up less than c).
	size := rotBatchLen * n // a sequence has at least one rotation
	b.z = z
	b.c, b.s = slices.Grow(b.c[:0], size)[:0:size], slices.Grow(b.s[:0], size)[:0:size]
	b.reach = slices.Grow(b.reach[:0], size)[:0:size]
	b.first, b.end = slices.Grow(b.first[:0], size), slices.Grow(b.end[:0], size)
	return b
}

// release hands b back for a later newRotBatch; b must not be used after.
func (b *rotBatch) release() {
	b.z = rotMat{}
	rotBatches.Put(b)
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
	b.c, b.s, b.reach = b.c[:at+n], b.s[:at+n], b.reach[:at+n]
	if b.z.cols > 0 {
		b.z.fill(p, n, b.reach[at:])
	}
	b.first, b.end = append(b.first, p), append(b.end, at+n)
	return b.c[at:], b.s[at:]
}

// flush applies the queued sequences in order and empties the queue. In
// each block of panels it skips the leading rotations of a sequence that
// change none of the block's rows (their columns being zero there), which
// leaves the same values as applying them.
func (b *rotBatch) flush() {
	z := b.z
	if z.cols > 0 && z.rows > 0 && len(b.c) > 0 {
		parallelFor(z.panels(), panelRows*len(b.c), func(lo, hi int) {
			for pn := lo; pn < hi; pn += rotBlock {
				top := pn * panelRows
				start := 0
				for k, p := range b.first {
					end := b.end[k]
					skip, _ := slices.BinarySearch(b.reach[start:end], top+1)
					if from := start + skip; from < end {
						z.seqPanels(pn, min(pn+rotBlock, hi), p+skip, b.c[from:end], b.s[from:end])
					}
					start = end
				}
			}
		})
	}
	b.first, b.end, b.c, b.s, b.reach = b.first[:0], b.end[:0], b.c[:0], b.s[:0], b.reach[:0]
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
	if z.bottom != nil {
		low := max(z.bottom[j], z.bottom[k])
		z.bottom[j], z.bottom[k] = low, low
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
	if z.bottom != nil {
		old := slices.Clone(z.bottom)
		for i, j := range idx {
			z.bottom[i] = old[j]
		}
	}
}

// toMat returns the m×c matrix diag(Z, I) of T (m ≥ rows, c ≥ cols): Z
// in the top-left corner, ones on the rest of the diagonal, column-major.
func toMat[T scalar](z rotMat, m, c int) mat[T] {
	out := eye[T](m, c, z.cols)
	writeRot(z, out)
	return out
}

// writeRot writes z into the top-left z.rows×z.cols block of out.
func writeRot[T scalar](z rotMat, out mat[T]) {
	for pn := range z.panels() {
		r0 := pn * panelRows
		h := min(panelRows, z.rows-r0)
		for k := range z.cols {
			src, dst := z.column(pn, k)[:h], out.col(k)[r0:r0+h]
			if d, ok := any(dst).([]float64); ok {
				copy(d, src)
				continue
			}
			for l, x := range src {
				dst[l] = fromReal[T](x)
			}
		}
	}
}

// rotPanelsAsm, when set, is seq's kernel: n rotations on each of panels
// panels of panelRows rows, panel stride elements apart, starting at z
// (the first rotated column of the first panel).
var rotPanelsAsm func(z *float64, panels, stride, n int, c, s *float64)

// rotKernels are the assembly kernels this CPU can run, AVX2 then
// AVX-512; tests check each.
var rotKernels []func(z *float64, panels, stride, n int, c, s *float64)

// kernelPath names the kernels rotPanelsAsm uses: "avx512", "avx2" or
// "generic" (the Go loops). It follows isa.Active, the path of every
// package with kernels, which GOFERRO_GEMM_ISA forces (level1.Path names
// those of the level-1 loops).
var kernelPath = "generic"
