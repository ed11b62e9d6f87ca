package goferrotest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/goferro/goferro/driver"
)

// hook is a callback a test installs, replaces or removes while calls run:
// a Device's OnExecute, a Copier's OnTransfer.
type hook[T any] struct {
	mu sync.Mutex
	f  func(context.Context, T) error
}

// set installs f; nil removes the callback.
func (h *hook[T]) set(f func(context.Context, T) error) {
	h.mu.Lock()
	h.f = f
	h.mu.Unlock()
}

// call runs the installed callback on x and returns its error, or nil when
// none is installed. The lock is not held during the callback, which may
// block or install another.
func (h *hook[T]) call(ctx context.Context, x T) error {
	h.mu.Lock()
	f := h.f
	h.mu.Unlock()
	if f == nil {
		return nil
	}
	return f(ctx, x)
}

// Barrier holds the first call of each engine until calls of n different
// engines have arrived. A test that expects independent branches on
// different engines to execute at the same time makes each engine's calls
// wait at one: a serial walk never opens it. Later calls of an engine pass
// at once. Its methods are safe for concurrent use.
type Barrier struct {
	n       int
	timeout time.Duration

	mu      sync.Mutex
	arrived map[driver.EngineID]bool
	open    chan struct{}
}

// NewBarrier returns a barrier that opens once n engines have arrived; a
// first call gives up after waiting timeout.
func NewBarrier(n int, timeout time.Duration) *Barrier {
	return &Barrier{n: n, timeout: timeout, arrived: map[driver.EngineID]bool{}, open: make(chan struct{})}
}

// Wait marks engine as arrived. On the engine's first call it waits until
// the barrier opens and returns an error if that takes longer than the
// timeout.
func (b *Barrier) Wait(engine driver.EngineID) error {
	b.mu.Lock()
	first := !b.arrived[engine]
	b.arrived[engine] = true
	if first && len(b.arrived) == b.n {
		close(b.open)
	}
	b.mu.Unlock()
	if !first {
		return nil
	}
	select {
	case <-b.open:
		return nil
	case <-time.After(b.timeout):
		return fmt.Errorf("goferrotest: barrier: engine %s waited %v for %d engines to execute; the other branches never started", engine, b.timeout, b.n)
	}
}

// OnExecute is Wait as a Device's OnExecute hook: the call's engine
// arrives.
func (b *Barrier) OnExecute(_ context.Context, call *driver.Call) error {
	return b.Wait(call.Location.Engine)
}
