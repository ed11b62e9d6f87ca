package goferro_test

import (
	"context"
	"testing"

	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

// chainProgram is x (+ y, * y, + y, ...) over n instructions of tiny
// float64 vectors of extent size, on the CPU engine: the runtime's
// per-instruction overhead dominates the arithmetic.
func chainProgram(b testing.TB, n, size int) (*goferro.Runtime, *graph.Program, []*driver.Buffer) {
	b.Helper()
	xt, _ := tensor.Rand(tensor.NewRNG(1), tensor.Float64, size)
	yt, _ := tensor.Rand(tensor.NewRNG(2), tensor.Float64, size)
	return newRuntime(b, goferro.WithEngine(cpu.NewEngine())), chain(b, n, size), host(xt, yt)
}

func chain(b testing.TB, n, size int) *graph.Program {
	b.Helper()
	v, y := xy(size)
	for i := range n {
		if i%2 == 0 {
			v = graph.Add(v, y)
		} else {
			v = graph.Mul(v, y)
		}
	}
	return compile(b, v)
}

// BenchmarkRunChain measures per-instruction overhead: a chain of 100 tiny
// elementwise ops on the CPU engine, prepared once (cache hits).
func BenchmarkRunChain(b *testing.B) {
	rt, p, in := chainProgram(b, 100, 4)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rt.Run(bg, p, in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCachedRunOneOp is the cost of a cached Run of a one-op program
// (neg of four float64s) on the CPU engine: every iteration is a
// prepared-cache hit. Goal: under 5 µs per run.
func BenchmarkCachedRunOneOp(b *testing.B) {
	rt := newRuntime(b, goferro.WithEngine(cpu.NewEngine()))
	p := compile(b, graph.Neg(graph.NewBuilder().Input("x", tensor.Float64, graph.Dims(4))))
	xt, _ := tensor.Rand(tensor.NewRNG(1), tensor.Float64, 4)
	in := host(xt)
	if _, err := rt.Run(bg, p, in); err != nil { // fill the cache
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rt.Run(bg, p, in); err != nil {
			b.Fatal(err)
		}
	}
	if st := goferro.CacheStats(rt); st.Misses != 1 {
		b.Fatalf("%d cache misses, want 1", st.Misses)
	}
}

// BenchmarkRun1000Nodes is the per-node cost of a long schedule: a cached
// Run of a 1,000-instruction chain of one-element adds and muls on the CPU
// engine. It reports ns/node over every schedule node (an op and a release
// per instruction) and ns/instr per instruction. Goal: under 1 µs per node.
func BenchmarkRun1000Nodes(b *testing.B) {
	rt, p, in := chainProgram(b, 1000, 1)
	benchmarkNodes(b, rt, p, in)
}

// BenchmarkRun1000NodesNull is BenchmarkRun1000Nodes on an engine whose
// executor does no arithmetic: the runtime's own per-node cost.
func BenchmarkRun1000NodesNull(b *testing.B) {
	eng, pl := nullEngine()
	z, _ := tensor.Zeros(tensor.Float64, 1)
	in := []*driver.Buffer{driver.TensorBuffer(z, pl, "null", nil), driver.TensorBuffer(z, pl, "null", nil)}
	benchmarkNodes(b, newRuntime(b, goferro.WithEngine(eng)), chain(b, 1000, 1), in)
}

// benchmarkNodes measures cached Runs of a chain, whose schedule has an op
// per instruction and a release per value but the output.
func benchmarkNodes(b *testing.B, rt *goferro.Runtime, p *graph.Program, in []*driver.Buffer) {
	prep, err := rt.Prepare(bg, p, in)
	if err != nil {
		b.Fatal(err)
	}
	nodes := len(prep.Schedule())
	if n := len(p.Instructions); nodes != 2*n+1 { // x, y and n-1 intermediates released
		b.Fatalf("%d nodes for %d instructions, want an op per instruction and a release per value but the output", nodes, n)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rt.Run(bg, p, in); err != nil {
			b.Fatal(err)
		}
	}
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(ns/float64(nodes), "ns/node")
	b.ReportMetric(ns/float64(len(p.Instructions)), "ns/instr")
	b.ReportMetric(float64(nodes), "nodes")
}

// nullEngine is an engine whose executor does no arithmetic: every result
// is a fresh buffer over one shared tensor.
func nullEngine() (driver.Engine, driver.Placement) {
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

// TestRunOverheadAllocations guards what the overhead benchmarks measure,
// by allocation count rather than time (which the machine's load skews): a
// cached Run allocates a few objects per run and per instruction — the
// result tensor and its buffer — and nothing per node in the executor
// loop, slot store or release bookkeeping.
func TestRunOverheadAllocations(t *testing.T) {
	rt, p, in := chainProgram(t, 100, 4)
	if _, err := rt.Run(bg, p, in); err != nil {
		t.Fatal(err)
	}
	per := testing.AllocsPerRun(20, func() { _, _ = rt.Run(bg, p, in) }) / 100
	if per > 4.5 {
		t.Errorf("%.2f allocations per instruction, want at most 4.5", per)
	}
}
