package clengine_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/graph"
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
