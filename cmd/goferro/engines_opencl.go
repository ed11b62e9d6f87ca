package main

import (
	"context"
	"fmt"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/opencl"
	"github.com/goferro/goferro/tensor"
)

// A minimal OpenCL runtime engine for the CLI, until the opencl package
// provides its own: the device runs dot_general (Queue.DotGeneral has the
// graph op's exact semantics), and every other family stays on the CPU, so
// a program split between them crosses scheduled host↔device transfers.
// Ingress and residency are the opencl.Engine's own checks.

func init() { openclAdapter = openOpenCLEngine }

// clBackend is the backend family of the adapter's buffers.
const clBackend = "opencl"

func openOpenCLEngine(ctx context.Context, dev *opencl.Device) (goferro.Engine, []transferReg, func() error, error) {
	e, err := opencl.Open(ctx, dev)
	if err != nil {
		return goferro.Engine{}, nil, nil, err
	}
	a := &clAdapter{eng: e, domain: goferro.AllocationDomain(e.AllocationDomain()), class: goferro.StorageClass(opencl.StorageClass)}
	eng := goferro.Engine{
		ID:             goferro.EngineID(e.ID()),
		Backend:        clBackend,
		Domain:         a.domain,
		Storage:        []goferro.StorageClass{a.class},
		DefaultStorage: a.class,
		Families:       []string{graph.FamilyDotGeneral},
		Executor:       goferro.ExecutorFunc(a.execute),
		Ingress: goferro.Ingress{
			Eligible: func(p goferro.Placement, class goferro.StorageClass) bool {
				return e.Eligible(opencl.Placement{StorageClass: string(p.Class), Domain: string(p.Domain)}, string(class))
			},
			Accept:   func(b *goferro.Buffer, _ goferro.StorageClass) error { return e.Accept(b.Payload()) },
			Resident: func(b *goferro.Buffer) bool { return b.Placement().Domain == a.domain && e.Resident(b.Payload()) },
		},
		Materializer: goferro.MaterializerFunc(func(ctx context.Context, b *goferro.Buffer) (*tensor.Tensor, error) {
			t, ok := b.Payload().(*opencl.Tensor)
			if !ok {
				return nil, fmt.Errorf("opencl: payload %T is not a device tensor", b.Payload())
			}
			return opencl.DeviceToHost(ctx, t)
		}),
	}
	regs := []transferReg{
		{goferro.StorageHost, a.class, goferro.TransferFunc(a.upload)},
		{a.class, goferro.StorageHost, goferro.TransferFunc(a.download)},
	}
	return eng, regs, e.Close, nil
}

type clAdapter struct {
	eng    *opencl.Engine
	domain goferro.AllocationDomain
	class  goferro.StorageClass
}

// wrap publishes a device tensor as a runtime buffer; releasing the buffer
// drops the tensor's reference on its device memory.
func (a *clAdapter) wrap(t *opencl.Tensor) *goferro.Buffer {
	return goferro.NewBuffer(goferro.BufferSpec{
		DType: t.DType(), Shape: t.Shape(), Strides: t.Strides(), Offset: t.Offset(),
		Len:       t.Buffer().Size() / max(t.DType().Size(), 1),
		Placement: goferro.Placement{Class: a.class, Domain: a.domain},
		Backend:   clBackend, Payload: t,
		Release: func() { _ = t.Release() }, // a failed release leaves nothing to undo
	})
}

func (a *clAdapter) execute(ctx context.Context, call *goferro.Call) ([]*goferro.Buffer, error) {
	if call.Instruction.Op != "dot_general" || len(call.Inputs) != 2 {
		return nil, fmt.Errorf("opencl adapter: op %q is not supported", call.Instruction.Op)
	}
	x, ok1 := call.Inputs[0].Payload().(*opencl.Tensor)
	y, ok2 := call.Inputs[1].Payload().(*opencl.Tensor)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("opencl adapter: operands are not device tensors")
	}
	at := &call.Instruction.Attrs
	out, err := a.eng.DotGeneral(ctx, x, y, at.LhsBatch, at.RhsBatch, at.LhsContract, at.RhsContract)
	if err != nil {
		return nil, err
	}
	// Wait, so the op's time (and a trace slice) is the device's work, not
	// just the enqueue.
	if err := out.Wait(ctx); err != nil {
		_ = out.Release()
		return nil, err
	}
	return []*goferro.Buffer{a.wrap(out)}, nil
}

func (a *clAdapter) upload(ctx context.Context, req *goferro.TransferRequest) (*goferro.Buffer, error) {
	t, ok := req.Src.Tensor()
	if !ok {
		return nil, fmt.Errorf("opencl upload: source payload %T is not a host tensor", req.Src.Payload())
	}
	d, err := opencl.HostToDevice(ctx, a.eng.Queue, t)
	if err != nil {
		return nil, err
	}
	return a.wrap(d), nil
}

func (a *clAdapter) download(ctx context.Context, req *goferro.TransferRequest) (*goferro.Buffer, error) {
	t, ok := req.Src.Payload().(*opencl.Tensor)
	if !ok {
		return nil, fmt.Errorf("opencl download: source payload %T is not a device tensor", req.Src.Payload())
	}
	h, err := opencl.DeviceToHost(ctx, t)
	if err != nil {
		return nil, err
	}
	return goferro.HostBuffer(h, nil), nil
}
