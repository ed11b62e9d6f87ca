package gemm

import (
	"sync"
	"sync/atomic"
)

// The worker pool: long-lived goroutines that run shares of a parallel GEMM,
// so that a threaded call starts no goroutines and allocates nothing.

type share struct {
	t  shareTask
	w  int
	wg *sync.WaitGroup
}

type shareTask interface{ runShare(w int) }

var (
	workCh      = make(chan share, 256)
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
		go func() {
			for s := range workCh {
				s.t.runShare(s.w)
				s.wg.Done()
			}
		}()
	}
	workersMu.Unlock()
}

// runParallel runs shares 0..n-1 of t, share 0 on the calling goroutine, and
// returns when all are done.
func runParallel(t shareTask, n int, wg *sync.WaitGroup) {
	if n > 1 {
		ensureWorkers(n - 1)
		wg.Add(n - 1)
		for w := 1; w < n; w++ {
			workCh <- share{t: t, w: w, wg: wg}
		}
	}
	t.runShare(0)
	wg.Wait()
}

// job is a parallel GEMM: either whole batch elements per share (byBatch) or
// a gm×gn grid of C blocks per share, repeated over the batch.
type job[R float] struct {
	p       plan[R]
	byBatch bool
	shares  int
	gm, gn  int
	next    atomic.Int64 // byBatch: the next batch element to take
	wg      sync.WaitGroup
}

var jobPool64 = sync.Pool{New: func() any { return new(job[float64]) }}
var jobPool32 = sync.Pool{New: func() any { return new(job[float32]) }}

func getJob[R float]() *job[R] {
	var z R
	if _, ok := any(z).(float64); ok {
		return jobPool64.Get().(*job[R])
	}
	return jobPool32.Get().(*job[R])
}

func putJob[R float](j *job[R]) {
	j.p = plan[R]{}
	j.next.Store(0)
	var z R
	if _, ok := any(z).(float64); ok {
		jobPool64.Put(j)
		return
	}
	jobPool32.Put(j)
}

func (j *job[R]) runShare(w int) {
	p := &j.p
	ws := getWorkspace[R]()
	if j.byBatch {
		// Elements are taken one at a time, so that a goroutine slowed
		// down (by another process on its core, say) takes fewer.
		for {
			l := int(j.next.Add(1) - 1)
			if l >= p.nbatch {
				break
			}
			ao, bo, co := p.offsets(l)
			p.region(ws, ao, bo, co, 0, p.m, 0, p.n)
		}
	} else {
		wm, wn := w/j.gn, w%j.gn
		i0, i1 := part(p.m, p.kern.mr, j.gm, wm)
		j0, j1 := part(p.n, p.kern.nr, j.gn, wn)
		for l := 0; l < p.nbatch; l++ {
			ao, bo, co := p.offsets(l)
			p.region(ws, ao, bo, co, i0, i1, j0, j1)
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
