package clengine_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/opencl"
	"github.com/goferro/goferro/opencl/clengine"
	"github.com/goferro/goferro/tensor"
)

func openEngine(t testing.TB) *clengine.Engine {
	t.Helper()
	e, err := clengine.Open(context.Background(), openDevice(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// program builds einsum and elementwise work over x (3×4), w (4×5), v (5).
func program(t *testing.T, dt tensor.DType) *graph.Program {
	b := graph.NewBuilder()
	x := b.Input("x", dt, graph.Dims(3, 4))
	w := b.Input("w", dt, graph.Dims(4, 5))
	v := b.Input("v", dt, graph.Dims(5))
	y := graph.Einsum("ij,jk,k->ik", x, w, v)
	z := graph.Add(graph.Mul(y, y), graph.ReduceSum(graph.Exp(y), 1, 0))
	p := compile(t, graph.Sub(z, graph.Einsum("ij->i", graph.Transpose(graph.MatMul(x, w)))))
	return p
}

func inputs(dt tensor.DType) []*tensor.Tensor {
	x, _ := tensor.Rand(tensor.NewRNG(1), dt, 3, 4)
	w, _ := tensor.Rand(tensor.NewRNG(2), dt, 4, 5)
	v, _ := tensor.Rand(tensor.NewRNG(3), dt, 5)
	return []*tensor.Tensor{x, w, v}
}

// TestRuntimeOnDevice runs a program through the runtime with only the
// OpenCL engine: inputs are device buffers, every op runs on the device,
// and the result matches the CPU engine's.
func TestRuntimeOnDevice(t *testing.T) {
	e := openEngine(t)
	ctx := context.Background()
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Complex64} {
		p := program(t, dt)
		host := inputs(dt)
		want := reference(t, p, host...)
		rt, err := goferro.NewRuntime(goferro.WithEngine(e.Registration()), goferro.WithRoutes(clengine.Providers(e)...))
		if err != nil {
			t.Fatal(err)
		}
		before := e.Context().Stats()
		var in []*driver.Buffer
		for _, h := range host {
			d, err := e.Upload(ctx, h)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Release()
			in = append(in, e.Buffer(d))
		}
		prep, err := rt.Prepare(ctx, p, in)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range prep.Schedule() {
			if s.Kind == goferro.StepOp && s.At.Engine != driver.EngineID(e.ID()) {
				t.Fatalf("op #%d placed on %s", s.Instruction, s.At.Engine)
			}
		}
		got, err := rt.Execute(ctx, prep, in)
		if err != nil {
			t.Fatal(err)
		}
		if err := tensor.CheckClose(got[0], want[0], 1e-4, 1e-4); err != nil {
			t.Fatalf("%v: %v", dt, err)
		}
		// every buffer the runtime made has been released
		after := e.Context().Stats()
		if after.Live-before.Live != int64(len(in)) {
			t.Fatalf("%v: %d buffers live after the run, want the %d inputs", dt, after.Live-before.Live, len(in))
		}
	}
}

// TestRuntimeMixed registers the CPU and OpenCL engines: host inputs enter
// at the CPU, and the transfer providers are exercised when an op must run
// on the device (a program input placed there).
func TestRuntimeMixed(t *testing.T) {
	e := openEngine(t)
	ctx := context.Background()
	p := program(t, tensor.Float32)
	host := inputs(tensor.Float32)
	rt, err := goferro.NewRuntime(goferro.WithEngine(e.Registration()), goferro.WithRoutes(clengine.Providers(e)...), goferro.WithEngine(cpu.NewEngine()))
	if err != nil {
		t.Fatal(err)
	}
	cpuRT, _ := goferro.NewRuntime(goferro.WithEngine(cpu.NewEngine()))
	want, _ := cpuRT.RunTensors(ctx, p, host)
	// x on the device, w and v on the host
	dx, err := e.Upload(ctx, host[0])
	if err != nil {
		t.Fatal(err)
	}
	defer dx.Release()
	in := []*driver.Buffer{e.Buffer(dx), driver.HostBuffer(host[1], nil), driver.HostBuffer(host[2], nil)}
	got, err := rt.Run(ctx, p, in)
	if err != nil {
		t.Fatal(err)
	}
	if err := tensor.CheckClose(got[0], want[0], 1e-4, 1e-4); err != nil {
		t.Fatal(err)
	}
}

func TestIngressContract(t *testing.T) {
	e := openEngine(t)
	ctx := context.Background()
	reg := e.Registration()
	h, _ := tensor.Rand(tensor.NewRNG(1), tensor.Float32, 2, 2)
	d, _ := e.Upload(ctx, h)
	defer d.Release()
	db := e.Buffer(d)
	hb := driver.HostBuffer(h, nil)
	if !reg.Ingress.Eligible(db.Placement(), clengine.Class) || reg.Ingress.Eligible(hb.Placement(), clengine.Class) {
		t.Fatal("eligibility")
	}
	if err := reg.Ingress.Accept(db, clengine.Class); err != nil {
		t.Fatal(err)
	}
	if err := reg.Ingress.Accept(hb, clengine.Class); !errors.Is(err, opencl.ErrForeign) {
		t.Fatalf("host buffer accepted: %v", err)
	}
	if !reg.Ingress.Resident(db) || reg.Ingress.Resident(hb) {
		t.Fatal("residency")
	}
	// a same-metadata buffer of another context is not resident
	e2 := openEngine(t)
	d2, _ := e2.Upload(ctx, h)
	defer d2.Release()
	if reg.Ingress.Resident(e2.Buffer(d2)) {
		t.Fatal("foreign buffer resident")
	}
	fake := driver.NewBuffer(driver.BufferSpec{DType: tensor.Float32, Shape: tensor.Shape{2, 2}, Len: 4,
		Placement: e.Placement(), Backend: clengine.Backend, Payload: d2})
	if reg.Ingress.Resident(fake) || reg.Ingress.Accept(fake, clengine.Class) == nil {
		t.Fatal("buffer claiming the domain with foreign memory accepted")
	}
}

// TestEngineIdentity checks the engine's vocabulary: its id, storage class
// and placement, as the registration declares them.
func TestEngineIdentity(t *testing.T) {
	e := openEngine(t)
	reg := e.Registration()
	if !strings.HasPrefix(e.ID(), "opencl.") || reg.ID != driver.EngineID(e.ID()) || reg.ID.Validate() != nil {
		t.Fatalf("engine id %q, registered as %q", e.ID(), reg.ID)
	}
	if reg.DefaultStorage != "storage.opencl.device.v1" || !slices.Equal(reg.Storage, []driver.StorageClass{clengine.Class}) {
		t.Fatalf("storage %v, default %s", reg.Storage, reg.DefaultStorage)
	}
	if reg.Domain != driver.AllocationDomain(e.AllocationDomain()) || e.Placement() != (driver.Placement{Class: clengine.Class, Domain: reg.Domain}) {
		t.Fatalf("domain %s, placement %v", reg.Domain, e.Placement())
	}
}

// TestIngressAcrossContexts holds the three ingress checks to the contract
// with two engines of one device, each its own context: placement,
// acceptance and residency tell them apart, host memory needs a transfer,
// and a device→device copy belongs to its destination only.
func TestIngressAcrossContexts(t *testing.T) {
	e1, e2 := openEngine(t), openEngine(t)
	ctx := context.Background()
	in1, in2 := e1.Registration().Ingress, e2.Registration().Ingress
	h, _ := tensor.Rand(tensor.NewRNG(2), tensor.Float32, 3, 4)
	d1, err := e1.Upload(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	defer d1.Release()
	d2, err := e2.Upload(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Release()
	b1, b2, hb := e1.Buffer(d1), e2.Buffer(d2), driver.HostBuffer(h, nil)
	// (1) placement eligibility
	if !in1.Eligible(b1.Placement(), clengine.Class) || in1.Eligible(b2.Placement(), clengine.Class) {
		t.Fatal("placement eligibility wrong")
	}
	if in1.Eligible(hb.Placement(), clengine.Class) || in1.Eligible(b1.Placement(), driver.StorageHost) {
		t.Fatal("host placement eligible")
	}
	// (2) acceptance
	if err := in1.Accept(b1, clengine.Class); err != nil {
		t.Fatal(err)
	}
	if err := in1.Accept(b2, clengine.Class); !errors.Is(err, opencl.ErrForeign) {
		t.Fatalf("foreign tensor: %v", err)
	}
	if err := in1.Accept(hb, clengine.Class); !errors.Is(err, opencl.ErrForeign) {
		t.Fatalf("host tensor: %v", err)
	}
	claim := func(payload any) *driver.Buffer {
		return driver.NewBuffer(driver.BufferSpec{DType: tensor.Float32, Shape: tensor.Shape{2, 3, 4}, Len: 24,
			Placement: e1.Placement(), Backend: clengine.Backend, Payload: payload})
	}
	if err := in1.Accept(claim(nil), clengine.Class); !errors.Is(err, opencl.ErrArgument) {
		t.Fatalf("buffer without a payload: %v", err)
	}
	if err := in1.Accept(claim(3), clengine.Class); !errors.Is(err, opencl.ErrForeign) {
		t.Fatalf("buffer with an int payload: %v", err)
	}
	if err := in1.Accept(claim((*opencl.Tensor)(nil)), clengine.Class); !errors.Is(err, opencl.ErrArgument) {
		t.Fatalf("buffer with a nil tensor: %v", err)
	}
	// (3) residency
	if !in1.Resident(b1) || in1.Resident(b2) || !in2.Resident(b2) || in1.Resident(hb) {
		t.Fatal("residency wrong")
	}
	x, err := opencl.DeviceToDevice(ctx, e2.Queue, d1)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Release()
	if !in2.Resident(e2.Buffer(x)) || in1.Resident(e1.Buffer(x)) {
		t.Fatal("transfer result in the wrong domain")
	}
}

// TestAcceptWithoutFP64 opens an engine as a device without cl_khr_fp64
// would have it: a float64 input is declined at ingress, not attempted.
func TestAcceptWithoutFP64(t *testing.T) {
	devs, err := opencl.Devices()
	if err != nil {
		t.Skipf("no OpenCL device: %v", err)
	}
	ctx := context.Background()
	dev := *devs[0]
	dev.FP64 = false
	e, err := clengine.Open(ctx, &dev)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	in := e.Registration().Ingress
	for _, c := range []struct {
		dt tensor.DType
		ok bool
	}{{tensor.Float64, false}, {tensor.Complex128, false}, {tensor.Float32, true}} {
		h, _ := tensor.Rand(tensor.NewRNG(1), c.dt, 4, 4)
		d, err := e.Upload(ctx, h) // the bytes can still be stored
		if err != nil {
			t.Fatal(err)
		}
		err = in.Accept(e.Buffer(d), clengine.Class)
		if c.ok && err != nil || !c.ok && !errors.Is(err, opencl.ErrUnsupported) {
			t.Fatalf("%v input: %v", c.dt, err)
		}
		d.Release()
	}
}

// BenchmarkExecute runs one compiled add of two 16-element vectors through
// the engine's executor and waits for it: the cost of one instruction's
// dispatch and launch.
func BenchmarkExecute(b *testing.B) {
	e := openEngine(b)
	ctx := context.Background()
	g := graph.NewBuilder()
	p := compile(b, graph.Add(g.Input("x", tensor.Float32, graph.Dims(16)), g.Input("y", tensor.Float32, graph.Dims(16))))
	h, _ := tensor.Rand(tensor.NewRNG(1), tensor.Float32, 16)
	d, err := e.Upload(ctx, h)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Release()
	in := e.Buffer(d)
	call := &driver.Call{Instruction: &p.Instructions[0], Inputs: []*driver.Buffer{in, in},
		Results: []driver.ResultType{{DType: tensor.Float32, Shape: tensor.Shape{16}}}}
	ex := e.Registration().Executor
	b.ResetTimer()
	for range b.N {
		out, err := ex.Execute(ctx, call)
		if err != nil {
			b.Fatal(err)
		}
		t, _ := out[0].Payload().(*opencl.Tensor)
		t.Wait(ctx)
		t.Release()
	}
}
