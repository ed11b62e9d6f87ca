// Package reuse keeps buffers and other costly values for reuse between
// calls.
//
// A sync.Pool alone serves a goroutine poorly when it moves between
// processors: a value is put on the current processor's private slot, a
// goroutine that later runs on another processor cannot take it from there
// and makes a new one, and every garbage collection moves the values one
// step closer to being dropped. A program that collects garbage between
// calls (a benchmark loop does) at GOMAXPROCS=2 so made a new GEMM packing
// workspace, a fresh allocation that faults its pages in, on 55 of 102
// calls, and 64³ products took 25–40 µs instead of 6.
package reuse

import (
	"sync"
	"sync/atomic"
)

// Pool keeps values of type *T: one in a slot that any processor takes
// from and that garbage collection leaves alone, the rest in a sync.Pool.
// So a run of calls from one goroutine at a time always reuses one value,
// and at most one value per Pool outlives garbage collection. The zero
// Pool is empty and ready to use; a Pool must not be copied after first
// use.
type Pool[T any] struct {
	last atomic.Pointer[T]
	more sync.Pool
}

// Get returns a value kept by Put, or nil when none is.
func (p *Pool[T]) Get() *T {
	if x := p.last.Swap(nil); x != nil {
		return x
	}
	x, _ := p.more.Get().(*T)
	return x
}

// Put keeps x for a later Get. x must not be used after it is put.
func (p *Pool[T]) Put(x *T) {
	if x == nil || p.last.CompareAndSwap(nil, x) {
		return
	}
	p.more.Put(x)
}

// PutLoose keeps x for a later Get as a sync.Pool does: garbage collection
// may drop it. It is for values too big to hold on to between runs of
// calls.
func (p *Pool[T]) PutLoose(x *T) {
	if x != nil {
		p.more.Put(x)
	}
}
