package mpi_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/graph/ref"
	"github.com/goferro/goferro/mpi"
	"github.com/goferro/goferro/tensor"
)

// The worker of TestRemote (serveFaulty) stalls for stall, longer than
// process 0's remoteTimeout.
const (
	remoteTimeout = 2 * time.Second
	stall         = 5 * time.Second
)

var errWorker = errors.New("worker: injected failure")

// TestRemote runs process 1 as a Remote engine of process 0's runtime:
// the driver conformance suite, a program placed across the two
// processes, a failing and a stalled instruction on process 1.
func TestRemote(t *testing.T) {
	c := world(t, "remote")
	if c == nil {
		underMPI(t, 2, "TestRemote", "remote", 3*time.Minute, mustPass)
		return
	}
	ctx := context.Background()
	defer func() {
		if err := c.Finalize(ctx); err != nil {
			t.Error(err)
		}
	}()
	if c.Rank() == 1 {
		serveFaulty(t, c)
		return
	}
	r, err := mpi.NewRemote(ctx, c, 1, mpi.WithTimeout(remoteTimeout))
	if err != nil {
		t.Fatal(err)
	}
	for _, rank := range []int{0, 1, 2, -1} { // this process, taken, outside the world
		if _, err := mpi.NewRemote(ctx, c, rank); !errors.Is(err, mpi.ErrArgument) {
			t.Errorf("NewRemote(%d): %v, want ErrArgument", rank, err)
		}
	}
	t.Run("Conformance", func(t *testing.T) {
		// Process 1 serves one Remote: a scenario that asks for a second
		// instance gets the same one, whose allocations the first
		// instance's Live already counts.
		counted := map[*testing.T]bool{}
		goferrotest.TestEngine(t, func(t *testing.T) goferrotest.Subject {
			s := goferrotest.Subject{Engine: r.Engine(), Routes: r.Routes(),
				Upload: func(x *tensor.Tensor) (*driver.Buffer, error) { return r.Put(ctx, x) }}
			if !counted[t] {
				counted[t] = true
				s.Live = func() int64 { return r.Stats().Live }
			}
			return s
		})
	})
	rt := splitRuntime(t, r)
	t.Run("Program", func(t *testing.T) { testAcrossRanks(t, rt, r) })
	t.Run("Failure", func(t *testing.T) { testRemoteFailure(t, rt, r) })
	t.Run("FailedCompletion", func(t *testing.T) { testFailedCompletion(t, r) })
	t.Run("Stall", func(t *testing.T) {
		start := time.Now()
		testRemoteStall(t, rt, r)
		time.Sleep(time.Until(start.Add(stall + 500*time.Millisecond))) // the worker is back
		testAcrossRanks(t, rt, r)                                       // its late reply is dropped
	})
	if err := r.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
	if live := r.Stats().Live; live != 0 {
		t.Errorf("%d buffers of rank 1 live at the end", live)
	}
	if _, err := r.Put(ctx, tensor.Scalar(1.0)); !errors.Is(err, mpi.ErrUnavailable) {
		t.Errorf("Put after Close: %v, want ErrUnavailable", err)
	}
}

// serveFaulty serves process 0 with a CPU engine that fails every
// reduce_max, returns a result of the wrong shape for every reduce_prod,
// stalls in every reduce_min for stall, and returns every sqrt pending on a
// completion that fails; at the end, every buffer it returned must have
// been released.
func serveFaulty(t *testing.T, c *mpi.Comm) {
	e := cpu.NewEngine()
	run, resident := e.Executor, e.Ingress.Resident
	tap := &goferrotest.Tap{}
	tap.SetFault(goferrotest.FaultShape)
	misshapen := tap.Executor(run)
	var pending atomic.Int64 // failing sqrt results not released
	e.Executor = driver.ExecutorFunc(func(ctx context.Context, call *driver.Call) ([]*driver.Buffer, error) {
		switch call.Instruction.Op {
		case "reduce_max":
			return nil, errWorker
		case "reduce_prod":
			return misshapen.Execute(ctx, call)
		case "reduce_min":
			time.Sleep(stall) // deaf to ctx, as a stalled process is
		case "sqrt":
			outs, err := run.Execute(ctx, call)
			if err != nil {
				return nil, err
			}
			x, _ := outs[0].Tensor()
			pending.Add(1)
			return []*driver.Buffer{driver.NewBuffer(driver.BufferSpec{DType: x.DType(), Shape: x.Shape(), Len: x.Len(),
				Placement: outs[0].Placement(), Backend: driver.BackendHost, Payload: x,
				Release: func() { pending.Add(-1) }, Ready: failedCompletion{}})}, nil
		}
		return run.Execute(ctx, call)
	})
	// The pending results are host memory too, though not made by
	// driver.HostBuffer.
	e.Ingress.Resident = func(b *driver.Buffer) bool {
		_, failing := b.Ready().(failedCompletion)
		return resident(b) || failing
	}
	if err := mpi.Serve(context.Background(), c, 0, e); err != nil {
		t.Errorf("Serve: %v", err)
	}
	if n := pending.Load(); n != 0 {
		t.Errorf("%d sqrt results whose completion failed were not released", n)
	}
}

// failedCompletion is the completion of work that failed.
type failedCompletion struct{}

// Wait returns errWorker.
func (failedCompletion) Wait(context.Context) error { return errWorker }

// splitRuntime returns a runtime whose host CPU engine runs only
// elementwise ops and whose Remote runs only dot_general and reductions.
func splitRuntime(t *testing.T, r *mpi.Remote) *goferro.Runtime {
	host := cpu.NewEngine()
	host.Families = []string{graph.FamilyElementwise}
	remote := r.Engine()
	remote.Families = []string{graph.FamilyDotGeneral, graph.FamilyReduce}
	rt, err := goferro.NewRuntime(goferro.WithEngine(host), goferro.WithEngine(remote), goferro.WithRoutes(r.Routes()...))
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// hostInputs returns x as the host buffers of program inputs.
func hostInputs(x ...*tensor.Tensor) []*driver.Buffer {
	in := make([]*driver.Buffer, len(x))
	for i, t := range x {
		in[i] = driver.HostBuffer(t, nil)
	}
	return in
}

// testAcrossRanks runs sum(-(a·b), 1) and -(a·b): the product and the sum
// on process 1, the negation on process 0. The values move in exactly the
// schedule's transfer nodes — a and b there, a·b back, its negation there
// again — and the sum comes back as an output.
func testAcrossRanks(t *testing.T, rt *goferro.Runtime, r *mpi.Remote) {
	ctx := context.Background()
	b := graph.NewBuilder()
	a := b.Input("a", tensor.Float64, graph.Dims(2, 3))
	w := b.Input("b", tensor.Float64, graph.Dims(3, 4))
	neg := graph.Neg(graph.MatMul(a, w))
	p, err := graph.Compile(graph.ReduceSum(neg, 1), neg)
	if err != nil {
		t.Fatal(err)
	}
	at, _ := tensor.Rand(tensor.NewRNG(1), tensor.Float64, 2, 3)
	wt, _ := tensor.Rand(tensor.NewRNG(2), tensor.Float64, 3, 4)
	in := hostInputs(at, wt)
	prep, err := rt.Prepare(ctx, p, in)
	if err != nil {
		t.Fatal(err)
	}
	transfers, bytes := scheduled(p, prep)
	// a (6 elements) and b (12) to rank 1, a·b (8) back, -(a·b) (8) there.
	if transfers != 4 || bytes != (6+12+8+8)*8 {
		t.Fatalf("%d transfers of %d bytes scheduled, want 4 of 272:\n%v", transfers, bytes, prep)
	}
	before := r.Stats()
	got, err := rt.Execute(ctx, prep, in)
	if err != nil {
		t.Fatal(err)
	}
	after := r.Stats()
	if n, nb := after.Transfers-before.Transfers, after.TransferBytes-before.TransferBytes; n != int64(transfers) || nb != bytes {
		t.Errorf("%d transfers of %d bytes between the processes, the schedule has %d of %d", n, nb, transfers, bytes)
	}
	if n := after.Materializations - before.Materializations; n != 1 {
		t.Errorf("%d outputs materialized from rank 1, want 1 (the sum)", n)
	}
	if n := after.Executes - before.Executes; n != 2 {
		t.Errorf("%d instructions ran on rank 1, want 2", n)
	}
	want, err := ref.Run(p, at, wt)
	if err != nil {
		t.Fatal(err)
	}
	for k := range want {
		if err := tensor.CheckClose(got[k], want[k], 1e-12, 1e-12); err != nil {
			t.Errorf("output %d: %v", k, err)
		}
	}
	if after.Live != 0 {
		t.Errorf("%d buffers of rank 1 live after the run", after.Live)
	}
}

// scheduled returns the number of transfer nodes of prep's schedule and
// the bytes of the values they move.
func scheduled(p *graph.Program, prep *goferro.Prepared) (transfers int, bytes int64) {
	for _, s := range prep.Schedule() {
		if s.Kind == goferro.StepTransfer {
			transfers++
			ty := p.Slots[s.Slot].Type
			n, _ := ty.Shape.NumElements()
			bytes += int64(n * ty.DType.Size())
		}
	}
	return transfers, bytes
}

// reduction returns a program of op(a, 1) for a 2×3 input, which the split
// runtime places on process 1.
func reduction(t *testing.T, op func(graph.Value, ...int) graph.Value) (*graph.Program, []*driver.Buffer) {
	b := graph.NewBuilder()
	p, err := graph.Compile(op(b.Input("a", tensor.Float64, graph.Dims(2, 3)), 1))
	if err != nil {
		t.Fatal(err)
	}
	at, _ := tensor.Rand(tensor.NewRNG(3), tensor.Float64, 2, 3)
	return p, hostInputs(at)
}

// testRemoteFailure: an instruction that fails on process 1, or whose
// result breaks the driver contract there, is an ErrExecutorFailed error of
// the run wrapping an ErrRemote of rank 1 that carries the worker's
// message, and every buffer is released.
func testRemoteFailure(t *testing.T, rt *goferro.Runtime, r *mpi.Remote) {
	p, in := reduction(t, graph.ReduceMax)
	_, err := rt.Run(context.Background(), p, in)
	var e *mpi.Error
	if !errors.Is(err, goferro.ErrExecutorFailed) || !errors.Is(err, mpi.ErrRemote) || !errors.As(err, &e) || e.Rank != 1 {
		t.Fatalf("run with a failing instruction on rank 1: %v, want ErrExecutorFailed wrapping ErrRemote of rank 1", err)
	}
	if want := errWorker.Error(); !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not carry the worker's %q", err, want)
	}
	if live := r.Stats().Live; live != 0 {
		t.Errorf("%d buffers of rank 1 live after the failure", live)
	}
	// The worker holds its engine to the driver contract.
	p, in = reduction(t, graph.ReduceProd)
	_, err = rt.Run(context.Background(), p, in)
	if !errors.Is(err, goferro.ErrExecutorFailed) || !errors.Is(err, mpi.ErrRemote) || !strings.Contains(err.Error(), driver.ErrOutputMismatch.Error()) {
		t.Errorf("run with a misshapen result on rank 1: %v, want ErrExecutorFailed wrapping ErrRemote that says %q", err, driver.ErrOutputMismatch)
	}
	if live := r.Stats().Live; live != 0 {
		t.Errorf("%d buffers of rank 1 live after the misshapen result", live)
	}
}

// testRemoteStall: an instruction that stalls on process 1 is an
// ErrExecutorFailed error wrapping ErrTimeout once the Remote's timeout
// has passed, and every buffer is released.
func testRemoteStall(t *testing.T, rt *goferro.Runtime, r *mpi.Remote) {
	p, in := reduction(t, graph.ReduceMin)
	start := time.Now()
	_, err := rt.Run(context.Background(), p, in)
	took := time.Since(start)
	if !errors.Is(err, goferro.ErrExecutorFailed) || !errors.Is(err, mpi.ErrTimeout) {
		t.Fatalf("run with a stalled rank 1: %v, want ErrExecutorFailed wrapping ErrTimeout", err)
	}
	if took < remoteTimeout || took > remoteTimeout+2*time.Second {
		t.Errorf("the run failed after %v, the Remote's timeout is %v", took, remoteTimeout)
	}
	if live := r.Stats().Live; live != 0 {
		t.Errorf("%d buffers of rank 1 live after the timeout", live)
	}
}

// testFailedCompletion: a result whose completion fails on process 1 is an
// ErrExecutorFailed error wrapping ErrRemote; process 1 releases it
// (serveFaulty checks).
func testFailedCompletion(t *testing.T, r *mpi.Remote) {
	rt, err := goferro.NewRuntime(goferro.WithEngine(cpu.NewEngine()), goferro.WithEngine(r.Engine()), goferro.WithRoutes(r.Routes()...))
	if err != nil {
		t.Fatal(err)
	}
	b := graph.NewBuilder()
	p, err := graph.Compile(graph.Sqrt(b.Input("a", tensor.Float64, graph.Dims(2, 3))))
	if err != nil {
		t.Fatal(err)
	}
	at, _ := tensor.Rand(tensor.NewRNG(4), tensor.Float64, 2, 3)
	_, err = rt.Run(context.Background(), p, hostInputs(at), goferro.OnEngines(r.Engine().ID))
	if !errors.Is(err, goferro.ErrExecutorFailed) || !errors.Is(err, mpi.ErrRemote) || !strings.Contains(err.Error(), errWorker.Error()) {
		t.Errorf("run with a failing completion on rank 1: %v, want ErrExecutorFailed wrapping ErrRemote that says %q", err, errWorker)
	}
	if live := r.Stats().Live; live != 0 {
		t.Errorf("%d buffers of rank 1 live after the failure", live)
	}
}

// TestRemotePeers runs processes 1 and 2 as Remote engines of process 0's
// runtime: a program whose product runs on process 1 and whose sum runs
// on process 2 moves the product from 1 to 2 directly, in the schedule's
// one transfer node between them.
func TestRemotePeers(t *testing.T) {
	c := world(t, "peers")
	if c == nil {
		underMPI(t, 3, "TestRemotePeers", "peers", 3*time.Minute, mustPass)
		return
	}
	ctx := context.Background()
	defer func() {
		if err := c.Finalize(ctx); err != nil {
			t.Error(err)
		}
	}()
	if c.Rank() != 0 {
		if err := mpi.Serve(ctx, c, 0, cpu.NewEngine()); err != nil {
			t.Errorf("Serve: %v", err)
		}
		return
	}
	var rs []*mpi.Remote
	for rank := 1; rank <= 2; rank++ {
		r, err := mpi.NewRemote(ctx, c, rank, mpi.WithTimeout(remoteTimeout))
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := r.Close(ctx); err != nil {
				t.Errorf("Close: %v", err)
			}
		}()
		rs = append(rs, r)
	}
	dot, sum := rs[0].Engine(), rs[1].Engine()
	dot.Families, sum.Families = []string{graph.FamilyDotGeneral}, []string{graph.FamilyReduce}
	rt, err := goferro.NewRuntime(goferro.WithEngine(cpu.NewEngine()), goferro.WithEngine(dot), goferro.WithEngine(sum),
		goferro.WithRoutes(rs[0].Routes()...), goferro.WithRoutes(rs[1].Routes()...), goferro.WithRoutes(mpi.PeerRoutes(rs...)...))
	if err != nil {
		t.Fatal(err)
	}
	b := graph.NewBuilder()
	a := b.Input("a", tensor.Float64, graph.Dims(2, 3))
	w := b.Input("b", tensor.Float64, graph.Dims(3, 4))
	p, err := graph.Compile(graph.ReduceSum(graph.MatMul(a, w), 1))
	if err != nil {
		t.Fatal(err)
	}
	at, _ := tensor.Rand(tensor.NewRNG(5), tensor.Float64, 2, 3)
	wt, _ := tensor.Rand(tensor.NewRNG(6), tensor.Float64, 3, 4)
	in := hostInputs(at, wt)
	prep, err := rt.Prepare(ctx, p, in, goferro.OnEngines(dot.ID, sum.ID))
	if err != nil {
		t.Fatal(err)
	}
	var peer []goferro.Step
	for _, s := range prep.Schedule() {
		if s.Kind == goferro.StepTransfer && s.From.Engine == dot.ID && s.At.Engine == sum.ID {
			peer = append(peer, s)
		}
	}
	if len(peer) != 1 {
		t.Fatalf("%d transfers from rank 1 to rank 2, want 1:\n%v", len(peer), prep)
	}
	got, err := rt.Execute(ctx, prep, in)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ref.Run(p, at, wt)
	if err != nil {
		t.Fatal(err)
	}
	if err := tensor.CheckClose(got[0], want[0], 1e-12, 1e-12); err != nil {
		t.Error(err)
	}
	// a and b (6 and 12 elements) go from the host to rank 1, the product
	// (8) from rank 1 to rank 2: rank 1's Remote counts all three.
	transfers, bytes := scheduled(p, prep)
	s1, s2 := rs[0].Stats(), rs[1].Stats()
	if transfers != 3 || bytes != (6+12+8)*8 || s1.Transfers != int64(transfers) || s1.TransferBytes != bytes || s2.Transfers != 0 {
		t.Errorf("%d transfers of %d bytes scheduled, want 3 of 208; made: rank 1 %+v, rank 2 %+v", transfers, bytes, s1, s2)
	}
	if s1.Live != 0 || s2.Live != 0 || s2.Materializations != 1 {
		t.Errorf("rank 1 %+v, rank 2 %+v; want the sum materialized from rank 2 and nothing live", s1, s2)
	}
}
