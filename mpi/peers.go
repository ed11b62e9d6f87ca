package mpi

import (
	"context"

	"github.com/goferro/goferro/driver"
)

// PeerRoutes returns transfer providers between the storage classes of
// every two of remotes, Remotes of one communicator: the source's worker
// sends the tensor straight to the destination's, and this process only
// orders them to. The source Remote counts the transfer. A copy that fails
// after the destination was told to expect it leaves the destination
// Remote out of step (ErrBroken).
func PeerRoutes(remotes ...*Remote) []driver.Route {
	p := driver.TransferFunc(func(ctx context.Context, req *driver.TransferRequest) (*driver.Buffer, error) {
		h, ok := req.Src.Payload().(*handle)
		if !ok {
			return nil, newErr("Transfer", ErrArgument, "the source at %v is not held by a Remote", req.From)
		}
		for _, dst := range remotes {
			if dst.at == req.Dst && dst != h.r && dst.c == h.r.c {
				return h.r.copyTo(ctx, dst, req.Src)
			}
		}
		return nil, newErr("Transfer", ErrArgument, "no Remote of the communicator at %v", req.Dst)
	})
	var routes []driver.Route
	for _, a := range remotes {
		for _, b := range remotes {
			if a != b {
				routes = append(routes, driver.Route{Src: a.at.Class, Dst: b.at.Class, Provider: p})
			}
		}
	}
	return routes
}

// copyTo copies the tensor src stands for from this Remote's worker to
// dst's, which receives it first; the two Remotes' turns are taken in rank
// order.
func (r *Remote) copyTo(ctx context.Context, dst *Remote, src *driver.Buffer) (*driver.Buffer, error) {
	const op = "Transfer"
	args, err := r.handles(op, src)
	if err != nil {
		return nil, err
	}
	first, second := r, dst
	if second.rank < first.rank {
		first, second = second, first
	}
	if err := first.begin(ctx, op); err != nil {
		return nil, err
	}
	defer first.end()
	if err := second.begin(ctx, op); err != nil {
		return nil, err
	}
	defer second.end()
	ctx, cancel := r.bound(ctx)
	defer cancel()
	m := meta{DType: src.DType().String(), Shape: src.Shape()}
	recv := &command{Kind: "recv", Peer: r.rank, Put: &m}
	if err := dst.send(ctx, recv, true); err != nil {
		return nil, err
	}
	send := &command{Kind: "send", Peer: dst.rank, Args: args}
	err = r.send(ctx, send, false)
	if err == nil {
		_, err = r.await(ctx, op, send.Seq)
	}
	if err != nil {
		dst.broken = err // it waits for a tensor that may never come
		return nil, err
	}
	rep, err := dst.await(ctx, op, recv.Seq)
	if err != nil {
		return nil, err
	}
	out, err := dst.one(op, rep.Results)
	if err != nil {
		return nil, err
	}
	n, _ := src.ShapeView().NumElements()
	r.count(src.DType(), n)
	return out, nil
}
