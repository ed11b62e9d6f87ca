package gemm

import (
	"math"
	"runtime"
	"sync/atomic"
	"time"
)

// The shares of a parallel call whose C blocks span the same columns (a
// group: one per column block of the grid) need the same packed B panels.
// Rather than each packing its own copy, a group packs each panel once,
// the shares that reach it splitting the packing between them, into one of
// two slots, and computes its rows from it while the next panel goes to
// the other slot. Panels are numbered in the order every share of a group
// walks them (batch element, column block, depth block): the epoch.
//
// A share never waits for work that has not started, so a call whose
// shares run one after another (the pool busy elsewhere) cannot deadlock:
// it waits only for chunks of a panel that running shares are packing, and
// for running shares to finish with the panel a slot holds before the slot
// is reused. Waits always point to an earlier epoch, so they form no
// cycle. A share that falls two panels behind its group packs its own
// copy, as without sharing, and so does one that waits longer than
// shareWait (another share descheduled on a busy machine): the shares
// never run in lockstep for longer than a few chunks of packing.

// bGroup is the shared B state of one group.
type bGroup[R float] struct {
	slots [2]bSlot[R]
	// at holds, per share of the group, the epoch it works on (inactive
	// before it starts and after it ends).
	at []atomic.Int64
}

// bSlot is one packed B panel. state packs the epoch+1 the slot holds
// (bits 32–63; 0: none) and the shares using it (bits 0–31); claim and done
// count the chunks of the panel claimed and packed, tagged with epoch+1
// in the same way.
type bSlot[R float] struct {
	state, claim, done atomic.Uint64
	buf                []R
}

const (
	// shareWait is the longest a share waits for another before it packs
	// its own copy of a panel: a few times packing a chunk.
	shareWait = 50 * time.Microsecond
	low32     = 1<<32 - 1
	inactive  = math.MaxInt64
	// chunkPanels is the micro-panels a share packs at a time.
	chunkPanels = 4
)

// reset readies g for a call whose group has n shares.
func (g *bGroup[R]) reset(n int) {
	for i := range g.slots {
		s := &g.slots[i]
		s.state.Store(0)
		s.claim.Store(0)
		s.done.Store(0)
	}
	if cap(g.at) < n {
		g.at = make([]atomic.Int64, n)
	}
	g.at = g.at[:n]
	for i := range g.at {
		g.at[i].Store(inactive)
	}
}

// bShare is one share's view of its group: w is its index in the group and
// epoch the epoch of the next panel it needs.
type bShare[R float] struct {
	g     *bGroup[R]
	w     int
	epoch int64
}

// acquire returns the packed panel of real depth [pc, pc+kb) and real
// columns [jc, jc+nb) of B (for batch element offset bo), packed together
// with the group's other shares, or nil when the share is two panels
// behind, or has waited too long, and must pack its own. A non-nil panel
// must be released.
func (sh *bShare[R]) acquire(p *plan[R], bo, pc, kb, jc, nb int) []R {
	g, e := sh.g, sh.epoch
	g.at[sh.w].Store(e)
	s := &g.slots[e&1]
	tag := uint64(e+1) << 32
	var wt waiter
	for {
		v := s.state.Load()
		held := v &^ low32
		if held == tag {
			if s.state.CompareAndSwap(v, v+1) {
				break
			}
			continue
		}
		if held > tag {
			return nil
		}
		// The slot holds an older panel: reuse it once no share uses it
		// or is about to.
		if v&low32 != 0 || held != 0 && g.busy(sh.w, int64(held>>32)-1) {
			if wt.expired() {
				return nil
			}
			continue
		}
		if s.state.CompareAndSwap(v, tag|1) {
			s.buf = grow(s.buf, kb*ceilDiv(nb, p.kern.nr)*p.kern.nr)
			s.done.Store(tag) // before claim: packers count only after claiming
			s.claim.Store(tag)
			break
		}
	}
	for s.claim.Load()&^low32 != tag {
		runtime.Gosched() // the slot's first share is setting it up: no wait limit
	}
	nr := p.kern.nr
	cw := chunkPanels * nr
	chunks := ceilDiv(nb, cw)
	for {
		c := int(s.claim.Add(1)&low32) - 1
		if c >= chunks {
			break
		}
		j := c * cw
		w := min(cw, nb-j)
		p.packB(s.buf[j*kb:], bo, pc, kb, jc+j, w)
		s.done.Add(1)
	}
	wt = waiter{}
	for int(s.done.Load()&low32) < chunks {
		if wt.expired() {
			sh.release()
			return nil
		}
	}
	return s.buf
}

// waiter spins, yielding the processor, for up to shareWait.
type waiter struct {
	n     int
	start time.Time
}

// expired yields the processor and reports whether shareWait has passed
// since the first call.
func (w *waiter) expired() bool {
	if w.n&15 == 0 {
		if w.n == 0 {
			w.start = time.Now()
		} else if time.Since(w.start) > shareWait {
			return true
		}
	}
	w.n++
	runtime.Gosched()
	return false
}

// release ends the share's use of the panel acquire returned.
func (sh *bShare[R]) release() {
	sh.g.slots[sh.epoch&1].state.Add(^uint64(0))
}

// busy reports whether a share of the group other than w works on epoch e.
func (g *bGroup[R]) busy(w int, e int64) bool {
	for i := range g.at {
		if i != w && g.at[i].Load() == e {
			return true
		}
	}
	return false
}
