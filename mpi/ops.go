package mpi

import (
	"context"
	"unsafe"

	"github.com/goferro/goferro/tensor"
)

// Op is a reduction of Allreduce.
type Op uint8

// The reductions. On Bool tensors Sum and Max are the logical or, Min the
// logical and; Max and Min do not apply to complex tensors.
const (
	Sum Op = iota + 1
	Max
	Min
	opLOr  // MPI_LOR, Sum and Max of Bool
	opLAnd // MPI_LAND, Min of Bool
	opCount
)

// String returns the reduction's name.
func (o Op) String() string {
	switch o {
	case Sum:
		return "sum"
	case Max:
		return "max"
	case Min:
		return "min"
	}
	return "op(invalid)"
}

// mpiOp returns the MPI handle of o on dtype dt.
func (c *Comm) mpiOp(o Op, dt tensor.DType) (uintptr, error) {
	switch {
	case o != Sum && o != Max && o != Min:
		return 0, newErr("Allreduce", ErrArgument, "reduction %v", o)
	case dt == tensor.Bool && o == Min:
		o = opLAnd
	case dt == tensor.Bool:
		o = opLOr
	case dt.IsComplex() && o != Sum:
		return 0, newErr("Allreduce", ErrArgument, "%v of %v tensors", o, dt)
	}
	return c.lib.h.ops[o], nil
}

// checkRank rejects a rank outside the communicator.
func (c *Comm) checkRank(op string, rank int) error {
	if rank < 0 || rank >= c.size {
		return newErr(op, ErrArgument, "rank %d outside 0..%d", rank, c.size-1)
	}
	return nil
}

// checkTag rejects a negative tag (32767 is the largest every MPI allows).
func checkTag(op string, tag int) error {
	if tag < 0 || tag > 32767 {
		return newErr(op, ErrArgument, "tag %d outside 0..32767", tag)
	}
	return nil
}

// Isend starts sending t's elements in row-major order to process dest
// with tag (0..32767); Wait on the Request completes it. A non-contiguous
// t is packed into a copy first; a contiguous t must not be modified
// until the Request completes.
func (c *Comm) Isend(ctx context.Context, t *tensor.Tensor, dest, tag int) (*Request, error) {
	if err := c.checkRank("Isend", dest); err != nil {
		return nil, err
	}
	if err := checkTag("Isend", tag); err != nil {
		return nil, err
	}
	if t != nil {
		t = t.Contiguous()
		if t == nil {
			return nil, newErr("Isend", ErrArgument, "cannot pack the tensor")
		}
	}
	p, n, dt, err := c.memory("Isend", t)
	if err != nil {
		return nil, err
	}
	ctx, cancel := c.bound(ctx)
	defer cancel()
	return c.start(ctx, "Isend", false, t.DType(), p, n, func(p unsafe.Pointer, n int, req *uint64) int32 {
		return call(c.lib.fn.isend, uintptr(p), uintptr(n), dt, uintptr(dest), uintptr(tag), c.handle, uintptr(unsafe.Pointer(req)))
	})
}

// Irecv starts receiving from process src, with tag, the elements of t
// in row-major order; Wait on the Request completes it. The message must
// hold exactly t.Len() elements of t's dtype. A non-contiguous t receives
// through a contiguous copy, copied into t by Wait.
func (c *Comm) Irecv(ctx context.Context, t *tensor.Tensor, src, tag int) (*Request, error) {
	if err := c.checkRank("Irecv", src); err != nil {
		return nil, err
	}
	if err := checkTag("Irecv", tag); err != nil {
		return nil, err
	}
	dst, after, err := receiver("Irecv", t)
	if err != nil {
		return nil, err
	}
	p, n, dt, err := c.memory("Irecv", dst)
	if err != nil {
		return nil, err
	}
	ctx, cancel := c.bound(ctx)
	defer cancel()
	r, err := c.start(ctx, "Irecv", false, t.DType(), p, n, func(p unsafe.Pointer, n int, req *uint64) int32 {
		return call(c.lib.fn.irecv, uintptr(p), uintptr(n), dt, uintptr(src), uintptr(tag), c.handle, uintptr(unsafe.Pointer(req)))
	})
	if err != nil {
		return nil, err
	}
	r.after = after
	for k := range r.handles {
		r.recv = append(r.recv, min(maxCount, n-k*maxCount))
	}
	return r, nil
}

// receiver returns the contiguous tensor to receive t's elements in: t
// itself, or a new one and the function that copies it into t.
func receiver(op string, t *tensor.Tensor) (*tensor.Tensor, func() error, error) {
	if t == nil {
		return nil, nil, newErr(op, ErrArgument, "nil tensor")
	}
	if t.IsContiguous() {
		return t, nil, nil
	}
	tmp, err := tensor.Zeros(t.DType(), t.ShapeView()...)
	if err != nil {
		e := newErr(op, ErrArgument, "cannot allocate the receiving copy")
		e.Err = err
		return nil, nil, e
	}
	return tmp, func() error { return tensor.CopyInto(t, tmp) }, nil
}

// Send sends t to process dest with tag and waits until t may be reused
// (Isend and Wait).
func (c *Comm) Send(ctx context.Context, t *tensor.Tensor, dest, tag int) error {
	r, err := c.Isend(ctx, t, dest, tag)
	if err != nil {
		return err
	}
	return r.Wait(ctx)
}

// Recv receives into t from process src with tag and waits until the
// elements are there (Irecv and Wait).
func (c *Comm) Recv(ctx context.Context, t *tensor.Tensor, src, tag int) error {
	r, err := c.Irecv(ctx, t, src, tag)
	if err != nil {
		return err
	}
	return r.Wait(ctx)
}

// Barrier waits until every process of the communicator has called it.
func (c *Comm) Barrier(ctx context.Context) error {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	r, err := c.start(ctx, "Barrier", true, tensor.Int32, nil, 0, func(_ unsafe.Pointer, _ int, req *uint64) int32 {
		return call(c.lib.fn.ibarrier, c.handle, uintptr(unsafe.Pointer(req)))
	})
	if err != nil {
		return err
	}
	return r.Wait(ctx)
}

// Bcast copies the elements of t on process root into t on every other
// process; every process passes a tensor of the same dtype and number of
// elements. Non-contiguous tensors go through contiguous copies.
func (c *Comm) Bcast(ctx context.Context, t *tensor.Tensor, root int) error {
	if err := c.checkRank("Bcast", root); err != nil {
		return err
	}
	var buf *tensor.Tensor
	var after func() error
	var err error
	if c.rank == root && t != nil {
		if buf = t.Contiguous(); buf == nil { // the root only reads
			return newErr("Bcast", ErrArgument, "cannot pack the tensor")
		}
	} else if buf, after, err = receiver("Bcast", t); err != nil {
		return err
	}
	p, n, dt, err := c.memory("Bcast", buf)
	if err != nil {
		return err
	}
	ctx, cancel := c.bound(ctx)
	defer cancel()
	r, err := c.start(ctx, "Bcast", true, t.DType(), p, n, func(p unsafe.Pointer, n int, req *uint64) int32 {
		return call(c.lib.fn.ibcast, uintptr(p), uintptr(n), dt, uintptr(root), c.handle, uintptr(unsafe.Pointer(req)))
	})
	if err != nil {
		return err
	}
	r.after = after
	return r.Wait(ctx)
}

// Allreduce replaces the elements of t, on every process, by their
// reduction op over all the processes: element i becomes the sum (or
// maximum, or minimum) of element i on every process. Every process
// passes a tensor of the same dtype and number of elements. A
// non-contiguous t goes through a contiguous copy.
func (c *Comm) Allreduce(ctx context.Context, t *tensor.Tensor, op Op) error {
	if t == nil {
		return newErr("Allreduce", ErrArgument, "nil tensor")
	}
	o, err := c.mpiOp(op, t.DType())
	if err != nil {
		return err
	}
	buf, after, err := receiver("Allreduce", t)
	if err != nil {
		return err
	}
	if after != nil {
		if err := tensor.CopyInto(buf, t); err != nil {
			return err
		}
	}
	p, n, dt, err := c.memory("Allreduce", buf)
	if err != nil {
		return err
	}
	ctx, cancel := c.bound(ctx)
	defer cancel()
	r, err := c.start(ctx, "Allreduce", true, t.DType(), p, n, func(p unsafe.Pointer, n int, req *uint64) int32 {
		return call(c.lib.fn.iallreduce, c.lib.h.inPlace, uintptr(p), uintptr(n), dt, o, c.handle, uintptr(unsafe.Pointer(req)))
	})
	if err != nil {
		return err
	}
	r.after = after
	return r.Wait(ctx)
}
