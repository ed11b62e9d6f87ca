package linalg

import (
	"runtime"
	"sync/atomic"
	"time"
)

// A team runs jobs, one after another, on the caller's goroutine and a
// fixed set of helper goroutines started once. A job is a list of chunks
// that the team's goroutines take in order as they become free; it is
// done when every chunk is, whether or not a late helper has looked at it
// yet. Between jobs the helpers poll for the next one for up to
// teamSpin before they block: a blocked goroutine's thread took 70–160 µs
// to start again on the AMD EPYC of bench/linalg-report.md, which a
// factorisation of many short steps (geqrf's blocks) would otherwise pay
// at every step.
type team struct {
	started  atomic.Int32  // helpers that have started
	gen      atomic.Uint64 // bumped for each job
	job      atomic.Pointer[teamJob]
	sleeping atomic.Int32
	wake     chan struct{} // closed by stop
	quit     atomic.Bool
}

// teamStepWork is the least work (multiply-adds) of a step that a team
// shares out; smaller steps run on the caller's goroutine alone. Tests
// lower it.
var teamStepWork = 1 << 20

// teamWaitForHelpers makes newTeam return only when its helpers have
// started (a test hook: jobs are then cut for every goroutine).
var teamWaitForHelpers = false

// teamSpin is how long a goroutine of a team polls, for the next job or
// for the last chunks of the current one, before it blocks.
const teamSpin = 500 * time.Microsecond

// teamJob is one job of a team: chunk c is [bounds[c], bounds[c+1]).
type teamJob struct {
	bounds     []int
	f          func(lo, hi int)
	next, done atomic.Int64
	finished   chan struct{} // closed when every chunk is done
}

// newTeam starts a team of threads goroutines, the caller's included (a
// team of one runs its jobs on the caller's goroutine, with one-thread
// products inside: see inner). Stop it when its last job is done.
func newTeam(threads int) *team {
	t := &team{wake: make(chan struct{}, threads)}
	for range threads - 1 {
		go t.help()
	}
	for teamWaitForHelpers && int(t.started.Load()) < threads-1 {
		runtime.Gosched()
	}
	return t
}

// size returns the number of the team's goroutines that are running: the
// caller's and the helpers' that have started, 1 for a nil team. Jobs are
// cut for them: a helper can start hundreds of microseconds after newTeam
// on a machine whose other cores sleep, and until then the caller runs
// each job alone, better in one chunk than in pieces cut for helpers that
// are not there (a piece costs GEMM another packing of its operands).
func (t *team) size() int {
	if t == nil {
		return 1
	}
	return 1 + int(t.started.Load())
}

// inner returns the goroutine count for the products inside a job's
// chunks, as mulOn takes it: 1 in a team, whose goroutines already use the
// threads, and mul's choice (0) on the caller's goroutine alone.
func (t *team) inner() int {
	if t == nil {
		return 0
	}
	return 1
}

// run calls f on each chunk of bounds on the team's goroutines and
// returns when every chunk is done. A nil team, or a job of one chunk,
// runs on the caller's goroutine.
func (t *team) run(bounds []int, f func(lo, hi int)) {
	if t == nil || len(bounds) <= 2 {
		for c := range len(bounds) - 1 {
			f(bounds[c], bounds[c+1])
		}
		return
	}
	j := &teamJob{bounds: bounds, f: f, finished: make(chan struct{})}
	t.job.Store(j)
	t.gen.Add(1)
	for range t.sleeping.Load() {
		select {
		case t.wake <- struct{}{}:
		default:
		}
	}
	defer t.job.Store(nil) // let go of f, and of all it holds, at once
	defer j.settle()
	j.work()
	j.wait()
}

// stop ends the team's helpers; a nil team has none.
func (t *team) stop() {
	if t == nil {
		return
	}
	t.quit.Store(true)
	close(t.wake)
}

// help runs each new job's chunks until the team stops.
func (t *team) help() {
	t.started.Add(1)
	var seen uint64
	for {
		g, ok := t.await(seen)
		if !ok {
			return
		}
		seen = g
		if j := t.job.Load(); j != nil { // nil: that job is over
			j.work()
		}
	}
}

// await returns the generation of the first job after seen, polling for
// teamSpin and then blocking until run posts a wake-up, or false when the
// team stops. A wake-up that finds the job already taken is harmless: the
// job's chunks are claimed, so a helper that comes late finds none left.
func (t *team) await(seen uint64) (uint64, bool) {
	start := time.Now()
	for {
		if t.quit.Load() {
			return 0, false
		}
		if g := t.gen.Load(); g != seen {
			return g, true
		}
		if time.Since(start) < teamSpin {
			runtime.Gosched()
			continue
		}
		t.sleeping.Add(1)
		if t.gen.Load() == seen && !t.quit.Load() {
			<-t.wake
		}
		t.sleeping.Add(-1)
		start = time.Now()
	}
}

// work runs chunks of j until none is left to take.
func (j *teamJob) work() {
	chunks := len(j.bounds) - 1
	for {
		c := int(j.next.Add(1) - 1)
		if c >= chunks {
			return
		}
		j.f(j.bounds[c], j.bounds[c+1])
		if j.done.Add(1) == int64(chunks) {
			close(j.finished)
		}
	}
}

// settle, when the caller's chunk panics, hands out no more chunks and
// waits for the helpers' chunks that have started before the panic goes
// on: a helper must not write into the matrices and scratch that the
// unwinding caller gives back.
func (j *teamJob) settle() {
	p := recover()
	if p == nil {
		return
	}
	// Claims from chunks on find none; the panicked chunk never counts
	// as done.
	chunks := int64(len(j.bounds) - 1)
	taken := min(j.next.Swap(chunks), chunks)
	for j.done.Load() < taken-1 {
		runtime.Gosched()
	}
	panic(p)
}

// wait returns when every chunk of j is done, polling for teamSpin first.
func (j *teamJob) wait() {
	chunks := int64(len(j.bounds) - 1)
	start := time.Now()
	for j.done.Load() < chunks {
		if time.Since(start) >= teamSpin {
			<-j.finished
			return
		}
		runtime.Gosched()
	}
}
