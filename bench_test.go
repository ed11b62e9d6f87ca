package goferro_test

import (
	"testing"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

// BenchmarkRunChain measures per-instruction overhead: a chain of 100 tiny
// elementwise ops on the CPU engine, prepared once (cache hits).
func BenchmarkRunChain(b *testing.B) {
	rt, err := goferro.NewRuntime(goferro.WithEngine(cpu.NewEngine()))
	if err != nil {
		b.Fatal(err)
	}
	bl := graph.NewBuilder()
	x := bl.Input("x", tensor.Float64, graph.Dims(4))
	y := bl.Input("y", tensor.Float64, graph.Dims(4))
	v := x
	for i := range 100 {
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
	xt, _ := tensor.Rand(tensor.Float64, 1, 4)
	yt, _ := tensor.Rand(tensor.Float64, 2, 4)
	in := []*goferro.Buffer{goferro.HostBuffer(xt, nil), goferro.HostBuffer(yt, nil)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rt.Run(bg, p, in); err != nil {
			b.Fatal(err)
		}
	}
}
