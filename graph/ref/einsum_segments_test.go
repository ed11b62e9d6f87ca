package ref_test

import (
	"fmt"
	"testing"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/einsum/naive"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/graph/ref"
	"github.com/goferro/goferro/tensor"
)

// TestEinsumWithinSegments: the inner product of two matrix product
// states of four sites under a limit below every site's
// bond×physical×bond intermediate plans as segments (einsum.Segments),
// one site each, and compiles into their slices: no contraction's result
// exceeds the limit but a part's last one (of at most the size of the
// part's result), and the program computes the contraction (naive loops
// over each step of the unsliced plan).
func TestEinsumWithinSegments(t *testing.T) {
	const eq = "ab,ac,dbe,dcf,gei,gfj,hi,hj->"
	shapes := [][]int{{6, 3}, {6, 3}, {6, 3, 3}, {6, 3, 3}, {6, 3, 3}, {6, 3, 3}, {6, 3}, {6, 3}}
	path := [][]int{{0, 1}, {0, 6}, {0, 5}, {0, 4}, {0, 3}, {0, 2}, {0, 1}}
	const limit = 10 // a site's (bond, physical, bond) has 54 elements, an environment 9
	p, err := einsum.NewPlan(eq, shapes, einsum.WithPath(path), einsum.WithMemoryLimit(limit))
	if err != nil {
		t.Fatal(err)
	}
	if p.Segments == nil {
		t.Fatalf("not segmented: slicing %+v", p.Slicing)
	}
	bound := float64(limit)
	for _, pt := range p.Segments.Parts {
		if s := pt.Plan.Slicing; s != nil {
			n, _ := tensor.Shape(s.Plan.OutputShape).NumElements()
			bound = max(bound, float64(n))
		}
	}
	b := graph.NewBuilder()
	var xs []graph.Value
	var ts []*tensor.Tensor
	for i, s := range shapes {
		xs = append(xs, b.Input(fmt.Sprint("x", i), tensor.Float64, graph.Dims(s...)))
		ts = append(ts, must(tensor.Rand(tensor.NewRNG(uint64(i+1)), tensor.Float64, s...)))
	}
	prog, err := graph.Compile(graph.EinsumWithin(eq, path, limit, xs...))
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]int{}
	for _, ins := range prog.Instructions {
		ops[ins.Op]++
		if ins.Op == "dot_general" {
			if n, _ := prog.SlotType(ins.Outputs[0].Slot).Shape.NumElements(); float64(n) > bound {
				t.Errorf("a contraction of %d elements, limit %v", n, limit)
			}
		}
	}
	if ops["slice"] == 0 || ops["add"] == 0 {
		t.Errorf("%d segments compile to %v", len(p.Segments.Parts), ops)
	}
	got, err := ref.Run(prog, ts...)
	if err != nil {
		t.Fatal(err)
	}
	whole := must(einsum.NewPlan(eq, shapes, einsum.WithPath(path)))
	want := must(cpu.Convert(must(naive.Replay(whole, ts)), tensor.Float64)) // Replay computes in complex128
	check(t, eq, got[0], want, 1e-12)
	t.Logf("%d segments, %d slices: %v", len(p.Segments.Parts), p.Segments.Slices(), ops)
}
