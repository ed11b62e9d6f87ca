package goferro_test

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/tensor"
)

// Helpers of the done-means tests (done_*_test.go).

var doneHostPlacement = driver.Placement{Class: driver.StorageHost, Domain: driver.HostDomain}

// doneHostIngress returns d's registration changed so that host buffers
// (HostBuffer) may also enter it, at any of its storage classes. The device
// still only executes on its own memory, so such an engine is an ingress
// point, not a consumer, of host inputs.
func doneHostIngress(d *goferrotest.Device) driver.Engine {
	e := d.Engine()
	elig, res := e.Ingress.Eligible, e.Ingress.Resident
	classes := d.Storage()
	e.Ingress.Eligible = func(p driver.Placement, c driver.StorageClass) bool {
		return elig(p, c) || (p == doneHostPlacement && slices.Contains(classes, c))
	}
	e.Ingress.Resident = func(b *driver.Buffer) bool {
		return res(b) || (b.Placement() == doneHostPlacement && b.Backend() == driver.BackendHost)
	}
	return e
}

// doneNoLeaks asserts that the devices hold exactly keep[i] buffers (the
// caller's inputs) and the copier no host copies.
func doneNoLeaks(t *testing.T, cp *goferrotest.Copier, devs []*goferrotest.Device, keep ...int64) {
	t.Helper()
	for i, d := range devs {
		var k int64
		if i < len(keep) {
			k = keep[i]
		}
		if st := d.Stats(); st.Live != k {
			t.Errorf("device %s holds %d buffers, want %d (%+v)", d.ID(), st.Live, k, st)
		}
	}
	if cp != nil {
		if st := cp.Stats(); st.LiveHostCopies != 0 {
			t.Errorf("copier: %d host copies not released", st.LiveHostCopies)
		}
	}
}

// doneCountingProvider wraps a provider: every buffer it returns gets a
// release counter, so a test can check that each was released exactly
// once. failTo, if set, makes transfers into that engine fail.
type doneCountingProvider struct {
	inner  driver.TransferProvider
	failTo driver.EngineID

	mu       sync.Mutex
	made     []*atomic.Int64
	requests []driver.TransferRequest
}

var errDoneProvider = &doneErr{"done: provider refuses"}

type doneErr struct{ s string }

func (e *doneErr) Error() string { return e.s }

func (p *doneCountingProvider) Transfer(ctx context.Context, req *driver.TransferRequest) (*driver.Buffer, error) {
	p.mu.Lock()
	p.requests = append(p.requests, *req)
	p.mu.Unlock()
	if p.failTo != "" && req.To.Engine == p.failTo {
		return nil, errDoneProvider
	}
	b, err := p.inner.Transfer(ctx, req)
	if err != nil || b == nil {
		return b, err
	}
	n := new(atomic.Int64)
	p.mu.Lock()
	p.made = append(p.made, n)
	p.mu.Unlock()
	t, _ := b.Tensor()
	return driver.NewBuffer(driver.BufferSpec{
		DType: b.DType(), Shape: b.Shape(), Strides: b.Strides(), Offset: b.Offset(), Len: b.Len(),
		Placement: b.Placement(), Backend: b.Backend(), Payload: t,
		Release: func() { n.Add(1); b.Release() },
	}), nil
}

func (p *doneCountingProvider) releases() []int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]int64, len(p.made))
	for i, n := range p.made {
		out[i] = n.Load()
	}
	return out
}

func (p *doneCountingProvider) reqs() []driver.TransferRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.requests)
}

// doneVals returns a tensor's float64 values.
func doneVals(t *testing.T, x *tensor.Tensor) []float64 {
	t.Helper()
	v, err := tensor.Values[float64](x)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
