package linalg

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goferro/goferro/tensor"
)

// countdownCtx is a context that turns canceled at its Err call number
// left+1 and counts the calls. Its Done channel never closes: the
// factorisations poll Err.
type countdownCtx struct {
	context.Context
	left, calls atomic.Int64
}

func newCountdown(left int64) *countdownCtx {
	c := &countdownCtx{Context: context.Background()}
	c.left.Store(left)
	return c
}

func (c *countdownCtx) Err() error {
	c.calls.Add(1)
	if c.left.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// contextOps are the context-taking factorisations, each returning its
// outputs' values.
var contextOps = []struct {
	name string
	herm bool
	m, n int
	run  func(context.Context, *tensor.Tensor) ([]*tensor.Tensor, error)
	ref  func(*tensor.Tensor) ([]*tensor.Tensor, error)
}{
	{"QR", false, 150, 100,
		func(ctx context.Context, x *tensor.Tensor) ([]*tensor.Tensor, error) {
			q, r, err := QRContext(ctx, x, Reduced)
			return []*tensor.Tensor{q, r}, err
		},
		func(x *tensor.Tensor) ([]*tensor.Tensor, error) {
			q, r, err := QR(x, Reduced)
			return []*tensor.Tensor{q, r}, err
		}},
	// square: bidiagonal reduction of the whole matrix
	{"SVD", false, 150, 150,
		func(ctx context.Context, x *tensor.Tensor) ([]*tensor.Tensor, error) {
			r, err := SVDContext(ctx, x, SVDOptions{})
			return svdOutputs(r), err
		},
		func(x *tensor.Tensor) ([]*tensor.Tensor, error) {
			r, err := SVD(x, SVDOptions{})
			return svdOutputs(r), err
		}},
	// tall: QR first, then the bidiagonal reduction of R
	{"SVD/tall", false, 300, 100,
		func(ctx context.Context, x *tensor.Tensor) ([]*tensor.Tensor, error) {
			r, err := SVDContext(ctx, x, SVDOptions{})
			return svdOutputs(r), err
		},
		func(x *tensor.Tensor) ([]*tensor.Tensor, error) {
			r, err := SVD(x, SVDOptions{})
			return svdOutputs(r), err
		}},
	{"Eigh", true, 150, 150,
		func(ctx context.Context, x *tensor.Tensor) ([]*tensor.Tensor, error) {
			w, v, err := EighContext(ctx, x)
			return []*tensor.Tensor{w, v}, err
		},
		func(x *tensor.Tensor) ([]*tensor.Tensor, error) {
			w, v, err := Eigh(x)
			return []*tensor.Tensor{w, v}, err
		}},
	// wide: QR of Aᴴ
	{"LQ", false, 100, 150,
		func(ctx context.Context, x *tensor.Tensor) ([]*tensor.Tensor, error) {
			l, q, err := LQContext(ctx, x, Reduced)
			return []*tensor.Tensor{l, q}, err
		},
		func(x *tensor.Tensor) ([]*tensor.Tensor, error) {
			l, q, err := LQ(x, Reduced)
			return []*tensor.Tensor{l, q}, err
		}},
	{"SVDVals", false, 150, 150,
		func(ctx context.Context, x *tensor.Tensor) ([]*tensor.Tensor, error) {
			s, err := SVDValsContext(ctx, x)
			return []*tensor.Tensor{s}, err
		},
		func(x *tensor.Tensor) ([]*tensor.Tensor, error) {
			s, err := SVDVals(x)
			return []*tensor.Tensor{s}, err
		}},
	{"EigvalsH", true, 200, 200,
		func(ctx context.Context, x *tensor.Tensor) ([]*tensor.Tensor, error) {
			w, err := EigvalsHContext(ctx, x)
			return []*tensor.Tensor{w}, err
		},
		func(x *tensor.Tensor) ([]*tensor.Tensor, error) {
			w, err := EigvalsH(x)
			return []*tensor.Tensor{w}, err
		}},
	{"RandomizedSVD", false, 150, 100,
		func(ctx context.Context, x *tensor.Tensor) ([]*tensor.Tensor, error) {
			r, err := RandomizedSVDContext(ctx, x, 20, RandomizedOptions{Seed: 3})
			return svdOutputs(r), err
		},
		func(x *tensor.Tensor) ([]*tensor.Tensor, error) {
			r, err := RandomizedSVD(x, 20, RandomizedOptions{Seed: 3})
			return svdOutputs(r), err
		}},
	// The splits factorise the batch of two as one matrix of twice the
	// rows.
	{"SplitSVD", false, 150, 100,
		func(ctx context.Context, x *tensor.Tensor) ([]*tensor.Tensor, error) {
			s, err := SplitSVDContext(ctx, x, []int{0, 1}, SVDOptions{MaxRank: 60})
			return splitOutputs(s), err
		},
		func(x *tensor.Tensor) ([]*tensor.Tensor, error) {
			s, err := SplitSVD(x, []int{0, 1}, SVDOptions{MaxRank: 60})
			return splitOutputs(s), err
		}},
	{"SplitQR", false, 150, 160,
		func(ctx context.Context, x *tensor.Tensor) ([]*tensor.Tensor, error) {
			s, err := SplitQRContext(ctx, x, []int{0, 1})
			return splitOutputs(s), err
		},
		func(x *tensor.Tensor) ([]*tensor.Tensor, error) {
			s, err := SplitQR(x, []int{0, 1})
			return splitOutputs(s), err
		}},
	{"SplitLQ", false, 100, 150,
		func(ctx context.Context, x *tensor.Tensor) ([]*tensor.Tensor, error) {
			s, err := SplitLQContext(ctx, x, []int{0, 1})
			return splitOutputs(s), err
		},
		func(x *tensor.Tensor) ([]*tensor.Tensor, error) {
			s, err := SplitLQ(x, []int{0, 1})
			return splitOutputs(s), err
		}},
}

func svdOutputs(r *SVDResult) []*tensor.Tensor {
	if r == nil {
		return nil
	}
	return []*tensor.Tensor{r.U, r.S, r.Vh, r.Discarded}
}

// splitOutputs returns the factors of s and, for an SVD split, S and
// Discarded (as a scalar).
func splitOutputs(s *Split) []*tensor.Tensor {
	switch {
	case s == nil:
		return nil
	case s.S == nil:
		return []*tensor.Tensor{s.Left, s.Right}
	}
	return []*tensor.Tensor{s.Left, s.S, s.Right, tensor.Scalar(s.Discarded)}
}

// TestContextCancel cancels each context-taking factorisation at checks
// spread over the whole of it (the reductions' blocks, the QR iteration's
// sweeps, the divide and conquer's merges, the back-transformations, the
// randomized SVD's orthonormalisations): each must return ErrCanceled
// wrapping context.Canceled at once, without checking ctx again. Not
// canceled, they must return what the functions without a context do, to
// the bit.
func TestContextCancel(t *testing.T) {
	// Blocks of 16 reflectors give the QR-based ops enough checks of ctx
	// at these sizes to cancel at several points.
	defer func(b int) { qrBlock = b }(qrBlock)
	qrBlock = 16
	for _, op := range contextOps {
		for _, dt := range []tensor.DType{tensor.Float64, tensor.Complex128} {
			t.Run(fmt.Sprintf("%s/%v", op.name, dt), func(t *testing.T) {
				var ms []cm // a batch of two
				for seed := range uint64(2) {
					if op.herm {
						ms = append(ms, hermitianMatrix("random", op.n, dt, 41+seed))
					} else {
						ms = append(ms, testMatrix("random", op.m, op.n, dt, 41+seed))
					}
				}
				x := toTensor(t, ms, dt, 2)
				want, err := op.ref(x)
				if err != nil {
					t.Fatal(err)
				}
				all := newCountdown(1 << 62)
				got, err := op.run(all, x)
				if err != nil {
					t.Fatal(err)
				}
				for i := range want {
					if !slices.Equal(got[i].Complex128Values(), want[i].Complex128Values()) {
						t.Errorf("output %d differs from the one without a context", i)
					}
				}
				checks := all.calls.Load()
				if checks < 10 {
					t.Fatalf("ctx was checked %d times, want at least 10", checks)
				}
				for _, k := range []int64{0, 1, checks / 4, checks / 2, 3 * checks / 4, checks - 1} {
					ctx := newCountdown(k)
					_, err := op.run(ctx, x)
					var e *Error
					if !errors.Is(err, ErrCanceled) || !errors.Is(err, context.Canceled) || !errors.As(err, &e) {
						t.Fatalf("canceled at check %d of %d: error %v, want an *Error of kind ErrCanceled wrapping context.Canceled", k, checks, err)
					}
					if c := ctx.calls.Load(); c != k+1 {
						t.Errorf("canceled at check %d of %d: ctx checked %d times, want %d", k, checks, c, k+1)
					}
				}
			})
		}
	}
}

// gapCtx records when Err is called.
type gapCtx struct {
	context.Context
	times []time.Time
}

func (c *gapCtx) Err() error {
	c.times = append(c.times, time.Now())
	return nil
}

// TestContextCancelMidway checks the SVD, eigenvalue and randomized SVD
// functions at n = 1024: uncanceled, no stretch between two checks of ctx
// (or before the first or after the last) takes more than a quarter of
// the whole (Eigh's longest is the last merge of the divide and conquer,
// one GEMM of n³ multiply-adds, a fifth of it; RandomizedSVD's, at rank
// 200, is loading the matrix and drawing the test matrix, or one of its
// six GEMMs, about a tenth); and
// an SVD canceled after 50 ms, a small part of it, returns soon after.
func TestContextCancelMidway(t *testing.T) {
	if testing.Short() {
		t.Skip("1024×1024 factorisations")
	}
	x := toTensor(t, []cm{testMatrix("random", 1024, 1024, tensor.Float64, 42)}, tensor.Float64)
	h := toTensor(t, []cm{hermitianMatrix("random", 1024, tensor.Float64, 42)}, tensor.Float64)
	var total time.Duration
	for _, op := range []struct {
		name string
		run  func(context.Context) error
	}{
		{"SVD", func(ctx context.Context) error { _, err := SVDContext(ctx, x, SVDOptions{}); return err }},
		{"SVDVals", func(ctx context.Context) error { _, err := SVDValsContext(ctx, x); return err }},
		{"EigvalsH", func(ctx context.Context) error { _, err := EigvalsHContext(ctx, h); return err }},
		{"RandomizedSVD", func(ctx context.Context) error {
			_, err := RandomizedSVDContext(ctx, x, 200, RandomizedOptions{})
			return err
		}},
		{"Eigh", func(ctx context.Context) error { _, _, err := EighContext(ctx, h); return err }},
	} {
		rec := &gapCtx{Context: context.Background()}
		start := time.Now()
		if err := op.run(rec); err != nil {
			t.Fatal(err)
		}
		total = time.Since(start)
		marks := append(append([]time.Time{start}, rec.times...), start.Add(total))
		var gap time.Duration
		for i := 1; i < len(marks); i++ {
			gap = max(gap, marks[i].Sub(marks[i-1]))
		}
		t.Logf("%s: %d checks in %v, the longest stretch between them %v", op.name, len(rec.times), total, gap)
		if gap > total/4 {
			t.Errorf("%s: %v between two checks of ctx, more than a quarter of the whole %v", op.name, gap, total)
		}
	}
	// total is now Eigh's, shorter than the SVD's.
	ctx, cancel := context.WithCancel(context.Background())
	var canceled atomic.Int64
	time.AfterFunc(50*time.Millisecond, func() {
		canceled.Store(time.Now().UnixNano())
		cancel()
	})
	_, err := SVDContext(ctx, x, SVDOptions{})
	late := time.Duration(time.Now().UnixNano() - canceled.Load())
	if !errors.Is(err, ErrCanceled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want ErrCanceled wrapping context.Canceled", err)
	}
	t.Logf("returned %v after the cancel", late)
	if late > total/4 {
		t.Errorf("SVDContext returned %v after the cancel, more than a quarter of a whole Eigh's %v", late, total)
	}
}

// TestContextCancelSmallBatch cancels factorisations of a batch of 1×1
// matrices, whose reductions and solvers have no blocks or sweeps to check
// ctx between (Eigh's have none at all): the check before each matrix must
// stop them.
func TestContextCancelSmallBatch(t *testing.T) {
	ms := make([]cm, 40)
	for i := range ms {
		ms[i] = hermitianMatrix("random", 1, tensor.Float64, uint64(50+i))
	}
	x := toTensor(t, ms, tensor.Float64, len(ms))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, op := range contextOps {
		if _, err := op.run(ctx, x); !errors.Is(err, ErrCanceled) || !errors.Is(err, context.Canceled) {
			t.Errorf("%s: error %v, want ErrCanceled wrapping context.Canceled", op.name, err)
		}
	}
}
