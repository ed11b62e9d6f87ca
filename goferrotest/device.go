// Package goferrotest provides fake execution engines and transfer
// providers for testing code that uses the goferro runtime, in the spirit of
// net/http/httptest.
//
// A Device is a fake device engine that runs on the CPU but owns its own
// allocation domain: every buffer it hands out is host memory it allocated
// and keeps a record of, so its residency check recognises its own memory
// and rejects anyone else's, exactly as a real device would. Storage classes
// are chosen by the test. A Copier is a transfer provider that really copies
// between pools (devices and host). Both can be told to misbehave — fail,
// panic, return the wrong dtype, shape, element count or buffer length, the
// wrong placement, or memory of a foreign domain — and both count what they
// do (executions, transfers, allocations, releases), so tests can check
// that the runtime catches every fault and frees every copy.
package goferrotest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro/graph/ref"
	"github.com/goferro/goferro/tensor"
)

// Backend is the backend family of Device buffers.
const Backend = "goferrotest"

// ErrInjected is the error returned by an injected FaultError.
var ErrInjected = errors.New("goferrotest: injected failure")

// Fault is a misbehaviour a Device executor or a Copier can be told to
// show. Executors and providers apply it to the buffer they return.
type Fault int

// The faults.
const (
	// FaultNone: behave.
	FaultNone Fault = iota
	// FaultError: return ErrInjected.
	FaultError
	// FaultPanic: panic.
	FaultPanic
	// FaultDType: return a buffer of another dtype (same shape).
	FaultDType
	// FaultShape: return a buffer of another shape with the same element
	// count.
	FaultShape
	// FaultElementCount: return a buffer with one element more.
	FaultElementCount
	// FaultShortBuffer: return correct metadata over memory one element too
	// short.
	FaultShortBuffer
	// FaultPlacement: return the engine's own memory tagged with the wrong
	// placement.
	FaultPlacement
	// FaultForeignMemory: return memory the destination engine did not
	// allocate (another pool's, or plain Go memory) tagged with the right
	// placement.
	FaultForeignMemory
)

var faultNames = [...]string{"none", "error", "panic", "dtype", "shape", "element-count", "short-buffer", "placement", "foreign-memory"}

// String names the fault.
func (f Fault) String() string {
	if f >= 0 && int(f) < len(faultNames) {
		return faultNames[f]
	}
	return fmt.Sprintf("fault(%d)", int(f))
}

// Kernel computes one instruction on host tensors. The default kernel is
// ReferenceKernel.
type Kernel func(call *driver.Call, inputs []*tensor.Tensor) ([]*tensor.Tensor, error)

// ReferenceKernel evaluates the instruction with the reference semantics
// (package graph/ref: core ops, and extension ops through their family's
// Eval).
func ReferenceKernel(call *driver.Call, inputs []*tensor.Tensor) ([]*tensor.Tensor, error) {
	return ref.Kernel(call, inputs)
}

// Stats are a Device's counters.
type Stats struct {
	Executions  int64 // executor calls
	Allocations int64 // buffers allocated in the pool
	Releases    int64 // buffers returned to the pool
	Live        int64 // Allocations - Releases
}

// Device is a fake device engine. Create it with NewDevice and register
// Engine() with a runtime.
type Device struct {
	id       driver.EngineID
	domain   driver.AllocationDomain
	classes  []driver.StorageClass
	families []string
	kernel   Kernel

	mu     sync.Mutex
	live   map[*tensor.Tensor]driver.StorageClass
	fault  Fault
	hook   func(context.Context, *driver.Call) error
	reject bool

	execs, allocs, releases atomic.Int64
}

// Option configures a Device.
type Option func(*Device)

// WithStorage sets the device's storage classes; the first is the default.
// The default is a single class "storage.<id>".
func WithStorage(classes ...driver.StorageClass) Option {
	return func(d *Device) { d.classes = slices.Clone(classes) }
}

// WithDomain sets the allocation domain (default "domain.<id>").
func WithDomain(dom driver.AllocationDomain) Option { return func(d *Device) { d.domain = dom } }

// WithFamilies sets the capability families (default Families).
func WithFamilies(families ...string) Option {
	return func(d *Device) { d.families = slices.Clone(families) }
}

// WithKernel sets the function that computes instructions (default
// ReferenceKernel).
func WithKernel(k Kernel) Option { return func(d *Device) { d.kernel = k } }

// NewDevice returns a fake device with the given engine id.
func NewDevice(id driver.EngineID, opts ...Option) *Device {
	d := &Device{id: id, families: slices.Clone(Families), kernel: ReferenceKernel, live: map[*tensor.Tensor]driver.StorageClass{}}
	for _, o := range opts {
		o(d)
	}
	if d.domain == "" {
		d.domain = driver.AllocationDomain("domain." + string(id))
	}
	if len(d.classes) == 0 {
		d.classes = []driver.StorageClass{driver.StorageClass("storage." + string(id))}
	}
	return d
}

// ID returns the engine id.
func (d *Device) ID() driver.EngineID { return d.id }

// Domain returns the device's allocation domain.
func (d *Device) Domain() driver.AllocationDomain { return d.domain }

// DefaultStorage returns the device's default storage class.
func (d *Device) DefaultStorage() driver.StorageClass { return d.classes[0] }

// Storage returns the device's storage classes, default first.
func (d *Device) Storage() []driver.StorageClass { return slices.Clone(d.classes) }

// Engine returns the registration of the device, for goferro.WithEngine or
// Config.AddEngine.
func (d *Device) Engine() driver.Engine {
	return driver.Engine{
		ID:             d.id,
		Backend:        Backend,
		Domain:         d.domain,
		Storage:        slices.Clone(d.classes),
		DefaultStorage: d.classes[0],
		Families:       slices.Clone(d.families),
		Executor:       driver.ExecutorFunc(d.execute),
		Ingress: driver.Ingress{
			Eligible: d.eligible,
			Accept:   d.accept,
			Resident: d.Owns,
		},
		Materializer: driver.MaterializerFunc(d.materialize),
	}
}

// SetFault makes the executor misbehave from now on (FaultNone to stop).
func (d *Device) SetFault(f Fault) {
	d.mu.Lock()
	d.fault = f
	d.mu.Unlock()
}

// OnExecute installs a hook called at the start of every execution; a
// non-nil error fails the execution with it. Tests use it to block, to
// observe concurrency or to cancel. nil removes the hook.
func (d *Device) OnExecute(hook func(ctx context.Context, call *driver.Call) error) {
	d.mu.Lock()
	d.hook = hook
	d.mu.Unlock()
}

// RejectIngress makes the device refuse (or again accept) program inputs
// at ingress.
func (d *Device) RejectIngress(reject bool) {
	d.mu.Lock()
	d.reject = reject
	d.mu.Unlock()
}

// Stats returns the device's counters.
func (d *Device) Stats() Stats {
	a, r := d.allocs.Load(), d.releases.Load()
	return Stats{Executions: d.execs.Load(), Allocations: a, Releases: r, Live: a - r}
}

// Owns reports whether b is a live buffer of this device: its memory was
// allocated from the device's pool and not released, it claims the
// device's domain and the class it was allocated at.
func (d *Device) Owns(b *driver.Buffer) bool {
	t, ok := b.Tensor()
	if !ok || b.Placement().Domain != d.domain {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	c, ok := d.live[t]
	return ok && c == b.Placement().Class
}

// alloc allocates a zeroed tensor in the pool at class and returns it with
// the release hook that gives it back.
func (d *Device) alloc(dt tensor.DType, shape tensor.Shape, class driver.StorageClass) (*tensor.Tensor, func(), error) {
	if !slices.Contains(d.classes, class) {
		return nil, nil, fmt.Errorf("goferrotest: device %s has no storage class %s", d.id, class)
	}
	t, err := tensor.Zeros(dt, shape...)
	if err != nil {
		return nil, nil, err
	}
	d.mu.Lock()
	d.live[t] = class
	d.mu.Unlock()
	d.allocs.Add(1)
	release := func() {
		d.mu.Lock()
		delete(d.live, t)
		d.mu.Unlock()
		d.releases.Add(1)
	}
	return t, release, nil
}

// upload copies t into a new pool buffer at class.
func (d *Device) upload(t *tensor.Tensor, class driver.StorageClass) (*driver.Buffer, error) {
	dst, release, err := d.alloc(t.DType(), t.Shape(), class)
	if err != nil {
		return nil, err
	}
	if err := tensor.CopyInto(dst, t); err != nil {
		release()
		return nil, err
	}
	return driver.TensorBuffer(dst, driver.Placement{Class: class, Domain: d.domain}, Backend, release), nil
}

// Upload copies a host tensor into the device's memory at its default
// storage class, as a program input would arrive there. The caller owns the
// buffer and should Release it.
func (d *Device) Upload(t *tensor.Tensor) (*driver.Buffer, error) { return d.upload(t, d.classes[0]) }

// UploadTo is Upload at a given storage class of the device.
func (d *Device) UploadTo(t *tensor.Tensor, class driver.StorageClass) (*driver.Buffer, error) {
	return d.upload(t, class)
}

func (d *Device) eligible(p driver.Placement, class driver.StorageClass) bool {
	d.mu.Lock()
	reject := d.reject
	d.mu.Unlock()
	return !reject && p.Domain == d.domain && p.Class == class && slices.Contains(d.classes, class)
}

func (d *Device) accept(b *driver.Buffer, _ driver.StorageClass) error {
	if _, ok := b.Tensor(); !ok {
		return fmt.Errorf("goferrotest: payload %T is not device memory", b.Payload())
	}
	return nil
}

func (d *Device) materialize(_ context.Context, b *driver.Buffer) (*tensor.Tensor, error) {
	t, ok := b.Tensor()
	if !ok || !d.Owns(b) {
		return nil, fmt.Errorf("goferrotest: device %s does not own the buffer", d.id)
	}
	return t.Clone(), nil
}

func (d *Device) execute(ctx context.Context, call *driver.Call) ([]*driver.Buffer, error) {
	d.execs.Add(1)
	d.mu.Lock()
	hook, fault := d.hook, d.fault
	d.mu.Unlock()
	if hook != nil {
		if err := hook(ctx, call); err != nil {
			return nil, err
		}
	}
	switch fault {
	case FaultError:
		return nil, ErrInjected
	case FaultPanic:
		panic("goferrotest: injected executor panic")
	}
	ins := make([]*tensor.Tensor, len(call.Inputs))
	for i, b := range call.Inputs {
		if !d.Owns(b) {
			return nil, fmt.Errorf("goferrotest: device %s: operand %d is not its memory", d.id, i)
		}
		ins[i], _ = b.Tensor()
	}
	res, err := d.kernel(call, ins)
	if err != nil {
		return nil, err
	}
	outs := make([]*driver.Buffer, 0, len(res))
	for _, r := range res {
		b, err := d.upload(r, call.Placement.Class)
		if err != nil {
			for _, o := range outs {
				o.Release()
			}
			return nil, err
		}
		outs = append(outs, b)
	}
	if fault != FaultNone && len(outs) > 0 {
		bad, err := corrupt(fault, outs[0], d, nil, call.Placement)
		if err != nil {
			return nil, err
		}
		outs[0] = bad
	}
	return outs, nil
}

// corrupt returns a faulty version of good, a buffer of pool (nil: host
// memory) with placement want. good is released or reused by the result.
// foreign is a device whose memory counts as foreign (may be nil).
func corrupt(f Fault, good *driver.Buffer, pool *Device, foreign *Device, want driver.Placement) (*driver.Buffer, error) {
	t, _ := good.Tensor()
	meta := driver.BufferSpec{
		DType: good.DType(), Shape: good.Shape(), Strides: good.Strides(), Offset: good.Offset(),
		Len: good.Len(), Placement: good.Placement(), Backend: good.Backend(), Payload: t, Release: good.Release,
	}
	fresh := func(dt tensor.DType, shape tensor.Shape) (*driver.Buffer, error) {
		good.Release()
		if pool == nil {
			z, err := tensor.Zeros(dt, shape...)
			if err != nil {
				return nil, err
			}
			return driver.TensorBuffer(z, want, driver.BackendHost, nil), nil
		}
		z, rel, err := pool.alloc(dt, shape, want.Class)
		if err != nil {
			return nil, err
		}
		return driver.TensorBuffer(z, want, Backend, rel), nil
	}
	n := t.Len()
	switch f {
	case FaultDType:
		dt := tensor.Float32
		if good.DType() == tensor.Float32 {
			dt = tensor.Float64
		}
		return fresh(dt, good.Shape())
	case FaultShape:
		if good.Rank() == 1 {
			meta.Shape = tensor.Shape{1, n}
		} else {
			meta.Shape = tensor.Shape{n}
		}
		meta.Strides = nil
		return driver.NewBuffer(meta), nil
	case FaultElementCount:
		return fresh(good.DType(), tensor.Shape{n + 1})
	case FaultShortBuffer:
		meta.Len = max(0, meta.Len-1)
		return driver.NewBuffer(meta), nil
	case FaultPlacement:
		meta.Placement = driver.Placement{Class: "storage.goferrotest.wrong", Domain: want.Domain}
		if pool != nil && len(pool.classes) > 1 {
			for _, c := range pool.classes {
				if c != want.Class {
					meta.Placement.Class = c
					break
				}
			}
		}
		return driver.NewBuffer(meta), nil
	case FaultForeignMemory:
		good.Release()
		if foreign != nil && foreign != pool {
			z, rel, err := foreign.alloc(good.DType(), good.Shape(), foreign.classes[0])
			if err != nil {
				return nil, err
			}
			return driver.TensorBuffer(z, want, Backend, rel), nil
		}
		z, err := tensor.Zeros(good.DType(), good.Shape()...)
		if err != nil {
			return nil, err
		}
		return driver.TensorBuffer(z, want, Backend, nil), nil
	}
	return good, nil
}
