package linalg

import (
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

// TestParallelPaths runs the factorisations with every level-2 loop,
// rotation sequence and QR update split over three goroutines, and checks
// them as the single-threaded tests do.
func TestParallelPaths(t *testing.T) {
	defer allParallel(3)()
	teamWaitForHelpers = true
	defer func() { teamWaitForHelpers = false }()
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
				q, r, err := QR(toTensor(t, []cm{a}, dt), Complete)
				if err != nil {
					t.Fatal(err)
				}
				checkQR(t, a, q, r, Complete, dt, false)
				l, q, err := LQ(toTensor(t, []cm{a}, dt), Complete)
				if err != nil {
					t.Fatal(err)
				}
				checkQR(t, a, q, l, Complete, dt, true)
				w := roundTo(testMatrix("random", n/2, n, dt, 33), dt)
				q, r, err = QR(toTensor(t, []cm{w}, dt), Reduced)
				if err != nil {
					t.Fatal(err)
				}
				checkQR(t, w, q, r, Reduced, dt, false)
			})
		}
	}
}

// allParallel makes the factorisations run on threads goroutines and
// split every level-2 loop, rotation sequence and QR update, down to the
// smallest matrices, and returns the function that undoes it.
func allParallel(threads int) (restore func()) {
	m, w, s, c, r, g := parallelMin, qrTeamWork, teamStepWork, qrChunkCols, qChunkRows, gemm.Threads()
	parallelMin, qrTeamWork, teamStepWork, qrChunkCols, qChunkRows = 1, 1, 1, 5, 5
	gemm.SetThreads(threads)
	return func() {
		parallelMin, qrTeamWork, teamStepWork, qrChunkCols, qChunkRows = m, w, s, c, r
		gemm.SetThreads(g)
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

// TestMatVec checks matVec against a plain double loop, real and complex,
// for column counts around its block width, and that one, two and three
// threads give the same result to the bit.
func TestMatVec(t *testing.T) {
	defer func(m int) { parallelMin = m }(parallelMin)
	defer gemm.SetThreads(gemm.Threads())
	parallelMin = 1
	rng := newRand(12)
	for _, m := range []int{1, 7, 100} {
		for _, n := range []int{1, matVecCols - 1, matVecCols, 2*matVecCols + 3} {
			a := randCM(rng, m, n, true)
			x := randCM(rng, 1, n, true).v
			am := newMat[complex128](m, n)
			for i := range m {
				for j := range n {
					am.set(i, j, a.at(i, j))
				}
			}
			var first []complex128
			for threads := 1; threads <= 3; threads++ {
				gemm.SetThreads(threads)
				y := make([]complex128, m)
				matVec(am, x, y, make([]complex128, matVecWork(m, n)))
				for i := range m {
					var want complex128
					for j := range n {
						want += a.at(i, j) * x[j]
					}
					if cmplxAbs(y[i]-want) > 1e-13*float64(n) {
						t.Fatalf("%d×%d, %d threads: y[%d] = %v, want %v", m, n, threads, i, y[i], want)
					}
				}
				if first == nil {
					first = y
				} else if !slices.Equal(y, first) {
					t.Errorf("%d×%d: %d threads give a different result than one", m, n, threads)
				}
			}
			// the real path (the assembly axpy where there is one)
			ar, xr := newMat[float64](m, n), make([]float64, n)
			for j := range n {
				xr[j] = real(x[j])
				for i := range m {
					ar.set(i, j, real(a.at(i, j)))
				}
			}
			y := make([]float64, m)
			matVec(ar, xr, y, make([]float64, matVecWork(m, n)))
			for i := range m {
				want := 0.0
				for j := range n {
					want += ar.at(i, j) * xr[j]
				}
				if math.Abs(y[i]-want) > 1e-13*float64(n) {
					t.Fatalf("real %d×%d: y[%d] = %v, want %v", m, n, i, y[i], want)
				}
			}
		}
	}
}

// TestParallelForLateGoroutine runs parallelFor on one P, so that the
// goroutine it starts cannot run before the caller blocks: the caller must
// do every chunk itself and return without waiting for that goroutine, as
// it must not wait for a thread the kernel has not yet run on a loaded
// machine.
func TestParallelForLateGoroutine(t *testing.T) {
	defer func(m int) { parallelMin = m }(parallelMin)
	defer gemm.SetThreads(gemm.Threads())
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	parallelMin = 1
	gemm.SetThreads(2)
	dropSharedTeam()
	before := runtime.NumGoroutine()
	sum := 0
	parallelFor(100, 1, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			sum += i
		}
	})
	late := runtime.NumGoroutine() - before
	if sum != 99*100/2 {
		t.Errorf("sum %d, want %d", sum, 99*100/2)
	}
	if late != 1 {
		t.Errorf("%d goroutines of parallelFor left when it returned, want the one that had not started", late)
	}
}

// dropSharedTeam stops the team that runChunks keeps between calls, so
// that the next call starts a fresh one (as the first call of a program
// does), and waits until its helpers have ended.
func dropSharedTeam() {
	shared.Lock()
	defer shared.Unlock()
	if shared.tm == nil {
		return
	}
	helpers := int(shared.tm.started.Load())
	before := runtime.NumGoroutine()
	shared.tm.stop()
	shared.tm, shared.threads = nil, 0
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > before-helpers && time.Now().Before(deadline); {
		runtime.Gosched()
	}
}

// TestParallelForLetsGo checks that the team runChunks keeps between calls
// does not keep what the last job's function held: a factorisation's
// matrices must be collectable once it has returned.
func TestParallelForLetsGo(t *testing.T) {
	defer func(m int) { parallelMin = m }(parallelMin)
	defer gemm.SetThreads(gemm.Threads())
	parallelMin = 1
	gemm.SetThreads(2)
	var collected atomic.Bool
	func() {
		big := &[1 << 16]float64{}
		runtime.SetFinalizer(big, func(*[1 << 16]float64) { collected.Store(true) })
		parallelFor(100, 1, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				big[i]++
			}
		})
	}()
	for i := 0; i < 100 && !collected.Load(); i++ {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if !collected.Load() {
		t.Error("the function of parallelFor's last job is still reachable after it returned")
	}
}
