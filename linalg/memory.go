package linalg

import (
	"unsafe"

	"github.com/goferro/goferro/internal/sysmem"
	"github.com/goferro/goferro/tensor"
)

// checkMemory returns a tensor.ErrMemory *Error for op when need bytes (a
// call's results and working copies, estimated from the shapes before
// anything is allocated) do not fit in what the process may still
// allocate (sysmem.Fits), and nil when they do: a Go allocation that
// fails ends the program, so a QR in Complete mode of a 200000×1 input,
// whose Q alone takes 320 GB, is refused instead.
func checkMemory(op string, need float64) error {
	if ok, avail := sysmem.Fits(need); !ok {
		return newError(op, tensor.ErrMemory, "not enough memory: it needs about %s for its results and working copies, %s is available",
			sysmem.FormatBytes(int64(min(need, 1<<62))), sysmem.FormatBytes(avail))
	}
	return nil
}

// sizeOf returns the bytes of one T, as a float64 for the estimates.
func sizeOf[T scalar]() float64 { return float64(unsafe.Sizeof(*new(T))) }

// The estimates of what a call takes, in bytes, for nb m×n matrices of T
// (n×n for eighNeed): the results, and the working copies of the one
// matrix at a time that a large batch factorises (a batch of small
// matrices spread over the threads takes less than the check's floor).

// qrNeed: Q (m×qc) and R (rr×n); the loaded matrix and the block
// workspaces.
func qrNeed[T scalar](nb, m, n, qc, rr int) float64 {
	results := float64(m)*float64(qc) + float64(rr)*float64(n)
	return sizeOf[T]() * (float64(nb)*results + 2*float64(m)*float64(n) + 4*64*float64(max(m, n)))
}

// svdNeed: the singular values and vectors of every matrix, kept until the
// truncation rank is known (on scratch buffers, whose capacity scratchLen
// rounds up), and the results, at most as large as the vectors; and the
// working copies of one matrix: the loaded matrix, a tall one's triangular
// factor, the bidiagonal reduction's V, and the float64 matrices of the
// rotations that the bidiagonal solver accumulates for U and V.
func svdNeed[T scalar](nb, m, n int, full, vectors bool) float64 {
	k := min(m, n)
	values, vecs, keptVecs := 8*float64(k), 0.0, 0.0
	if vectors && k > 0 {
		uc, vc := k, k
		if full {
			uc, vc = m, n
		}
		vecs = float64(m)*float64(uc) + float64(vc)*float64(n)
		keptVecs = scratchElems[T](m, uc) + scratchElems[T](vc, n)
	}
	kk := float64(k) * float64(k)
	perMatrix := sizeOf[T]()*(float64(m)*float64(n)+3*kk) + 8*3*kk
	return float64(nb)*(2*values+(vecs+keptVecs)*sizeOf[T]()) + perMatrix
}

// scratchElems returns the capacity, in elements, of the scratch buffer
// of a rows×cols matrix (scratchLen), in floating point: the product of
// the extents of a Complete factor may overflow an int.
func scratchElems[T scalar](rows, cols int) float64 {
	if e := float64(rows) * float64(cols); e*sizeOf[T]() > keptScratch || e == 0 {
		return e
	}
	return float64(scratchLen[T](rows * cols))
}

// eighNeed: the eigenvalues and vectors; the loaded matrix and the
// eigenvectors as T, the tridiagonal solver's eigenvectors and its divide
// and conquer's workspace (4n²) as float64.
func eighNeed[T scalar](nb, n int) float64 {
	nn := float64(n) * float64(n)
	return float64(nb)*(8*float64(n)+nn*sizeOf[T]()) + 2*nn*sizeOf[T]() + 5*8*nn
}

// rsvdNeed: U (m×r), the singular values and Vᴴ (r×n); A and its
// conjugate, the sample and its powers (m×l and n×l, with their QR
// workspaces) and the small factor's SVD.
func rsvdNeed[T scalar](nb, m, n, r, l int) float64 {
	results := float64(r) * float64(m+n+1)
	work := 2*float64(m)*float64(n) + 4*float64(m+n)*float64(l) + 4*float64(l)*float64(l)
	return sizeOf[T]() * (float64(nb)*results + work)
}
