package clengine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/opencl"
	"github.com/goferro/goferro/opencl/clengine"
	"github.com/goferro/goferro/tensor"
)

func openEngine(t *testing.T) *clengine.Engine {
	t.Helper()
	devs, err := opencl.Devices()
	if err != nil {
		t.Skipf("no OpenCL device: %v", err)
	}
	e, err := clengine.Open(context.Background(), devs[0])
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
	p, err := graph.Compile(graph.Sub(z, graph.Einsum("ij->i", graph.Transpose(graph.MatMul(x, w)))))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func inputs(dt tensor.DType) []*tensor.Tensor {
	x, _ := tensor.Rand(dt, 1, 3, 4)
	w, _ := tensor.Rand(dt, 2, 4, 5)
	v, _ := tensor.Rand(dt, 3, 5)
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
		cpuRT, err := goferro.NewRuntime(goferro.WithEngine(cpu.NewEngine()))
		if err != nil {
			t.Fatal(err)
		}
		want, err := cpuRT.RunTensors(ctx, p, host)
		if err != nil {
			t.Fatal(err)
		}
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
	h, _ := tensor.Rand(tensor.Float32, 1, 2, 2)
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
