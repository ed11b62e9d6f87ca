package goferro

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/internal/schedule"
	"github.com/goferro/goferro/internal/slots"
	"github.com/goferro/goferro/tensor"
)

// Run prepares the program (using the cache) and executes it inline,
// returning the outputs as host tensors materialized by the engines that
// hold them.
func (r *Runtime) Run(ctx context.Context, prog *graph.Program, inputs []*driver.Buffer, opts ...RunOption) ([]*tensor.Tensor, error) {
	p, err := r.prepare(ctx, r.snap.Load(), prog, inputs, collectOpts(opts))
	if err != nil {
		return nil, err
	}
	return p.execute(ctx, inputs)
}

// RunTensors is Run with host tensors as inputs (wrapped with
// driver.HostBuffer).
func (r *Runtime) RunTensors(ctx context.Context, prog *graph.Program, inputs []*tensor.Tensor, opts ...RunOption) ([]*tensor.Tensor, error) {
	bufs := make([]*driver.Buffer, len(inputs))
	for i, t := range inputs {
		if t == nil {
			e := newError(ErrInvalidInput, "nil tensor")
			e.Input = i
			return nil, e
		}
		bufs[i] = driver.HostBuffer(t, nil)
	}
	return r.Run(ctx, prog, bufs, opts...)
}

// Execute runs a prepared program on inputs with the same physical
// signature as the ones it was prepared for. A Prepared of another runtime
// or an older epoch is ErrStalePrepared (Run re-prepares instead).
//
// Inputs are re-checked against the prepared ingress: a different
// signature, or an input its ingress engine no longer accepts or does not
// own, is ErrInputMismatch. On any failure no downstream node runs and
// every copy the runtime made is released.
func (r *Runtime) Execute(ctx context.Context, p *Prepared, inputs []*driver.Buffer) ([]*tensor.Tensor, error) {
	if err := r.admit(p); err != nil {
		return nil, err
	}
	return p.execute(ctx, inputs)
}

// admit checks that p was prepared by r under its current configuration.
func (r *Runtime) admit(p *Prepared) error {
	switch {
	case p == nil:
		return newError(ErrInvalidProgram, "nil prepared program")
	case p.snap.rt != r:
		return newError(ErrStalePrepared, "prepared by another runtime")
	case p.snap.epoch != r.Epoch():
		return newError(ErrStalePrepared, "prepared at epoch %d, the runtime is at epoch %d", p.snap.epoch, r.Epoch())
	}
	return nil
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

	// prof, for a profiled run (Runtime.Profile), collects the host time
	// of every schedule node and its completions that time the device.
	prof []nodeProfile

	mu  sync.Mutex
	err error
	// pend is the work of the run still possibly in flight: the
	// completions of the pending buffers it holds (see driver.Completion),
	// per event domain: pend[0] the inputs', pend[1+e] engine e's, each
	// oldest first. It is made at the first completion, so runs of
	// engines that return finished work never allocate it.
	pend []pendingList
}

// pendingWork is the completion of a pending buffer and who made it: a
// schedule node, or program input -1-node.
type pendingWork struct {
	node int
	c    driver.Completion
}

// pendingList is the pending work of one event domain, oldest first.
// Completions found to have succeeded are dropped as the run goes (prune),
// so a long chain of device work does not keep every event alive until the
// end of the run; limit is the length at which the list is next pruned.
type pendingList struct {
	work  []pendingWork
	limit int
}

// pruneBatch is the shortest pendingList that is pruned: polling in
// batches rather than at every completion keeps the polls of work that has
// not finished yet (one per prune) few.
const pruneBatch = 64

// prune drops the completions at the head of l that have succeeded,
// polling them oldest first with a done context (driver.Completion: Wait
// then answers without blocking) up to the first one that has not finished
// or has failed, which stays with everything after it for drain to wait
// for and report. The next prune is due when the list has doubled, so the
// polls of unfinished work cost O(1) per completion.
func (l *pendingList) prune() {
	k := 0
	for k < len(l.work) && wait(doneCtx, l.work[k].c) == nil {
		k++
	}
	l.work = slices.Delete(l.work, 0, k)
	l.limit = max(pruneBatch, 2*len(l.work))
}

// doneCtx is a context that is always done: waiting with it polls.
var doneCtx = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// eventFailure stands for the run's error when a wait found a failed
// completion: drain replaces it with the failure of the earliest node.
type eventFailure struct{ err error }

func (e *eventFailure) Error() string { return e.err.Error() }

// addPending records the completion of a pending buffer made by node
// (program input -1-node) and prunes the list of its event domain when it
// is due.
func (x *run) addPending(node int, c driver.Completion) {
	d := 0
	if node >= 0 {
		d = 1 + x.p.plan.Nodes[node].At.Engine
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if dt, ok := c.(driver.DeviceTimer); ok && x.prof != nil && node >= 0 {
		x.prof[node].device = append(x.prof[node].device, dt)
	}
	if x.pend == nil {
		x.pend = make([]pendingList, 1+len(x.s.engines))
	}
	l := &x.pend[d]
	if l.work = append(l.work, pendingWork{node, c}); len(l.work) >= max(l.limit, pruneBatch) {
		l.prune()
	}
}

// await waits, for node i, for the completion of a pending buffer it
// consumes from another event domain.
func (x *run) await(i int, c driver.Completion) error {
	err := wait(x.ctx, c)
	switch {
	case err == nil:
		return nil
	case canceled(x.ctx, err):
		return x.canceled(i, x.ctx.Err())
	}
	return &eventFailure{err}
}

// drain waits for every completion of the run, so that none of its work is
// in flight when it returns, even when it failed or was cancelled. If one
// failed, the failure of the earliest node in schedule order becomes the
// run's error, unless the run had already failed otherwise.
func (x *run) drain() {
	x.mu.Lock()
	var pend []pendingWork
	for _, l := range x.pend {
		pend = append(pend, l.work...)
	}
	x.pend = nil
	x.mu.Unlock()
	if len(pend) == 0 {
		return
	}
	slices.SortFunc(pend, func(a, b pendingWork) int { return a.node - b.node })
	ctx := context.WithoutCancel(x.ctx)
	// Waiting from the last: on an in-order queue its completion implies
	// every earlier one, so those waits return at once.
	first, ferr := 0, error(nil)
	for k := len(pend) - 1; k >= 0; k-- {
		if err := wait(ctx, pend[k].c); err != nil {
			first, ferr = pend[k].node, err
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	var ef *eventFailure
	waitFailed := errors.As(x.err, &ef)
	switch {
	case ferr != nil && (x.err == nil || waitFailed):
		x.err = x.eventError(first, ferr)
	case waitFailed: // unreachable: a failed wait is of a recorded completion
		e := newError(ErrExecutorFailed, "a completion failed")
		e.Err = ef.err
		x.err = e
	}
}

// wait waits for c, turning a panic into a *panicError.
func wait(ctx context.Context, c driver.Completion) error {
	_, err := guard(func() (struct{}, error) { return struct{}{}, c.Wait(ctx) })
	return err
}

// eventError is the error of the failed completion of node (or of program
// input -1-node).
func (x *run) eventError(node int, err error) error {
	if isPanic(err) {
		e := newError(ErrPanic, "a completion panicked")
		if e.Err, e.Input = err, -1-node; node >= 0 {
			e.Input, e.Instruction = -1, x.p.sprog.Instrs[x.p.plan.Nodes[node].Instr].Index
		}
		return e
	}
	if node < 0 {
		e := newError(ErrInvalidInput, "the input's completion failed")
		e.Input, e.Err = -1-node, err
		return e
	}
	n := &x.p.plan.Nodes[node]
	ins := x.p.sprog.Instrs[n.Instr].Index
	if n.Kind == schedule.Transfer {
		e := newError(ErrTransferFailed, "the copy's completion failed")
		e.Instruction, e.Slot, e.From, e.To, e.Err = ins, n.Slot, x.s.location(n.From), x.s.location(n.At), err
		return e
	}
	e := newError(ErrExecutorFailed, "the instruction's completion failed")
	e.Instruction, e.Engine, e.Err = ins, x.s.engines[n.At.Engine].ID, err
	return e
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

// execute re-checks the inputs and runs the schedule.
func (p *Prepared) execute(ctx context.Context, inputs []*driver.Buffer) ([]*tensor.Tensor, error) {
	if err := p.recheckInputs(inputs); err != nil {
		return nil, err
	}
	return p.run(ctx, inputs, nil)
}

// run runs the schedule on inputs that passed recheckInputs; the snapshot
// is the prepared one, whatever the runtime's current epoch. prof, if not
// nil, has a nodeProfile per schedule node to fill.
func (p *Prepared) run(ctx context.Context, inputs []*driver.Buffer, prof []nodeProfile) ([]*tensor.Tensor, error) {
	x := &run{p: p, s: p.snap, ctx: ctx, prof: prof}
	x.store = &x.storeMem
	x.store.Init(p.sprog.NumSlots)
	if x.calls = x.callMem[:]; p.exec.numCalls > len(x.callMem) {
		x.calls = make([]driver.Call, p.exec.numCalls)
	}
	if x.args = x.argMem[:]; p.exec.numArgs > len(x.argMem) {
		x.args = make([]*driver.Buffer, p.exec.numArgs)
	}
	for i, in := range inputs {
		x.store.Put(p.sprog.Inputs[i], p.plan.Ingress[i], in, false)
		if c := in.Ready(); c != nil {
			x.addPending(-1-i, c)
		}
	}
	if p.serial || !p.exec.multiDomain {
		x.serial()
	} else {
		x.concurrent()
	}
	x.drain()
	var outs []*tensor.Tensor
	err := x.failed()
	if err == nil {
		outs, err = x.materialize()
	}
	if rerr := x.store.DropAll(); rerr != nil && err == nil {
		outs, err = nil, releaseError(rerr, -1)
	}
	if err != nil {
		return nil, err
	}
	return outs, nil
}

// releaseError reports a release hook that panicked, while releasing slot
// (-1: at the end of the run).
func releaseError(err error, slot int) error {
	e := newError(ErrPanic, "a buffer's release hook panicked")
	e.Slot, e.Err = slot, err
	return e
}

// discard releases a buffer the run gives up on after a failure; a
// panicking release hook cannot make that failure worse.
func discard(b *driver.Buffer) {
	defer func() { _ = recover() }()
	b.Release()
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
		if err := x.step(i); err != nil {
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
		if n.Kind == schedule.Release {
			q = -1
		}
		if _, ok := queues[q]; !ok {
			order = append(order, q)
		}
		queues[q] = append(queues[q], i)
	}
	var wg sync.WaitGroup
	for _, q := range order {
		wg.Go(func() {
			for _, i := range queues[q] {
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
				if err := x.step(i); err != nil {
					stop(err)
					return
				}
				close(done[i])
			}
		})
	}
	wg.Wait()
}

func (x *run) canceled(node int, cause error) error {
	e := newError(ErrCanceled, "stopped before schedule step %d", node)
	if n := x.p.plan.Nodes[node]; n.Kind != schedule.Release {
		e.Instruction = x.p.sprog.Instrs[n.Instr].Index
	}
	e.Err = cause
	return e
}

// step runs schedule node i, timing it in a profiled run.
func (x *run) step(i int) error {
	if x.prof == nil {
		return x.node(i)
	}
	start := time.Now()
	err := x.node(i)
	x.prof[i].host = time.Since(start)
	return err
}

// node runs schedule node i.
func (x *run) node(i int) error {
	n := &x.p.plan.Nodes[i]
	switch n.Kind {
	case schedule.Op:
		return x.op(i, n, &x.p.exec.ops[i])
	case schedule.Transfer:
		return x.transfer(i, n)
	default:
		if err := x.store.Drop(n.Slot); err != nil {
			return releaseError(err, n.Slot)
		}
		return nil
	}
}

// op runs an instruction (node i) with its engine's executor and
// publishes the results once they pass checkResults. Pending operands are
// waited for first unless the engine is InOrder.
func (x *run) op(i int, n *schedule.Node, oe *opExec) error {
	p := x.p
	ins := &p.prog.Instructions[n.Instr]
	si := &p.sprog.Instrs[n.Instr]
	eng := &x.s.engines[n.At.Engine]
	call := &x.calls[oe.call]
	*call = driver.Call{Index: ins.Index, Instruction: ins, Inputs: x.args[oe.arg : oe.arg : oe.arg+len(si.In)],
		Results: oe.results, Location: oe.loc, Placement: oe.placement}
	for _, sl := range si.In {
		b, ok := x.store.Get(sl, n.At)
		if !ok {
			return newError(ErrInvalidProgram, "instruction %d: slot %d has no copy at %v (schedule bug)", ins.Index, sl, call.Location)
		}
		if c := b.Ready(); c != nil && !eng.InOrder {
			if err := x.await(i, c); err != nil {
				return err
			}
		}
		call.Inputs = append(call.Inputs, b)
	}
	outs, err := guard(func() ([]*driver.Buffer, error) { return eng.Executor.Execute(x.ctx, call) })
	kind, msg := x.opFailure(err)
	out := -1
	if kind == nil {
		kind, out, msg = violation(func() error { return driver.CheckResults(outs, call, oe.want, eng.Ingress.Resident) })
	}
	if kind != nil {
		for _, b := range outs {
			if b != nil && !slices.Contains(call.Inputs, b) {
				discard(b)
			}
		}
		e := newError(kind, "%s", msg)
		e.Instruction, e.Output, e.Engine, e.Err = ins.Index, out, eng.ID, err
		return e
	}
	// The run's operand lists live as long as the run: they must not keep
	// the operands, released at their last use, and their completions
	// reachable until its end.
	clear(call.Inputs)
	for k, b := range outs {
		x.store.Put(si.Out[k], n.At, b, true)
		if c := b.Ready(); c != nil {
			x.addPending(i, c)
		}
	}
	return nil
}

// opFailure classifies an executor's error: a panic, the run's own
// cancellation, or the engine's failure.
func (x *run) opFailure(err error) (kind error, msg string) {
	switch {
	case err == nil:
		return nil, ""
	case isPanic(err):
		return ErrPanic, "executor panicked"
	case canceled(x.ctx, err):
		return ErrCanceled, "canceled while executing"
	}
	return ErrExecutorFailed, ""
}

// transfer copies a value to a new location with the registered provider
// (node i) and publishes the copy once it passes checkCopy. A pending
// source is waited for first unless the copy stays within one InOrder
// engine or the provider orders the copy after it itself
// (driver.OrderedProvider).
func (x *run) transfer(i int, n *schedule.Node) error {
	s, p := x.s, x.p
	ins := p.sprog.Instrs[n.Instr].Index
	src, ok := x.store.Get(n.Slot, n.From)
	from, to := s.location(n.From), s.location(n.At)
	if !ok {
		return newError(ErrInvalidProgram, "instruction %d: slot %d has no copy at %v (schedule bug)", ins, n.Slot, from)
	}
	if c := src.Ready(); c != nil && !(n.From.Engine == n.At.Engine && s.engines[n.At.Engine].InOrder) && !s.orders(n.From, n.At) {
		if err := x.await(i, c); err != nil {
			return err
		}
	}
	prov := s.providers[n.From.Class*len(s.classes)+n.At.Class]
	dst := s.placement(n.At)
	req := &driver.TransferRequest{Src: src, From: from, To: to, Dst: dst, Instruction: ins, Slot: n.Slot}
	out, err := guard(func() (*driver.Buffer, error) { return prov.Transfer(x.ctx, req) })
	var kind error
	var msg string
	switch {
	case err != nil && isPanic(err):
		kind, msg = ErrPanic, "provider panicked"
	case err != nil && canceled(x.ctx, err):
		kind, msg = ErrCanceled, "canceled while transferring"
	case err != nil:
		kind = ErrTransferFailed
	case out == nil:
		kind, msg = ErrTransferFailed, "provider returned no buffer"
	default:
		kind, _, msg = violation(func() error {
			return driver.CheckCopy(out, req, p.types[n.Slot], s.engines[n.At.Engine].Ingress.Resident)
		})
	}
	if kind != nil {
		if out != nil && out != src {
			discard(out)
		}
		e := newError(kind, "%s", msg)
		e.Instruction, e.Slot, e.From, e.To, e.Err = ins, n.Slot, from, to, err
		return e
	}
	x.store.Put(n.Slot, n.At, out, true)
	if c := out.Ready(); c != nil {
		x.addPending(i, c)
	}
	return nil
}

// materialize turns every program output into a host tensor with the
// engine that holds it.
func (x *run) materialize() ([]*tensor.Tensor, error) {
	p := x.p
	outs := make([]*tensor.Tensor, len(p.sprog.Outputs))
	for k, sl := range p.sprog.Outputs {
		if j := p.exec.firstOutput[k]; j != k {
			outs[k] = outs[j] // the same value as an earlier output
			continue
		}
		if err := x.ctx.Err(); err != nil {
			e := newError(ErrCanceled, "stopped before materializing output %d", k)
			e.Output, e.Err = k, err
			return nil, e
		}
		c, ok := x.store.First(sl)
		if !ok {
			e := newError(ErrInvalidProgram, "output slot %d has no copy (schedule bug)", sl)
			e.Output = k
			return nil, e
		}
		eng := &x.s.engines[c.At.Engine]
		t, err := guard(func() (*tensor.Tensor, error) { return eng.Materializer.Materialize(x.ctx, c.Buf) })
		if err == nil {
			err = checkMaterialized(t, p.types[sl])
		}
		if err != nil {
			kind := ErrMaterialize
			if isPanic(err) {
				kind = ErrPanic
			}
			e := newError(kind, "")
			e.Output, e.Engine, e.Err = k, eng.ID, err
			return nil, e
		}
		outs[k] = t
	}
	return outs, nil
}

// guard calls engine code, turning a panic into a *panicError.
func guard[T any](f func() (T, error)) (v T, err error) {
	defer func() {
		if p := recover(); p != nil {
			var zero T
			v, err = zero, &panicError{p}
		}
	}()
	return f()
}

func isPanic(err error) bool {
	_, ok := err.(*panicError)
	return ok
}

// canceled reports whether err is an engine or provider honouring the run's
// cancellation: the run's context is done and err wraps its cause. Such a
// failure is the caller's cancellation, not the engine's fault.
func canceled(ctx context.Context, err error) bool {
	cerr := ctx.Err()
	return cerr != nil && errors.Is(err, cerr)
}
