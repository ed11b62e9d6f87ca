package linalg

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goferro/goferro/cpu/gemm"
	"github.com/goferro/goferro/tensor"
)

// TestParallelPaths runs the factorisations with every level-2 loop and
// rotation sequence split over three goroutines, and checks them as the
// single-threaded tests do.
func TestParallelPaths(t *testing.T) {
	defer func(m int) { parallelMin = m }(parallelMin)
	defer gemm.SetThreads(gemm.Threads())
	parallelMin = 1
	gemm.SetThreads(3)
	for _, dt := range []tensor.DType{tensor.Float64, tensor.Complex128, tensor.Float32} {
		for _, n := range []int{5, 100} {
			t.Run(fmt.Sprintf("%v/%d", dt, n), func(t *testing.T) {
				h := roundTo(hermitianMatrix("random", n, dt, 31), dt)
				wt, vt, err := Eigh(toTensor(t, []cm{h}, dt))
				if err != nil {
					t.Fatal(err)
				}
				checkEigh(t, h, vectorsOf(wt)[0], matricesOf(t, vt)[0], dt)
				a := roundTo(testMatrix("random", n, n-1, dt, 32), dt)
				res, err := SVD(toTensor(t, []cm{a}, dt), SVDOptions{})
				if err != nil {
					t.Fatal(err)
				}
				checkSVD(t, a, res, Reduced, dt)
			})
		}
	}
}

// TestParallelForCovers checks that parallelFor calls f on chunks that
// cover [0, n) exactly once, for counts around the number of chunks.
func TestParallelForCovers(t *testing.T) {
	defer func(m int) { parallelMin = m }(parallelMin)
	defer gemm.SetThreads(gemm.Threads())
	parallelMin = 1
	for _, threads := range []int{1, 2, 3} {
		gemm.SetThreads(threads)
		for _, n := range []int{0, 1, 2, 7, 16, 17, 100, 1000} {
			seen := make([]atomic.Int32, n)
			parallelFor(n, 1, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					seen[i].Add(1)
				}
			})
			for i := range seen {
				if c := seen[i].Load(); c != 1 {
					t.Fatalf("threads %d, n %d: index %d visited %d times", threads, n, i, c)
				}
			}
		}
	}
}

// TestParallelForStalledGoroutine stalls the first chunk parallelFor hands
// out until the rest of the range is done, as the kernel may stall a
// thread on a loaded machine: the other goroutine must finish everything
// else, so the stalled chunk must be a small part of the range, not a
// thread's whole share of it.
func TestParallelForStalledGoroutine(t *testing.T) {
	defer func(m int) { parallelMin = m }(parallelMin)
	defer gemm.SetThreads(gemm.Threads())
	parallelMin = 1
	gemm.SetThreads(2)
	const n = 1000
	var done atomic.Int64
	var first atomic.Bool
	stalled := -1
	parallelFor(n, 1, func(lo, hi int) {
		if first.CompareAndSwap(false, true) {
			stalled = hi - lo
			deadline := time.Now().Add(10 * time.Second)
			for done.Load() < int64(n-stalled) && time.Now().Before(deadline) {
				time.Sleep(100 * time.Microsecond)
			}
		}
		done.Add(int64(hi - lo))
	})
	if want := n/(chunksPerThread*2) + 1; stalled > want {
		t.Errorf("the stalled goroutine held %d of %d indices, want at most %d", stalled, n, want)
	}
	if got := done.Load(); got != n {
		t.Errorf("%d of %d indices done", got, n)
	}
}
