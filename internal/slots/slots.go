// Package slots is the runtime's location-tagged slot store: for every value
// slot of a running program, zero or more copies, each tagged with the
// location it lives at and whether the runtime owns (and so must release)
// it. It is safe for concurrent use.
package slots

import (
	"sync"

	"github.com/goferro/goferro/internal/plan"
)

// Releaser is the buffer behaviour the store needs.
type Releaser interface{ Release() }

// Copy is one copy of a value.
type Copy[B Releaser] struct {
	At    plan.Loc
	Buf   B
	Owned bool // released by the store; false for the caller's inputs
}

// Store holds the copies of every slot.
type Store[B Releaser] struct {
	mu    sync.Mutex
	slots [][]Copy[B]
	// backing holds each slot's first copy (see New). Dropping a slot clears
	// its entry too, so that a dropped buffer is not kept reachable until
	// the store goes away.
	backing []Copy[B]
}

// New returns a store for n slots.
//
// Every slot starts with room for one copy in a shared backing array, so
// that the first Put of a slot — nearly every Put: a value usually lives at
// one location — does not allocate.
func New[B Releaser](n int) *Store[B] {
	s := &Store[B]{slots: make([][]Copy[B], n)}
	s.reset()
	return s
}

// reset gives every slot an empty, one-copy view of a fresh backing array.
func (s *Store[B]) reset() {
	s.backing = make([]Copy[B], len(s.slots))
	for i := range s.slots {
		s.slots[i] = s.backing[i : i : i+1]
	}
}

// Put adds a copy of slot at at. It reports false, and stores nothing, when
// the slot is out of range or already has a copy there.
func (s *Store[B]) Put(slot int, at plan.Loc, b B, owned bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if slot < 0 || slot >= len(s.slots) {
		return false
	}
	for _, c := range s.slots[slot] {
		if c.At == at {
			return false
		}
	}
	s.slots[slot] = append(s.slots[slot], Copy[B]{At: at, Buf: b, Owned: owned})
	return true
}

// Get returns the copy of slot at at.
func (s *Store[B]) Get(slot int, at plan.Loc) (B, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var zero B
	if slot < 0 || slot >= len(s.slots) {
		return zero, false
	}
	for _, c := range s.slots[slot] {
		if c.At == at {
			return c.Buf, true
		}
	}
	return zero, false
}

// First returns the first copy made of slot (without copying the list, as
// Copies does), and false if it has none.
func (s *Store[B]) First(slot int) (Copy[B], bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if slot < 0 || slot >= len(s.slots) || len(s.slots[slot]) == 0 {
		return Copy[B]{}, false
	}
	return s.slots[slot][0], true
}

// Copies returns the copies of slot in the order they were made.
func (s *Store[B]) Copies(slot int) []Copy[B] {
	s.mu.Lock()
	defer s.mu.Unlock()
	if slot < 0 || slot >= len(s.slots) {
		return nil
	}
	return append([]Copy[B](nil), s.slots[slot]...)
}

// Len returns the number of copies held, over all slots.
func (s *Store[B]) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, cs := range s.slots {
		n += len(cs)
	}
	return n
}

// Drop removes every copy of slot and releases the owned ones. It returns
// the number released.
func (s *Store[B]) Drop(slot int) int {
	s.mu.Lock()
	if slot < 0 || slot >= len(s.slots) {
		s.mu.Unlock()
		return 0
	}
	cs := s.slots[slot]
	s.slots[slot] = nil
	// Release outside the lock, from a copy: the stored entries are cleared
	// now so that they do not keep the buffers reachable.
	var local [2]Copy[B]
	out := local[:0]
	out = append(out, cs...)
	clear(cs)
	s.backing[slot] = Copy[B]{}
	s.mu.Unlock()
	return release(out)
}

// DropAll removes every copy of every slot, releasing the owned ones, and
// returns the number released.
//
// The releases run with the store locked (release hooks cannot reach the
// store), which lets DropAll empty the slots in place instead of allocating
// a new table on every run.
func (s *Store[B]) DropAll() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for i, cs := range s.slots {
		n += release(cs)
		clear(cs)
		s.slots[i] = nil
	}
	clear(s.backing)
	return n
}

func release[B Releaser](cs []Copy[B]) int {
	n := 0
	for _, c := range cs {
		if c.Owned {
			c.Buf.Release()
			n++
		}
	}
	return n
}
