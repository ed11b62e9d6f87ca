package opencl

import (
	"context"
	"fmt"

	"github.com/goferro/goferro/tensor"
)

// HostStorageClass is the storage class of host memory (tensor.Tensor), the
// other end of this package's host transfers.
const HostStorageClass = "storage.host.v1"

// Placement says where a tensor lives: its storage class and allocation
// domain.
type Placement struct {
	StorageClass string
	Domain       string
}

// Placement returns StorageClass and the tensor's context domain.
func (t *Tensor) Placement() Placement {
	return Placement{StorageClass: StorageClass, Domain: t.buf.ctx.domain}
}

// HostPlacement is the placement of every host tensor.
var HostPlacement = Placement{StorageClass: HostStorageClass, Domain: "host"}

// Engine is one OpenCL device as an execution engine: a Context (its
// allocation domain, with the compiled kernels) and a Queue (its event
// domain). Every Queue method (Upload, Binary, Gemm, ...) is available on it.
type Engine struct {
	*Queue
	dev *Device
}

// Open creates an engine on dev: a context with its kernels compiled (once
// per device per process; later engines load the cached binary) and an
// in-order queue.
func Open(ctx context.Context, dev *Device) (*Engine, error) {
	c, err := NewContext(ctx, dev)
	if err != nil {
		return nil, err
	}
	q, err := c.NewQueue()
	if err != nil {
		c.Close()
		return nil, err
	}
	return &Engine{Queue: q, dev: dev}, nil
}

// Close releases the engine's queue and context.
func (e *Engine) Close() error { return e.ctx.Close() }

// ID returns the engine id, the device's ("opencl.d0.v1").
func (e *Engine) ID() string { return e.dev.ID() }

// Device returns the engine's device.
func (e *Engine) Device() *Device { return e.dev }

// StorageClasses lists the storage classes the engine executes on.
func (e *Engine) StorageClasses() []string { return []string{StorageClass} }

// DefaultStorageClass is StorageClass.
func (e *Engine) DefaultStorageClass() string { return StorageClass }

// AllocationDomain returns the engine's allocation domain (its context's).
func (e *Engine) AllocationDomain() string { return e.ctx.domain }

// EventDomain returns the engine's event domain (its queue's).
func (e *Engine) EventDomain() string { return e.domain }

// --- ingress contract (DESIGN.md §2) ---

// Eligible is ingress check (1), placement eligibility: a tensor placed at
// p may enter the engine at storage class class only if class is
// StorageClass and p is this engine's own allocation domain. Host tensors
// and other contexts' buffers need a transfer first.
func (e *Engine) Eligible(p Placement, class string) bool {
	return class == StorageClass && p.StorageClass == StorageClass && p.Domain == e.ctx.domain
}

// Accept is ingress check (2), runtime-input acceptance: v must be a live
// *Tensor of this engine's context whose dtype the device can hold. A host
// *tensor.Tensor or another context's tensor is rejected with ErrForeign.
func (e *Engine) Accept(v any) error {
	switch t := v.(type) {
	case *Tensor:
		if t == nil || t.buf == nil {
			return newErr("Accept", ErrArgument, "nil tensor")
		}
		if t.buf.ctx != e.ctx {
			return newErr("Accept", ErrForeign, fmt.Sprintf("tensor lives in %s, engine %s owns %s", t.buf.ctx.domain, e.ID(), e.ctx.domain))
		}
		if t.buf.Released() {
			return newErr("Accept", ErrReleased, "tensor's buffer was released")
		}
		if (t.dtype == tensor.Float64 || t.dtype == tensor.Complex128) && !e.dev.FP64 {
			return newErr("Accept", ErrUnsupported, fmt.Sprintf("%v tensor on a device without cl_khr_fp64", t.dtype))
		}
		return nil
	case *tensor.Tensor:
		return newErr("Accept", ErrForeign, "host tensor: transfer it to "+e.ID()+" first")
	case nil:
		return newErr("Accept", ErrArgument, "nil input")
	}
	return newErr("Accept", ErrForeign, fmt.Sprintf("%T is not an OpenCL tensor", v))
}

// Resident is ingress check (3), residency: whether v (*Tensor or *Buffer)
// is live memory of this engine's context.
func (e *Engine) Resident(v any) bool {
	switch t := v.(type) {
	case *Tensor:
		return t != nil && t.buf != nil && t.buf.ctx == e.ctx && !t.buf.Released()
	case *Buffer:
		return t != nil && t.ctx == e.ctx && !t.Released()
	}
	return false
}

// --- capabilities ---

// Family names a group of operations an engine implements.
type Family string

// Capability families of the OpenCL engine.
const (
	FamilyTransfer     Family = "transfer"     // host↔device and device↔device copies
	FamilyPermute      Family = "permute"      // strided copies: permute, diagonal, broadcast, contiguous
	FamilyElementwise  Family = "elementwise"  // unary and broadcasting binary ops
	FamilyReduce       Family = "reduce"       // sum, prod, max, min over axes
	FamilyGEMM         Family = "gemm"         // C = alpha·A·B + beta·C, strided
	FamilyBatchedGEMM  Family = "gemm.batched" // the same over strided batch axes
	FamilyComplexArith Family = "complex"      // complex arithmetic (elementwise, reduce, GEMM)
)

// Capability is a family and the dtypes it supports on a device.
type Capability struct {
	Family Family
	DTypes []tensor.DType
}

// Capabilities lists what the engine really implements on its device.
// Float64 and complex128 are listed only with cl_khr_fp64; bool moves
// (transfer, permute) but has no arithmetic.
func (e *Engine) Capabilities() []Capability {
	var caps []Capability
	for _, f := range []Family{FamilyTransfer, FamilyPermute, FamilyElementwise, FamilyReduce, FamilyGEMM, FamilyBatchedGEMM, FamilyComplexArith} {
		var dts []tensor.DType
		for _, dt := range tensor.DTypes {
			if e.Supports(f, dt) {
				dts = append(dts, dt)
			}
		}
		caps = append(caps, Capability{Family: f, DTypes: dts})
	}
	return caps
}

// Supports reports whether family f runs on the engine's device for dt.
func (e *Engine) Supports(f Family, dt tensor.DType) bool {
	if !dt.Valid() {
		return false
	}
	switch f {
	case FamilyTransfer, FamilyPermute:
		return (dt != tensor.Float64 && dt != tensor.Complex128) || e.dev.FP64
	case FamilyComplexArith:
		return dt.IsComplex() && e.SupportsGEMM(dt)
	case FamilyElementwise:
		return e.SupportsBinary(Add, dt)
	case FamilyReduce:
		return e.SupportsReduce(Sum, dt)
	case FamilyGEMM, FamilyBatchedGEMM:
		return e.SupportsGEMM(dt)
	}
	return false
}

// --- transfer providers ---

// HostToDevice is the host→device transfer provider: a row-major copy of src
// in dst's context, complete when it returns.
func HostToDevice(ctx context.Context, dst *Queue, src *tensor.Tensor) (*Tensor, error) {
	if dst == nil {
		return nil, newErr("HostToDevice", ErrArgument, "nil queue")
	}
	return dst.Upload(ctx, src)
}

// DeviceToHost is the device→host transfer provider: a row-major host copy
// of src, read through its context's transfer queue after src's pending
// writes complete.
func DeviceToHost(ctx context.Context, src *Tensor) (*tensor.Tensor, error) {
	if src == nil || src.buf == nil {
		return nil, newErr("DeviceToHost", ErrArgument, "nil tensor")
	}
	q, err := src.buf.ctx.transferQueue()
	if err != nil {
		return nil, err
	}
	return q.Download(ctx, src)
}

// DeviceToDevice is the device→device transfer provider: a row-major copy of
// src in dst's context. Within one context it is a device copy enqueued on
// dst (it may still be running when this returns; the result's buffer
// records the event, so later commands on any queue wait for it). Between
// contexts it goes through the host and is complete when it returns.
func DeviceToDevice(ctx context.Context, dst *Queue, src *Tensor) (*Tensor, error) {
	if dst == nil || src == nil || src.buf == nil {
		return nil, newErr("DeviceToDevice", ErrArgument, "nil queue or tensor")
	}
	if src.buf.ctx == dst.ctx {
		if src.IsContiguous() {
			out, err := dst.ctx.Empty(src.dtype, src.shape...)
			if err != nil {
				return nil, err
			}
			es := src.dtype.Size()
			if _, err := dst.CopyBuffer(ctx, out.buf, 0, src.buf, src.offset*es, src.size*es); err != nil {
				out.Release()
				return nil, err
			}
			return out, nil
		}
		return dst.Contiguous(ctx, src)
	}
	h, err := DeviceToHost(ctx, src)
	if err != nil {
		return nil, err
	}
	return dst.Upload(ctx, h)
}

// transferQueue returns the context's internal queue for transfers that
// are not given one.
func (c *Context) transferQueue() (*Queue, error) {
	c.tqOnce.Do(func() { c.tq, c.tqErr = c.NewQueue() })
	return c.tq, c.tqErr
}
