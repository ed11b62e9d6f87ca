package goferro_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"weak"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/graph/ref"
	"github.com/goferro/goferro/tensor"
)

// Asynchronous completion (driver, Asynchronous completion) on WithQueue
// devices: their executors return pending results whose memory holds
// zeros until the queue has run them, so a consumer the runtime lets read
// one too early computes a wrong answer.

// eventually polls cond until it holds, failing the test after 5 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
	}
}

// gate is a queue step that holds the instructions of the given indices
// until open is closed, and delays instruction delay by 20 ms.
type gate struct {
	hold  map[int]bool
	delay int
	open  chan struct{}
	fail  map[int]error
}

func newGate(hold ...int) *gate {
	g := &gate{hold: map[int]bool{}, delay: -1, open: make(chan struct{}), fail: map[int]error{}}
	for _, i := range hold {
		g.hold[i] = true
	}
	return g
}

func (g *gate) step(_ context.Context, call *driver.Call) error {
	if call.Index == g.delay {
		time.Sleep(20 * time.Millisecond)
	}
	if g.hold[call.Index] {
		<-g.open
	}
	return g.fail[call.Index]
}

// negChain is -(-(...-(x)...)) with n negations, and its value.
func negChain(t *testing.T, n int, x *tensor.Tensor) (*graph.Program, *tensor.Tensor) {
	t.Helper()
	b := graph.NewBuilder()
	v := b.Input("x", tensor.Float64, graph.Dims(x.Shape()...))
	for range n {
		v = goferrotest.UnaryNeg(v)
	}
	p := compile(t, v)
	w, err := ref.Run(p, x)
	if err != nil {
		t.Fatal(err)
	}
	return p, w[0]
}

// TestAsyncSameDomainEnqueuesWithoutWaiting: every instruction of a chain
// on one in-order device is enqueued while the first is still held, and
// the result is the chain's, read once the queue has run.
func TestAsyncSameDomainEnqueuesWithoutWaiting(t *testing.T) {
	const n = 20
	g := newGate(0)
	d := goferrotest.NewDevice("fake.q.v1", goferrotest.WithQueue(g.step))
	rt, cp := meshRuntime(t, nil, d)
	x := randT(t, 1, 3, 4)
	p, w := negChain(t, n, x)
	h, err := rt.Submit(bg, p, host(x))
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "every instruction is enqueued", func() bool { return d.Stats().Executions == n })
	if st := d.Stats(); st.Completed != 0 {
		t.Fatalf("%d instructions completed while the first is held", st.Completed)
	}
	select {
	case <-h.Done():
		t.Fatal("the run finished while its work is held")
	case <-time.After(10 * time.Millisecond):
	}
	close(g.open)
	out, err := h.Wait(bg)
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], w)
	checkNoLeaks(t, cp, []*goferrotest.Device{d})
}

// twoQueues returns devices A (negation only) and B (arithmetic only),
// both WithQueue with the gates, and a runtime with the CPU engine and a
// copier between all of them.
func twoQueues(t *testing.T, ga, gb *gate) (a, b *goferrotest.Device, rt *goferro.Runtime, cp *goferrotest.Copier) {
	a = goferrotest.NewDevice("fake.qa.v1", goferrotest.WithFamilies(goferrotest.UnaryFamily), goferrotest.WithQueue(ga.step))
	b = goferrotest.NewDevice("fake.qb.v1", goferrotest.WithFamilies(goferrotest.ArithFamily), goferrotest.WithQueue(gb.step))
	rt, cp = meshRuntime(t, nil, a, b)
	return a, b, rt, cp
}

// crossProgram is s = -x + y (neg on A, add on B) and n = -y (on A, after
// the first neg), with their values.
func crossProgram(t *testing.T, x, y *tensor.Tensor) (*graph.Program, []*tensor.Tensor) {
	t.Helper()
	xv, yv := xy(x.Shape()...)
	s := goferrotest.ArithAdd(goferrotest.UnaryNeg(xv), yv)
	p := compile(t, s, goferrotest.UnaryNeg(yv))
	w, err := ref.Run(p, x, y)
	if err != nil {
		t.Fatal(err)
	}
	return p, w
}

// TestAsyncCrossDomainWaitsForItsEvent: B's add needs A's first neg,
// which is slow, and not A's second, which is held: the copy to B waits
// for the first (or B adds zeros) and B completes while the second is
// still held. The results are the serial order's.
func TestAsyncCrossDomainWaitsForItsEvent(t *testing.T) {
	x, y := randT(t, 1, 2, 3), randT(t, 2, 2, 3)
	for _, serial := range []bool{false, true} {
		ga, gb := newGate(2), newGate()
		ga.delay = 0
		a, b, rt, cp := twoQueues(t, ga, gb)
		p, w := crossProgram(t, x, y)
		var opts []goferro.RunOption
		if serial {
			opts = append(opts, goferro.Serial())
		}
		prep, err := rt.Prepare(bg, p, host(x, y), opts...)
		if err != nil {
			t.Fatal(err)
		}
		if l := prep.Locations(); l[0].Engine != a.ID() || l[1].Engine != b.ID() || l[2].Engine != a.ID() {
			t.Fatalf("placement %v, want neg, add, neg on A, B, A", l)
		}
		h, err := rt.SubmitPrepared(bg, prep, host(x, y))
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, "B has run the add", func() bool { return b.Stats().Completed == 1 })
		if st := a.Stats(); st.Completed != 1 {
			t.Fatalf("serial %v: A completed %d instructions, want 1 (the second is held)", serial, st.Completed)
		}
		close(ga.open)
		out, err := h.Wait(bg)
		if err != nil {
			t.Fatal(err)
		}
		checkSame(t, out, w)
		checkNoLeaks(t, cp, []*goferrotest.Device{a, b})
	}
}

// TestAsyncFailedEventStopsDownstream: A's first neg fails after a delay,
// its second (enqueued behind it) fails with it, and B's add, on another
// domain, never runs. The error names the first failed instruction, as the
// serial order would, and every copy is released.
func TestAsyncFailedEventStopsDownstream(t *testing.T) {
	x, y := randT(t, 1, 2, 3), randT(t, 2, 2, 3)
	injected := errors.New("injected device fault")
	for _, serial := range []bool{false, true} {
		ga, gb := newGate(), newGate()
		ga.delay, ga.fail[0] = 0, injected
		a, b, rt, cp := twoQueues(t, ga, gb)
		xv, yv := xy(x.Shape()...)
		p := compile(t, goferrotest.ArithAdd(goferrotest.UnaryNeg(goferrotest.UnaryNeg(xv)), yv))
		var opts []goferro.RunOption
		if serial {
			opts = append(opts, goferro.Serial())
		}
		_, err := rt.Run(bg, p, host(x, y), opts...)
		e := asError(t, err, goferro.ErrExecutorFailed)
		if e.Instruction != 0 || e.Engine != a.ID() || !errors.Is(err, injected) {
			t.Errorf("serial %v: error %v, want instruction 0 on %s wrapping the injected fault", serial, err, a.ID())
		}
		if st := b.Stats(); st.Executions != 0 {
			t.Errorf("serial %v: B executed %d instructions after A failed", serial, st.Executions)
		}
		if st := a.Stats(); st.Completed != 2 {
			t.Errorf("serial %v: A completed %d instructions, want 2 (the run waits for its work)", serial, st.Completed)
		}
		checkNoLeaks(t, cp, []*goferrotest.Device{a, b})
	}
}

// TestAsyncCancel: cancelling while A's neg is held stops the copy to B
// from waiting for it; the run still waits for the held work before it
// returns, then reports the cancellation and releases everything.
func TestAsyncCancel(t *testing.T) {
	x, y := randT(t, 1, 2, 3), randT(t, 2, 2, 3)
	ga, gb := newGate(0), newGate()
	a, b, rt, cp := twoQueues(t, ga, gb)
	p, _ := crossProgram(t, x, y)
	ctx, cancel := context.WithCancel(bg)
	h, err := rt.Submit(ctx, p, host(x, y))
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "A has enqueued its negs", func() bool { return a.Stats().Executions == 2 })
	cancel()
	select {
	case <-h.Done():
		t.Fatal("the run returned while its work is in flight")
	case <-time.After(20 * time.Millisecond):
	}
	close(ga.open)
	_, err = h.Wait(bg)
	isKind(t, err, goferro.ErrCanceled)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v does not wrap context.Canceled", err)
	}
	if st := b.Stats(); st.Executions != 0 {
		t.Errorf("B executed %d instructions after the cancellation", st.Executions)
	}
	checkNoLeaks(t, cp, []*goferrotest.Device{a, b})
}

// panicking is a completion whose Wait panics.
type panicking struct{ driver.Completion }

func (panicking) Wait(context.Context) error { panic("completion panicked") }

// TestAsyncCompletionPanics: a completion whose Wait panics is an
// ErrPanic naming the instruction, not a crash, and every copy is
// released.
func TestAsyncCompletionPanics(t *testing.T) {
	d := goferrotest.NewDevice("fake.q.v1", goferrotest.WithQueue(nil))
	reg := d.Engine()
	inner := reg.Executor
	reg.Executor = driver.ExecutorFunc(func(ctx context.Context, call *driver.Call) ([]*driver.Buffer, error) {
		outs, err := inner.Execute(ctx, call)
		for k, b := range outs {
			if call.Index == 2 { // the last: read by the runtime only
				spec := specOf(b)
				spec.Ready = panicking{b.Ready()}
				outs[k] = driver.NewBuffer(spec)
			}
		}
		return outs, err
	})
	cp := goferrotest.NewCopier(d)
	rt := newRuntime(t, append([]goferro.Option{goferro.WithEngine(cpu.NewEngine()), goferro.WithEngine(reg)},
		mesh(cp, driver.StorageHost, d.DefaultStorage())...)...)
	x := randT(t, 1, 3)
	p, _ := negChain(t, 3, x)
	_, err := rt.Run(bg, p, host(x))
	if e := asError(t, err, goferro.ErrPanic); e.Instruction != 2 {
		t.Errorf("error %v, want instruction 2", err)
	}
	eventually(t, "the queue has run", func() bool { return d.Stats().Completed == 3 })
	checkNoLeaks(t, cp, []*goferrotest.Device{d})
}

// tracked is a completion the test can watch being let go of.
type tracked struct{ driver.Completion }

// keepingUp returns d's engine with its executor decorated so that the
// queue keeps up with the host for the instructions before index upto (the
// executor waits for their results before returning them, still pending to
// the runtime), and each pending result's completion is handed to the
// runtime as a *tracked, which seen (if not nil) is given.
func keepingUp(d *goferrotest.Device, upto int, seen func(*tracked)) driver.Engine {
	eng := d.Engine()
	inner := eng.Executor
	eng.Executor = driver.ExecutorFunc(func(ctx context.Context, call *driver.Call) ([]*driver.Buffer, error) {
		outs, err := inner.Execute(ctx, call)
		for k, b := range outs {
			if b.Ready() == nil {
				continue
			}
			c := &tracked{b.Ready()}
			if seen != nil {
				seen(c)
			}
			if call.Index < upto {
				_ = b.Wait(ctx) // a failure is the completion's to report
			}
			outs[k] = driver.NewBuffer(driver.BufferSpec{DType: b.DType(), Shape: b.ShapeView(), Strides: b.StridesView(),
				Offset: b.Offset(), Len: b.Len(), Placement: b.Placement(), Backend: b.Backend(), Payload: b.Payload(),
				Release: b.Release, Ready: c})
		}
		return outs, err
	})
	return eng
}

// queueRuntime is a runtime of the CPU engine and eng, d's engine.
func queueRuntime(t *testing.T, d *goferrotest.Device, eng driver.Engine) (*goferro.Runtime, *goferrotest.Copier) {
	cp := goferrotest.NewCopier(d)
	return newRuntime(t, append([]goferro.Option{goferro.WithEngine(cpu.NewEngine()), goferro.WithEngine(eng)},
		mesh(cp, driver.StorageHost, d.DefaultStorage())...)...), cp
}

// TestAsyncDropsSucceededCompletions: a run lets go of the completions it
// has seen succeed while it goes on, instead of holding every one until
// its end. A chain whose first n-1 instructions have run while the last is
// held keeps only a few of their completions reachable (all n before the
// runtime pruned them), and its result is still the chain's.
func TestAsyncDropsSucceededCompletions(t *testing.T) {
	const n = 400
	g := newGate(n - 1)
	d := goferrotest.NewDevice("fake.q.v1", goferrotest.WithQueue(g.step))
	var (
		mu   sync.Mutex
		seen []weak.Pointer[tracked]
	)
	rt, cp := queueRuntime(t, d, keepingUp(d, n-1, func(c *tracked) {
		mu.Lock()
		seen = append(seen, weak.Make(c))
		mu.Unlock()
	}))
	x := randT(t, 1, 3, 4)
	p, w := negChain(t, n, x)
	h, err := rt.Submit(bg, p, host(x))
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "every instruction is enqueued", func() bool { return d.Stats().Executions == n })
	runtime.GC()
	mu.Lock()
	live := 0
	for _, c := range seen {
		if c.Value() != nil {
			live++
		}
	}
	mu.Unlock()
	close(g.open)
	out, err := h.Wait(bg)
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], w)
	checkNoLeaks(t, cp, []*goferrotest.Device{d})
	if live > n/4 {
		t.Errorf("%d of %d completions still reachable while the last is held; want the ones seen to succeed let go of", live, n)
	}
}

// TestAsyncFailureAfterDroppedCompletions: in a long chain whose queue
// keeps up, so that the run lets go of the completions before it, the
// failure of instruction k (and so of every later one, which reads its
// result) is the run's error, named after k, and nothing leaks.
func TestAsyncFailureAfterDroppedCompletions(t *testing.T) {
	const n, k = 300, 200
	injected := errors.New("injected device fault")
	for _, serial := range []bool{false, true} {
		g := newGate()
		g.fail[k] = injected
		d := goferrotest.NewDevice("fake.q.v1", goferrotest.WithQueue(g.step))
		rt, cp := queueRuntime(t, d, keepingUp(d, n, nil))
		x := randT(t, 1, 3, 4)
		p, _ := negChain(t, n, x)
		var opts []goferro.RunOption
		if serial {
			opts = append(opts, goferro.Serial())
		}
		_, err := rt.Run(bg, p, host(x), opts...)
		e := asError(t, err, goferro.ErrExecutorFailed)
		if e.Instruction != k || !errors.Is(err, injected) {
			t.Errorf("serial %v: error %v, want instruction %d's wrapping the injected fault", serial, err, k)
		}
		checkNoLeaks(t, cp, []*goferrotest.Device{d})
	}
}

// orderedCopier is a transfer provider that orders its copies after a
// pending source itself (driver.OrderedProvider), as a device queue with
// an event wait list does: given a pending source, it returns at once the
// copier's buffer of the right placement, pending until the source's
// completion fires and the source's values are copied in; the copy fails
// when the source does.
type orderedCopier struct {
	inner   driver.TransferProvider
	pending atomic.Int64 // transfers given a pending source
	wg      sync.WaitGroup
}

func (o *orderedCopier) Orders(from, to driver.EngineID) bool { return true }

func (o *orderedCopier) Transfer(ctx context.Context, req *driver.TransferRequest) (*driver.Buffer, error) {
	src := req.Src.Ready()
	if src == nil {
		return o.inner.Transfer(ctx, req)
	}
	// The copier makes the destination now (from the source's memory as
	// it is: unfilled) and the values are copied in once src fires.
	now := *req
	now.Src = req.Src.WithReady(nil)
	out, err := o.inner.Transfer(ctx, &now)
	if err != nil {
		return nil, err
	}
	o.pending.Add(1)
	c := &fired{done: make(chan struct{})}
	o.wg.Go(func() {
		if c.err = src.Wait(context.WithoutCancel(ctx)); c.err == nil {
			s, _ := req.Src.Tensor()
			d, _ := out.Tensor()
			c.err = tensor.CopyInto(d, s)
		}
		close(c.done)
	})
	return out.WithReady(c), nil
}

// fired is a completion that fires when done is closed, with err.
type fired struct {
	done chan struct{}
	err  error
}

func (c *fired) Wait(ctx context.Context) error {
	select {
	case <-c.done:
		return c.err
	default:
	}
	select {
	case <-c.done:
		return c.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestAsyncOrderedProviderGetsPendingSource: with a provider that orders
// its copies itself (driver.OrderedProvider), B's add and the copy of A's
// neg to B are enqueued while the neg is still held on A: the runtime
// waits for nothing on the host. The results are the serial order's; when
// the neg fails instead, the copy fails with it, B's result is never
// read, the run reports the neg, and every copy is released.
func TestAsyncOrderedProviderGetsPendingSource(t *testing.T) {
	x, y := randT(t, 1, 2, 3), randT(t, 2, 2, 3)
	injected := errors.New("injected device fault")
	for _, fail := range []bool{false, true} {
		ga, gb := newGate(0), newGate()
		if fail {
			ga.fail[0] = injected
		}
		a := goferrotest.NewDevice("fake.qa.v1", goferrotest.WithFamilies(goferrotest.UnaryFamily), goferrotest.WithQueue(ga.step))
		b := goferrotest.NewDevice("fake.qb.v1", goferrotest.WithFamilies(goferrotest.ArithFamily), goferrotest.WithQueue(gb.step))
		cp := goferrotest.NewCopier(a, b)
		oc := &orderedCopier{inner: cp}
		opts := []goferro.Option{goferro.WithEngine(cpu.NewEngine()), goferro.WithEngine(a.Engine()), goferro.WithEngine(b.Engine())}
		rt := newRuntime(t, append(opts, mesh(oc, driver.StorageHost, a.DefaultStorage(), b.DefaultStorage())...)...)
		p, w := crossProgram(t, x, y)
		h, err := rt.Submit(bg, p, host(x, y))
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, "B has enqueued the add", func() bool { return b.Stats().Executions == 1 })
		if st := a.Stats(); st.Completed != 0 {
			t.Fatalf("A completed %d instructions while the first is held", st.Completed)
		}
		if n := oc.pending.Load(); n != 1 {
			t.Fatalf("%d transfers given a pending source, want the neg's copy to B", n)
		}
		close(ga.open)
		out, err := h.Wait(bg)
		oc.wg.Wait()
		if fail {
			e := asError(t, err, goferro.ErrExecutorFailed)
			if e.Instruction != 0 || e.Engine != a.ID() || !errors.Is(err, injected) {
				t.Errorf("error %v, want instruction 0 on %s wrapping the injected fault", err, a.ID())
			}
		} else {
			if err != nil {
				t.Fatal(err)
			}
			checkSame(t, out, w)
		}
		checkNoLeaks(t, cp, []*goferrotest.Device{a, b})
	}
}
