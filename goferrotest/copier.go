package goferrotest

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/goferro/goferro/driver"
)

// CopierStats are a Copier's counters.
type CopierStats struct {
	Transfers      int64 // provider calls
	HostAllocs     int64 // host buffers made for destinations that are not Devices
	HostReleases   int64 // of those, released
	LiveHostCopies int64 // HostAllocs - HostReleases
}

// Copier is a transfer provider that really copies: from any buffer whose
// payload is Go memory (a Device's or the host's) into a new buffer in the
// destination Device's pool, or into new host memory when the destination
// engine is not one of its Devices (for example the CPU engine). Register
// it for every (source class, destination class) key it should serve.
type Copier struct {
	devs   map[driver.EngineID]*Device
	tap    Tap
	copier driver.TransferProvider // copy, through the tap

	onTransfer hook[*driver.TransferRequest]

	hostAllocs, hostReleases atomic.Int64
}

// NewCopier returns a copier that knows the given devices.
func NewCopier(devs ...*Device) *Copier {
	c := &Copier{devs: map[driver.EngineID]*Device{}}
	for _, d := range devs {
		c.devs[d.id] = d
	}
	c.copier = c.tap.Provider(driver.TransferFunc(c.copy))
	return c
}

// SetFault makes every later transfer misbehave (FaultNone to stop).
func (c *Copier) SetFault(f Fault) { c.tap.SetFault(f) }

// SetFaultTo makes every later transfer into engine dst misbehave (FaultNone
// to stop); it takes precedence over SetFault for that destination.
func (c *Copier) SetFaultTo(dst driver.EngineID, f Fault) { c.tap.SetFaultAt(dst, f) }

// OnTransfer installs a hook called at the start of every transfer; a
// non-nil error fails the transfer with it. nil removes it.
func (c *Copier) OnTransfer(hook func(ctx context.Context, req *driver.TransferRequest) error) {
	c.onTransfer.set(hook)
}

// Stats returns the copier's counters.
func (c *Copier) Stats() CopierStats {
	a, r := c.hostAllocs.Load(), c.hostReleases.Load()
	return CopierStats{Transfers: c.tap.Stats().Calls, HostAllocs: a, HostReleases: r, LiveHostCopies: a - r}
}

// Transfer implements driver.TransferProvider.
func (c *Copier) Transfer(ctx context.Context, req *driver.TransferRequest) (*driver.Buffer, error) {
	return c.copier.Transfer(ctx, req)
}

// copy copies the source into the destination device's pool, or into new
// host memory for any other destination.
func (c *Copier) copy(ctx context.Context, req *driver.TransferRequest) (*driver.Buffer, error) {
	if err := c.onTransfer.call(ctx, req); err != nil {
		return nil, err
	}
	// A source is pending only within one WithQueue device; the copier is
	// synchronous and waits for it.
	if err := req.Src.Wait(ctx); err != nil {
		return nil, err
	}
	src, ok := req.Src.Tensor()
	if !ok {
		return nil, fmt.Errorf("goferrotest: cannot read a %T payload", req.Src.Payload())
	}
	if dst := c.devs[req.To.Engine]; dst != nil {
		return dst.upload(src, req.Dst.Class)
	}
	c.hostAllocs.Add(1)
	return driver.HostBuffer(src.Clone(), func() { c.hostReleases.Add(1) }), nil
}
