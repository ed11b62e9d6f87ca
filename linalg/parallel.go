package linalg

import (
	"context"
	"sync"

	"github.com/goferro/goferro/cpu/gemm"
)

// parallelFor calls f on consecutive chunks [lo, hi) covering [0, n), on up
// to gemm.Threads() goroutines (the caller's among them), so that the
// level-2 loops and rotation sequences use the threads GEMM is allowed.
// work is the cost of one index in arbitrary units; a range whose total is
// below parallelMin stays on the calling goroutine, where starting
// goroutines would cost more than they save.
//
// The range is cut into chunksPerThread chunks per goroutine, which the
// goroutines take in turn as they become free, and parallelFor returns
// when every chunk is done, not when every goroutine is: on a machine
// shared with other processes, a goroutine whose thread the kernel does
// not run at once holds up the caller by at most the chunk it has taken,
// and not at all if it starts after the caller has taken the last chunk
// (it then finds nothing to do and ends).
func parallelFor(n, work int, f func(lo, hi int)) {
	t := min(gemm.Threads(), n)
	if t > 1 && n*work < parallelMin {
		t = 1
	}
	if t <= 1 {
		f(0, n)
		return
	}
	chunks := min(n, chunksPerThread*t)
	bounds := make([]int, chunks+1)
	for c := range bounds {
		bounds[c] = c * n / chunks
	}
	runChunks(bounds, t, f)
}

// runChunks calls f on each chunk [bounds[c], bounds[c+1]) on up to t
// goroutines (the caller's among them), which take the chunks in order as
// they become free, and returns when every chunk is done.
func runChunks(bounds []int, t int, f func(lo, hi int)) {
	chunks := len(bounds) - 1
	t = min(t, chunks)
	if t <= 1 {
		for c := range chunks {
			f(bounds[c], bounds[c+1])
		}
		return
	}
	if shared.TryLock() {
		defer shared.Unlock()
		if threads := max(gemm.Threads(), t); shared.threads != threads {
			shared.tm.stop()
			shared.tm, shared.threads = newTeam(threads), threads
		}
		shared.tm.run(bounds, f)
		return
	}
	tm := newTeam(t)
	defer tm.stop()
	tm.run(bounds, f)
}

// shared is the team runChunks runs its jobs on, kept from one call to the
// next so that its helpers, which poll for a while after each job, start
// the next one at once: the level-2 loops and rotation sequences of a
// factorisation come in runs (an SVD at n = 1024 makes a couple of hundred
// calls of about 0.3 ms), and a goroutine started for each call joined it
// 70–160 µs late. It takes one job at a time; a call that finds it busy
// (another goroutine's factorisation, or a call from inside a job) starts
// a team of its own. Its helpers stay, blocked, when there is no work, as
// cpu/gemm's workers do.
var shared struct {
	sync.Mutex
	tm      *team
	threads int
}

// chunksPerThread is the number of chunks per goroutine parallelFor hands
// out: enough that a late goroutine costs little, few enough that a chunk
// is still some microseconds of work above parallelMin.
const chunksPerThread = 8

// parallelMin is the work (about one multiply-add per unit) below which
// parallelFor stays on one goroutine. On the AMD EPYC of
// bench/linalg-report.md a parallelFor of empty chunks on two goroutines
// took about 2 µs of CPU and wall time per call, while a unit takes about
// 0.1 ns in the AVX-512 rotation kernel (BenchmarkRotSeq) and 0.3–0.5 ns
// in the matrix-vector loops: at 2^18 units a fork would be at most about
// a tenth of the work it splits. But a fork also wakes the second thread,
// which on a loaded machine is often not running: the batches of rotations
// of an SVD at n = 256 (about 2^19 units each) cost more wall and CPU time
// on two threads than on one, while at 2^21 units (the batches of
// n = 1024) they still gain (bench/linalg-report.md, branch svdsmall).
// Tests lower it to run the parallel paths on small matrices.
var parallelMin = 1 << 21

// batchMin is the work of one matrix (m·n·k) from which forBatch runs a
// batch's matrices one after another rather than spreading them over the
// threads: parallelMin's value before it rose to 2^21, kept here so that
// batches of matrices from about 64×64 on are still taken in order.
const batchMin = 1 << 18

// forBatch calls f for each matrix b < nb of a batch, each costing about
// work units, and returns the lowest b that failed with its error (or
// nil). Before each matrix it checks ctx, a done ctx failing the matrix
// with ctx's error. Small matrices, which would not use the threads
// themselves, are spread over them; large ones run one after another, each
// using them inside.
func forBatch(ctx context.Context, nb, work int, f func(b int) error) (int, error) {
	var mu sync.Mutex
	var first error
	firstB := nb
	run := func(lo, hi int) {
		for b := lo; b < hi; b++ {
			err := ctx.Err()
			if err == nil {
				err = f(b)
			}
			if err != nil {
				mu.Lock()
				if b < firstB {
					first, firstB = err, b
				}
				mu.Unlock()
				return
			}
		}
	}
	if work >= batchMin {
		run(0, nb)
	} else {
		parallelFor(nb, work, run)
	}
	return firstB, first
}

// stopper checks one ctx for the goroutines of one job: once a check finds
// ctx done, the job's goroutines stop without checking it again, and err
// is ctx's error.
type stopper struct {
	ctx context.Context
	mu  sync.Mutex
	err error
}

// stop reports whether the job should stop, checking ctx unless a check
// already found it done.
func (s *stopper) stop() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = s.ctx.Err()
	}
	return s.err != nil
}
