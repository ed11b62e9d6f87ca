package gemm

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goferro/goferro/internal/reuse"
)

// The worker pool: long-lived goroutines that run shares of a parallel GEMM,
// so that a threaded call starts no goroutines and allocates nothing.

// A parallel call posts one token per extra share to the pool and then
// claims and runs shares itself until none is left; a worker that takes a
// token claims a share too, if one is left. So a call never waits for a
// busy worker to start: it waits only for shares already running.
type token struct {
	t   shareTask
	gen uint32
}

// shareTask is a parallel call's shares: claim returns the next share to
// run (false when none is left or the token is stale), and done marks one
// finished.
type shareTask interface {
	claim(gen uint32) (int, bool)
	runShare(w int)
	done()
}

var (
	workCh      = make(chan token, 256)
	workersMu   sync.Mutex
	workerCount atomic.Int64
)

func ensureWorkers(n int) {
	if int(workerCount.Load()) >= n {
		return
	}
	workersMu.Lock()
	for int(workerCount.Load()) < n {
		workerCount.Add(1)
		go worker()
	}
	workersMu.Unlock()
}

// spinFor is how long an idle worker keeps polling for the next token
// before it blocks: waking a blocked goroutine's thread costs tens of
// microseconds, more than a small product takes, and calls tend to come
// in runs (einsum steps, batches of calls).
const spinFor = 200 * time.Microsecond

func worker() {
	for {
		tk, ok := pollToken()
		if !ok {
			tk = <-workCh
		}
		if tk.t == nil {
			continue // a wake-up (wakeWorker): poll for the calls to come
		}
		if w, ok := tk.t.claim(tk.gen); ok {
			tk.t.runShare(w)
			tk.t.done()
		}
	}
}

// polling counts the workers in pollToken: a token posted now is taken
// within microseconds, where a sleeping worker takes tens of them to start
// (the futex wake of its thread, then the scheduler steals the goroutine
// from the waker's run queue only after a short sleep). Measured with
// timestamps around the hand-off on the 2-vCPU AMD EPYC VM (load 10, 200
// calls of 128³ at 2 threads), from posting to the worker receiving the
// token: at least 44.9 µs (median 80) for a sleeping worker, at least
// 2.1 µs for a polling one.
var polling atomic.Int32

// pollToken polls workCh for up to spinFor, yielding the processor between
// polls.
func pollToken() (token, bool) {
	polling.Add(1)
	defer polling.Add(-1)
	var start time.Time
	for i := 0; ; i++ {
		select {
		case tk := <-workCh:
			return tk, true
		default:
		}
		if i&15 == 0 {
			if i == 0 {
				start = time.Now()
			} else if time.Since(start) > spinFor {
				return token{}, false
			}
		}
		runtime.Gosched()
	}
}

// wakeWork is the least work, in multiply-adds (m·n·k, real view), worth
// waking sleeping workers for: a worker starts some 50 µs after the call
// (see polling) and then takes a whole share, so the call gains only if
// half of it runs well over that. On the quiet 2-vCPU VM, two 64³…160³
// products one after another ran slower on 2 threads than on 1 (n=160:
// 0.19–0.22 against 0.15–0.17 ms) while back-to-back 160³ calls, which
// find the worker polling, ran 1.7× faster; 256³ runs about 380 µs on one
// thread, so a worker 50–100 µs late still takes its half.
const wakeWork = 256 * 256 * 256

// lastCold is when (Unix ns) a call last stayed on the caller because
// every worker slept, and coldRun how many such calls before it came each
// within spinFor of the one before.
var (
	lastCold atomic.Int64
	coldRun  atomic.Int32
)

// useWorkers reports whether a call of work multiply-adds, big enough to
// split, should be split now: always from wakeWork, and when a worker is
// polling (it starts at once). A smaller call that finds every worker
// asleep runs on the caller; the third of a run of such calls, each within
// spinFor of the one before (einsum steps, a benchmark loop), wakes a
// worker for the calls to come, which then find it polling. (Waking costs
// the caller a system call, and on a loaded machine often its processor:
// two 64³ products, 12 µs on one thread, would pay it for nothing.)
func useWorkers(work float64) bool {
	if work >= wakeWork || polling.Load() > 0 || testParallel.Load() > 0 {
		return true
	}
	now := time.Now().UnixNano()
	if now-lastCold.Swap(now) >= int64(spinFor) {
		coldRun.Store(0)
	} else if coldRun.Add(1) >= 2 {
		coldRun.Store(0)
		wakeWorker()
	}
	return false
}

// wakeWorker posts a token with no call, which wakes a sleeping worker
// (when the pool has room) without making anyone wait for it.
func wakeWorker() {
	wakes.Add(1)
	ensureWorkers(1)
	select {
	case workCh <- token{}:
	default:
	}
}

// testParallel, when positive, makes every call from minParallelWork go
// parallel whether workers poll or sleep (a test hook: the parallel paths
// on products small enough to check against a naive loop). A count, so
// that concurrent tests can hold it.
var testParallel atomic.Int32

// shares hands out share numbers 0..n-1 of one call. state packs the
// call's generation (bits 32-63), n (bits 16-31) and the next share (bits
// 0-15), so a token left over from an earlier call on the same job claims
// nothing.
type shares struct {
	state atomic.Uint64
	wg    sync.WaitGroup
}

// maxShares bounds the goroutines of one call.
const maxShares = 1<<16 - 1

// start begins a call of n shares and returns its generation.
func (s *shares) start(n int) uint32 {
	gen := uint32(s.state.Load()>>32) + 1
	s.wg.Add(n)
	s.state.Store(uint64(gen)<<32 | uint64(n)<<16)
	return gen
}

func (s *shares) claim(gen uint32) (int, bool) {
	for {
		v := s.state.Load()
		next, n := int(v&0xffff), int(v>>16&0xffff)
		if uint32(v>>32) != gen || next >= n {
			return 0, false
		}
		if s.state.CompareAndSwap(v, v+1) {
			return next, true
		}
	}
}

func (s *shares) done() { s.wg.Done() }

// runParallel runs the n shares of j on the calling goroutine and up to
// threads-1 pool workers, and returns when all are done.
func runParallel[R float](j *job[R], n, threads int) {
	splits.Add(1)
	gen := j.start(n)
	if g := min(n, threads); g > 1 && !testSerial.Load() {
		ensureWorkers(g - 1)
		for w := 1; w < g; w++ {
			select {
			case workCh <- token{t: j, gen: gen}:
			default: // pool saturated: the caller runs the share
			}
		}
	}
	for {
		w, ok := j.claim(gen)
		if !ok {
			break
		}
		j.runShare(w)
		j.done()
	}
	j.wg.Wait()
}

// splits counts the calls runParallel has split, wakes the calls to
// wakeWorker (read by tests).
var splits, wakes atomic.Int64

// testSerial, when set, makes parallel calls run their shares one after
// another on the calling goroutine (a test hook: as when the pool is busy).
var testSerial atomic.Bool

// job is a parallel GEMM: either whole batch elements per share (byBatch),
// blocks of a batch computed across it (batchInner), or a gm×gn grid of C
// blocks per share, repeated over the batch. With
// shareB, the shares of each column block (a group) share packed B panels:
// groups[wn] is column block wn's.
type job[R float] struct {
	shares
	p       plan[R]
	byBatch bool
	// batchInner: shares take blocks of the batch (see runBatchInner)
	batchInner bool
	gm, gn     int
	next       atomic.Int64 // byBatch, batchInner: the next element or block to take
	shareB     bool
	groups     []bGroup[R]
}

var (
	jobPool64 reuse.Pool[job[float64]]
	jobPool32 reuse.Pool[job[float32]]
)

func getJob[R float]() *job[R] {
	if j := poolOf[R, job[R]](&jobPool64, &jobPool32).Get(); j != nil {
		return j
	}
	return new(job[R])
}

func putJob[R float](j *job[R]) {
	j.p = plan[R]{}
	j.shareB, j.batchInner = false, false
	j.next.Store(0)
	poolOf[R, job[R]](&jobPool64, &jobPool32).Put(j)
}

func (j *job[R]) runShare(w int) {
	p := &j.p
	ws := getWorkspace[R]()
	switch {
	case j.batchInner:
		for units := p.batchInnerUnits(); ; {
			u := int(j.next.Add(1) - 1)
			if u >= units {
				break
			}
			p.runBatchInner(ws, u)
		}
	case j.byBatch:
		// Elements are taken one at a time, so that a goroutine slowed
		// down (by another process on its core, say) takes fewer.
		for {
			l := int(j.next.Add(1) - 1)
			if l >= p.nbatch {
				break
			}
			ao, bo, co := p.offsets(l)
			p.region(ws, nil, ao, bo, co, 0, p.m, 0, p.n)
		}
	default:
		wm, wn := w/j.gn, w%j.gn
		i0, i1 := part(p.m, p.kern.mr, j.gm, wm)
		j0, j1 := part(p.n, p.kern.nr, j.gn, wn)
		var sh *bShare[R]
		if j.shareB {
			sh = &bShare[R]{g: &j.groups[wn], w: wm}
		}
		for l := 0; l < p.nbatch; l++ {
			ao, bo, co := p.offsets(l)
			p.region(ws, sh, ao, bo, co, i0, i1, j0, j1)
		}
		if sh != nil {
			sh.g.at[wm].Store(inactive)
		}
	}
	putWorkspace(ws)
}

// part returns the w-th of g parts of [0, n) cut at multiples of unit.
func part(n, unit, g, w int) (lo, hi int) {
	tiles := ceilDiv(n, unit)
	lo = min(w*tiles/g*unit, n)
	hi = min((w+1)*tiles/g*unit, n)
	return lo, hi
}

// grid chooses a gm×gn split of an m×n product over at most t goroutines
// that balances the work and keeps each block's packing small.
func grid(m, n, mr, nr, t int) (gm, gn int) {
	tm, tn := ceilDiv(m, mr), ceilDiv(n, nr)
	gm, gn = 1, 1
	best := -1.0
	for a := 1; a <= t; a++ {
		b := t / a
		if a > tm || b > tn || b < 1 {
			continue
		}
		// Largest block's work plus its packing: every goroutine packs its
		// own rows of A and columns of B, and packing A (a transpose for
		// row-major A) costs more per element than packing B (a copy).
		bm := float64(ceilDiv(tm, a) * mr)
		bn := float64(ceilDiv(tn, b) * nr)
		cost := bm*bn + 16*bm + 4*bn
		if best < 0 || cost < best {
			best, gm, gn = cost, a, b
		}
	}
	return gm, gn
}
