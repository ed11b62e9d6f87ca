package ref_test

import (
	"fmt"
	"testing"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/graph/ref"
	"github.com/goferro/goferro/tensor"
)

// TestEinsumWithinHoists: graph lowers every slice of a sliced einsum
// whole (Slicing.Plan), but a slice-invariant step reads the same
// instructions in every slice and its copies merge into one: the program
// has one dot_general per hoisted step (Slicing.Hoisted) and one per other
// step per slice (Slicing.Sliced), and computes the unsliced contraction.
func TestEinsumWithinHoists(t *testing.T) {
	const eq = "ab,bc,cd,de->ae"
	shapes := [][]int{{8, 4}, {4, 4}, {4, 4}, {4, 8}}
	path := [][]int{{1, 2}, {0, 2}, {0, 1}}
	const limit = 16
	p, err := einsum.NewPlan(eq, shapes, einsum.WithPath(path), einsum.WithMemoryLimit(limit))
	if err != nil {
		t.Fatal(err)
	}
	s := p.Slicing
	if s == nil || s.Sliced == nil {
		t.Fatalf("slicing %+v: want hoisted steps", s)
	}
	dots := func(p *einsum.Plan) int {
		n := 0
		for _, st := range p.Steps {
			if st.Right >= 0 {
				n++
			}
		}
		return n
	}
	want := s.Count * dots(s.Sliced.Plan)
	for _, h := range s.Hoisted {
		want += dots(h.Plan)
	}
	b := graph.NewBuilder()
	var xs []graph.Value
	var ts []*tensor.Tensor
	for i, sh := range shapes {
		xs = append(xs, b.Input(fmt.Sprint("x", i), tensor.Float64, graph.Dims(sh...)))
		ts = append(ts, must(tensor.Rand(tensor.NewRNG(uint64(i+1)), tensor.Float64, sh...)))
	}
	prog, err := graph.Compile(graph.EinsumWithin(eq, path, limit, xs...))
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for _, ins := range prog.Instructions {
		if ins.Op == "dot_general" {
			got++
		}
	}
	if got != want {
		t.Errorf("%d dot_generals, want %d: %d hoisted results, %d slices of %d contractions", got, want, len(s.Hoisted), s.Count, dots(s.Sliced.Plan))
	}
	res, err := ref.Run(prog, ts...)
	if err != nil {
		t.Fatal(err)
	}
	check(t, eq, res[0], must(cpu.Contract(eq, ts...)), 1e-12)
}
