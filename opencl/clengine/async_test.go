package clengine_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/opencl"
	"github.com/goferro/goferro/opencl/clengine"
	"github.com/goferro/goferro/tensor"
)

// chainLength is the number of instructions of the chain benchmark.
const chainLength = 1000

// negChain is -(-(...-(x)...)) with n negations of a float32 vector of
// length size.
func negChain(t testing.TB, n, size int) *graph.Program {
	t.Helper()
	v := graph.NewBuilder().Input("x", tensor.Float32, graph.Dims(size))
	for range n {
		v = graph.Neg(v)
	}
	return compile(t, v)
}

// respec returns b under the completion ready (nil: complete), releasing b
// with it.
func respec(b *driver.Buffer, ready driver.Completion) *driver.Buffer {
	return driver.NewBuffer(driver.BufferSpec{DType: b.DType(), Shape: b.ShapeView(), Strides: b.StridesView(),
		Offset: b.Offset(), Len: b.Len(), Placement: b.Placement(), Backend: b.Backend(), Payload: b.Payload(),
		Release: b.Release, Ready: ready})
}

// timed is a completion that adds the host time spent waiting for it to
// blocked.
type timed struct {
	c       driver.Completion
	blocked *atomic.Int64
}

func (w timed) Wait(ctx context.Context) error {
	start := time.Now()
	err := w.c.Wait(ctx)
	w.blocked.Add(int64(time.Since(start)))
	return err
}

// chainMode is how the chain benchmark's engine hands its results to the
// runtime.
type chainMode int

const (
	// syncMode: the synchronous contract, complete on return: each
	// executor call waits for its command before returning.
	syncMode chainMode = iota
	// hiddenMode: the engine before asynchronous completion: it returns
	// without waiting, and the runtime does not know the work is pending
	// (the wait happens inside the final download).
	hiddenMode
	// asyncMode: the engine as registered: pending results, waited for by
	// the runtime where it must.
	asyncMode
)

// chainRuntime registers e with its executor and materializer decorated
// for mode, adding the host time they spend waiting for the device to
// blocked and the time spent in the executor to enqueue.
func chainRuntime(t testing.TB, e *clengine.Engine, mode chainMode, blocked, enqueue *atomic.Int64) *goferro.Runtime {
	reg := e.Registration()
	inner, mat := reg.Executor, reg.Materializer
	reg.Executor = driver.ExecutorFunc(func(ctx context.Context, call *driver.Call) ([]*driver.Buffer, error) {
		start := time.Now()
		outs, err := inner.Execute(ctx, call)
		enqueue.Add(int64(time.Since(start)))
		for k, b := range outs {
			switch c := b.Ready(); {
			case c == nil:
			case mode == syncMode:
				start := time.Now()
				if err := c.Wait(ctx); err != nil {
					return nil, err
				}
				blocked.Add(int64(time.Since(start)))
				outs[k] = respec(b, nil)
			case mode == hiddenMode:
				outs[k] = respec(b, nil)
			default:
				outs[k] = respec(b, timed{c, blocked})
			}
		}
		return outs, err
	})
	reg.Materializer = driver.MaterializerFunc(func(ctx context.Context, b *driver.Buffer) (*tensor.Tensor, error) {
		start := time.Now()
		defer func() { blocked.Add(int64(time.Since(start))) }()
		return mat.Materialize(ctx, b)
	})
	rt, err := goferro.NewRuntime(goferro.WithEngine(cpu.NewEngine()), goferro.WithEngine(reg), goferro.WithRoutes(clengine.Providers(e)...))
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// TestChainModesAgree runs a short chain in every mode of the benchmark:
// each gives the chain's value (x: an even number of negations).
func TestChainModesAgree(t *testing.T) {
	e := openEngine(t)
	p := negChain(t, 10, 16)
	x := randT(t, tensor.Float32, 1, 16)
	for _, mode := range []chainMode{syncMode, hiddenMode, asyncMode} {
		var blocked, enqueue atomic.Int64
		rt := chainRuntime(t, e, mode, &blocked, &enqueue)
		out, err := rt.Run(context.Background(), p, host(x), goferro.OnEngines(driver.EngineID(e.ID())))
		if err != nil {
			t.Fatal(err)
		}
		checkOut(t, out, []*tensor.Tensor{x})
	}
}

// BenchmarkChain runs a chain of 1,000 negations of a 16-element float32
// vector on one device through the runtime, the instructions' results
// handed over in each chainMode. ns/op is the whole run; blocked-ns/node
// is the host time spent waiting for the device (in the executor, in
// completions, in the final download) per instruction, and enqueue-ns/node
// the time spent in the engine's executor per instruction.
func BenchmarkChain(b *testing.B) {
	e := openEngine(b)
	p := negChain(b, chainLength, 16)
	x := randT(b, tensor.Float32, 1, 16)
	for _, m := range []struct {
		name string
		mode chainMode
	}{{"sync", syncMode}, {"hidden", hiddenMode}, {"async", asyncMode}} {
		b.Run(m.name, func(b *testing.B) {
			var blocked, enqueue atomic.Int64
			rt := chainRuntime(b, e, m.mode, &blocked, &enqueue)
			ctx := context.Background()
			prep, err := rt.Prepare(ctx, p, host(x), goferro.OnEngines(driver.EngineID(e.ID())))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := rt.Execute(ctx, prep, host(x)); err != nil { // kernels compiled, pool warm
				b.Fatal(err)
			}
			blocked.Store(0)
			enqueue.Store(0)
			n := 0
			for b.Loop() {
				if _, err := rt.Execute(ctx, prep, host(x)); err != nil {
					b.Fatal(err)
				}
				n++
			}
			b.ReportMetric(float64(blocked.Load())/float64(n*chainLength), "blocked-ns/node")
			b.ReportMetric(float64(enqueue.Load())/float64(n*chainLength), "enqueue-ns/node")
		})
	}
}

// TestCrossDeviceTransferEnqueuedBehindPendingSource: with the matmul on
// engine A held on A's device (behind a closed opencl.Gate) and the exp on
// engine B, the run enqueues everything without the host waiting for A:
// the inputs' copies to A, the matmul, the A→B copy of its result (behind
// the matmul's event: a read on A's context, and a write on B's behind a
// user event the read sets) and the exp, all while the gate is closed.
// Opened, the run's result is the reference's. Failed, the run fails with
// an OpenCL error, releases every copy, and the engines go on working.
func TestCrossDeviceTransferEnqueuedBehindPendingSource(t *testing.T) {
	r := newCLRig(t, rigConfig{second: true, clFamilies: dotOnly, clFamilies2: elementwiseOnly})
	a, bID := r.id, driver.EngineID(r.cls[1].ID())
	p := expMatMul(t)
	xv, wv := expMatMulInputs(t)
	prep, err := r.rt.Prepare(bg, p, host(xv, wv), goferro.OnEngines(a, bID))
	if err != nil {
		t.Fatal(err)
	}
	if pl := prep.Locations(); pl[0].Engine != a || pl[1].Engine != bID {
		t.Fatalf("placement %v, want the matmul on A and the exp on B", pl)
	}
	want := reference(t, p, xv, wv)
	for _, open := range []bool{true, false} {
		gate, err := r.cl.Context().NewGate()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.cl.Hold(bg, gate); err != nil {
			t.Fatal(err)
		}
		before := r.tap.Stats().Buffers
		type result struct {
			out []*tensor.Tensor
			err error
		}
		done := make(chan result, 1)
		go func() {
			out, err := r.rt.Execute(bg, prep, host(xv, wv))
			done <- result{out, err}
		}()
		// The copies of x and w to A and of the matmul's result to B,
		// handed back by their providers while A is held.
		deadline := time.Now().Add(20 * time.Second)
		for r.tap.Stats().Buffers-before < 3 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if n := r.tap.Stats().Buffers - before; n < 3 {
			gate.Open()
			<-done
			t.Fatalf("%d of the 3 copies enqueued while A was held: the run waited on the host for A's work", n)
		}
		if r.count(a, bID) != 1+map[bool]int{true: 0, false: 1}[open] {
			t.Fatalf("%d A→B transfers, want one per run", r.count(a, bID))
		}
		select {
		case res := <-done:
			t.Fatalf("the run ended (%v) while A was held", res.err)
		default:
		}
		if open {
			if err := gate.Open(); err != nil {
				t.Fatal(err)
			}
			res := <-done
			if res.err != nil {
				t.Fatal(res.err)
			}
			checkOut(t, res.out, want)
		} else {
			if err := gate.Fail(); err != nil {
				t.Fatal(err)
			}
			res := <-done
			var ge *goferro.Error
			if !errors.As(res.err, &ge) || !errors.Is(res.err, opencl.ErrCL) ||
				(ge.Kind != goferro.ErrTransferFailed && ge.Kind != goferro.ErrExecutorFailed) {
				t.Fatalf("run behind a failed gate: %v, want a failed transfer or instruction with an OpenCL error", res.err)
			}
		}
		r.checkNoLeaks(t)
	}
	out, err := r.rt.Execute(bg, prep, host(xv, wv))
	if err != nil {
		t.Fatalf("after a failed run: %v", err)
	}
	checkOut(t, out, want)
	r.checkNoLeaks(t)
}
