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
}

// New returns a store for n slots.
func New[B Releaser](n int) *Store[B] { return &Store[B]{slots: make([][]Copy[B], n)} }

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
	s.mu.Unlock()
	return release(cs)
}

// DropAll removes every copy of every slot, releasing the owned ones, and
// returns the number released.
func (s *Store[B]) DropAll() int {
	s.mu.Lock()
	all := s.slots
	s.slots = make([][]Copy[B], len(all))
	s.mu.Unlock()
	n := 0
	for _, cs := range all {
		n += release(cs)
	}
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
