// Package clengine registers OpenCL devices (package opencl) as engines of
// the goferro runtime: a driver.Engine per device whose executor runs every
// core op family on the device, its three-part ingress contract, its
// materializer, and the host↔device and device↔device transfer providers.
//
//	eng, _ := clengine.Open(ctx, dev)
//	rt, _ := goferro.NewRuntime(
//		goferro.WithEngine(cpu.NewEngine()),
//		goferro.WithEngine(eng.Registration()),
//		goferro.WithRoutes(clengine.Providers(eng)...),
//	)
//
// Several engines of one device (each its own context and queue: its own
// allocation and event domain) register under distinct ids with OpenAs.
// Providers returns the transfer providers, to register or to wrap.
//
// Package opencl is the device layer (devices, contexts, queues, events,
// tensors, kernels); this package is the engine: the driver vocabulary
// (storage class Class, placements, engine ids), the three-part ingress
// contract, the executor and the transfer providers, all written against
// package driver. Buffers of an engine carry the placement (Class, the
// engine's context domain), backend "opencl" and an *opencl.Tensor payload
// whose release the runtime triggers through the buffer's release hook.
package clengine

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/opencl"
	"github.com/goferro/goferro/tensor"
)

// Backend is the backend family of OpenCL buffers.
const Backend = "opencl"

// Class is the storage class of OpenCL device memory. Every engine's
// context is its own allocation domain within it.
const Class driver.StorageClass = "storage.opencl.device.v1"

// Families are the op families the engine runs, all on the device.
var Families = []string{graph.FamilyConstant, graph.FamilyElementwise, graph.FamilyReduce, graph.FamilyLayout, graph.FamilyDotGeneral}

// Engine is one OpenCL device as an execution engine, ready to register
// with a runtime: a context (its allocation domain, with the compiled
// kernels) and an in-order queue (its event domain). Every Queue method
// (Upload, Binary, Gemm, ...) is available on it.
type Engine struct {
	*opencl.Queue
	id driver.EngineID // "" means the device's id
}

// Open opens an engine on dev: a context with its kernels compiled (once
// per device per process; later engines load the cached binary) and an
// in-order queue. Its engine id is the device's ("opencl.d0.v1").
func Open(ctx context.Context, dev *opencl.Device) (*Engine, error) {
	c, err := opencl.NewContext(ctx, dev)
	if err != nil {
		return nil, err
	}
	q, err := c.NewQueue()
	if err != nil {
		c.Close()
		return nil, err
	}
	return &Engine{Queue: q}, nil
}

// OpenAs is Open with a given engine id, so that several engines (each its
// own context: allocation domain, and queue: event domain) of one device
// can be registered with one runtime. The id must be a valid engine id.
func OpenAs(ctx context.Context, dev *opencl.Device, id driver.EngineID) (*Engine, error) {
	if err := id.Validate(); err != nil {
		return nil, err
	}
	e, err := Open(ctx, dev)
	if err != nil {
		return nil, err
	}
	e.id = id
	return e, nil
}

// Close releases the engine's queue and context.
func (e *Engine) Close() error { return e.Context().Close() }

// ID returns the engine id: the one given to OpenAs, else the device's.
func (e *Engine) ID() string {
	if e.id != "" {
		return string(e.id)
	}
	return e.Context().Device().ID()
}

// AllocationDomain returns the engine's allocation domain: its context's.
func (e *Engine) AllocationDomain() string { return e.Context().Domain() }

// Placement is where the engine's buffers live.
func (e *Engine) Placement() driver.Placement {
	return driver.Placement{Class: Class, Domain: driver.AllocationDomain(e.AllocationDomain())}
}

// describes reports whether b's metadata is exactly t's view over its
// device memory: dtype, shape, strides, offset and the memory's length.
func describes(b *driver.Buffer, t *opencl.Tensor) bool {
	return t.DType() == b.DType() && t.Shape().Equal(b.ShapeView()) && slices.Equal(t.Strides(), b.StridesView()) &&
		t.Offset() == b.Offset() && t.Buffer().Size()/max(t.DType().Size(), 1) == b.Len()
}

// Buffer wraps a device tensor of this engine as a runtime buffer that
// releases the tensor when the runtime releases it. While a command
// writing the tensor is still pending, the buffer is pending too: its
// completion (driver.BufferSpec.Ready) is that command's event, which also
// reports when the command ran on the device (driver.DeviceTimer).
func (e *Engine) Buffer(t *opencl.Tensor) *driver.Buffer {
	spec := driver.BufferSpec{
		DType: t.DType(), Shape: t.Shape(), Strides: t.Strides(), Offset: t.Offset(),
		Len: t.Buffer().Size() / max(t.DType().Size(), 1), Placement: e.Placement(), Backend: Backend,
		Payload: t, Release: func() { t.Release() },
	}
	if ev := t.Ready(); ev != nil { // a nil *Event in the interface would not be nil
		spec.Ready = ev
	}
	return driver.NewBuffer(spec)
}

// Registration returns the driver.Engine describing e. Its memory budget
// is three quarters of the device's global memory.
//
// The engine is asynchronous (driver, Asynchronous completion): its
// executor and its providers enqueue commands and return pending buffers
// whose completion is the command's event, and it is InOrder: a command
// reading a tensor waits on the device for the tensor's last write (the
// queue's order, or an event wait list across queues), never on the host.
// Its providers order copies out of a device after their source
// (driver.OrderedProvider), so a copy to the host or to another engine is
// enqueued while the source is still pending. The host waits only where a
// value is read there: materialization, a consumer on the host, the end
// of a run.
func (e *Engine) Registration() driver.Engine {
	return driver.Engine{
		ID:             driver.EngineID(e.ID()),
		Backend:        Backend,
		Domain:         driver.AllocationDomain(e.AllocationDomain()),
		Storage:        []driver.StorageClass{Class},
		DefaultStorage: Class,
		Families:       append([]string(nil), Families...),
		InOrder:        true,
		Memory:         int64(e.Context().Device().GlobalMemory / 4 * 3),
		Executor:       driver.ExecutorFunc(e.execute),
		Ingress:        driver.Ingress{Eligible: e.eligible, Accept: e.accept, Resident: e.resident},
		Materializer: driver.MaterializerFunc(func(ctx context.Context, b *driver.Buffer) (*tensor.Tensor, error) {
			t, err := e.tensor(b)
			if err != nil {
				return nil, err
			}
			return e.Download(ctx, t)
		}),
	}
}

// eligible is ingress check (1), placement eligibility: a value placed at
// p may enter the engine at class only if class is Class and p is the
// engine's own placement. Host tensors and other contexts' buffers need a
// transfer first.
func (e *Engine) eligible(p driver.Placement, class driver.StorageClass) bool {
	return class == Class && p == e.Placement()
}

// accept is ingress check (2), runtime-input acceptance: b's payload must
// be a live *opencl.Tensor of the engine's context, matching b's metadata,
// whose dtype the device can hold. Anything else is an error wrapping
// opencl.ErrForeign (host memory, another context), ErrArgument,
// ErrReleased or ErrUnsupported (a 64-bit type without cl_khr_fp64).
func (e *Engine) accept(b *driver.Buffer, class driver.StorageClass) error {
	if class != Class {
		return fmt.Errorf("clengine: storage class %s is not %s", class, Class)
	}
	t, ok := b.Payload().(*opencl.Tensor)
	switch {
	case b.Payload() == nil:
		return fmt.Errorf("clengine: buffer without a payload: %w", opencl.ErrArgument)
	case !ok:
		return fmt.Errorf("clengine: %T is not OpenCL device memory: transfer it to %s first: %w", b.Payload(), e.ID(), opencl.ErrForeign)
	}
	if err := e.Owns(t); err != nil {
		return err
	}
	if !describes(b, t) {
		return fmt.Errorf("clengine: buffer metadata %v%v does not describe its tensor %v%v", b.DType(), b.Shape(), t.DType(), t.Shape())
	}
	if !e.Supports(opencl.FamilyTransfer, t.DType()) {
		return fmt.Errorf("clengine: %v tensor on a device without cl_khr_fp64: %w", t.DType(), opencl.ErrUnsupported)
	}
	return nil
}

// resident is ingress check (3), residency: whether b really is live
// memory of the engine's context, not just a buffer claiming its
// placement, and whether b's description measures up to that memory
// (describes): the engine measures what it owns rather than trusting the
// label.
func (e *Engine) resident(b *driver.Buffer) bool {
	t, ok := b.Payload().(*opencl.Tensor)
	return ok && b.Backend() == Backend && b.Placement() == e.Placement() && e.Owns(t) == nil && describes(b, t)
}

func (e *Engine) tensor(b *driver.Buffer) (*opencl.Tensor, error) {
	t, ok := b.Payload().(*opencl.Tensor)
	if !ok || !e.resident(b) {
		return nil, fmt.Errorf("clengine: buffer %v at %v is not memory of %s", b.DType(), b.Placement(), e.ID())
	}
	return t, nil
}

// Providers returns the transfer providers between host memory and the
// engines' devices and between devices — host→device, device→host and
// device→device, one per key, each dispatching on the engines of the
// request — to register with the runtime (goferro.WithRoutes) next to the
// engines' registrations, or to wrap first (timing, counting, fault
// injection). Register the providers of all the engines at once: they are
// driver.ScopedProviders that serve only these engines, so a transfer into
// an engine left out fails at preparation, and the providers of a second
// call conflict with the first's. Every copy is enqueued without
// blocking; host memory a copy reads must not be reused before the
// copy's completion (the runtime's host buffers are garbage collected,
// and the copy pins them).
func Providers(engines ...*Engine) []driver.Route {
	set := map[driver.EngineID]*Engine{}
	for _, e := range engines {
		set[driver.EngineID(e.ID())] = e
	}
	t := &transfers{engines: set}
	return []driver.Route{
		{Src: driver.StorageHost, Dst: Class, Provider: &provider{t, (*transfers).hostToDevice, false, true}},
		{Src: Class, Dst: driver.StorageHost, Provider: &provider{t, (*transfers).deviceToHost, true, false}},
		{Src: Class, Dst: Class, Provider: &provider{t, (*transfers).deviceToDevice, true, true}},
	}
}

// provider is one route of Providers: a way of moving and which of its
// ends are this package's engines (the other end is host memory).
type provider struct {
	t                    *transfers
	move                 func(t *transfers, ctx context.Context, req *driver.TransferRequest) (*driver.Buffer, error)
	fromDevice, toDevice bool
}

// Transfer implements driver.TransferProvider.
func (p *provider) Transfer(ctx context.Context, req *driver.TransferRequest) (*driver.Buffer, error) {
	return p.move(p.t, ctx, req)
}

// Serves implements driver.ScopedProvider: the device ends must be the
// engines the provider was made for.
func (p *provider) Serves(from, to driver.EngineID) bool {
	return (!p.fromDevice || p.t.engines[from] != nil) && (!p.toDevice || p.t.engines[to] != nil)
}

// Orders implements driver.OrderedProvider: a copy out of a device (to
// the host, to a device) is enqueued behind the pending writes of its
// source, on the device, so the runtime need not wait for them; a copy
// from the host is given complete host memory.
func (p *provider) Orders(from, to driver.EngineID) bool {
	return p.fromDevice && p.Serves(from, to)
}

type transfers struct{ engines map[driver.EngineID]*Engine }

func (t *transfers) engine(id driver.EngineID) (*Engine, error) {
	e, ok := t.engines[id]
	if !ok {
		return nil, fmt.Errorf("clengine: %s is not a registered OpenCL engine", id)
	}
	return e, nil
}

func (t *transfers) source(req *driver.TransferRequest) (*opencl.Tensor, error) {
	e, err := t.engine(req.From.Engine)
	if err != nil {
		return nil, err
	}
	return e.tensor(req.Src)
}

func (t *transfers) hostToDevice(ctx context.Context, req *driver.TransferRequest) (*driver.Buffer, error) {
	dst, err := t.engine(req.To.Engine)
	if err != nil {
		return nil, err
	}
	h, ok := req.Src.Tensor()
	if !ok {
		return nil, fmt.Errorf("clengine: source payload %T is not a host tensor", req.Src.Payload())
	}
	d, err := opencl.HostToDevice(ctx, dst.Queue, h)
	if err != nil {
		return nil, err
	}
	return dst.Buffer(d), nil
}

func (t *transfers) deviceToHost(ctx context.Context, req *driver.TransferRequest) (*driver.Buffer, error) {
	src, err := t.source(req)
	if err != nil {
		return nil, err
	}
	h, ev, err := opencl.DeviceToHostAsync(ctx, src)
	if err != nil {
		return nil, err
	}
	b := driver.HostBuffer(h, nil)
	if ev != nil { // a nil *Event in the interface would not be nil
		b = b.WithReady(ev)
	}
	return b, nil
}

func (t *transfers) deviceToDevice(ctx context.Context, req *driver.TransferRequest) (*driver.Buffer, error) {
	src, err := t.source(req)
	if err != nil {
		return nil, err
	}
	dst, err := t.engine(req.To.Engine)
	if err != nil {
		return nil, err
	}
	d, err := opencl.DeviceToDevice(ctx, dst.Queue, src)
	if err != nil {
		return nil, err
	}
	return dst.Buffer(d), nil
}

// The device ops of the graph's elementwise and reduction op codes.
var (
	unaryOps = map[graph.OpCode]opencl.UnaryOp{graph.OpNeg: opencl.Neg, graph.OpAbs: opencl.Abs, graph.OpExp: opencl.Exp,
		graph.OpLog: opencl.Log, graph.OpSqrt: opencl.Sqrt, graph.OpReciprocal: opencl.Recip, graph.OpSquare: opencl.Square,
		graph.OpConj: opencl.Conj}
	binaryOps = map[graph.OpCode]opencl.BinaryOp{graph.OpAdd: opencl.Add, graph.OpSub: opencl.Sub, graph.OpMul: opencl.Mul,
		graph.OpDiv: opencl.Div, graph.OpPow: opencl.Pow, graph.OpMax: opencl.Max, graph.OpMin: opencl.Min}
	compareOps = map[graph.OpCode]opencl.CompareOp{graph.OpEq: opencl.Eq, graph.OpNe: opencl.Ne, graph.OpLt: opencl.Lt,
		graph.OpLe: opencl.Le, graph.OpGt: opencl.Gt, graph.OpGe: opencl.Ge}
	reduceOps = map[graph.OpCode]opencl.ReduceOp{graph.OpReduceSum: opencl.Sum, graph.OpReduceProd: opencl.Prod,
		graph.OpReduceMax: opencl.ReduceMax, graph.OpReduceMin: opencl.ReduceMin}
	// otherOps are the other op codes the engine runs (each its own case
	// in run), with their number of operands; -1 takes any number.
	otherOps = map[graph.OpCode]int8{graph.OpConstant: -1, graph.OpSelect: 3, graph.OpConvert: 1, graph.OpReshape: 1,
		graph.OpBroadcast: 1, graph.OpPermute: 1, graph.OpDiagonal: 1, graph.OpEmbedDiagonal: 1, graph.OpSlice: 1,
		graph.OpConcatenate: -1, graph.OpDotGeneral: 2}
)

// opFamily says how the engine runs an op code.
type opFamily uint8

const (
	notRun opFamily = iota // an op the engine does not run
	unaryFamily
	binaryFamily
	compareFamily
	reduceFamily
	otherFamily
)

// deviceOp is how the engine runs an op code: its family, its op within
// the family (for the unary, binary, compare and reduce families) and its
// number of operands (-1: any).
type deviceOp struct {
	family opFamily
	op     int32
	arity  int8
}

// deviceOps maps every graph op code to its deviceOp, built once: run
// indexes it with the code the compiler resolved (graph.Instruction.Code)
// instead of looking up the op's name.
var deviceOps = func() (t [256]deviceOp) {
	addOps(&t, unaryFamily, 1, unaryOps)
	addOps(&t, binaryFamily, 2, binaryOps)
	addOps(&t, compareFamily, 2, compareOps)
	addOps(&t, reduceFamily, 1, reduceOps)
	for c, n := range otherOps {
		t[c] = deviceOp{otherFamily, 0, n}
	}
	return t
}()

// addOps enters the ops of family f, each taking arity operands, in t.
func addOps[Op ~int32](t *[256]deviceOp, f opFamily, arity int8, ops map[graph.OpCode]Op) {
	for c, op := range ops {
		t[c] = deviceOp{f, int32(op), arity}
	}
}

// errOp reports an instruction the engine cannot run.
var errOp = errors.New("clengine: unsupported instruction")

func (e *Engine) execute(ctx context.Context, call *driver.Call) ([]*driver.Buffer, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	in := make([]*opencl.Tensor, len(call.Inputs))
	for i, b := range call.Inputs {
		t, err := e.tensor(b)
		if err != nil {
			return nil, fmt.Errorf("operand %d: %w", i, err)
		}
		in[i] = t
	}
	out, err := e.run(ctx, call, in)
	if err != nil {
		return nil, fmt.Errorf("clengine: %s #%d on %s: %w", call.Instruction.Op, call.Index, e.ID(), err)
	}
	return []*driver.Buffer{e.Buffer(out)}, nil
}

func (e *Engine) run(ctx context.Context, call *driver.Call, in []*opencl.Tensor) (*opencl.Tensor, error) {
	ins := call.Instruction
	a := &ins.Attrs
	if len(call.Results) != 1 {
		return nil, fmt.Errorf("%w: %d results", errOp, len(call.Results))
	}
	res := call.Results[0]
	d := deviceOps[ins.Code]
	switch {
	case d.family == notRun:
		return nil, fmt.Errorf("%w: op %q", errOp, ins.Op)
	case d.arity >= 0 && len(in) != int(d.arity):
		return nil, fmt.Errorf("%w: %d operands, want %d", errOp, len(in), d.arity)
	}
	switch d.family {
	case unaryFamily:
		return e.Unary(ctx, opencl.UnaryOp(d.op), in[0])
	case binaryFamily:
		return e.Binary(ctx, opencl.BinaryOp(d.op), in[0], in[1])
	case compareFamily:
		return e.Compare(ctx, opencl.CompareOp(d.op), in[0], in[1])
	case reduceFamily:
		return e.Reduce(ctx, opencl.ReduceOp(d.op), in[0], false, a.Axes...)
	}
	switch ins.Code {
	case graph.OpConstant:
		if a.Value == nil {
			return nil, fmt.Errorf("%w: constant without a value", errOp)
		}
		return e.Upload(ctx, a.Value)
	case graph.OpSelect:
		return e.Select(ctx, in[0], in[1], in[2])
	case graph.OpConvert:
		return e.Convert(ctx, in[0], a.DType)
	case graph.OpReshape:
		return e.copyOf(ctx, in[0], func(t *opencl.Tensor) (*opencl.Tensor, error) { return e.Reshape(ctx, t, res.Shape...) })
	case graph.OpBroadcast:
		return e.Broadcast(ctx, in[0], res.Shape...)
	case graph.OpPermute:
		return e.Permute(ctx, in[0], a.Perm...)
	case graph.OpDiagonal:
		return e.copyOf(ctx, in[0], func(t *opencl.Tensor) (*opencl.Tensor, error) { return t.Diagonal(a.Axes...) })
	case graph.OpEmbedDiagonal:
		return e.EmbedDiagonal(ctx, in[0], res.Shape, a.Axes...)
	case graph.OpSlice:
		rs := make([]tensor.Range, len(a.Start))
		for i := range rs {
			stop := a.Limit[i]
			if stop < 0 {
				stop = in[0].Shape()[i]
			}
			rs[i] = tensor.Range{Start: a.Start[i], Stop: stop, Step: max(a.Stride[i], 1)}
		}
		return e.copyOf(ctx, in[0], func(t *opencl.Tensor) (*opencl.Tensor, error) { return t.Slice(rs...) })
	case graph.OpConcatenate:
		return e.Concatenate(ctx, a.Axis, in...)
	case graph.OpDotGeneral:
		return e.DotGeneral(ctx, in[0], in[1], a.LhsBatch, a.RhsBatch, a.LhsContract, a.RhsContract)
	}
	return nil, fmt.Errorf("%w: op %q", errOp, ins.Op)
}

// copyOf returns a new contiguous tensor holding the view f makes of t, so
// results never alias their operands.
func (e *Engine) copyOf(ctx context.Context, t *opencl.Tensor, f func(*opencl.Tensor) (*opencl.Tensor, error)) (*opencl.Tensor, error) {
	v, err := f(t)
	if err != nil {
		return nil, err
	}
	defer v.Release()
	return e.Contiguous(ctx, v)
}
