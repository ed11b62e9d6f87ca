package goferrotest_test

import (
	"context"
	"fmt"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

// A fake device stands in for an accelerator: it owns its memory like a
// real one, so a program placed on it really moves its inputs there and
// its results back, through scheduled transfers.
func ExampleNewFakeDevice() {
	d, install := goferrotest.NewFakeDevice("fake.gpu.v1")
	rt, err := goferro.NewRuntime(goferro.WithEngine(cpu.NewEngine()), install)
	if err != nil {
		panic(err)
	}
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(2, 2))
	p, err := graph.Compile(graph.MatMul(x, x))
	if err != nil {
		panic(err)
	}
	in := tensor.Must(tensor.New([]float64{1, 2, 3, 4}, 2, 2))
	out, err := rt.RunTensors(context.Background(), p, []*tensor.Tensor{in}, goferro.OnEngines(d.ID()))
	if err != nil {
		panic(err)
	}
	fmt.Println(out[0])
	fmt.Println("executions on the device:", d.Stats().Executions, "buffers left:", d.Stats().Live)
	// Output:
	// [[7 10]
	//  [15 22]]
	// executions on the device: 1 buffers left: 0
}
