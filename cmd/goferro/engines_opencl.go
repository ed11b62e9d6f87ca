package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/opencl"
	"github.com/goferro/goferro/opencl/clengine"
)

// OpenCL devices enter the runtime through package clengine, which runs
// every core op family on the device. Its transfer providers are
// unexported (clengine.Options registers them directly), and run must wrap
// every provider with its timing decorator, so the CLI registers its own:
// the same host↔device and device↔device copies, one provider per key that
// dispatches on the destination engine, as several devices share a class.

func init() { openclAdapter = openOpenCLEngine }

// openOpenCLEngine opens dev with clengine and returns its registration,
// the copier registrations and the engine's Close.
func openOpenCLEngine(ctx context.Context, dev *opencl.Device) (goferro.Engine, []transferReg, func() error, error) {
	e, err := clengine.Open(ctx, dev)
	if err != nil {
		return goferro.Engine{}, nil, nil, err
	}
	clCopies.add(e)
	regs := []transferReg{
		{goferro.StorageHost, clengine.Class, clCopies},
		{clengine.Class, goferro.StorageHost, clCopies},
		{clengine.Class, clengine.Class, clCopies},
	}
	return e.Registration(), regs, e.Close, nil
}

// clTransfers copies between host memory and OpenCL engines. Registering
// the one value for a key again is a no-op for the runtime, so a second
// device adds itself without a provider conflict.
type clTransfers struct {
	mu      sync.Mutex
	engines map[goferro.EngineID]*clengine.Engine
}

var clCopies = &clTransfers{engines: map[goferro.EngineID]*clengine.Engine{}}

// add makes e a known destination and source of copies.
func (c *clTransfers) add(e *clengine.Engine) {
	c.mu.Lock()
	c.engines[goferro.EngineID(e.ID())] = e
	c.mu.Unlock()
}

// engine returns the OpenCL engine with id, if it is one.
func (c *clTransfers) engine(id goferro.EngineID) (*clengine.Engine, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.engines[id]
	return e, ok
}

// Transfer implements goferro.TransferProvider for the three keys.
func (c *clTransfers) Transfer(ctx context.Context, req *goferro.TransferRequest) (*goferro.Buffer, error) {
	dst, toDevice := c.engine(req.To.Engine)
	var src *opencl.Tensor
	if req.From.Storage == clengine.Class {
		t, ok := req.Src.Payload().(*opencl.Tensor)
		if !ok {
			return nil, fmt.Errorf("opencl transfer: source payload %T is not a device tensor", req.Src.Payload())
		}
		src = t
	}
	switch {
	case src == nil && toDevice: // host → device
		h, ok := req.Src.Tensor()
		if !ok {
			return nil, fmt.Errorf("opencl transfer: source payload %T is not a host tensor", req.Src.Payload())
		}
		d, err := opencl.HostToDevice(ctx, dst.Queue, h)
		if err != nil {
			return nil, err
		}
		return dst.Buffer(d), nil
	case src != nil && toDevice: // device → device
		d, err := opencl.DeviceToDevice(ctx, dst.Queue, src)
		if err != nil {
			return nil, err
		}
		return dst.Buffer(d), nil
	case src != nil: // device → host
		h, err := opencl.DeviceToHost(ctx, src)
		if err != nil {
			return nil, err
		}
		return goferro.HostBuffer(h, nil), nil
	}
	return nil, fmt.Errorf("opencl transfer: neither %s nor %s is an OpenCL engine", req.From, req.To)
}
