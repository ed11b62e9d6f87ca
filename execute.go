package goferro

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/internal/plan"
	"github.com/goferro/goferro/internal/slots"
	"github.com/goferro/goferro/tensor"
)

// Execute runs a prepared program on inputs with the same physical
// signature as the ones it was prepared for, and returns the outputs as host
// tensors (materialized by the engines holding them). A Prepared from an
// older epoch (ErrStalePrepared) or another runtime (ErrForeignPrepared) is
// rejected; Run re-prepares instead.
//
// Inputs are re-checked against the prepared ingress: a different signature
// is ErrInputMismatch, and an input its ingress engine no longer accepts or
// does not own is ErrInputRejected. On any failure no downstream node runs
// and every copy the runtime made is released.
func (r *Runtime) Execute(ctx context.Context, p *Prepared, inputs []*driver.Buffer, opts ...RunOption) ([]*tensor.Tensor, error) {
	if p == nil {
		return nil, execErr(ErrInvalidProgram, -1, "nil prepared program")
	}
	if p.snap.rt != r {
		return nil, execErr(ErrForeignPrepared, -1, "prepared by runtime %d, not %d", p.snap.rt.id, r.id)
	}
	if e := r.Epoch(); p.snap.epoch != e {
		return nil, execErr(ErrStalePrepared, -1, "prepared at epoch %d, the runtime is at epoch %d", p.snap.epoch, e)
	}
	return p.execute(ctx, inputs, collectOpts(opts).serial || p.serial)
}

// Run prepares the program (using the cache) and executes it inline.
func (r *Runtime) Run(ctx context.Context, prog *graph.Program, inputs []*driver.Buffer, opts ...RunOption) ([]*tensor.Tensor, error) {
	o := collectOpts(opts)
	p, err := r.prepare(ctx, r.snap.Load(), prog, inputs, o)
	if err != nil {
		return nil, err
	}
	return p.execute(ctx, inputs, o.serial)
}

// RunTensors is Run with host tensors as inputs (wrapped with HostBuffer).
func (r *Runtime) RunTensors(ctx context.Context, prog *graph.Program, inputs []*tensor.Tensor, opts ...RunOption) ([]*tensor.Tensor, error) {
	bufs := make([]*driver.Buffer, len(inputs))
	for i, t := range inputs {
		if t == nil {
			e := prepErr(ErrInvalidInput, "nil tensor")
			e.Input = i
			return nil, e
		}
		bufs[i] = driver.HostBuffer(t, nil)
	}
	return r.Run(ctx, prog, bufs, opts...)
}

func execErr(kind error, ins int, msg string, args ...any) *ExecError {
	return &ExecError{Kind: kind, Instruction: ins, Input: -1, Output: -1, Msg: fmt.Sprintf(msg, args...)}
}

// run is the state of one execution.
type run struct {
	p     *Prepared
	s     *snapshot
	store *slots.Store[*driver.Buffer] // &storeMem
	ctx   context.Context

	// calls and args are the Calls of the op nodes and their operand
	// lists, allocated once per run (see execPlan) instead of once per node;
	// small schedules use callMem and argMem, in the run's own allocation.
	calls []driver.Call
	args  []*driver.Buffer

	storeMem slots.Store[*driver.Buffer]
	callMem  [1]driver.Call
	argMem   [3]*driver.Buffer

	mu  sync.Mutex
	err error
}

// execPlan is what execution needs of the schedule beyond the plan itself,
// computed once at Prepare so that a run does no per-node lookups or
// copies of metadata.
type execPlan struct {
	// ops has one entry per schedule node (used for op nodes only).
	ops []opExec
	// numCalls and numArgs size a run's Call and operand slabs.
	numCalls, numArgs int
	// multiDomain: the schedule uses more than one event domain.
	multiDomain bool
}

// opExec is the precomputed part of one op node's Call.
type opExec struct {
	call, arg int // positions in the run's driver.Call and operand slabs
	loc       driver.Location
	placement driver.Placement
	// results is shared by every Call made for the node (Call.Results says
	// not to modify it); outputs are validated against Prepared.types, so
	// an executor that did modify it cannot make a wrong result pass.
	results []driver.ResultType
}

// compileExec fills p.exec from the plan.
func (p *Prepared) compileExec() {
	e := &p.exec
	e.ops = make([]opExec, len(p.plan.Nodes))
	first := -1
	for i, n := range p.plan.Nodes {
		if n.Kind != plan.Release {
			if first < 0 {
				first = n.At.Engine
			} else if n.At.Engine != first {
				e.multiDomain = true
			}
		}
		if n.Kind != plan.Op {
			continue
		}
		pi := &p.pprog.Instrs[n.Instr]
		o := &e.ops[i]
		o.call, o.arg = e.numCalls, e.numArgs
		e.numCalls++
		e.numArgs += len(pi.In)
		o.loc, o.placement = p.snap.location(n.At), p.snap.placement(n.At)
		o.results = make([]driver.ResultType, len(pi.Out))
		for k, sl := range pi.Out {
			o.results[k] = driver.ResultType{DType: p.types[sl].DType, Shape: p.types[sl].Shape.Clone()}
		}
	}
}

func (x *run) fail(err error) {
	x.mu.Lock()
	if x.err == nil {
		x.err = err
	}
	x.mu.Unlock()
}

func (x *run) failed() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.err
}

// execute runs the schedule; the snapshot is the prepared one, whatever the
// runtime's current epoch.
func (p *Prepared) execute(ctx context.Context, inputs []*driver.Buffer, serial bool) ([]*tensor.Tensor, error) {
	s := p.snap
	if err := p.recheckInputs(inputs); err != nil {
		return nil, err
	}
	x := &run{p: p, s: s, ctx: ctx}
	x.store = &x.storeMem
	x.store.Init(p.pprog.NumSlots)
	if x.calls = x.callMem[:]; p.exec.numCalls > len(x.callMem) {
		x.calls = make([]driver.Call, p.exec.numCalls)
	}
	if x.args = x.argMem[:]; p.exec.numArgs > len(x.argMem) {
		x.args = make([]*driver.Buffer, p.exec.numArgs)
	}
	for i, in := range inputs {
		x.store.Put(p.pprog.Inputs[i], p.plan.Ingress[i], in, false)
	}
	if serial || !p.exec.multiDomain {
		x.serial()
	} else {
		x.concurrent()
	}
	if err := x.failed(); err != nil {
		x.store.DropAll()
		return nil, err
	}
	outs, err := x.materialize()
	x.store.DropAll()
	if err != nil {
		return nil, err
	}
	return outs, nil
}

// recheckInputs re-checks runtime inputs against the prepared ingress.
func (p *Prepared) recheckInputs(inputs []*driver.Buffer) error {
	if len(inputs) != len(p.sigs) {
		e := execErr(ErrInputCount, -1, "%d inputs given, the program takes %d", len(inputs), len(p.sigs))
		return e
	}
	for i, b := range inputs {
		bad := func(kind error, msg string, args ...any) error {
			e := execErr(kind, -1, msg, args...)
			e.Input = i
			return e
		}
		if b == nil {
			return bad(ErrInvalidInput, "nil buffer")
		}
		if b.Released() {
			return bad(ErrInvalidInput, "buffer already released")
		}
		if sig := sigOf(b); !sig.equal(p.sigs[i]) {
			return bad(ErrInputMismatch, "input is %v, prepared for %v", sig, p.sigs[i])
		}
		if !b.InBounds() {
			return bad(ErrInvalidInput, "strides %v offset %d address memory outside its %d elements", b.StridesView(), b.Offset(), b.Len())
		}
		l := p.plan.Ingress[i]
		ok, err := ingressOK(p.snap, l.Engine, b, p.snap.classes[l.Class], i)
		if err != nil {
			e := bad(ErrPanic, "ingress check failed")
			e.(*ExecError).Err = err
			return e
		}
		if !ok {
			e := bad(ErrInputRejected, "engine does not accept the input at %s or does not own its memory", p.snap.classes[l.Class])
			e.(*ExecError).Engine = p.snap.engines[l.Engine].ID
			return e
		}
	}
	return nil
}

// serial runs every node in schedule order on this goroutine.
func (x *run) serial() {
	// A closed Done channel is what makes Err non-nil; polling the channel
	// is cheaper per node than Err (a mutex in the standard contexts), and
	// free for contexts that cannot be cancelled (nil channel).
	done := x.ctx.Done()
	for i := range x.p.plan.Nodes {
		if done != nil {
			select {
			case <-done:
				x.fail(x.canceled(i, x.ctx.Err()))
				return
			default:
			}
		}
		if err := x.node(i); err != nil {
			x.fail(err)
			return
		}
	}
}

// concurrent runs one goroutine per event domain (nodes in schedule order
// within it) and one for releases; cross-domain dependencies wait on the
// producing node's completion channel.
func (x *run) concurrent() {
	nodes := x.p.plan.Nodes
	done := make([]chan struct{}, len(nodes))
	for i := range done {
		done[i] = make(chan struct{})
	}
	abort := make(chan struct{})
	var abortOnce sync.Once
	stop := func(err error) {
		x.fail(err)
		abortOnce.Do(func() { close(abort) })
	}
	queues := map[int][]int{} // engine index (-1: releases) -> node indices
	var order []int
	for i, n := range nodes {
		q := n.At.Engine
		if n.Kind == plan.Release {
			q = -1
		}
		if _, ok := queues[q]; !ok {
			order = append(order, q)
		}
		queues[q] = append(queues[q], i)
	}
	var wg sync.WaitGroup
	for _, q := range order {
		list := queues[q]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, i := range list {
				for _, d := range nodes[i].Deps {
					select {
					case <-done[d]:
					case <-abort:
						return
					case <-x.ctx.Done():
						stop(x.canceled(i, x.ctx.Err()))
						return
					}
				}
				select {
				case <-abort:
					return
				default:
				}
				if err := x.ctx.Err(); err != nil {
					stop(x.canceled(i, err))
					return
				}
				if err := x.node(i); err != nil {
					stop(err)
					return
				}
				close(done[i])
			}
		}()
	}
	wg.Wait()
}

func (x *run) canceled(node int, cause error) error {
	n := x.p.plan.Nodes[node]
	ins := -1
	if n.Kind != plan.Release {
		ins = x.p.pprog.Instrs[n.Instr].Index
	}
	e := execErr(ErrCanceled, ins, "stopped before schedule step %d", node)
	e.Err = cause
	return e
}

// node runs schedule node i.
func (x *run) node(i int) error {
	n := &x.p.plan.Nodes[i]
	switch n.Kind {
	case plan.Op:
		return x.op(n, &x.p.exec.ops[i])
	case plan.Transfer:
		return x.transfer(n)
	default:
		x.store.Drop(n.Slot)
		return nil
	}
}

func (x *run) op(n *plan.Node, oe *opExec) error {
	s, p := x.s, x.p
	ins := &p.prog.Instructions[n.Instr]
	pi := &p.pprog.Instrs[n.Instr]
	eng := &s.engines[n.At.Engine]
	call := &x.calls[oe.call]
	*call = driver.Call{Index: ins.Index, Instruction: ins, Inputs: x.args[oe.arg : oe.arg : oe.arg+len(pi.In)],
		Results: oe.results, Location: oe.loc, Placement: oe.placement}
	for _, sl := range pi.In {
		b, ok := x.store.Get(sl, n.At)
		if !ok {
			return execErr(ErrInvalidProgram, ins.Index, "slot %d has no copy at %v (schedule bug)", sl, call.Location)
		}
		call.Inputs = append(call.Inputs, b)
	}
	outs, err := safeExecute(x.ctx, eng.Executor, call)
	fail := func(kind error, out int, msg string, args ...any) error {
		for _, b := range outs {
			if b != nil && !slices.Contains(call.Inputs, b) {
				b.Release()
			}
		}
		e := execErr(kind, ins.Index, msg, args...)
		e.Output, e.Engine, e.Err = out, eng.ID, err
		return e
	}
	if err != nil {
		if _, ok := err.(*panicError); ok {
			return fail(ErrPanic, -1, "executor panicked")
		}
		if canceled(x.ctx, err) {
			return fail(ErrCanceled, -1, "canceled while executing")
		}
		return fail(ErrExecutorFailed, -1, "")
	}
	if len(outs) != len(pi.Out) {
		return fail(ErrOutputMismatch, -1, "%d results, want %d", len(outs), len(pi.Out))
	}
	for k, b := range outs {
		want := &p.types[pi.Out[k]] // not call.Results: the executor had that
		switch {
		case b == nil:
			return fail(ErrOutputMismatch, k, "nil result")
		case slices.Contains(call.Inputs, b) || slices.Contains(outs[:k], b):
			return fail(ErrOutputMismatch, k, "result is an operand or another result; executors must return new buffers")
		case b.DType() != want.DType:
			return fail(ErrOutputMismatch, k, "dtype %v, want %v", b.DType(), want.DType)
		case !b.ShapeView().Equal(want.Shape):
			return fail(ErrOutputMismatch, k, "shape %v, want %v", b.ShapeView(), want.Shape)
		case !b.InBounds():
			return fail(ErrOutputMismatch, k, "strides %v offset %d address memory outside its %d elements", b.StridesView(), b.Offset(), b.Len())
		case b.Placement() != oe.placement:
			return fail(ErrOutputResidencyMismatch, k, "placement %v, want %v", b.Placement(), oe.placement)
		}
		ok, perr := safeResident(eng, b)
		if perr != nil {
			err = perr
			return fail(ErrPanic, k, "residency check panicked")
		}
		if !ok {
			return fail(ErrOutputResidencyMismatch, k, "engine %s does not own the result's memory", eng.ID)
		}
	}
	for k, b := range outs {
		x.store.Put(pi.Out[k], n.At, b, true)
	}
	return nil
}

func (x *run) transfer(n *plan.Node) error {
	s, p := x.s, x.p
	ins := p.pprog.Instrs[n.Instr].Index
	src, ok := x.store.Get(n.Slot, n.From)
	from, to := s.location(n.From), s.location(n.At)
	if !ok {
		return execErr(ErrInvalidProgram, ins, "slot %d has no copy at %v (schedule bug)", n.Slot, from)
	}
	prov := s.providers[n.From.Class*len(s.classes)+n.At.Class]
	dst := s.placement(n.At)
	req := &driver.TransferRequest{Src: src, From: from, To: to, Dst: dst, Instruction: ins, Slot: n.Slot}
	out, err := safeTransfer(x.ctx, prov, req)
	fail := func(kind error, msg string, args ...any) error {
		if out != nil && out != src {
			out.Release()
		}
		return &TransferError{Kind: kind, Instruction: ins, Slot: n.Slot, From: from, To: to, Msg: fmt.Sprintf(msg, args...), Err: err}
	}
	if err != nil {
		if _, ok := err.(*panicError); ok {
			return fail(ErrPanic, "provider panicked")
		}
		if canceled(x.ctx, err) {
			return fail(ErrCanceled, "canceled while transferring")
		}
		return fail(ErrTransferFailed, "")
	}
	want := p.types[n.Slot]
	wantN, _ := want.Shape.NumElements()
	if out == nil {
		return fail(ErrTransferFailed, "provider returned no buffer")
	}
	if cnt, err := out.ShapeView().NumElements(); err != nil || cnt != wantN {
		if err != nil {
			return fail(ErrTransferElementCount, "element count of %v overflows", out.ShapeView())
		}
		return fail(ErrTransferElementCount, "%d elements, want %d", cnt, wantN)
	}
	if out.DType() != want.DType {
		return fail(ErrTransferDType, "dtype %v, want %v", out.DType(), want.DType)
	}
	if !out.ShapeView().Equal(want.Shape) {
		return fail(ErrTransferShape, "shape %v, want %v", out.ShapeView(), want.Shape)
	}
	if !out.InBounds() {
		return fail(ErrTransferLength, "buffer of %d elements cannot hold shape %v with strides %v offset %d", out.Len(), out.ShapeView(), out.StridesView(), out.Offset())
	}
	if out == src || out.Placement() != dst {
		return fail(ErrTransferPlacement, "placement %v, want %v", out.Placement(), dst)
	}
	eng := &s.engines[n.At.Engine]
	okRes, perr := safeResident(eng, out)
	if perr != nil {
		err = perr
		return fail(ErrPanic, "residency check panicked")
	}
	if !okRes {
		return fail(ErrTransferResidency, "engine %s does not own the copy's memory", eng.ID)
	}
	x.store.Put(n.Slot, n.At, out, true)
	return nil
}

// materialize turns every program output into a host tensor with the
// engine that holds it.
func (x *run) materialize() ([]*tensor.Tensor, error) {
	p := x.p
	outs := make([]*tensor.Tensor, len(p.pprog.Outputs))
	for k, sl := range p.pprog.Outputs {
		if j := p.firstOutput[k]; j != k {
			outs[k] = outs[j] // the same value as an earlier output
			continue
		}
		if err := x.ctx.Err(); err != nil {
			e := execErr(ErrCanceled, -1, "stopped before materializing output %d", k)
			e.Output, e.Err = k, err
			return nil, e
		}
		c, ok := x.store.First(sl)
		if !ok {
			e := execErr(ErrInvalidProgram, -1, "output slot %d has no copy (schedule bug)", sl)
			e.Output = k
			return nil, e
		}
		eng := &x.s.engines[c.At.Engine]
		t, err := safeMaterialize(x.ctx, eng.Materializer, c.Buf)
		want := p.types[sl]
		switch {
		case err != nil:
		case t == nil:
			err = fmt.Errorf("nil tensor")
		case t.DType() != want.DType || !t.ShapeView().Equal(want.Shape):
			err = fmt.Errorf("materialized %v%v, want %v%v", t.DType(), t.Shape(), want.DType, want.Shape)
		}
		if err != nil {
			kind := ErrMaterialize
			if _, ok := err.(*panicError); ok {
				kind = ErrPanic
			}
			e := execErr(kind, -1, "")
			e.Output, e.Engine, e.Err = k, eng.ID, err
			return nil, e
		}
		outs[k] = t
	}
	return outs, nil
}

// panicError is a recovered panic from engine code.
type panicError struct{ v any }

func (e *panicError) Error() string { return fmt.Sprintf("panic: %v", e.v) }

func safeExecute(ctx context.Context, ex driver.Executor, call *driver.Call) (outs []*driver.Buffer, err error) {
	defer func() {
		if v := recover(); v != nil {
			outs, err = nil, &panicError{v}
		}
	}()
	return ex.Execute(ctx, call)
}

func safeTransfer(ctx context.Context, p driver.TransferProvider, req *driver.TransferRequest) (out *driver.Buffer, err error) {
	defer func() {
		if v := recover(); v != nil {
			out, err = nil, &panicError{v}
		}
	}()
	return p.Transfer(ctx, req)
}

func safeMaterialize(ctx context.Context, m driver.Materializer, b *driver.Buffer) (t *tensor.Tensor, err error) {
	defer func() {
		if v := recover(); v != nil {
			t, err = nil, &panicError{v}
		}
	}()
	return m.Materialize(ctx, b)
}

func safeResident(e *driver.Engine, b *driver.Buffer) (ok bool, err error) {
	defer func() {
		if v := recover(); v != nil {
			ok, err = false, &panicError{v}
		}
	}()
	return e.Ingress.Resident(b), nil
}

// canceled reports whether err is an engine or provider honouring the run's
// cancellation: the run's context is done and err wraps its cause. Such a
// failure is the caller's cancellation, not the engine's fault.
func canceled(ctx context.Context, err error) bool {
	cerr := ctx.Err()
	return cerr != nil && errors.Is(err, cerr)
}
