package goferrotest

import (
	"context"
	"sync"
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
