package goferrotest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/tensor"
)

// ErrInjected is the error returned under FaultError.
var ErrInjected = errors.New("goferrotest: injected failure")

// Fault is a misbehaviour of an executor or a transfer provider: what a
// buggy engine might hand the runtime. A Tap (and so a Device or a Copier)
// applies it to the first buffer it returns.
type Fault int

// The faults.
const (
	// FaultNone: behave.
	FaultNone Fault = iota
	// FaultError: return ErrInjected.
	FaultError
	// FaultPanic: panic.
	FaultPanic
	// FaultDType: label the buffer with another dtype.
	FaultDType
	// FaultShape: label the buffer with another shape of the same element
	// count.
	FaultShape
	// FaultElementCount: label the buffer with one element more than its
	// memory holds.
	FaultElementCount
	// FaultShortBuffer: declare the memory one element shorter than the
	// view needs.
	FaultShortBuffer
	// FaultPlacement: label the buffer with a storage class it is not at.
	FaultPlacement
	// FaultForeignMemory: hand out memory the destination engine did not
	// allocate, labelled with the right placement.
	FaultForeignMemory
)

// Faults lists every fault but FaultNone, for tests that try them all.
var Faults = []Fault{FaultError, FaultPanic, FaultDType, FaultShape, FaultElementCount, FaultShortBuffer, FaultPlacement, FaultForeignMemory}

var faultNames = [...]string{"none", "error", "panic", "dtype", "shape", "element-count", "short-buffer", "placement", "foreign-memory"}

// String names the fault.
func (f Fault) String() string {
	if f >= 0 && int(f) < len(faultNames) {
		return faultNames[f]
	}
	return fmt.Sprintf("fault(%d)", int(f))
}

// foreignMemory is the payload of FaultForeignMemory buffers: memory no
// engine can own.
type foreignMemory struct{ t *tensor.Tensor }

// wrongClass is the storage class of FaultPlacement buffers.
const wrongClass driver.StorageClass = "storage.goferrotest.wrong"

// corrupt returns good relabelled as fault f says (a fault that is not
// about buffers returns good). The result's release hook releases good,
// so the engine's memory is still given back exactly once.
func corrupt(f Fault, good *driver.Buffer) *driver.Buffer {
	s := driver.BufferSpec{
		DType: good.DType(), Shape: good.Shape(), Strides: good.Strides(), Offset: good.Offset(), Len: good.Len(),
		Placement: good.Placement(), Backend: good.Backend(), Payload: good.Payload(), Release: good.Release,
	}
	n, _ := s.Shape.NumElements()
	switch f {
	case FaultDType:
		s.DType = tensor.Float32
		if good.DType() == tensor.Float32 {
			s.DType = tensor.Float64
		}
	case FaultShape:
		s.Shape, s.Strides = tensor.Shape{n}, nil
		if good.Rank() == 1 {
			s.Shape = tensor.Shape{1, n}
		}
	case FaultElementCount:
		s.Shape, s.Strides = tensor.Shape{n + 1}, nil
	case FaultShortBuffer:
		s.Len = max(0, s.Len-1)
	case FaultPlacement:
		s.Placement.Class = wrongClass
	case FaultForeignMemory:
		t, _ := good.Tensor()
		s.Payload = foreignMemory{t}
	default:
		return good
	}
	return driver.NewBuffer(s)
}

// TapStats are a Tap's counters.
type TapStats struct {
	Calls    int64 // executor or provider calls
	Buffers  int64 // buffers handed out
	Released int64 // of those, released (once each)
	Live     int64 // Buffers - Released
}

// Tap sits between the runtime and an executor or a transfer provider:
// it counts the calls and the buffers they hand out and how many of those
// were released, and makes calls misbehave on demand. One Tap may wrap
// any number of executors and providers; the zero value is ready to use
// and its methods are safe for concurrent use.
type Tap struct {
	mu     sync.Mutex
	fault  Fault
	faults map[driver.EngineID]Fault

	calls, buffers, released atomic.Int64
}

// SetFault makes every later call misbehave (FaultNone to stop).
func (t *Tap) SetFault(f Fault) {
	t.mu.Lock()
	t.fault = f
	t.mu.Unlock()
}

// SetFaultAt makes every later call whose results go to engine id (the
// executor's engine, a transfer's destination) misbehave; it takes
// precedence over SetFault for that engine.
func (t *Tap) SetFaultAt(id driver.EngineID, f Fault) {
	t.mu.Lock()
	if t.faults == nil {
		t.faults = map[driver.EngineID]Fault{}
	}
	t.faults[id] = f
	t.mu.Unlock()
}

// Stats returns the counters.
func (t *Tap) Stats() TapStats {
	b, r := t.buffers.Load(), t.released.Load()
	return TapStats{Calls: t.calls.Load(), Buffers: b, Released: r, Live: b - r}
}

// Executor wraps ex.
func (t *Tap) Executor(ex driver.Executor) driver.Executor {
	return driver.ExecutorFunc(func(ctx context.Context, call *driver.Call) ([]*driver.Buffer, error) {
		f, err := t.enter(call.Location.Engine)
		if err != nil {
			return nil, err
		}
		outs, err := ex.Execute(ctx, call)
		if err != nil {
			return nil, err
		}
		for i, b := range outs {
			outs[i] = t.count(b)
		}
		if len(outs) > 0 {
			outs[0] = corrupt(f, outs[0])
		}
		return outs, nil
	})
}

// Provider wraps p. The wrapper serves (driver.ScopedProvider) and orders
// (driver.OrderedProvider) the transfers p does.
func (t *Tap) Provider(p driver.TransferProvider) driver.TransferProvider {
	return tappedProvider{driver.TransferFunc(func(ctx context.Context, req *driver.TransferRequest) (*driver.Buffer, error) {
		f, err := t.enter(req.To.Engine)
		if err != nil {
			return nil, err
		}
		out, err := p.Transfer(ctx, req)
		if err != nil || out == nil {
			return out, err
		}
		return corrupt(f, t.count(out)), nil
	}), p}
}

// tappedProvider is a provider wrapped by a Tap.
type tappedProvider struct {
	driver.TransferFunc
	inner driver.TransferProvider
}

// Serves implements driver.ScopedProvider: the wrapped provider's answer,
// true when it serves every engine.
func (w tappedProvider) Serves(from, to driver.EngineID) bool {
	sp, ok := w.inner.(driver.ScopedProvider)
	return !ok || sp.Serves(from, to)
}

// Orders implements driver.OrderedProvider: the wrapped provider's answer.
func (w tappedProvider) Orders(from, to driver.EngineID) bool {
	return driver.ProviderOrders(w.inner, from, to)
}

// enter counts a call and applies the call-level faults; it returns the
// fault to apply to the results.
func (t *Tap) enter(dst driver.EngineID) (Fault, error) {
	t.calls.Add(1)
	t.mu.Lock()
	f := t.fault
	if g, ok := t.faults[dst]; ok {
		f = g
	}
	t.mu.Unlock()
	switch f {
	case FaultError:
		return f, ErrInjected
	case FaultPanic:
		panic("goferrotest: injected panic")
	}
	return f, nil
}

// count returns b with a release hook that counts.
func (t *Tap) count(b *driver.Buffer) *driver.Buffer {
	if b == nil {
		return nil
	}
	t.buffers.Add(1)
	return b.WithRelease(func() { // driver.Buffer runs it once
		t.released.Add(1)
		b.Release()
	})
}
