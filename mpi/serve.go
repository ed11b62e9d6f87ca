package mpi

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

// Serve makes this process the worker of the Remote that process root
// creates for it (NewRemote): it runs the instructions root sends with
// engine e, typically cpu.NewEngine(), and holds their results and the
// tensors root transfers here until root releases them. Those arrive as
// host buffers (driver.HostBuffer), which e must accept as inputs at its
// default storage class, as the CPU engine does. It returns nil
// when root closes the Remote, having released every tensor it held.
//
// A command that fails on e (an executor error, a panic, a result that
// breaks the driver contract) is reported to root, and Serve goes on. Every
// wait for root, the wait for its next command included, is bounded by ctx
// and the communicator's timeout: a root that died or stalled ends Serve
// with an ErrTimeout error.
func Serve(ctx context.Context, c *Comm, root int, e driver.Engine) error {
	if c == nil {
		return newErr("Serve", ErrArgument, "nil communicator")
	}
	if err := c.checkRank("Serve", root); err != nil {
		return err
	}
	if root == c.rank {
		return newErr("Serve", ErrArgument, "root %d is this process", root)
	}
	if err := e.Validate(); err != nil {
		return &Error{Op: "Serve", Kind: ErrArgument, Rank: -1, Msg: "the engine", Err: err}
	}
	if e.Executor == nil || len(e.Ingress.Missing()) > 0 || e.Materializer == nil {
		return newErr("Serve", ErrArgument, "engine %s cannot execute, check residency and materialize", e.ID)
	}
	w := &worker{c: c, root: root, e: e, held: map[uint64]*driver.Buffer{}}
	if w.e.DefaultStorage == "" {
		w.e.DefaultStorage = e.Storage[0]
	}
	if w.e.Domain == "" {
		w.e.Domain = driver.AllocationDomain("domain." + string(e.ID))
	}
	defer w.releaseAll()
	for {
		var cmd command
		if err := c.recvJSON(ctx, &cmd, root, tagCommand); err != nil {
			return err
		}
		w.free(cmd.Free)
		rep := reply{Seq: cmd.Seq}
		var data *tensor.Tensor // sent after the reply
		var err error
		switch cmd.Kind {
		case "hello":
			rep.Families, rep.Memory = e.Families, e.Memory
		case "exec":
			rep.Results, err = w.exec(ctx, cmd.Program, cmd.Args)
		case "put", "recv":
			from := root
			if cmd.Kind == "recv" {
				if from, err = cmd.Peer, w.peer(cmd.Peer); err != nil {
					break
				}
			}
			var m meta
			if m, err = w.put(ctx, cmd.Put, from); err == nil {
				rep.Results = []meta{m}
			} else if errors.As(err, new(*Error)) {
				return err // the tensor did not arrive: out of step
			}
		case "send":
			err = w.send(ctx, cmd.Args, cmd.Peer)
		case "get":
			if data, err = w.get(ctx, cmd.Args); err == nil {
				rep.Results, rep.Data = []meta{tensorMeta(data)}, true
			}
		case "close":
			rep.Live = len(w.held)
		default:
			err = fmt.Errorf("unknown command %q", cmd.Kind)
		}
		if err != nil {
			rep.Err = err.Error()
		}
		if err := c.sendJSON(ctx, &rep, root, tagReply); err != nil {
			return err
		}
		if data != nil {
			if err := c.Send(ctx, data, root, tagData); err != nil {
				return err
			}
		}
		if cmd.Kind == "close" {
			return nil
		}
	}
}

// worker is the state of Serve: the tensors it holds, by handle.
type worker struct {
	c    *Comm
	root int
	e    driver.Engine
	held map[uint64]*driver.Buffer
	last uint64 // the last handle given out
}

// hold keeps b and returns its metadata under a new handle.
func (w *worker) hold(b *driver.Buffer) meta {
	w.last++
	w.held[w.last] = b
	return bufferMeta(w.last, b)
}

// free releases the tensors of handles; unknown ones (freed already by a
// command sent twice) are ignored.
func (w *worker) free(handles []uint64) {
	for _, h := range handles {
		if b, ok := w.held[h]; ok {
			b.Release()
			delete(w.held, h)
		}
	}
}

// releaseAll releases every tensor held.
func (w *worker) releaseAll() {
	for h, b := range w.held {
		b.Release()
		delete(w.held, h)
	}
}

// operands returns the held tensors of handles.
func (w *worker) operands(handles []uint64) ([]*driver.Buffer, error) {
	out := make([]*driver.Buffer, len(handles))
	for i, h := range handles {
		b, ok := w.held[h]
		if !ok {
			return nil, fmt.Errorf("operand %d: no tensor of handle %d", i, h)
		}
		out[i] = b
	}
	return out, nil
}

// exec runs the one instruction of the program prog on the tensors of
// args and holds the results, which must pass the driver's checks.
func (w *worker) exec(ctx context.Context, prog []byte, args []uint64) ([]meta, error) {
	p, err := graph.Load(prog)
	if err != nil {
		return nil, err
	}
	if len(p.Instructions) != 1 || len(p.Inputs) != len(args) {
		return nil, fmt.Errorf("a program of %d instructions and %d inputs for %d operands", len(p.Instructions), len(p.Inputs), len(args))
	}
	ins := &p.Instructions[0]
	in, err := w.operands(args)
	if err != nil {
		return nil, err
	}
	results := make([]driver.ResultType, len(ins.Outputs))
	for k, o := range ins.Outputs {
		s, ok := o.Shape.Concrete()
		if !ok {
			return nil, fmt.Errorf("result %d has the symbolic shape %v", k, o.Shape)
		}
		results[k] = driver.ResultType{DType: o.DType, Shape: s}
	}
	for i, b := range in {
		if want := p.Inputs[i]; b.DType() != want.DType || !graph.FromTensorShape(b.ShapeView()).Equal(want.Shape) {
			return nil, fmt.Errorf("operand %d is %v%v, the instruction wants %v", i, b.DType(), b.ShapeView(), want.Type())
		}
	}
	call := &driver.Call{Instruction: ins, Inputs: in, Results: results,
		Location:  driver.Location{Engine: w.e.ID, Event: 1, Storage: w.e.DefaultStorage},
		Placement: driver.Placement{Class: w.e.DefaultStorage, Domain: w.e.Domain}}
	outs, err := guard(func() ([]*driver.Buffer, error) { return w.e.Executor.Execute(ctx, call) })
	if err == nil {
		err = guardErr(func() error { return driver.CheckResults(outs, call, results, w.e.Ingress.Resident) })
	}
	for _, b := range outs {
		if err == nil {
			err = wait(ctx, b)
		}
	}
	if err != nil {
		for _, b := range outs {
			if b != nil && !slices.Contains(in, b) {
				b.Release()
			}
		}
		return nil, err
	}
	ms := make([]meta, len(outs))
	for k, b := range outs {
		ms[k] = w.hold(b)
	}
	return ms, nil
}

// put receives a tensor of type m from process from (the root or another
// worker) and holds it as an input of the engine. An error of package mpi
// means the tensor did not arrive.
func (w *worker) put(ctx context.Context, m *meta, from int) (meta, error) {
	if m == nil {
		return meta{}, newErr("Serve", ErrMismatch, "a put without the tensor's type")
	}
	t, err := m.zeros()
	if err != nil {
		e := newErr("Serve", ErrMismatch, "a put of %s%v", m.DType, m.Shape)
		e.Err = err
		return meta{}, e
	}
	if err := w.c.Recv(ctx, t, from, tagData); err != nil {
		return meta{}, err
	}
	b := driver.HostBuffer(t, nil)
	if ok, err := w.accepts(b); !ok {
		return meta{}, err
	}
	return w.hold(b), nil
}

// send sends the held tensor of the one handle in args to worker peer,
// which the root told to receive it.
func (w *worker) send(ctx context.Context, args []uint64, peer int) error {
	if err := w.peer(peer); err != nil {
		return err
	}
	t, err := w.get(ctx, args)
	if err != nil {
		return err
	}
	return w.c.Send(ctx, t, peer, tagData)
}

// peer checks that rank is another worker: a process of the communicator
// other than this one and the root.
func (w *worker) peer(rank int) error {
	if rank < 0 || rank >= w.c.size || rank == w.c.rank || rank == w.root {
		return fmt.Errorf("rank %d is not another worker", rank)
	}
	return nil
}

// accepts reports whether the engine takes host buffer b as an input at
// its default storage class.
func (w *worker) accepts(b *driver.Buffer) (bool, error) {
	in := w.e.Ingress
	p := b.Placement()
	if !in.Eligible(p, w.e.DefaultStorage) || !in.Resident(b) {
		return false, fmt.Errorf("engine %s does not hold host memory (%v)", w.e.ID, p)
	}
	if in.Accept != nil {
		if err := in.Accept(b, w.e.DefaultStorage); err != nil {
			return false, err
		}
	}
	return true, nil
}

// get returns the held tensor of the one handle in args as a host tensor.
func (w *worker) get(ctx context.Context, args []uint64) (*tensor.Tensor, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("get of %d tensors", len(args))
	}
	in, err := w.operands(args)
	if err != nil {
		return nil, err
	}
	return guard(func() (*tensor.Tensor, error) { return w.e.Materializer.Materialize(ctx, in[0]) })
}

// wait waits for a pending buffer's completion.
func wait(ctx context.Context, b *driver.Buffer) error {
	if c := b.Ready(); c != nil {
		return c.Wait(ctx)
	}
	return nil
}

// guard calls f and turns a panic into an error.
func guard[T any](f func() (T, error)) (v T, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return f()
}

// guardErr is guard for a function that returns only an error.
func guardErr(f func() error) error {
	_, err := guard(func() (struct{}, error) { return struct{}{}, f() })
	return err
}
