package linalg

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goferro/goferro/cpu/gemm"
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

// gapCtx records the calling thread's CPU time at each call of Err.
type gapCtx struct {
	context.Context
	times []float64
}

func (c *gapCtx) Err() error {
	c.times = append(c.times, threadCPUSeconds())
	return nil
}

// TestContextCancelMidway checks the SVD, eigenvalue and randomized SVD
// functions at n = 1024: uncanceled, no stretch between two checks of ctx
// (or before the first or after the last) takes more than a fraction of
// the whole: a quarter (Eigh's longest is the last merge of the divide and
// conquer, one GEMM of n³ multiply-adds, a fifth of it; RandomizedSVD's,
// at rank 200, is loading the matrix and drawing the test matrix, or one
// of its six GEMMs, about a tenth), an eighth for EigvalsH, whose QR
// iteration on the tridiagonal matrix takes about a fifth of it; and an
// SVD canceled after 50 ms, a small part of it, returns soon after.
//
// The stretches are measured in the CPU time of the one thread that runs
// the whole call (GEMM and the level-2 loops on one thread, the goroutine
// locked to it): on an idle machine that is the wall time; on a loaded one
// it leaves out the time the thread waits for a core (which once made a
// 20 ms stretch look like 43 ms), and it leaves out the collector's
// background marking on other threads, which process time counted (a
// 20 ms stretch of Eigh's last merge, one that allocates 16 MB, read
// 50–117 ms in process time when a collection fell in it).
func TestContextCancelMidway(t *testing.T) {
	if testing.Short() {
		t.Skip("1024×1024 factorisations")
	}
	if raceEnabled {
		t.Skip("shares of CPU time under the race detector say nothing of them without it")
	}
	defer gemm.SetThreads(gemm.Threads())
	gemm.SetThreads(1)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	x := toTensor(t, []cm{testMatrix("random", 1024, 1024, tensor.Float64, 42)}, tensor.Float64)
	h := toTensor(t, []cm{hermitianMatrix("random", 1024, tensor.Float64, 42)}, tensor.Float64)
	var total float64
	for _, op := range []struct {
		name string
		part float64 // the longest stretch allowed, as a part of the whole
		run  func(context.Context) error
	}{
		{"SVD", 0.25, func(ctx context.Context) error { _, err := SVDContext(ctx, x, SVDOptions{}); return err }},
		{"SVDVals", 0.25, func(ctx context.Context) error { _, err := SVDValsContext(ctx, x); return err }},
		{"EigvalsH", 0.125, func(ctx context.Context) error { _, err := EigvalsHContext(ctx, h); return err }},
		{"RandomizedSVD", 0.25, func(ctx context.Context) error {
			_, err := RandomizedSVDContext(ctx, x, 200, RandomizedOptions{})
			return err
		}},
		{"Eigh", 0.25, func(ctx context.Context) error { _, _, err := EighContext(ctx, h); return err }},
	} {
		// A stretch the code leaves unchecked is long on every try; one
		// that a page-fault storm or the collector's assists lengthened
		// (the machine is shared) rarely is twice more.
		var gap float64
		for try := range 3 {
			var at int
			gap, total, at = longestStretch(t, op.run)
			t.Logf("%s, try %d: %.1f ms of CPU time, the longest stretch between two checks of ctx %.1f ms (before check %d)",
				op.name, try+1, 1e3*total, 1e3*gap, at)
			if gap <= op.part*total {
				break
			}
		}
		if gap > op.part*total {
			t.Errorf("%s: %.1f ms between two checks of ctx, more than %g of the whole %.1f ms (CPU time), three tries",
				op.name, 1e3*gap, op.part, 1e3*total)
		}
	}
	// total is now Eigh's, shorter than the SVD's.
	ctx, cancel := context.WithCancel(context.Background())
	var canceled atomic.Uint64
	time.AfterFunc(50*time.Millisecond, func() {
		canceled.Store(math.Float64bits(cpuSeconds()))
		cancel()
	})
	_, err := SVDContext(ctx, x, SVDOptions{})
	late := cpuSeconds() - math.Float64frombits(canceled.Load())
	if !errors.Is(err, ErrCanceled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want ErrCanceled wrapping context.Canceled", err)
	}
	t.Logf("returned %.1f ms (CPU time) after the cancel", 1e3*late)
	if late > total/4 {
		t.Errorf("SVDContext returned %.1f ms (CPU time) after the cancel, more than a quarter of a whole Eigh's %.1f ms",
			1e3*late, 1e3*total)
	}
}

// longestStretch runs op uncanceled and returns the longest stretch of
// the calling thread's CPU time between two checks of ctx (or before the
// first or after the last), the whole call's, and the index of the check
// that ends the stretch.
func longestStretch(t *testing.T, op func(context.Context) error) (gap, total float64, at int) {
	rec := &gapCtx{Context: context.Background()}
	runtime.GC()
	start := threadCPUSeconds()
	if err := op(rec); err != nil {
		t.Fatal(err)
	}
	total = threadCPUSeconds() - start
	marks := append(append([]float64{start}, rec.times...), start+total)
	for i := 1; i < len(marks); i++ {
		if d := marks[i] - marks[i-1]; d > gap {
			gap, at = d, i
		}
	}
	return gap, total, at
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
