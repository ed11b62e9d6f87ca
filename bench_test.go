package goferro_test

import (
	"testing"

	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

// chainProgram is x (+ y, * y, + y, ...) over n instructions of tiny
// float64 vectors of extent size: the runtime's per-instruction overhead
// dominates the arithmetic.
func chainProgram(b testing.TB, n, size int) (*goferro.Runtime, *graph.Program, []*driver.Buffer) {
	b.Helper()
	rt, err := goferro.NewRuntime(goferro.WithEngine(cpu.NewEngine()))
	if err != nil {
		b.Fatal(err)
	}
	bl := graph.NewBuilder()
	x := bl.Input("x", tensor.Float64, graph.Dims(size))
	y := bl.Input("y", tensor.Float64, graph.Dims(size))
	v := x
	for i := range n {
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
	xt, _ := tensor.Rand(tensor.Float64, 1, size)
	yt, _ := tensor.Rand(tensor.Float64, 2, size)
	return rt, p, []*driver.Buffer{driver.HostBuffer(xt, nil), driver.HostBuffer(yt, nil)}
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
	rt, err := goferro.NewRuntime(goferro.WithEngine(cpu.NewEngine()))
	if err != nil {
		b.Fatal(err)
	}
	bl := graph.NewBuilder()
	x := bl.Input("x", tensor.Float64, graph.Dims(4))
	p, err := graph.Compile(graph.Neg(x))
	if err != nil {
		b.Fatal(err)
	}
	xt, _ := tensor.Rand(tensor.Float64, 1, 4)
	in := []*driver.Buffer{driver.HostBuffer(xt, nil)}
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
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(ns/float64(nodes), "ns/node")
	b.ReportMetric(ns/1000, "ns/instr")
	b.ReportMetric(float64(nodes), "nodes")
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
