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

// Stats are a Device's counters.
type Stats struct {
	Executions  int64 // executor calls
	Allocations int64 // buffers allocated in the pool
	Releases    int64 // buffers returned to the pool
	Live        int64 // Allocations - Releases
	Completed   int64 // instructions a WithQueue device has run (its queue's completions)
}

// Device is a fake device engine. Create it with NewDevice and register
// Engine() with a runtime.
type Device struct {
	id       driver.EngineID
	domain   driver.AllocationDomain
	classes  []driver.StorageClass
	families []string
	tap      Tap

	mu     sync.Mutex
	live   map[*tensor.Tensor]driver.StorageClass
	reject bool

	onExecute hook[*driver.Call]
	queue     *queue // nil: the executor returns finished work

	execs, allocs, releases, completed atomic.Int64
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

// NewDevice returns a fake device with the given engine id.
func NewDevice(id driver.EngineID, opts ...Option) *Device {
	d := &Device{id: id, families: slices.Clone(Families), live: map[*tensor.Tensor]driver.StorageClass{}}
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
	exec := driver.ExecutorFunc(d.execute)
	if d.queue != nil {
		exec = d.enqueue
	}
	return driver.Engine{
		ID:             d.id,
		Backend:        Backend,
		Domain:         d.domain,
		Storage:        slices.Clone(d.classes),
		DefaultStorage: d.classes[0],
		Families:       slices.Clone(d.families),
		Executor:       d.tap.Executor(exec),
		InOrder:        d.queue != nil,
		Ingress: driver.Ingress{
			Eligible: d.eligible,
			Accept:   d.accept,
			Resident: d.Owns,
		},
		Materializer: driver.MaterializerFunc(d.materialize),
	}
}

// SetFault makes the executor misbehave from now on (FaultNone to stop).
func (d *Device) SetFault(f Fault) { d.tap.SetFault(f) }

// OnExecute installs a hook called at the start of every execution; a
// non-nil error fails the execution with it. Tests use it to block, to
// observe concurrency or to cancel. nil removes the hook.
func (d *Device) OnExecute(hook func(ctx context.Context, call *driver.Call) error) {
	d.onExecute.set(hook)
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
	return Stats{Executions: d.execs.Load(), Allocations: a, Releases: r, Live: a - r, Completed: d.completed.Load()}
}

// Owns reports whether b is a live buffer of this device: its memory was
// allocated from the device's pool and not released, it claims the
// device's domain and the class it was allocated at, and its description
// is exactly that memory's (dtype, view, length): the device measures what
// it owns rather than trusting the label.
func (d *Device) Owns(b *driver.Buffer) bool {
	t, ok := b.Tensor()
	if !ok || b.Placement().Domain != d.domain || !b.Describes(t) {
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
	t, ok := b.Tensor()
	switch {
	case !ok:
		return fmt.Errorf("goferrotest: payload %T is not device memory", b.Payload())
	case !b.Describes(t):
		return fmt.Errorf("goferrotest: buffer metadata %v%v does not describe its memory %v%v", b.DType(), b.ShapeView(), t.DType(), t.ShapeView())
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
	if err := d.onExecute.call(ctx, call); err != nil {
		return nil, err
	}
	ins := make([]*tensor.Tensor, len(call.Inputs))
	for i, b := range call.Inputs {
		if !d.Owns(b) {
			return nil, fmt.Errorf("goferrotest: device %s: operand %d is not its memory", d.id, i)
		}
		ins[i], _ = b.Tensor()
	}
	res, err := ref.Kernel(call, ins) // a Device computes everything on the host, naively
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
	return outs, nil
}
