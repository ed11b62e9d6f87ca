package goferro_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

// A runtime with the CPU engine runs a traced program on host tensors.
func ExampleNewRuntime() {
	rt, err := goferro.NewRuntime(goferro.WithEngine(cpu.NewEngine()))
	if err != nil {
		panic(err)
	}
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(2, 2))
	w := b.Input("w", tensor.Float64, graph.Dims(2, 2))
	p, err := graph.Compile(graph.Add(graph.MatMul(x, w), x))
	if err != nil {
		panic(err)
	}
	xt, _ := tensor.New([]float64{1, 2, 3, 4}, 2, 2)
	wt, _ := tensor.New([]float64{1, 0, 0, 1}, 2, 2)
	out, err := rt.RunTensors(context.Background(), p, []*tensor.Tensor{xt, wt})
	if err != nil {
		panic(err)
	}
	fmt.Println(out[0])
	// Output:
	// [[2 4]
	//  [6 8]]
}

// Two fake devices split a program: the add runs on one, the negation on
// the other, and every move is a scheduled transfer node.
func Example_multiEngine() {
	a := goferrotest.NewDevice("fake.a.v1", goferrotest.WithFamilies(goferrotest.ArithFamily))
	d := goferrotest.NewDevice("fake.b.v1", goferrotest.WithFamilies(goferrotest.UnaryFamily))
	cp := goferrotest.NewCopier(a, d)
	rt, err := goferro.NewRuntime(
		goferro.WithEngine(cpu.NewEngine()), goferro.WithEngine(a.Engine()), goferro.WithEngine(d.Engine()),
		goferro.WithTransfer(driver.StorageHost, a.DefaultStorage(), cp),
		goferro.WithTransfer(a.DefaultStorage(), d.DefaultStorage(), cp),
	)
	if err != nil {
		panic(err)
	}
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(3))
	y := b.Input("y", tensor.Float64, graph.Dims(3))
	p, _ := graph.Compile(goferrotest.UnaryNeg(goferrotest.ArithAdd(x, y)))

	xt, _ := tensor.New([]float64{1, 2, 3}, 3)
	yt, _ := tensor.New([]float64{10, 20, 30}, 3)
	in := []*driver.Buffer{driver.HostBuffer(xt, nil), driver.HostBuffer(yt, nil)}
	prep, err := rt.Prepare(context.Background(), p, in)
	if err != nil {
		panic(err)
	}
	for _, s := range prep.Schedule() {
		if s.Kind != goferro.StepRelease {
			fmt.Printf("%-8v #%d %s -> %s\n", s.Kind, s.Instruction, s.From.Engine, s.At.Engine)
		}
	}
	out, err := rt.Execute(context.Background(), prep, in)
	if err != nil {
		panic(err)
	}
	fmt.Println(out[0], a.Stats().Live, d.Stats().Live)
	// Output:
	// transfer #0 cpu.default.v1 -> fake.a.v1
	// transfer #0 cpu.default.v1 -> fake.a.v1
	// op       #0  -> fake.a.v1
	// transfer #1 fake.a.v1 -> fake.b.v1
	// op       #1  -> fake.b.v1
	// [-11 -22 -33] 0 0
}

// Preparation fails, before anything runs, when a value would have to move
// between two classes without a provider.
func ExampleError() {
	a := goferrotest.NewDevice("fake.a.v1")
	rt, _ := goferro.NewRuntime(goferro.WithEngine(cpu.NewEngine()), goferro.WithEngine(a.Engine()))
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(3))
	p, _ := graph.Compile(graph.Exp(goferrotest.UnaryNeg(x)))
	xt, _ := tensor.Zeros(tensor.Float64, 3)
	xb, _ := a.Upload(xt)
	_, err := rt.Run(context.Background(), p, []*driver.Buffer{xb})
	var pe *goferro.Error
	fmt.Println(errors.As(err, &pe), errors.Is(err, goferro.ErrMissingTransferProvider), pe.Instruction, pe.Class, pe.Available)
	// Output:
	// true true 1 storage.host.v1 [storage.fake.a.v1]
}

// Submit prepares at once and runs on a goroutine.
func ExampleRuntime_Submit() {
	rt, _ := goferro.NewRuntime(goferro.WithEngine(cpu.NewEngine()))
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(3))
	p, _ := graph.Compile(graph.Neg(x))
	xt, _ := tensor.New([]float64{1, 2, 3}, 3)
	h, err := rt.Submit(context.Background(), p, []*driver.Buffer{driver.HostBuffer(xt, nil)})
	if err != nil {
		panic(err)
	}
	out, err := h.Wait(context.Background())
	fmt.Println(out[0], err)
	// Output:
	// [-1 -2 -3] <nil>
}

// An einsum whose schedule does not fit the engine's memory budget is
// compiled again in slices by Prepare: here the path forces a 16384-value
// outer product, 128 KiB, on a CPU engine allowed 64 KiB.
func ExampleRuntime_Prepare_memoryBudget() {
	rt, err := goferro.NewRuntime(goferro.WithEngine(cpu.NewEngine(cpu.WithMemory(64 << 10))))
	if err != nil {
		panic(err)
	}
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(2, 64))
	y := b.Input("y", tensor.Float64, graph.Dims(64, 2))
	z := b.Input("z", tensor.Float64, graph.Dims(2, 64))
	p, err := graph.Compile(graph.EinsumPath("ab,bc,cd->ad", [][]int{{0, 2}, {0, 1}}, x, y, z))
	if err != nil {
		panic(err)
	}
	ones := func(shape ...int) *driver.Buffer {
		t, _ := tensor.Ones(tensor.Float64, shape...)
		return driver.HostBuffer(t, nil)
	}
	in := []*driver.Buffer{ones(2, 64), ones(64, 2), ones(2, 64)}
	prep, err := rt.Prepare(context.Background(), p, in)
	if err != nil {
		panic(err)
	}
	fmt.Println("compiled in slices:", prep.Program().SliceLimit() > 0)
	out, err := rt.Execute(context.Background(), prep, in)
	if err != nil {
		panic(err)
	}
	v, _ := out[0].At(0, 0)
	fmt.Println(v) // 64 × 2 ones summed
	// Output:
	// compiled in slices: true
	// 128
}
