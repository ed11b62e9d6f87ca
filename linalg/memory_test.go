package linalg

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/goferro/goferro/internal/sysmem"
	"github.com/goferro/goferro/tensor"
)

// memoryOps are the calls that check their need, each with the estimate it
// checks, for a batch of nb m×n matrices (Hermitian n×n for eigh).
var memoryOps = []struct {
	name string
	herm bool
	run  func(*tensor.Tensor) error
	need func(dt tensor.DType, nb, m, n int) float64
	// results is the bytes of the results
	results func(dt tensor.DType, nb, m, n int) float64
}{
	{"QR", false, func(x *tensor.Tensor) error { _, _, err := QR(x, Reduced); return err },
		func(dt tensor.DType, nb, m, n int) float64 {
			k := min(m, n)
			return needOf(dt, func() float64 { return qrNeed[float32](nb, m, n, k, k) }, func() float64 { return qrNeed[float64](nb, m, n, k, k) },
				func() float64 { return qrNeed[complex64](nb, m, n, k, k) }, func() float64 { return qrNeed[complex128](nb, m, n, k, k) })
		},
		func(dt tensor.DType, nb, m, n int) float64 {
			k := min(m, n)
			return float64(nb * dt.Size() * (m*k + k*n))
		}},
	{"SVD", false, func(x *tensor.Tensor) error { _, err := SVD(x, SVDOptions{}); return err },
		func(dt tensor.DType, nb, m, n int) float64 {
			return needOf(dt, func() float64 { return svdNeed[float32](nb, m, n, false, true) }, func() float64 { return svdNeed[float64](nb, m, n, false, true) },
				func() float64 { return svdNeed[complex64](nb, m, n, false, true) }, func() float64 { return svdNeed[complex128](nb, m, n, false, true) })
		},
		func(dt tensor.DType, nb, m, n int) float64 {
			k := min(m, n)
			return float64(nb * (dt.Size()*(m*k+k*n) + dt.Real().Size()*(k+1)))
		}},
	{"Eigh", true, func(x *tensor.Tensor) error { _, _, err := Eigh(x); return err },
		func(dt tensor.DType, nb, _, n int) float64 {
			return needOf(dt, func() float64 { return eighNeed[float32](nb, n) }, func() float64 { return eighNeed[float64](nb, n) },
				func() float64 { return eighNeed[complex64](nb, n) }, func() float64 { return eighNeed[complex128](nb, n) })
		},
		func(dt tensor.DType, nb, _, n int) float64 { return float64(nb * (dt.Size()*n*n + dt.Real().Size()*n)) }},
	{"RandomizedSVD", false, func(x *tensor.Tensor) error { _, err := RandomizedSVD(x, 20, RandomizedOptions{}); return err },
		func(dt tensor.DType, nb, m, n int) float64 {
			r, l := min(20, m, n), min(30, m, n)
			return needOf(dt, func() float64 { return rsvdNeed[float32](nb, m, n, r, l) }, func() float64 { return rsvdNeed[float64](nb, m, n, r, l) },
				func() float64 { return rsvdNeed[complex64](nb, m, n, r, l) }, func() float64 { return rsvdNeed[complex128](nb, m, n, r, l) })
		},
		func(dt tensor.DType, nb, m, n int) float64 {
			r := min(20, m, n)
			return float64(nb * (dt.Size()*r*(m+n) + dt.Real().Size()*(r+1)))
		}},
}

func needOf(dt tensor.DType, f32, f64, c64, c128 func() float64) float64 {
	switch dt {
	case tensor.Float32:
		return f32()
	case tensor.Float64:
		return f64()
	case tensor.Complex64:
		return c64()
	}
	return c128()
}

// TestMemoryRefused asks for results far beyond any machine's memory
// (the Complete Q of a 2000000×1 input, 32 TB): the call must return a
// tensor.ErrMemory *Error rather than end the program in a failed
// allocation.
func TestMemoryRefused(t *testing.T) {
	x, err := tensor.New(make([]float64, 2_000_000), 2_000_000, 1)
	if err != nil {
		t.Fatal(err)
	}
	_, _, qrErr := QR(x, Complete)
	_, svdErr := SVD(x, SVDOptions{Mode: Complete})
	for op, err := range map[string]error{"QR": qrErr, "SVD": svdErr} {
		var e *Error
		if !errors.Is(err, tensor.ErrMemory) || !errors.As(err, &e) || e.Op != op {
			t.Errorf("%s: error %v, want an *Error of kind tensor.ErrMemory from %s", op, err, op)
		}
	}
}

// TestMemoryCheck fakes the available memory (sysmem.Fake, which also
// drops the check's floor) so that each op's estimate decides: a batch
// the estimate says fits runs, one byte less available refuses it, and an
// unknown availability refuses nothing.
func TestMemoryCheck(t *testing.T) {
	const nb, m, n = 2, 40, 30
	for _, op := range memoryOps {
		for _, dt := range allDTypes {
			t.Run(fmt.Sprintf("%s/%v", op.name, dt), func(t *testing.T) {
				rows := m
				if op.herm {
					rows = n
				}
				x := memoryInput(t, op.herm, dt, nb, rows, n)
				need := int64(op.need(dt, nb, rows, n))
				// the results are allocated through tensor (checked
				// too): the estimate must cover them
				restore := sysmem.Fake(need, nil)
				err := op.run(x)
				restore()
				if err != nil {
					t.Fatalf("with %d bytes available for an estimate of %d: %v", need, need, err)
				}
				restore = sysmem.Fake(need-1, nil)
				err = op.run(x)
				restore()
				var e *Error
				if !errors.Is(err, tensor.ErrMemory) || !errors.As(err, &e) || !strings.Contains(e.Msg, "available") {
					t.Fatalf("with one byte less available: error %v, want a tensor.ErrMemory *Error from linalg", err)
				}
				restore = sysmem.Fake(0, sysmem.ErrUnknown)
				err = op.run(x)
				restore()
				if err != nil {
					t.Fatalf("with the availability unknown: %v", err)
				}
			})
		}
	}
}

// TestMemoryEstimates checks each estimate against the call it is for:
// at least the bytes of the results and of the working copy of the input,
// which are live together, and at most eight times all that the call
// allocates (linalg's scratch pools drained, GEMM's workspaces warm), so
// that the check does not refuse a call that would fit. The shapes are
// square, tall, wide and batched, and large enough for the blocked paths.
func TestMemoryEstimates(t *testing.T) {
	for _, op := range memoryOps {
		for _, dt := range allDTypes {
			for _, sh := range [][3]int{{1, 200, 200}, {1, 300, 90}, {1, 90, 300}, {3, 120, 120}} {
				nb, m, n := sh[0], sh[1], sh[2]
				if op.herm && m != n {
					continue
				}
				t.Run(fmt.Sprintf("%s/%v/%dx%dx%d", op.name, dt, nb, m, n), func(t *testing.T) {
					x := memoryInput(t, op.herm, dt, nb, m, n)
					if err := op.run(x); err != nil { // GEMM's workspaces warm
						t.Fatal(err)
					}
					drainScratch()
					var before, after runtime.MemStats
					runtime.ReadMemStats(&before)
					if err := op.run(x); err != nil {
						t.Fatal(err)
					}
					runtime.ReadMemStats(&after)
					all, need := float64(after.TotalAlloc-before.TotalAlloc), op.need(dt, nb, m, n)
					live := op.results(dt, nb, m, n) + float64(dt.Size()*m*n)
					if need < live || need > 8*all {
						t.Errorf("estimated %.0f bytes; results and input copy %.0f, all allocations %.0f", need, live, all)
					}
				})
			}
		}
	}
}

// memoryInput returns a batch of nb random m×n matrices (Hermitian n×n
// ones when herm is set).
func memoryInput(t *testing.T, herm bool, dt tensor.DType, nb, m, n int) *tensor.Tensor {
	var ms []cm
	for b := range uint64(nb) {
		if herm {
			ms = append(ms, hermitianMatrix("random", n, dt, b))
		} else {
			ms = append(ms, testMatrix("random", m, n, dt, b))
		}
	}
	return toTensor(t, ms, dt, nb)
}

// drainScratch empties linalg's scratch pools, so that a call allocates
// its working copies afresh.
func drainScratch() {
	drain(scratchPool[float32]())
	drain(scratchPool[float64]())
	drain(scratchPool[complex64]())
	drain(scratchPool[complex128]())
}

func drain[T scalar](p *scratchPools[T]) {
	for c := range p.class {
		for p.class[c].Get() != nil {
		}
	}
	for p.large.Get() != nil {
	}
}

// TestSVDBatchMemory checks svdNeed against a batch of SVDs whose factors,
// kept until the truncation rank is known, dominate what is live at
// once: after the call and one garbage collection, the results and those
// factors (recycled into the scratch pools, which keep them through one
// collection) must fit in the estimate. Scratch rounds the kept factors'
// buffers up to a power of two: an estimate that counted them at their
// size fell 4–5 % short of what was live here, 60×100×100.
func TestSVDBatchMemory(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops items at random")
	}
	for _, dt := range []tensor.DType{tensor.Float64, tensor.Complex64} {
		const nb, m, n = 60, 100, 100
		x := memoryInput(t, false, dt, nb, m, n)
		if _, err := SVD(x, SVDOptions{}); err != nil { // GEMM's workspaces warm
			t.Fatal(err)
		}
		drainScratch()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		r, err := SVD(x, SVDOptions{})
		if err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(r)
		live := float64(after.HeapAlloc) - float64(before.HeapAlloc)
		var need float64
		if dt == tensor.Float64 {
			need = svdNeed[float64](nb, m, n, false, true)
		} else {
			need = svdNeed[complex64](nb, m, n, false, true)
		}
		t.Logf("%v: estimated %.0f bytes, %.0f live after the call (%.2f)", dt, need, live, live/need)
		if live > need {
			t.Errorf("%v: estimated %.0f bytes; %.0f live after the call", dt, need, live)
		}
	}
}

// TestScratchClasses checks scratch's size classes: a new buffer's
// capacity is scratchLen (the least power of two that holds the request,
// no more), a recycled one comes back for any request of its class, and
// one above keptScratch is exactly as long as asked.
func TestScratchClasses(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops items at random")
	}
	drainScratch()
	for _, n := range []int{1, 2, 3, 5, 64, 65, 1000, 1 << 17} {
		a := scratch[float64](1, n)
		if c := cap(a.data); c != scratchLen[float64](n) || c < n || c >= 2*n && n > 1 {
			t.Errorf("n=%d: new buffer of capacity %d, scratchLen %d", n, c, scratchLen[float64](n))
		}
		recycle(a)
		lo := scratchLen[float64](n)/2 + 1 // the least request of the same class
		if b := scratch[float64](1, lo); &b.data[0] != &a.data[0] {
			t.Errorf("n=%d: a request for %d did not get the recycled buffer back", n, lo)
		} else {
			recycle(b)
		}
	}
	big := (keptScratch >> 3) + 1
	if c := cap(scratch[float64](1, big).data); c != big {
		t.Errorf("above keptScratch: capacity %d for %d elements", c, big)
	}
}
