package goferro_test

import (
	"context"

	"github.com/goferro/goferro/driver"

	"testing"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

// BenchmarkDoneCachedRunOneOp: a cached Run of a one-op program (x + y on
// four float64s) on the CPU engine. Goal: under 5 µs per run.
func BenchmarkDoneCachedRunOneOp(b *testing.B) {
	rt, err := goferro.NewRuntime(goferro.WithEngine(cpu.NewEngine()))
	if err != nil {
		b.Fatal(err)
	}
	bl := graph.NewBuilder()
	x := bl.Input("x", tensor.Float64, graph.Dims(4))
	y := bl.Input("y", tensor.Float64, graph.Dims(4))
	p, err := graph.Compile(graph.Add(x, y))
	if err != nil {
		b.Fatal(err)
	}
	xt, _ := tensor.Rand(tensor.Float64, 1, 4)
	yt, _ := tensor.Rand(tensor.Float64, 2, 4)
	in := []*driver.Buffer{driver.HostBuffer(xt, nil), driver.HostBuffer(yt, nil)}
	if _, err := rt.Run(bg, p, in); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rt.Run(bg, p, in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDoneSchedule1000Nodes: a cached Run of a chain of 500 one-element
// ops on the CPU engine, whose schedule has about 1,000 nodes (op and
// release per instruction); reports ns/node. Goal: under 1 µs per node.
func BenchmarkDoneSchedule1000Nodes(b *testing.B) {
	rt, err := goferro.NewRuntime(goferro.WithEngine(cpu.NewEngine()))
	if err != nil {
		b.Fatal(err)
	}
	bl := graph.NewBuilder()
	x := bl.Input("x", tensor.Float64, graph.Dims(1))
	y := bl.Input("y", tensor.Float64, graph.Dims(1))
	v := x
	for i := range 500 {
		if i%2 == 0 {
			v = graph.Add(v, y)
		} else {
			v = graph.Mul(v, y)
		}
	}
	p, err := graph.Compile(v)
	if err != nil {
		b.Fatal(err)
	}
	xt, _ := tensor.Rand(tensor.Float64, 1, 1)
	yt, _ := tensor.Rand(tensor.Float64, 2, 1)
	in := []*driver.Buffer{driver.HostBuffer(xt, nil), driver.HostBuffer(yt, nil)}
	prep, err := rt.Prepare(bg, p, in)
	if err != nil {
		b.Fatal(err)
	}
	nodes := len(prep.Schedule())
	if nodes < 900 || nodes > 1100 {
		b.Fatalf("%d nodes", nodes)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rt.Run(bg, p, in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(nodes), "ns/node")
	b.ReportMetric(float64(nodes), "nodes")
}

// doneNullEngine is an engine whose executor does no arithmetic: every
// result is a fresh buffer over one shared tensor. It isolates the
// runtime's own per-node cost from the kernels'.
func doneNullEngine() (driver.Engine, driver.Placement) {
	const class driver.StorageClass = "storage.null.v1"
	pl := driver.Placement{Class: class, Domain: "domain.null.v1"}
	z, _ := tensor.Zeros(tensor.Float64, 1)
	return driver.Engine{
		ID: "bench.null.v1", Backend: "null", Domain: pl.Domain, Storage: []driver.StorageClass{class}, DefaultStorage: class,
		Families: cpu.CoreFamilies,
		Executor: driver.ExecutorFunc(func(_ context.Context, c *driver.Call) ([]*driver.Buffer, error) {
			return []*driver.Buffer{driver.TensorBuffer(z, c.Placement, "null", nil)}, nil
		}),
		Ingress: driver.Ingress{
			Eligible: func(p driver.Placement, c driver.StorageClass) bool { return p == pl && c == class },
			Accept:   func(*driver.Buffer, driver.StorageClass) error { return nil },
			Resident: func(b *driver.Buffer) bool { return b.Placement() == pl },
		},
		Materializer: driver.MaterializerFunc(func(_ context.Context, b *driver.Buffer) (*tensor.Tensor, error) {
			t, _ := b.Tensor()
			return t, nil
		}),
	}, pl
}

// BenchmarkDoneSchedule1000NodesNull is BenchmarkDoneSchedule1000Nodes on
// the null engine: the runtime's overhead alone.
func BenchmarkDoneSchedule1000NodesNull(b *testing.B) {
	eng, pl := doneNullEngine()
	rt, err := goferro.NewRuntime(goferro.WithEngine(eng))
	if err != nil {
		b.Fatal(err)
	}
	bl := graph.NewBuilder()
	x := bl.Input("x", tensor.Float64, graph.Dims(1))
	y := bl.Input("y", tensor.Float64, graph.Dims(1))
	v := x
	for i := range 500 {
		if i%2 == 0 {
			v = graph.Add(v, y)
		} else {
			v = graph.Mul(v, y)
		}
	}
	p, err := graph.Compile(v)
	if err != nil {
		b.Fatal(err)
	}
	xt, _ := tensor.Zeros(tensor.Float64, 1)
	in := []*driver.Buffer{driver.TensorBuffer(xt, pl, "null", nil), driver.TensorBuffer(xt, pl, "null", nil)}
	prep, err := rt.Prepare(bg, p, in)
	if err != nil {
		b.Fatal(err)
	}
	nodes := len(prep.Schedule())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rt.Run(bg, p, in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(nodes), "ns/node")
	b.ReportMetric(float64(nodes), "nodes")
}
