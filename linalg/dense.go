package linalg

import (
	"math"
	"math/bits"
	"math/cmplx"
	"unsafe"

	"github.com/goferro/goferro/cpu/gemm"
	"github.com/goferro/goferro/internal/level1"
	"github.com/goferro/goferro/internal/reuse"
)

// scalar is the set of element types the factorisations support.
type scalar = gemm.Scalar

// mat is a column-major matrix view: element (i, j) is data[i+j*ld]. The
// algorithms are written column-major, as LAPACK's are, so that a
// Householder vector and the columns it updates are contiguous. A
// row-major view (rowMajor set: element (i, j) is data[i*ld+j]) serves
// QR's float64 leaves path (see qrRowMajor), whose functions reach its
// elements through at, set, sub, strides, g and gt only; col needs
// column-major.
type mat[T scalar] struct {
	rows, cols, ld int
	data           []T
	rowMajor       bool
}

// newMat returns a zeroed r×c matrix.
func newMat[T scalar](r, c int) mat[T] {
	return mat[T]{rows: r, cols: c, ld: max(r, 1), data: make([]T, r*c)}
}

// The working copies of a factorisation (the loaded input; Q, U, V and
// the eigenvectors before they are stored) die with the call. They come
// from scratchPools, by element type, so that a call allocates little
// beyond its results: a QR of n = 256 allocated 2.7 MB, which on a small
// heap set off a garbage collection during the call, whose mark workers
// took the second thread (bench/linalg-report.md, branch svdsmall).
var (
	scratch32   scratchPools[float32]
	scratch64   scratchPools[float64]
	scratchC64  scratchPools[complex64]
	scratchC128 scratchPools[complex128]
)

// keptScratch is the largest buffer, in bytes, that the scratch pools keep
// through garbage collections (reuse.Pool.Put): an n = 256 complex128
// matrix; larger ones may be dropped (reuse.Pool.PutLoose), so that a
// program does not hold a large factorisation's memory after it.
const keptScratch = 1 << 20

// scratchPools keeps one element type's scratch buffers. Those of at most
// keptScratch bytes go by size class, so that a request finds a buffer
// that fits: with one pool for all sizes, a call that asks for matrices
// of many sizes (an SVD of 32×16: 40 of them) mostly drew one too small,
// dropped it and allocated afresh, 24 KB a call. Class c holds buffers of
// at least 2ᶜ elements (those scratch makes, exactly 2ᶜ; one recycled
// from newMat may hold up to twice that, the rest unused), each as a
// pointer to its first element, so that handing one back allocates
// nothing. One buffer a class outlives garbage collection: under
// 3·keptScratch bytes for each element type.
type scratchPools[T scalar] struct {
	class [bits.UintSize]reuse.Pool[T]
	large reuse.Pool[[]T]
}

func scratchPool[T scalar]() *scratchPools[T] {
	var p any
	switch any(*new(T)).(type) {
	case float32:
		p = &scratch32
	case float64:
		p = &scratch64
	case complex64:
		p = &scratchC64
	default:
		p = &scratchC128
	}
	return p.(*scratchPools[T])
}

// kept reports whether a buffer of n elements is small enough for the
// pools' size classes.
func kept[T scalar](n int) bool { return n*int(unsafe.Sizeof(*new(T))) <= keptScratch }

// scratchLen returns the capacity of a buffer that scratch hands out for
// n elements (n ≥ 1): the least power of two ≥ n for the size classes, n
// itself above them. Memory estimates count matrices that outlive a
// batch element at this size.
func scratchLen[T scalar](n int) int {
	if !kept[T](n) {
		return n
	}
	return 1 << bits.Len(uint(n-1))
}

// scratch returns an r×c matrix whose elements are unspecified, on a
// buffer from the pool of its size class (a new one of scratchLen
// elements when that is empty), or, above keptScratch, on a pooled buffer
// large enough or a new one of r·c elements.
func scratch[T scalar](r, c int) mat[T] {
	n := r * c
	out := mat[T]{rows: r, cols: c, ld: max(r, 1)}
	switch p := scratchPool[T](); {
	case n == 0:
	case kept[T](n):
		size := scratchLen[T](n)
		if first := p.class[bits.Len(uint(size))-1].Get(); first != nil {
			out.data = unsafe.Slice(first, size)[:n] // recycle reads the class from cap
		} else {
			out.data = make([]T, n, size)
		}
		return out
	default:
		if b := p.large.Get(); b != nil && cap(*b) >= n {
			out.data = (*b)[:n]
			return out
		}
	}
	return newMat[T](r, c)
}

// recycle hands the buffer of a (from scratch or newMat), which nothing
// uses any more, to the pool. A buffer must be recycled at most once
// before scratch hands it out again: twice, two callers would share it.
func recycle[T scalar](a mat[T]) {
	n := cap(a.data)
	switch p := scratchPool[T](); {
	case n == 0:
	case kept[T](n):
		p.class[bits.Len(uint(n))-1].Put(unsafe.SliceData(a.data)) // the greatest c with 2ᶜ ≤ n
	default:
		b := a.data[:n]
		p.large.PutLoose(&b)
	}
}

// zeroScratch returns an r×c matrix of zeros, from scratch.
func zeroScratch[T scalar](r, c int) mat[T] {
	a := scratch[T](r, c)
	clear(a.data)
	return a
}

// eye returns the r×c matrix diag(0, I), from scratch: ones on its
// diagonal from element (from, from) on, zeros elsewhere, the top-left
// from×from corner for the caller to fill (from = 0: the identity).
func eye[T scalar](r, c, from int) mat[T] {
	a := zeroScratch[T](r, c)
	for i := from; i < min(r, c); i++ {
		a.set(i, i, 1)
	}
	return a
}

// strides returns the distances between a's rows and between its
// columns in data: 1 and ld column-major, ld and 1 row-major.
func (a mat[T]) strides() (rs, cs int) {
	if a.rowMajor {
		return a.ld, 1
	}
	return 1, a.ld
}

// index returns the position of element (i, j) in data: column-major as
// before the row-major view, without strides' multiplication by one (at
// and set are in the factorisations' scalar loops).
func (a mat[T]) index(i, j int) int {
	if a.rowMajor {
		return i*a.ld + j
	}
	return i + j*a.ld
}

func (a mat[T]) at(i, j int) T     { return a.data[a.index(i, j)] }
func (a mat[T]) set(i, j int, v T) { a.data[a.index(i, j)] = v }

// col returns column j of the column-major a as a slice.
func (a mat[T]) col(j int) []T {
	if a.rowMajor {
		panic("linalg: internal error: col of a row-major view")
	}
	if a.rows == 0 {
		return nil
	}
	return a.data[j*a.ld : j*a.ld+a.rows]
}

// sub returns the r×c block whose top-left element is (i, j).
func (a mat[T]) sub(i, j, r, c int) mat[T] {
	if r == 0 || c == 0 {
		return mat[T]{rows: r, cols: c, ld: a.ld, rowMajor: a.rowMajor}
	}
	return mat[T]{rows: r, cols: c, ld: a.ld, data: a.data[a.index(i, j):], rowMajor: a.rowMajor}
}

// clone returns a compact copy of a.
func (a mat[T]) clone() mat[T] {
	b, _ := a.cloneOn(make([]T, a.rows*a.cols))
	return b
}

// cloneOn returns a compact copy of a on the front of ws, and the rest of
// ws.
func (a mat[T]) cloneOn(ws []T) (mat[T], []T) {
	b, rest := carve(ws, a.rows, a.cols)
	for j := range a.cols {
		copy(b.col(j), a.col(j))
	}
	return b, rest
}

// conjugates returns the conjugates of x and y: copies on the front of ws
// (at least as long as both) when T is complex, x and y themselves when
// T is real.
func conjugates[T scalar](x, y mat[T], ws []T) (xc, yc mat[T]) {
	if !isComplex[T]() {
		return x, y
	}
	xc, ws = x.cloneOn(ws)
	yc, _ = y.cloneOn(ws)
	for c := range xc.cols {
		conjSlice(xc.col(c))
	}
	for c := range yc.cols {
		conjSlice(yc.col(c))
	}
	return xc, yc
}

// carve returns the first r·c elements of ws as a compact r×c matrix and
// the rest of ws.
func carve[T scalar](ws []T, r, c int) (mat[T], []T) {
	return mat[T]{rows: r, cols: c, ld: max(r, 1), data: ws[:r*c]}, ws[r*c:]
}

// g returns a as a GEMM operand; gt returns its transpose.
func (a mat[T]) g() gemm.Matrix[T] {
	rs, cs := a.strides()
	return gemm.Matrix[T]{Data: a.data, RowStride: rs, ColStride: cs}
}
func (a mat[T]) gt() gemm.Matrix[T] {
	rs, cs := a.strides()
	return gemm.Matrix[T]{Data: a.data, RowStride: cs, ColStride: rs}
}

// mul computes c = alpha·a·b + beta·c for m×k a and k×n b given as GEMM
// operands (so either may be a transposed view). The operands are built by
// this package and always in bounds, so an error is a bug here. Products
// below serialMulWork run on the calling goroutine.
func mul[T scalar](m, n, k int, alpha T, a, b gemm.Matrix[T], beta T, c gemm.Matrix[T]) {
	mulOn(0, m, n, k, alpha, a, b, beta, c)
}

// mulOn is mul on the given number of goroutines, for callers that share
// the threads out among goroutines of their own; 0 leaves the choice to
// mul.
func mulOn[T scalar](threads, m, n, k int, alpha T, a, b gemm.Matrix[T], beta T, c gemm.Matrix[T]) {
	work := m * n * k
	if isComplex[T]() {
		work *= 4
	}
	if threads == 0 && work < serialMulWork {
		threads = 1
	}
	if err := gemm.GemmThreads(threads, nil, m, n, k, alpha, a, b, beta, c); err != nil {
		panic("linalg: internal error: " + err.Error())
	}
}

// serialMulWork is the number of real multiply-adds below which mul keeps
// a product on one goroutine. The factorisations of n = 256 multiply
// blocks of 16–32 reflectors into the trailing matrix: products of 1–6·10⁶
// multiply-adds, some tens of microseconds each, between stretches of
// level-2 work. Split over two threads they cost more than they saved:
// GEMM's workers poll for their next share for a while after each product,
// taking the second core from the caller's level-2 loops and from the
// garbage collector (see bench/linalg-report.md, branch svdsmall). The
// products of n = 1024 (3·10⁷ and more) still split.
const serialMulWork = 1 << 23

// conj returns the complex conjugate of x (x itself when T is real).
func conj[T scalar](x T) T {
	switch p := any(&x).(type) {
	case *complex128:
		*p = cmplx.Conj(*p)
	case *complex64:
		*p = complex(real(*p), -imag(*p))
	}
	return x
}

// re and im return the real and imaginary parts of x as float64.
func re[T scalar](x T) float64 {
	switch p := any(&x).(type) {
	case *float64:
		return *p
	case *float32:
		return float64(*p)
	case *complex128:
		return real(*p)
	case *complex64:
		return float64(real(*p))
	}
	return 0
}

func im[T scalar](x T) float64 {
	switch p := any(&x).(type) {
	case *complex128:
		return imag(*p)
	case *complex64:
		return float64(imag(*p))
	}
	return 0
}

// fromReal returns f as a T.
func fromReal[T scalar](f float64) T {
	var x T
	switch p := any(&x).(type) {
	case *float64:
		*p = f
	case *float32:
		*p = float32(f)
	case *complex128:
		*p = complex(f, 0)
	case *complex64:
		*p = complex(float32(f), 0)
	}
	return x
}

// isComplex reports whether T is a complex type.
func isComplex[T scalar]() bool {
	var x T
	switch any(x).(type) {
	case complex64, complex128:
		return true
	}
	return false
}

// conjSlice conjugates x in place.
func conjSlice[T scalar](x []T) {
	if isComplex[T]() {
		level1.Conj(x, x)
	}
}

// adjointDots sets out[c] = A(:, c)ᴴ·x for each column c of a, given xc,
// the conjugate of x (x itself for real T): every column in one call of
// level1.DotLines, conj(Σ A·conj(x)), instead of a call and a reduction a
// column.
func adjointDots[T scalar](a mat[T], xc, out []T) {
	out = out[:a.cols]
	if a.rows == 0 {
		clear(out)
		return
	}
	level1.DotLines(a.data, 0, a.ld, a.cols, xc[:a.rows], out, 0, 1, false)
	conjSlice(out)
}

// matVec sets y = a·x. The columns of a go in blocks of matVecCols, each
// block's product to its own partial sum in work (at least
// matVecWork(a.rows, a.cols) long), the blocks split among the threads;
// the partial sums are then added in block order. Every column is one
// axpy of full length, which is several times faster than short ones, and
// the result does not depend on the number of threads.
func matVec[T scalar](a mat[T], x, y, work []T) {
	m, n := a.rows, a.cols
	blocks := (n + matVecCols - 1) / matVecCols
	parallelFor(blocks, matVecCols*m, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			p := work[b*m : (b+1)*m]
			clear(p)
			for c := b * matVecCols; c < min((b+1)*matVecCols, n); c++ {
				level1.Axpy(x[c], a.col(c), p)
			}
		}
	})
	clear(y[:m])
	for b := range blocks {
		level1.Axpy(1, work[b*m:(b+1)*m], y[:m])
	}
}

// matVecCols is the number of columns matVec sums into one partial sum.
const matVecCols = 64

// matVecWork is the length of the work matVec needs for an m×n matrix.
func matVecWork(m, n int) int { return (n + matVecCols - 1) / matVecCols * m }

// nrm2 returns the Euclidean norm of x, without overflow for large
// elements.
func nrm2[T scalar](x []T) float64 {
	// The plain sum of squares on the dot kernels is as accurate (n·ε)
	// when it neither overflows nor is so small that the squares of the
	// entries that matter underflow: only then is the scaled loop, two
	// divisions an entry, needed (it took 5% of QR at n = 256).
	if s, ok := sumSquares(x); ok && plainSquaresExact(s) {
		return math.Sqrt(s)
	}
	scale, ssq := 0.0, 1.0
	add := func(v float64) {
		if v == 0 {
			return
		}
		a := math.Abs(v)
		if scale < a {
			ssq = 1 + ssq*(scale/a)*(scale/a)
			scale = a
		} else {
			ssq += (a / scale) * (a / scale)
		}
	}
	switch v := any(x).(type) {
	case []float64:
		for _, z := range v {
			add(z)
		}
	case []float32:
		for _, z := range v {
			add(float64(z))
		}
	case []complex128:
		for _, z := range v {
			add(real(z))
			add(imag(z))
		}
	case []complex64:
		for _, z := range v {
			add(float64(real(z)))
			add(float64(imag(z)))
		}
	}
	return scale * math.Sqrt(ssq)
}

// plainSquaresExact reports whether a plain sum of squares s is as
// accurate as a scaled one: it did not overflow, and it is so large that
// the squares of the entries that matter did not underflow (those lost
// are below 2^-1022 each, under 2^-400 of s for any length up to 2^22).
func plainSquaresExact(s float64) bool { return s >= 0x1p-600 && s <= math.MaxFloat64 }

// sumSquares returns Σ|x[i]|² on the float64 dot kernel when T is float64
// or complex128, and false for the single precision types, whose kernels
// sum in single precision.
func sumSquares[T scalar](x []T) (float64, bool) {
	switch v := any(x).(type) {
	case []float64:
		return level1.Dotu(v, v), true
	case []complex128:
		if len(v) == 0 {
			return 0, true
		}
		r := unsafe.Slice((*float64)(unsafe.Pointer(&v[0])), 2*len(v))
		return level1.Dotu(r, r), true
	}
	return 0, false
}

// rescale multiplies a by a power of two that brings its largest entry
// near 1 when that entry is so large or small (beyond 2^±500) that the
// squares the eigenvalue and singular value iterations form would
// overflow or underflow, and returns the factor (1 when a is left alone,
// including when it is zero or not finite).
func rescale[T scalar](a mat[T]) float64 {
	amax := 0.0
	for j := range a.cols {
		amax = max(amax, maxAbs(a.col(j)))
	}
	if amax == 0 || math.IsNaN(amax) || math.IsInf(amax, 0) || amax > 0x1p-500 && amax < 0x1p500 {
		return 1
	}
	_, exp := math.Frexp(amax)
	sc := math.Ldexp(1, -exp)
	f := fromReal[T](sc)
	for j := range a.cols {
		level1.Scal(f, a.col(j))
	}
	return sc
}

// largest returns the index of the first element of largest magnitude of
// a real x (0 for an empty or complex one). The type is switched on once
// for the slice, not for each element: fixColumnSigns's scan of U was a
// quarter of a float64 SVD of 1024×8 (87 → 76 µs, one thread).
func largest[T scalar](x []T) int {
	switch v := any(x).(type) {
	case []float64:
		return largestReal(v)
	case []float32:
		return largestReal(v)
	}
	return 0
}

func largestReal[F float32 | float64](x []F) int {
	big, b := 0, 0.0
	for i, z := range x {
		if a := math.Abs(float64(z)); a > b { // math.Abs: no branch on the sign
			big, b = i, a
		}
	}
	return big
}

// maxAbs returns the largest absolute value of the real and imaginary
// parts of x's elements, or NaN if one is NaN.
func maxAbs[T scalar](x []T) float64 {
	m := 0.0
	add := func(a float64) bool {
		if a > m {
			m = a
		}
		return a != a // NaN
	}
	switch v := any(x).(type) {
	case []float64:
		for _, z := range v {
			if add(math.Abs(z)) {
				return z
			}
		}
	case []float32:
		for _, z := range v {
			if add(math.Abs(float64(z))) {
				return float64(z)
			}
		}
	case []complex128:
		for _, z := range v {
			if add(math.Abs(real(z))) || add(math.Abs(imag(z))) {
				return math.NaN()
			}
		}
	case []complex64:
		for _, z := range v {
			if add(math.Abs(float64(real(z)))) || add(math.Abs(float64(imag(z)))) {
				return math.NaN()
			}
		}
	}
	return m
}

// hypot returns √(x²+y²): directly when the squares neither overflow nor
// underflow (the common case in the QR sweeps, where math.Hypot's scaling
// is a measurable share of the time), else by math.Hypot.
func hypot(x, y float64) float64 {
	s := x*x + y*y
	if s > 0x1p-1000 && s < 0x1p1000 {
		return math.Sqrt(s)
	}
	return math.Hypot(x, y)
}
