package linalg

import (
	"sync"

	"github.com/goferro/goferro/cpu/gemm"
)

// parallelFor calls f on consecutive chunks [lo, hi) covering [0, n), on up
// to gemm.Threads() goroutines (the caller's among them), so that the
// level-2 loops and rotation sequences use the threads GEMM is allowed.
// work is the cost of one index in arbitrary units; a range whose total is
// below parallelMin stays on the calling goroutine, where starting
// goroutines would cost more than they save.
func parallelFor(n, work int, f func(lo, hi int)) {
	t := min(gemm.Threads(), n)
	if t > 1 && n*work < parallelMin {
		t = 1
	}
	if t <= 1 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	for k := 1; k < t; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(k*n/t, (k+1)*n/t)
		}()
	}
	f(0, n/t)
	wg.Wait()
}

// parallelMin is the work (about one multiply-add per unit) below which
// parallelFor stays on one goroutine: some tens of microseconds. Tests
// lower it to run the parallel paths on small matrices.
var parallelMin = 1 << 16

// forBatch calls f for each matrix b < nb of a batch, each costing about
// work units, and returns the error of the lowest b that failed. Small
// matrices, which would not use the threads themselves, are spread over
// them; large ones run one after another, each using them inside.
func forBatch(nb, work int, f func(b int) error) error {
	var mu sync.Mutex
	var first error
	firstB := nb
	run := func(lo, hi int) {
		for b := lo; b < hi; b++ {
			if err := f(b); err != nil {
				mu.Lock()
				if b < firstB {
					first, firstB = err, b
				}
				mu.Unlock()
				return
			}
		}
	}
	if work >= parallelMin {
		run(0, nb)
	} else {
		parallelFor(nb, work, run)
	}
	return first
}
