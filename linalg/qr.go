package linalg

import (
	"context"
	"errors"
	"fmt"

	"github.com/goferro/goferro/cpu/gemm"
	"github.com/goferro/goferro/tensor"
)

// Mode selects the shapes of the factors of an m×n matrix, k = min(m, n).
type Mode int

const (
	// Reduced (numpy's "reduced", LAPACK's economy size) keeps k columns of
	// the orthonormal factor: QR gives Q m×k and R k×n, LQ gives L m×k and
	// Q k×n, SVD gives U m×k and Vᴴ k×n.
	Reduced Mode = iota
	// Complete gives square unitary factors: QR gives Q m×m and R m×n, LQ
	// gives L m×n and Q n×n, SVD gives U m×m and Vᴴ n×n.
	Complete
)

// String returns "reduced" or "complete".
func (m Mode) String() string {
	switch m {
	case Reduced:
		return "reduced"
	case Complete:
		return "complete"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

func (m Mode) check(op string) error {
	if m != Reduced && m != Complete {
		return newError(op, ErrArgument, "unknown mode %v", m)
	}
	return nil
}

// QR factorises each matrix A of t (shape (..., m, n), float32, float64,
// complex64 or complex128) as A = Q·R with Q having orthonormal columns
// (Qᴴ·Q = I) and R upper triangular, by blocked Householder reflections
// whose trailing updates run on goferro's GEMM. The diagonal of R may be
// negative or complex, as LAPACK's (and numpy's) is. Leading axes are a
// batch: the factors have shapes (..., m, k) and (..., k, n) for Reduced,
// (..., m, m) and (..., m, n) for Complete, k = min(m, n).
func QR(t *tensor.Tensor, mode Mode) (q, r *tensor.Tensor, err error) {
	return factorQR(context.Background(), "QR", t, mode, false)
}

// QRContext is QR under a context: it checks ctx between blocks of
// reflectors and between the matrices of a batch, and returns an *Error of
// kind ErrCanceled wrapping ctx.Err() once ctx is done.
func QRContext(ctx context.Context, t *tensor.Tensor, mode Mode) (q, r *tensor.Tensor, err error) {
	return factorQR(ctx, "QRContext", t, mode, false)
}

// LQ factorises each matrix A of t as A = L·Q with L lower triangular and
// Q having orthonormal rows (Q·Qᴴ = I); it is QR of Aᴴ, transposed back.
// The factors have shapes (..., m, k) and (..., k, n) for Reduced,
// (..., m, n) and (..., n, n) for Complete.
func LQ(t *tensor.Tensor, mode Mode) (l, q *tensor.Tensor, err error) {
	q, l, err = factorQR(context.Background(), "LQ", t, mode, true)
	return l, q, err
}

// LQContext is LQ under a context, as QRContext is QR: it returns an
// *Error of kind ErrCanceled wrapping ctx.Err() once ctx is done.
func LQContext(ctx context.Context, t *tensor.Tensor, mode Mode) (l, q *tensor.Tensor, err error) {
	q, l, err = factorQR(ctx, "LQContext", t, mode, true)
	return l, q, err
}

// factorQR returns Q and R of QR, or (when lq is set) Q and L of LQ.
func factorQR(ctx context.Context, op string, t *tensor.Tensor, mode Mode, lq bool) (q, r *tensor.Tensor, err error) {
	if err := mode.check(op); err != nil {
		return nil, nil, err
	}
	batch, m, n, err := matrices(op, t)
	if err != nil {
		return nil, nil, err
	}
	switch t.DType() {
	case tensor.Float32:
		return qrStack[float32](ctx, op, t, batch, m, n, mode, lq)
	case tensor.Float64:
		return qrStack[float64](ctx, op, t, batch, m, n, mode, lq)
	case tensor.Complex64:
		return qrStack[complex64](ctx, op, t, batch, m, n, mode, lq)
	default:
		return qrStack[complex128](ctx, op, t, batch, m, n, mode, lq)
	}
}

func qrStack[T scalar](ctx context.Context, op string, t *tensor.Tensor, batch []int, m, n int, mode Mode, lq bool) (q, r *tensor.Tensor, err error) {
	vals, err := values[T](op, t)
	if err != nil {
		return nil, nil, err
	}
	if lq {
		m, n = n, m
	}
	k := min(m, n)
	qc, rr := k, k
	if mode == Complete {
		qc, rr = m, m
	}
	nb := count(batch)
	if err := checkMemory(op, qrNeed[T](nb, m, n, qc, rr)); err != nil {
		return nil, nil, err
	}
	qv, rv := make([]T, nb*m*qc), make([]T, nb*rr*n)
	rowMajor := qrRowMajor[T](m, n, lq)
	b, err := forBatch(ctx, nb, m*n*k, func(b int) error {
		q := qv[b*m*qc : (b+1)*m*qc]
		if rowMajor {
			err := qrLoaded(ctx, loadRows(vals, b, m, n), qc, rr, q, rv, b, false)
			if !errors.Is(err, errLeafDeclined) {
				return err
			}
		}
		if lq {
			return qrLoaded(ctx, load(vals, b, n, m, true), qc, rr, q, rv, b, true)
		}
		return qrLoaded(ctx, loadPadded(vals, b, m, n), qc, rr, q, rv, b, false)
	})
	if err != nil {
		return nil, nil, matrixError(op, b, "", err) // only a done ctx
	}
	if lq {
		return newTensor(qv, shapeOf(batch, qc, m)), newTensor(rv, shapeOf(batch, n, rr)), nil
	}
	return newTensor(qv, shapeOf(batch, m, qc)), newTensor(rv, shapeOf(batch, rr, n)), nil
}

// qrLoaded factors a, a loaded copy of matrix b of the stack (which it
// recycles), writing Q into q and R into the stack rv, or returns
// qrFactor's error.
func qrLoaded[T scalar](ctx context.Context, a mat[T], qc, rr int, q, rv []T, b int, lq bool) error {
	defer recycle(a)
	rm, err := qrFactor(ctx, a, qc, rr, q, lq)
	if err != nil {
		return err
	}
	storeUpper(rv, b, rm, lq)
	return nil
}

// qrRowMajor reports whether QR factors an m×n matrix of T (not for LQ)
// on a row-major copy: float64 whose geqrf factors in leaves alone
// (geqrfBlockFor), each at least leafMinWidth columns wide. The copy's
// rows are the input's and R's rows are its own, where a column-major
// copy takes a transpose each way, and its leaves factor their rows in
// place (leafFactor) instead of in a transposed copy. The products read
// the same operands with their strides swapped. One thread, in a loop,
// alternating (AMD EPYC, Zen 5), QR took 2.2% less at n = 256, 4% at 128,
// 1.5–2% at 192 and 288, 6% at 300×200, but 0.6% more at 200×300. A leaf
// that declines (a column too small or too large for its sums) leaves the
// copy half factored: geqrf reports errLeafDeclined, and QR starts again
// on a column-major copy, whose leaves fall back to geqr2.
func qrRowMajor[T scalar](m, n int, lq bool) bool {
	k := min(m, n)
	if _, ok := any(*new(T)).(float64); !ok || lq || leafAsm == nil {
		return false
	}
	last := k % qrLeaf
	return m > qrUnblockedRows && !unblockedQR[T](m, k) && geqrfBlockFor[T](m, k) == qrLeaf &&
		(last == 0 || last >= leafMinWidth)
}

// qrTeamWork is the size m·n·min(m, n) (times 4 for complex numbers, as
// mul counts) from which qrFactor shares its work out over a team of
// goroutines on several threads. Below it, on one goroutine, the team's
// helper often starts late or runs slowly on a machine whose other cores
// slept (the peers of bench/linalg-report.md run QR once between numpy's
// and gonum's): on the 2-vCPU AMD EPYC, float64, two threads, medians of
// 11 such calls, a team took 3.6 ms against 2.4 on one thread at
// n = 384, but 4.8 against 6.0 ms without it at 512 and 11.3 against
// 13.7 at 768. (Called in a loop, a team took 0.65–0.70 ms against
// 0.81–0.86 on one thread even at n = 256.) Tests lower it.
var qrTeamWork = 1 << 27

// qrFactor factorises the m×n matrix a (overwritten), writes the first qc
// columns of Q into q (m·qc elements, zeros) as the row-major m×qc matrix Q
// or, when lq is set, as the row-major qc×m matrix Qᴴ (LQ factorises the
// adjoint of its input), and returns the first rr rows of a, R on and
// above their diagonal (the reflectors below it: see storeUpper), or
// ctx's error. Either layout is a column-major matrix that Q's
// blocks are applied to directly: Qᵀ (orgqrTransposedInto) or the
// conjugate of Q (orgqrInto, then conjugated), so Q costs no copy.
func qrFactor[T scalar](ctx context.Context, a mat[T], qc, rr int, q []T, lq bool) (r mat[T], err error) {
	m, n := a.rows, a.cols
	k := min(m, n)
	taus := make([]T, k)
	work := m * n * k
	if isComplex[T]() {
		work *= 4
	}
	var tm *team
	switch threads := gemm.Threads(); {
	case threads > 1 && work >= qrTeamWork:
		tm = newTeam(threads)
	case threads > 1:
		// The caller alone, its products too: GEMM's own workers start
		// as late as a team's helpers.
		tm = newTeam(1)
	}
	defer tm.stop()
	ts, err := geqrf(ctx, tm, a, taus, unblockedQR[T](m, k))
	defer recycleAll(ts)
	if err != nil {
		return r, err
	}
	v := a.sub(0, 0, m, k)
	if lq {
		out := mat[T]{rows: m, cols: qc, ld: max(m, 1), data: q}
		if err := orgqrInto(ctx, v, taus, ts, out); err != nil {
			return r, err
		}
		conjSlice(q)
	} else {
		out := mat[T]{rows: qc, cols: m, ld: max(qc, 1), data: q}
		if err := orgqrTransposedInto(ctx, tm, v, taus, ts, out); err != nil {
			return r, err
		}
	}
	return a.sub(0, 0, rr, n), nil
}
