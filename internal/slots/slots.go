// Package slots is the runtime's location-tagged slot store: for every value
// slot of a running program, zero or more copies, each tagged with the
// location it lives at and whether the runtime owns (and so must release)
// it. It is safe for concurrent use.
package slots

import (
	"fmt"
	"sync"

	"github.com/goferro/goferro/internal/schedule"
)

// Releaser is the buffer behaviour the store needs.
type Releaser interface{ Release() }

// Copy is one copy of a value.
type Copy[B Releaser] struct {
	At    schedule.Loc
	Buf   B
	Owned bool // released by the store; false for the caller's inputs
}

// Store holds the copies of every slot. The zero value has no slots; Init
// sizes it.
type Store[B Releaser] struct {
	mu    sync.Mutex
	slots []entry[B]
}

// entry is one slot's copies: the first inline, so that a store costs one
// allocation however many slots it has and the first Put of a slot (nearly
// every Put: a value usually lives at one location) allocates nothing.
type entry[B Releaser] struct {
	n     int // number of copies: first, then more[:n-1]
	first Copy[B]
	more  []Copy[B]
}

// at returns the i-th copy of e.
func (e *entry[B]) at(i int) *Copy[B] {
	if i == 0 {
		return &e.first
	}
	return &e.more[i-1]
}

// New returns a store for n slots.
func New[B Releaser](n int) *Store[B] {
	s := &Store[B]{}
	s.Init(n)
	return s
}

// Init empties the store and sizes it for n slots; it lets a store live
// inside a larger allocation. It must not run concurrently with other
// methods.
func (s *Store[B]) Init(n int) { s.slots = make([]entry[B], n) }

// Put adds a copy of slot at at. It reports false, and stores nothing, when
// the slot is out of range or already has a copy there.
func (s *Store[B]) Put(slot int, at schedule.Loc, b B, owned bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if slot < 0 || slot >= len(s.slots) {
		return false
	}
	e := &s.slots[slot]
	for i := range e.n {
		if e.at(i).At == at {
			return false
		}
	}
	c := Copy[B]{At: at, Buf: b, Owned: owned}
	if e.n == 0 {
		e.first = c
	} else {
		e.more = append(e.more, c)
	}
	e.n++
	return true
}

// Get returns the copy of slot at at.
func (s *Store[B]) Get(slot int, at schedule.Loc) (B, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var zero B
	if slot < 0 || slot >= len(s.slots) {
		return zero, false
	}
	e := &s.slots[slot]
	for i := range e.n {
		if c := e.at(i); c.At == at {
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
	if slot < 0 || slot >= len(s.slots) || s.slots[slot].n == 0 {
		return Copy[B]{}, false
	}
	return s.slots[slot].first, true
}

// Copies returns the copies of slot in the order they were made.
func (s *Store[B]) Copies(slot int) []Copy[B] {
	s.mu.Lock()
	defer s.mu.Unlock()
	if slot < 0 || slot >= len(s.slots) || s.slots[slot].n == 0 {
		return nil
	}
	e := &s.slots[slot]
	return append([]Copy[B]{e.first}, e.more[:e.n-1]...)
}

// Len returns the number of copies held, over all slots.
func (s *Store[B]) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for i := range s.slots {
		n += s.slots[i].n
	}
	return n
}

// PanicError is a release hook that panicked; the store goes on releasing
// the other copies.
type PanicError struct{ Value any }

// Error formats the panic value.
func (e *PanicError) Error() string { return fmt.Sprintf("release panicked: %v", e.Value) }

// Drop removes every copy of slot and releases the owned ones, all of them
// even when a release panics; the first panic comes back as a
// *PanicError.
func (s *Store[B]) Drop(slot int) error {
	s.mu.Lock()
	if slot < 0 || slot >= len(s.slots) {
		s.mu.Unlock()
		return nil
	}
	// Release outside the lock, from the entry taken out of the table; the
	// table entry is cleared so that it does not keep the buffers
	// reachable.
	e := s.slots[slot]
	s.slots[slot] = entry[B]{}
	s.mu.Unlock()
	return e.release()
}

// DropAll removes every copy of every slot and releases the owned ones, as
// Drop does.
//
// The releases run with the store locked (release hooks cannot reach the
// store), which lets DropAll empty the slots in place.
func (s *Store[B]) DropAll() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var first error
	for i := range s.slots {
		if err := s.slots[i].release(); err != nil && first == nil {
			first = err
		}
		s.slots[i] = entry[B]{}
	}
	return first
}

// release releases e's owned copies, every one of them, and returns the
// first panic as a *PanicError.
func (e *entry[B]) release() error {
	var first error
	for i := range e.n {
		if c := e.at(i); c.Owned {
			if err := release(c.Buf); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// release runs b's release hook, turning a panic into a *PanicError.
func release[B Releaser](b B) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{v}
		}
	}()
	b.Release()
	return nil
}
