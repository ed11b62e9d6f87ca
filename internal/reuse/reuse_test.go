package reuse

import (
	"runtime"
	"sync"
	"testing"
)

// TestKeptThroughGC checks that a value put before garbage collections is
// the one Get returns after them, from whatever processor: a sync.Pool
// alone drops it after two collections.
func TestKeptThroughGC(t *testing.T) {
	var p Pool[[]byte]
	if p.Get() != nil {
		t.Fatal("an empty Pool returned a value")
	}
	buf := make([]byte, 1<<16)
	p.Put(&buf)
	runtime.GC()
	runtime.GC()
	runtime.GC()
	if got := p.Get(); got != &buf {
		t.Fatalf("after three collections Get returned %p, want the value put (%p)", got, &buf)
	}
	if p.Get() != nil {
		t.Fatal("a second Get returned a value; one was put")
	}
}

// TestConcurrent puts and gets from many goroutines: every value a Get
// returns is one that was put and is held by one goroutine at a time.
func TestConcurrent(t *testing.T) {
	var p Pool[int]
	var held sync.Map
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				x := p.Get()
				if x == nil {
					x = new(int)
					*x = g*1000 + i
				}
				if _, dup := held.LoadOrStore(x, true); dup {
					t.Error("a value was handed to two goroutines at once")
					return
				}
				held.Delete(x)
				p.Put(x)
			}
		}()
	}
	wg.Wait()
}

// TestPutLoose checks that a value put loosely is returned like any other
// while no collection intervenes.
func TestPutLoose(t *testing.T) {
	var p Pool[int]
	x := new(int)
	p.PutLoose(x)
	p.PutLoose(nil)
	if got := p.Get(); got != x && got != nil {
		t.Fatalf("Get returned %p, want %p or nil", got, x)
	}
}
