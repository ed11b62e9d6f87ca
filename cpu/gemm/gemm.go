// Package gemm computes general matrix products C = alpha·A·B + beta·C over
// strided, optionally batched operands, for float32, float64, complex64 and
// complex128. It is the engine under einsum: every binary contraction step
// ends here.
//
// The implementation is BLIS-style. Operands are packed into contiguous
// micro-panels sized from the cache sizes (read from the OS, with safe
// defaults): B in kc×nc panels, A in mc×kc blocks, and a register-blocked
// micro-kernel computes mr×nr tiles of C. On amd64 the kernels are Go
// assembly, chosen when the package starts from what the CPU runs (read
// with golang.org/x/sys/cpu): AVX-512F (12×16 float64, 12×32 float32) or
// AVX2 with FMA (6×8 float64, 6×16 float32); elsewhere, or with the build
// tag purego (or goferro_noasm), a portable Go 4×4 kernel runs. The
// environment variable GOFERRO_GEMM_ISA, read once at start-up, forces a
// path the CPU supports: avx512, avx2, or sse2 and generic (the portable
// kernel), so that every path can be tested and measured on one machine;
// it forces the strided copies' and linalg's kernels too (internal/isa).
// Kernel names the kernels in use.
// Complex products use the 1m method: an m×n×k complex product becomes an
// m×2n×2k real one (A packed interleaved, B as 2×2 real blocks), so complex
// runs on the real kernels at real speed. Any strides work: packing absorbs
// them, and C without contiguous rows is written through a tile buffer
// (or the problem is transposed when C's columns are contiguous). Ragged
// edges are zero-padded in the packed panels. The rows or columns of A and
// B may also be listed as offset tables (Matrix.RowOffsets, ColOffsets),
// for a group of tensor axes no single stride walks: the packers then read
// through the tables, so such an operand needs no copy first.
//
// Threads: big products are split in a grid of C blocks, batches of small
// products a batch element per goroutine, on a pool of long-lived worker
// goroutines; small products stay on the calling goroutine. Goroutines
// whose blocks span the same columns pack each B panel once, together.
// Packing buffers are kept between calls (package internal/reuse), so
// steady-state calls do not allocate.
package gemm

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/goferro/goferro/internal/strided"
)

// Scalar is the set of element types GEMM supports.
type Scalar interface {
	float32 | float64 | complex64 | complex128
}

// Matrix describes a strided (optionally batched) matrix operand inside a
// flat buffer. Element (b, i, j) — batch multi-index b, row i, column j —
// lives at Data[Offset + Σ b[k]·BatchStrides[k] + i·RowStride + j·ColStride].
// Strides are in elements and may be zero (broadcast) or negative, except that
// the output C must not alias itself (no zero strides over extents > 1).
//
// The rows or the columns of A and B may instead be any set of positions,
// such as a group of tensor axes that no single stride walks: a non-nil
// RowOffsets (one entry per row) replaces i·RowStride by RowOffsets[i],
// a non-nil ColOffsets (one per column) replaces j·ColStride by
// ColOffsets[j]. Entries are in elements and may be negative. Such
// operands are always packed, through the tables, so they cost a little
// more than strided ones but need no copy first. C must be strided.
type Matrix[T Scalar] struct {
	Data         []T
	Offset       int
	RowStride    int
	ColStride    int
	BatchStrides []int // one per batch axis; nil when not batched
	RowOffsets   []int // offsets of the rows, replacing RowStride; nil: strided
	ColOffsets   []int // offsets of the columns, replacing ColStride; nil: strided
}

// ErrArgument is wrapped by every error Gemm returns for bad arguments.
var ErrArgument = errors.New("gemm: bad argument")

// Gemm computes C[b] = alpha·A[b]·B[b] + beta·C[b] for every batch index b in
// the multi-dimensional batch (nil or empty for a single product), where A[b]
// is m×k, B[b] is k×n and C[b] is m×n. When beta is zero C is not read, so it
// may hold NaNs. It uses Threads() goroutines.
func Gemm[T Scalar](batch []int, m, n, k int, alpha T, a Matrix[T], b Matrix[T], beta T, c Matrix[T]) error {
	return GemmThreads(0, batch, m, n, k, alpha, a, b, beta, c)
}

// GemmThreads is Gemm with an explicit goroutine count (0 means Threads()).
// Small products run on the calling goroutine whatever the count; batches
// of small products are spread over goroutines a batch element at a time.
func GemmThreads[T Scalar](threads int, batch []int, m, n, k int, alpha T, a Matrix[T], b Matrix[T], beta T, c Matrix[T]) error {
	if err := check(batch, m, n, k, a, b, c); err != nil {
		return err
	}
	if threads <= 0 {
		threads = Threads()
	}
	threads = min(threads, maxShares)
	switch any(alpha).(type) {
	case float64:
		run[T, float64](threads, batch, m, n, k, alpha, beta, a, b, c)
	case float32:
		run[T, float32](threads, batch, m, n, k, alpha, beta, a, b, c)
	case complex128:
		run[T, float64](threads, batch, m, n, k, alpha, beta, a, b, c)
	case complex64:
		run[T, float32](threads, batch, m, n, k, alpha, beta, a, b, c)
	}
	return nil
}

// check validates extents and that every addressed element is in its buffer.
func check[T Scalar](batch []int, m, n, k int, a, b, c Matrix[T]) error {
	if m < 0 || n < 0 || k < 0 {
		return fmt.Errorf("%w: negative extent m=%d n=%d k=%d", ErrArgument, m, n, k)
	}
	for i, d := range batch {
		if d < 0 {
			return fmt.Errorf("%w: negative batch extent %d at axis %d", ErrArgument, d, i)
		}
	}
	if c.RowOffsets != nil || c.ColOffsets != nil {
		return fmt.Errorf("%w: C has offset tables; it must be strided", ErrArgument)
	}
	if err := inBounds("A", &a, batch, m, k); err != nil {
		return err
	}
	if err := inBounds("B", &b, batch, k, n); err != nil {
		return err
	}
	return inBounds("C", &c, batch, m, n)
}

// inBounds returns an error unless every element of the rows×cols operand
// x (batched over batch) lies in x.Data, its tables and strides agreeing
// with the extents. It takes x by pointer and spells its axes out, where a
// slice of operands and a closure an axis cost GEMM's call 45 of its 275 ns
// on a 16×16×1 product (AMD EPYC, Zen 5).
func inBounds[T Scalar](name string, x *Matrix[T], batch []int, rows, cols int) error {
	if len(x.BatchStrides) != len(batch) {
		return fmt.Errorf("%w: %s has %d batch strides for %d batch axes", ErrArgument, name, len(x.BatchStrides), len(batch))
	}
	if x.RowOffsets != nil && len(x.RowOffsets) != rows {
		return fmt.Errorf("%w: %s has %d row offsets for %d rows", ErrArgument, name, len(x.RowOffsets), rows)
	}
	if x.ColOffsets != nil && len(x.ColOffsets) != cols {
		return fmt.Errorf("%w: %s has %d column offsets for %d columns", ErrArgument, name, len(x.ColOffsets), cols)
	}
	if rows == 0 || cols == 0 {
		return nil
	}
	for _, d := range batch {
		if d == 0 {
			return nil
		}
	}
	// Each table spans from its least entry to its greatest: an axis of
	// two elements that far apart, from the offset moved by the least.
	// The arithmetic is checked: strides and tables come from callers, and
	// a span that wrapped around would pass this check and address memory
	// outside the buffer.
	var shapeMem, strideMem [8]int // no allocation for up to six batch axes
	shape, strides := append(shapeMem[:0], rows, cols), append(strideMem[:0], x.RowStride, x.ColStride)
	off, ok := x.Offset, true
	for i, tab := range [2][]int{x.RowOffsets, x.ColOffsets} {
		if tab == nil {
			continue
		}
		l, h := slices.Min(tab), slices.Max(tab)
		var ok1, ok2 bool
		off, ok1 = addChecked(off, l)
		shape[i] = 2
		strides[i], ok2 = addChecked(h, -l)
		ok = ok && ok1 && ok2 && l != math.MinInt
	}
	for i, d := range batch {
		shape, strides = append(shape, d), append(strides, x.BatchStrides[i])
	}
	lo, hi, inRange := strided.AddressRange(shape, strides, off)
	if !ok || !inRange {
		return fmt.Errorf("%w: %s's strides or offsets address beyond the range of int", ErrArgument, name)
	}
	if lo < 0 || hi >= len(x.Data) {
		return fmt.Errorf("%w: %s addresses [%d, %d] outside its buffer of %d", ErrArgument, name, lo, hi, len(x.Data))
	}
	return nil
}

// addChecked returns a+b, and false when the sum overflows int.
func addChecked(a, b int) (int, bool) {
	if (b > 0 && a > math.MaxInt-b) || (b < 0 && a < math.MinInt-b) {
		return 0, false
	}
	return a + b, true
}
