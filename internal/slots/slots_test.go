package slots

import (
	"errors"
	"testing"

	"github.com/goferro/goferro/internal/schedule"
)

type buf struct{ released *int }

func (b buf) Release() { *b.released++ }

func TestStore(t *testing.T) {
	n := 0
	s := New[buf](3)
	a, b := schedule.Loc{Engine: 0, Class: 0}, schedule.Loc{Engine: 1, Class: 0}
	if !s.Put(0, a, buf{&n}, false) || !s.Put(0, b, buf{&n}, true) || s.Put(0, b, buf{&n}, true) || s.Put(5, a, buf{&n}, true) {
		t.Fatal("Put results")
	}
	if _, ok := s.Get(0, b); !ok {
		t.Fatal("no copy at b")
	}
	if cs := s.Copies(0); len(cs) != 2 || cs[0].At != a {
		t.Fatalf("copies %v", cs)
	}
	if err := s.Drop(0); err != nil || n != 1 || s.Len() != 0 {
		t.Fatalf("Drop: %v, released %d, %d left", err, n, s.Len())
	}
	s.Put(1, a, buf{&n}, true)
	s.Put(2, a, buf{&n}, true)
	if err := s.DropAll(); err != nil || n != 3 {
		t.Fatalf("DropAll: %v, released %d", err, n)
	}
}

func TestFirstAndReput(t *testing.T) {
	n := 0
	s := New[buf](2)
	a, b := schedule.Loc{Engine: 0, Class: 0}, schedule.Loc{Engine: 1, Class: 1}
	if _, ok := s.First(0); ok {
		t.Fatal("First of an empty slot")
	}
	s.Put(0, a, buf{&n}, true)
	s.Put(0, b, buf{&n}, false)
	if c, ok := s.First(0); !ok || c.At != a || !c.Owned {
		t.Fatalf("First = %v, %v", c, ok)
	}
	if err := s.Drop(0); err != nil || n != 1 {
		t.Fatalf("Drop: %v, released %d", err, n)
	}
	// A dropped slot can hold copies again, and Copies sees them in order.
	s.Put(0, b, buf{&n}, true)
	s.Put(0, a, buf{&n}, true)
	if cs := s.Copies(0); len(cs) != 2 || cs[0].At != b || cs[1].At != a {
		t.Fatalf("copies %v", cs)
	}
	if _, ok := s.Get(0, a); !ok || s.Len() != 2 {
		t.Fatal("Get after re-Put")
	}
	if err := s.DropAll(); err != nil || n != 3 || s.Len() != 0 {
		t.Fatalf("DropAll: %v, released %d", err, n)
	}
}

type panicky struct{ released *int }

func (b panicky) Release() {
	*b.released++
	panic("bad hook")
}

// A release that panics is reported, and the other copies are released
// all the same.
func TestReleasePanic(t *testing.T) {
	n := 0
	s := New[Releaser](2)
	a, b := schedule.Loc{Engine: 0, Class: 0}, schedule.Loc{Engine: 1, Class: 0}
	s.Put(0, a, panicky{&n}, true)
	s.Put(0, b, buf{&n}, true)
	var pe *PanicError
	if err := s.Drop(0); !errors.As(err, &pe) || pe.Value != "bad hook" || n != 2 {
		t.Fatalf("Drop: %v, %d released", err, n)
	}
	s.Put(0, a, panicky{&n}, true)
	s.Put(1, a, buf{&n}, true)
	if err := s.DropAll(); !errors.As(err, &pe) || n != 4 || s.Len() != 0 {
		t.Fatalf("DropAll: %v, %d released", err, n)
	}
}
