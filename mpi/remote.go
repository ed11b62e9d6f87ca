package mpi

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

// BackendMPI is the backend family of a Remote's buffers.
const BackendMPI = "mpi"

// Remote is another process of a communicator as an engine of this one's
// runtime, the way a GPU driver fronts a device in another address space:
// its buffers are handles to tensors that the other process (the worker,
// running Serve) holds, its executor sends each instruction there and gets
// back the handles and metadata of the results, and its transfer
// providers (Routes) move tensors between host memory here and there with
// Send and Recv. A program placed on host engines and Remotes therefore
// moves data between processes only in the runtime's transfer nodes, and
// the runtime checks what arrives as for any engine.
//
// Each wait for the worker is bounded by the context and the Remote's
// timeout: a worker that fails gives an ErrRemote error, one that stalls or
// died an ErrTimeout error; a reply that comes after its command timed out
// is dropped, its tensors released. The methods are safe for concurrent
// use; the commands go to the worker one at a time.
type Remote struct {
	c       *Comm
	rank    int
	timeout time.Duration
	id      driver.EngineID
	at      driver.Placement

	families []string
	memory   int64

	turn   chan struct{} // held by the command under way: one at a time
	seq    uint64
	closed bool
	broken error // a tensor was left half sent: the link is out of step

	freeMu sync.Mutex
	free   []uint64 // released handles not yet sent

	live                   atomic.Int64
	transfers, transferred atomic.Int64
	executes, materialized atomic.Int64
}

// NewRemote connects to the worker of process rank (which runs Serve with
// this process as its root) and returns it as an engine: id "mpi.rankN",
// storage class "storage.mpi.rankN" in domain "domain.mpi.rankN", with the
// op families and memory budget of the worker's engine. WithTimeout bounds
// each wait for the worker (default: the communicator's timeout). A rank
// has one open Remote at a time: their replies would mix.
func NewRemote(ctx context.Context, c *Comm, rank int, opts ...Option) (*Remote, error) {
	if c == nil {
		return nil, newErr("NewRemote", ErrArgument, "nil communicator")
	}
	if err := c.checkRank("NewRemote", rank); err != nil {
		return nil, err
	}
	if rank == c.rank {
		return nil, newErr("NewRemote", ErrArgument, "rank %d is this process", rank)
	}
	if !c.claim(rank) {
		return nil, newErr("NewRemote", ErrArgument, "rank %d already has an open Remote", rank)
	}
	cfg := config{timeout: c.timeout}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	name := fmt.Sprintf("mpi.rank%d", rank)
	r := &Remote{c: c, rank: rank, timeout: cfg.timeout, id: driver.EngineID(name), turn: make(chan struct{}, 1),
		at: driver.Placement{Class: driver.StorageClass("storage." + name), Domain: driver.AllocationDomain("domain." + name)}}
	rep, err := r.roundTrip(ctx, "NewRemote", &command{Kind: "hello"}, nil)
	if err != nil {
		c.unclaim(rank)
		return nil, err
	}
	r.families, r.memory = rep.Families, rep.Memory
	return r, nil
}

// RemoteStats are a Remote's counters.
type RemoteStats struct {
	Executes         int64 // instructions run on the worker
	Transfers        int64 // transfers made by the Remote's providers, both ways
	TransferBytes    int64 // the bytes of the tensors they moved
	Materializations int64 // buffers materialized
	Live             int64 // buffers handed out and not yet released
}

// Stats returns the counters.
func (r *Remote) Stats() RemoteStats {
	return RemoteStats{Executes: r.executes.Load(), Transfers: r.transfers.Load(), TransferBytes: r.transferred.Load(),
		Materializations: r.materialized.Load(), Live: r.live.Load()}
}

// Rank returns the worker's rank.
func (r *Remote) Rank() int { return r.rank }

// Class returns the storage class of the Remote's buffers.
func (r *Remote) Class() driver.StorageClass { return r.at.Class }

// Engine returns the Remote's registration.
func (r *Remote) Engine() driver.Engine {
	return driver.Engine{
		ID:             r.id,
		Backend:        BackendMPI,
		Domain:         r.at.Domain,
		Storage:        []driver.StorageClass{r.at.Class},
		DefaultStorage: r.at.Class,
		Families:       slices.Clone(r.families),
		Memory:         r.memory,
		Executor:       driver.ExecutorFunc(r.execute),
		Ingress: driver.Ingress{
			Eligible: func(p driver.Placement, class driver.StorageClass) bool { return p == r.at && class == r.at.Class },
			Accept: func(b *driver.Buffer, _ driver.StorageClass) error {
				if !r.Resident(b) {
					return fmt.Errorf("mpi: buffer is not a tensor held by rank %d for this process", r.rank)
				}
				return nil
			},
			Resident: r.Resident,
		},
		Materializer: driver.MaterializerFunc(r.materialize),
	}
}

// Routes returns the transfer providers between host memory
// (driver.StorageHost) and the Remote's storage class, both ways.
func (r *Remote) Routes() []driver.Route {
	p := driver.TransferFunc(r.transfer)
	return []driver.Route{{Src: driver.StorageHost, Dst: r.at.Class, Provider: p}, {Src: r.at.Class, Dst: driver.StorageHost, Provider: p}}
}

// handle is the payload of a Remote's buffers: a tensor the worker holds,
// with the metadata the worker reported for it.
type handle struct {
	r     *Remote
	id    uint64
	meta  meta
	freed atomic.Bool
}

// Resident reports whether b is a live tensor that the worker holds for
// this Remote, described as the worker described it: a buffer relabelled
// with other metadata does not pass, as a CPU engine measures its memory.
func (r *Remote) Resident(b *driver.Buffer) bool {
	h, ok := b.Payload().(*handle)
	if !ok || h.r != r || h.freed.Load() || b.Placement() != r.at || b.Backend() != BackendMPI {
		return false
	}
	m := &h.meta
	return m.DType == b.DType().String() && slices.Equal(m.Shape, b.ShapeView()) && slices.Equal(m.Strides, b.StridesView()) &&
		m.Offset == b.Offset() && m.Len == b.Len()
}

// buffer returns the buffer of the held tensor m.
func (r *Remote) buffer(m meta) (*driver.Buffer, error) {
	dt, err := tensor.ParseDType(m.DType)
	if err != nil {
		return nil, err
	}
	h := &handle{r: r, id: m.Handle, meta: m}
	r.live.Add(1)
	return driver.NewBuffer(driver.BufferSpec{
		DType: dt, Shape: m.Shape, Strides: m.Strides, Offset: m.Offset, Len: m.Len,
		Placement: r.at, Backend: BackendMPI, Payload: h, Release: func() { h.freed.Store(true); r.release(h.id) },
	}), nil
}

// release queues handle id to be freed with the next command.
func (r *Remote) release(id uint64) {
	r.live.Add(-1)
	r.freeMu.Lock()
	r.free = append(r.free, id)
	r.freeMu.Unlock()
}

// handles returns the handles of bufs, which must be the Remote's.
func (r *Remote) handles(op string, bufs ...*driver.Buffer) ([]uint64, error) {
	ids := make([]uint64, len(bufs))
	for i, b := range bufs {
		if !r.Resident(b) {
			return nil, newErr(op, ErrArgument, "operand %d is not a tensor held by rank %d for this process", i, r.rank)
		}
		ids[i] = b.Payload().(*handle).id
	}
	return ids, nil
}

// execute is the Remote's executor: it sends the instruction, as a
// program of one instruction whose inputs are the operands, to the worker.
func (r *Remote) execute(ctx context.Context, call *driver.Call) ([]*driver.Buffer, error) {
	args, err := r.handles("Execute", call.Inputs...)
	if err != nil {
		return nil, err
	}
	prog, err := instructionProgram(call)
	if err != nil {
		return nil, &Error{Op: "Execute", Kind: ErrArgument, Rank: -1, Msg: "encoding the instruction", Err: err}
	}
	rep, err := r.roundTrip(ctx, "Execute", &command{Kind: "exec", Program: prog, Args: args}, nil)
	if err != nil {
		return nil, err
	}
	r.executes.Add(1)
	return r.buffers("Execute", rep.Results)
}

// buffers returns the buffers of the held tensors ms.
func (r *Remote) buffers(op string, ms []meta) ([]*driver.Buffer, error) {
	out := make([]*driver.Buffer, 0, len(ms))
	for _, m := range ms {
		b, err := r.buffer(m)
		if err != nil {
			for _, b := range out {
				b.Release()
			}
			r.forget(ms[len(out):])
			e := newErr(op, ErrMismatch, "rank %d returned a tensor of dtype %q", r.rank, m.DType)
			e.Err = err
			return nil, e
		}
		out = append(out, b)
	}
	return out, nil
}

// forget queues the handles of held tensors that no buffer stands for.
func (r *Remote) forget(ms []meta) {
	r.freeMu.Lock()
	defer r.freeMu.Unlock()
	for _, m := range ms {
		if m.Handle != 0 {
			r.free = append(r.free, m.Handle)
		}
	}
}

// instructionProgram returns call's instruction as the JSON form of a
// program whose inputs are its operands, with their concrete types.
func instructionProgram(call *driver.Call) ([]byte, error) {
	n := len(call.Inputs)
	p := &graph.Program{Inputs: make([]graph.Input, n)}
	ins := *call.Instruction
	ins.Index, ins.Inputs, ins.LastUse, ins.Outputs = 0, make([]graph.Slot, n), nil, make([]graph.Output, len(call.Results))
	for i, b := range call.Inputs {
		p.Inputs[i] = graph.Input{Name: fmt.Sprintf("x%d", i), Slot: graph.Slot(i), DType: b.DType(), Shape: graph.FromTensorShape(b.ShapeView())}
		ins.Inputs[i] = graph.Slot(i)
	}
	for k, t := range call.Results {
		ins.Outputs[k] = graph.Output{Slot: graph.Slot(n + k), DType: t.DType, Shape: graph.FromTensorShape(t.Shape)}
		p.Outputs = append(p.Outputs, graph.Slot(n+k))
	}
	p.Instructions = []graph.Instruction{ins}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(p)
}

// materialize is the Remote's materializer: the tensor comes back.
func (r *Remote) materialize(ctx context.Context, b *driver.Buffer) (*tensor.Tensor, error) {
	t, err := r.get(ctx, "Materialize", b)
	if err == nil {
		r.materialized.Add(1)
	}
	return t, err
}

// get returns a copy of the tensor b stands for, in host memory.
func (r *Remote) get(ctx context.Context, op string, b *driver.Buffer) (*tensor.Tensor, error) {
	args, err := r.handles(op, b)
	if err != nil {
		return nil, err
	}
	var t *tensor.Tensor
	_, err = r.roundTrip(ctx, op, &command{Kind: "get", Args: args}, func(ctx context.Context, rep *reply) error {
		if len(rep.Results) != 1 || rep.Results[0].DType != b.DType().String() || !slices.Equal(rep.Results[0].Shape, b.ShapeView()) {
			// Whatever follows stays unreceived: roundTrip deems the link out of step.
			return newErr(op, ErrMismatch, "rank %d sends %v for a %v%v buffer", r.rank, rep.Results, b.DType(), b.ShapeView())
		}
		var err error
		if t, err = rep.Results[0].zeros(); err != nil {
			return err
		}
		return r.c.Recv(ctx, t, r.rank, tagData)
	})
	return t, err
}

// Put copies the host tensor t to the worker and returns the buffer that
// stands for the copy there, for example a program input that enters at
// the Remote; the caller releases it.
func (r *Remote) Put(ctx context.Context, t *tensor.Tensor) (*driver.Buffer, error) {
	if t == nil {
		return nil, newErr("Put", ErrArgument, "nil tensor")
	}
	return r.put(ctx, "Put", t)
}

// put copies t to the worker.
func (r *Remote) put(ctx context.Context, op string, t *tensor.Tensor) (*driver.Buffer, error) {
	m := tensorMeta(t)
	rep, err := r.roundTrip(ctx, op, &command{Kind: "put", Put: &m}, nil, func(ctx context.Context) error {
		return r.c.Send(ctx, t, r.rank, tagData)
	})
	if err != nil {
		return nil, err
	}
	return r.one(op, rep.Results)
}

// one returns the buffer of the one tensor the worker holds for a put or
// a copy.
func (r *Remote) one(op string, ms []meta) (*driver.Buffer, error) {
	if len(ms) != 1 {
		r.forget(ms)
		return nil, newErr(op, ErrMismatch, "rank %d holds %d tensors for one copy", r.rank, len(ms))
	}
	out, err := r.buffers(op, ms)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// transfer is the Remote's transfer provider: host memory to the worker
// (put) or back (get).
func (r *Remote) transfer(ctx context.Context, req *driver.TransferRequest) (*driver.Buffer, error) {
	src := req.Src
	switch {
	case req.Dst == r.at:
		t, ok := src.Tensor()
		if !ok || !src.HostMemory() || !src.Describes(t) {
			return nil, newErr("Transfer", ErrArgument, "the source at %v is not host memory", req.From)
		}
		b, err := r.put(ctx, "Transfer", t)
		if err != nil {
			return nil, err
		}
		r.count(t.DType(), t.Len())
		return b, nil
	case req.Dst.Class == driver.StorageHost && r.Resident(src):
		t, err := r.get(ctx, "Transfer", src)
		if err != nil {
			return nil, err
		}
		r.count(t.DType(), t.Len())
		return driver.HostBuffer(t, nil), nil
	}
	return nil, newErr("Transfer", ErrArgument, "no route from %v to %v through rank %d", req.From, req.Dst, r.rank)
}

// count counts a transfer of n elements of dtype dt.
func (r *Remote) count(dt tensor.DType, n int) {
	r.transfers.Add(1)
	r.transferred.Add(int64(n * dt.Size()))
}

// Close ends the worker's Serve and reports, as an ErrMismatch error, the
// tensors it still held that this process had not released. It does not
// finalize MPI.
func (r *Remote) Close(ctx context.Context) error {
	rep, err := r.roundTrip(ctx, "Close", &command{Kind: "close"}, nil)
	r.turn <- struct{}{}
	if !r.closed {
		r.closed = true
		r.c.unclaim(r.rank)
	}
	<-r.turn
	if err != nil {
		return err
	}
	if rep.Live > 0 {
		return newErr("Close", ErrMismatch, "rank %d still held %d tensors", r.rank, rep.Live)
	}
	return nil
}
