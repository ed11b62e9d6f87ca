package graph_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/einsum/instance"
	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/graph/ref"
	"github.com/goferro/goferro/tensor"
)

// A VJP program is an ordinary program: a runtime with the CPU engine and
// a fake device runs it on either engine or with free placement, with the
// reference interpreter's result.
func TestVJPOnRuntime(t *testing.T) {
	ctx := context.Background()
	b := graph.NewBuilder()
	x := b.Input("x", c128, graph.Dims(3, 4))
	w := b.Input("w", c128, graph.Dims(4, 5))
	v := b.Input("v", c128, graph.Dims(5, 3))
	loss := graph.ReduceSum(graph.Abs(graph.Exp(graph.Einsum("ij,jk,kl->il", x, w, v))))
	p, err := graph.Compile(loss)
	if err != nil {
		t.Fatal(err)
	}
	q, err := graph.VJP(p, 0, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	rng := tensor.NewRNG(18)
	in := []*tensor.Tensor{
		tensor.Must(tensor.Randn(rng, c128, 3, 4)), tensor.Must(tensor.Randn(rng, c128, 4, 5)),
		tensor.Must(tensor.Randn(rng, c128, 5, 3)), tensor.Scalar(1.0),
	}
	want, err := ref.Run(q, in...)
	if err != nil {
		t.Fatal(err)
	}
	d, install := goferrotest.NewFakeDevice("fake.gpu.v1")
	rt, err := goferro.NewRuntime(goferro.WithEngine(cpu.NewEngine()), install)
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range [][]goferro.RunOption{nil, {goferro.OnEngines(cpu.EngineID)}, {goferro.OnEngines(d.ID())}} {
		got, err := rt.RunTensors(ctx, q, in, opts...)
		if err != nil {
			t.Fatal(err)
		}
		for k := range want {
			if err := tensor.CheckClose(got[k], want[k], 1e-12, 1e-12); err != nil {
				t.Errorf("output %d: %v", k, err)
			}
		}
	}
	if st := d.Stats(); st.Executions == 0 || st.Live != 0 {
		t.Errorf("device stats %+v: want executions and nothing live", st)
	}
}

// BenchmarkVJPEinsumNetwork compares the VJP of a 200-tensor einsum network
// (the MPS inner product of shared/einsum-instances, along its stored
// opt_flops path) with respect to every tensor against its forward pass,
// both on the CPU engine. Sub-benchmarks forward and vjp run one program
// each (for instruction counts under valgrind); interleaved runs the two
// one after the other every iteration, so they see the same machine
// state, and reports the medians (fwd-ms, vjp-ms) and their ratio
// (vjp/fwd). Each backward
// contraction step costs about as much as its forward step and there are
// two per step, so the ratio should stay near 3.
func BenchmarkVJPEinsumNetwork(b *testing.B) {
	var in *instance.Instance
	for _, dir := range []string{"../../shared", "/work/shared"} {
		if x, err := instance.Load(dir + "/einsum-instances/str_mps_varying_inner_product_200.json"); err == nil {
			in = x
			break
		}
	}
	if in == nil {
		b.Skip("shared/einsum-instances is not there")
	}
	bl := graph.NewBuilder()
	var xs []graph.Value
	for i, s := range in.Shapes {
		xs = append(xs, bl.Input(fmt.Sprint("x", i), f64, graph.Dims(s...)))
	}
	p, err := graph.Compile(graph.EinsumPath(in.Equation(), in.Paths["opt_flops"].Path, xs...))
	if err != nil {
		b.Fatal(err)
	}
	wrt := make([]int, len(xs))
	for i := range wrt {
		wrt[i] = i
	}
	q, err := graph.VJP(p, wrt...)
	if err != nil {
		b.Fatal(err)
	}
	// Uniform inputs scaled by 1 / (0.5·Π d_l^(1/c_l)), c_l the number of
	// operands carrying label l, so that no value overflows or underflows
	// (see shared/einsum-instances/README.md).
	terms := strings.Split(strings.Split(in.Equation(), "->")[0], ",")
	count, extent := map[rune]int{}, map[rune]int{}
	for i, term := range terms {
		for a, l := range []rune(term) {
			count[l]++
			extent[l] = in.Shapes[i][a]
		}
	}
	rng := tensor.NewRNG(1)
	inputs := make([]*tensor.Tensor, len(in.Shapes))
	for i, s := range in.Shapes {
		scale := 2.0
		for _, l := range []rune(terms[i]) {
			scale /= math.Pow(float64(extent[l]), 1/float64(count[l]))
		}
		x := tensor.Must(tensor.Rand(rng, f64, s...))
		data := x.Data().([]float64)
		for k := range data {
			data[k] *= scale
		}
		inputs[i] = x
	}
	rt, err := goferro.NewRuntime(goferro.WithEngine(cpu.NewEngine()))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	vin := append(slices.Clone(inputs), tensor.Scalar(1.0))
	timed := func(p *graph.Program, in []*tensor.Tensor) float64 {
		start := time.Now()
		if _, err := rt.RunTensors(ctx, p, in); err != nil {
			b.Fatal(err)
		}
		return float64(time.Since(start).Microseconds()) / 1000
	}
	timed(p, inputs) // warm the caches of both programs
	timed(q, vin)
	// forward and vjp alone, for profilers (valgrind --toggle-collect)
	b.Run("forward", func(b *testing.B) {
		for b.Loop() {
			timed(p, inputs)
		}
	})
	b.Run("vjp", func(b *testing.B) {
		for b.Loop() {
			timed(q, vin)
		}
	})
	b.Run("interleaved", func(b *testing.B) {
		var fwd, bwd []float64
		for b.Loop() {
			fwd = append(fwd, timed(p, inputs))
			bwd = append(bwd, timed(q, vin))
		}
		slices.Sort(fwd)
		slices.Sort(bwd)
		f, v := fwd[len(fwd)/2], bwd[len(bwd)/2]
		b.ReportMetric(f, "fwd-ms")
		b.ReportMetric(v, "vjp-ms")
		b.ReportMetric(v/f, "vjp/fwd")
		b.ReportMetric(float64(len(p.Instructions)), "fwd-instructions")
		b.ReportMetric(float64(len(q.Instructions)), "vjp-instructions")
	})
}
