package ref_test

import (
	"fmt"
	"slices"
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
	prog, ts := compileWithin(t, eq, path, limit, shapes)
	got := countOps(prog)["dot_general"]
	if got != want {
		t.Errorf("%d dot_generals, want %d: %d hoisted results, %d slices of %d contractions", got, want, len(s.Hoisted), s.Count, dots(s.Sliced.Plan))
	}
	res, err := ref.Run(prog, ts...)
	if err != nil {
		t.Fatal(err)
	}
	check(t, eq, res[0], must(cpu.Contract(eq, ts...)), 1e-12)
}

// TestEinsumWithinNestedLevels: a contraction sliced over two labels, c (4
// values) and d (2), along a path whose steps depend on one or both of
// them: every step's per-slice copies merge into one per block of the
// sliced labels it depends on (its operands' slice instructions are the
// same for equal blocks of those labels), so the program has, per step of
// a slice, as many dot_generals as those labels have blocks together —
// the nested loops' count or fewer — and computes the unsliced
// contraction.
func TestEinsumWithinNestedLevels(t *testing.T) {
	const eq = "eg,cf,dcb,bdh,hgc,fc->bcdf"
	shapes := [][]int{{4, 2}, {4, 3}, {2, 4, 4}, {4, 2, 2}, {2, 2, 4}, {3, 4}}
	path := [][]int{{0, 4}, {2, 4}, {1, 3}, {0, 1}, {0, 1}}
	const limit = 4
	p, err := einsum.NewPlan(eq, shapes, einsum.WithPath(path), einsum.WithMemoryLimit(limit))
	if err != nil {
		t.Fatal(err)
	}
	s := p.Slicing
	if s == nil || !slices.ContainsFunc(s.Hoisted, func(h einsum.Part) bool { return h.Level > 0 }) {
		t.Fatalf("slicing %+v: want a part hoisted into a loop", s)
	}
	// The sliced labels below every value of one slice, and per
	// contraction step the blocks of those labels together.
	one := s.Plan
	below := make([][]int, len(one.Prep), len(one.Prep)+len(one.Steps))
	for i := range one.Prep {
		for _, l := range one.Prep[i].Kept() {
			if slices.Contains(s.Labels, l) {
				below[i] = append(below[i], l)
			}
		}
	}
	want, nested := 0, s.Count*len(s.Sliced.Plan.Steps)
	for _, st := range one.Steps {
		d := slices.Clone(below[st.Left])
		if st.Right >= 0 {
			d = append(d, below[st.Right]...)
		}
		below = append(below, d)
		if st.Right < 0 {
			continue
		}
		copies := 1
		for j, l := range s.Labels {
			if slices.Contains(d, l) {
				copies *= s.Extents[j] / s.Blocks[j]
			}
		}
		want += copies
	}
	for _, h := range s.Hoisted {
		copies := 1
		for j := range h.Level {
			copies *= s.Extents[j] / s.Blocks[j]
		}
		nested += copies * len(h.Plan.Steps)
	}
	prog, ts := compileWithin(t, eq, path, limit, shapes)
	got := countOps(prog)["dot_general"]
	t.Logf("%d dot_generals: %d slices of %d steps; the nested loops run %d", got, s.Count, len(one.Steps), nested)
	if got != want || got > nested || got >= s.Count*len(one.Steps) {
		t.Errorf("%d dot_generals, want %d (the nested loops run %d contractions, %d slices of %d %d)", got, want, nested, s.Count, len(one.Steps), s.Count*len(one.Steps))
	}
	res, err := ref.Run(prog, ts...)
	if err != nil {
		t.Fatal(err)
	}
	check(t, eq, res[0], must(cpu.Contract(eq, ts...)), 1e-12)
}

// compileWithin compiles graph.EinsumWithin(eq, path, limit) over float64
// inputs of the given shapes and returns the program with seeded random
// inputs for it.
func compileWithin(t *testing.T, eq string, path [][]int, limit float64, shapes [][]int) (*graph.Program, []*tensor.Tensor) {
	t.Helper()
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
	return prog, ts
}

// countOps counts the program's instructions by op.
func countOps(prog *graph.Program) map[string]int {
	ops := map[string]int{}
	for _, ins := range prog.Instructions {
		ops[ins.Op]++
	}
	return ops
}
