package einsum_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/goferro/goferro/einsum"
)

// checkHoisted checks the hoisting of sliced plan p against the steps of
// one slice (Slicing.Plan), each marked invariant when neither operand
// depends on a sliced label, walking the steps from the prepared operands:
// the Hoisted parts hold the invariant steps and Sliced the others, no
// hoisted result carries a sliced label or exceeds limit, and Flops counts
// the invariant steps once and the others Count times. It returns the
// number of invariant steps.
func checkHoisted(t *testing.T, name string, p *einsum.Plan, limit float64) int {
	t.Helper()
	s := p.Slicing
	one := s.Plan
	depends := make([]bool, len(one.Prep), len(one.Prep)+len(one.Steps))
	for i := range one.Prep {
		depends[i] = slices.ContainsFunc(one.Prep[i].Kept(), func(l int) bool { return slices.Contains(s.Labels, l) })
	}
	invariant, flops := 0, 0.0
	for _, st := range one.Steps {
		d := depends[st.Left] || st.Right >= 0 && depends[st.Right]
		depends = append(depends, d)
		if d {
			flops += float64(s.Count) * st.Flops
		} else {
			invariant++
			flops += st.Flops
		}
	}
	if math.Abs(flops-s.Flops) > 1e-9*flops {
		t.Errorf("%s: Flops %v, want %v (%d invariant steps of %d, %d slices)", name, s.Flops, flops, invariant, len(one.Steps), s.Count)
	}
	if invariant == 0 || invariant == len(one.Steps) {
		if s.Sliced != nil || len(s.Hoisted) != 0 {
			t.Errorf("%s: %d invariant steps of %d, but %d parts hoisted", name, invariant, len(one.Steps), len(s.Hoisted))
		}
		return 0
	}
	if s.Sliced == nil {
		t.Fatalf("%s: %d invariant steps of %d, none hoisted", name, invariant, len(one.Steps))
	}
	hoisted := 0
	for k, h := range s.Hoisted {
		hoisted += len(h.Plan.Steps)
		for _, i := range h.Operands {
			if i >= len(p.Inputs) {
				t.Errorf("%s: hoisted part %d reads %d, not an operand", name, k, i)
			}
		}
		elems := 1.0
		for _, d := range h.Plan.OutputShape {
			elems *= float64(d)
		}
		if elems > limit {
			t.Errorf("%s: hoisted result %d has %v elements, above the limit %v", name, k, elems, limit)
		}
		for _, l := range h.Plan.Output {
			if slices.Contains(s.Labels, slices.Index(p.Labels, h.Plan.Labels[l])) {
				t.Errorf("%s: hoisted result %d carries sliced label %s", name, k, h.Plan.Labels[l])
			}
		}
	}
	if hoisted != invariant || len(s.Sliced.Plan.Steps) != len(one.Steps)-invariant {
		t.Errorf("%s: %d steps hoisted and %d sliced, want %d and %d", name, hoisted, len(s.Sliced.Plan.Steps), invariant, len(one.Steps)-invariant)
	}
	if !slices.Equal(s.Sliced.Plan.OutputShape, one.OutputShape) {
		t.Errorf("%s: a slice's output %v, want %v", name, s.Sliced.Plan.OutputShape, one.OutputShape)
	}
	return invariant
}

// TestSlicingHoistsRandom plans random contractions under a quarter of
// their largest intermediate and checks the hoisting (checkHoisted).
func TestSlicingHoistsRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 9))
	cases, hoisted := 0, 0
	for range 600 {
		eq, shapes := randomEquation(r)
		whole, err := einsum.NewPlan(eq, shapes, einsum.WithOptimizer(einsum.OptimizeGreedy))
		if err != nil {
			t.Fatalf("%s %v: %v", eq, shapes, err)
		}
		limit := 0.0
		for _, st := range whole.Steps[:len(whole.Steps)-1] {
			limit = max(limit, st.Size/4)
		}
		if limit < 1 {
			continue
		}
		p, err := einsum.NewPlan(eq, shapes, einsum.WithPath(whole.Path), einsum.WithMemoryLimit(limit))
		if errors.Is(err, einsum.ErrMemoryLimit) {
			continue
		}
		if err != nil {
			t.Fatalf("%s %v: %v", eq, shapes, err)
		}
		if p.Slicing == nil {
			continue
		}
		cases++
		if checkHoisted(t, eq, p, limit) > 0 {
			hoisted++
		}
	}
	if cases < 100 || hoisted < 20 {
		t.Errorf("%d sliced plans, %d with hoisted steps", cases, hoisted)
	}
	t.Logf("%d sliced plans, %d with hoisted steps", cases, hoisted)
}

// TestSlicingHoistsInstances checks the hoisting (checkHoisted) of every
// benchmark instance's stored path sliced to an eighth of its largest
// intermediate.
func TestSlicingHoistsInstances(t *testing.T) {
	if testing.Short() {
		t.Skip("plans every instance sliced: seconds")
	}
	hoisted := 0
	for _, in := range loadInstances(t) {
		sp, ok := in.Paths["opt_flops"]
		if !ok || strings.HasPrefix(in.Name, "bin_") || in.Name == "str_mps_varying_inner_product_200" {
			continue // one step, or no slicing meets the limit
		}
		whole, err := einsum.NewPlan(in.Equation(), in.Shapes, einsum.WithPath(sp.Path))
		if err != nil {
			t.Fatal(err)
		}
		limit := 0.0
		for _, st := range whole.Steps[:len(whole.Steps)-1] {
			limit = max(limit, st.Size/8)
		}
		p, err := einsum.NewPlan(in.Equation(), in.Shapes, einsum.WithPath(sp.Path), einsum.WithMemoryLimit(limit))
		if err != nil {
			t.Fatalf("%s: %v", in.Name, err)
		}
		if checkHoisted(t, in.Name, p, limit) > 0 {
			hoisted++
		}
	}
	if hoisted < 3 {
		t.Errorf("only %d instances hoist steps", hoisted)
	}
}

// randomEquation returns an equation of 3 to 6 operands of 1 to 3 labels
// each, drawn from 7 labels of extents 2 to 4, with a random output.
func randomEquation(r *rand.Rand) (string, [][]int) {
	const pool = "abcdefg"
	sizes := make([]int, len(pool))
	for i := range sizes {
		sizes[i] = 2 + r.IntN(3)
	}
	var terms []string
	var shapes [][]int
	seen := map[byte]bool{}
	for range 3 + r.IntN(4) {
		var term []byte
		var shape []int
		for range 1 + r.IntN(3) {
			i := r.IntN(len(pool))
			if !slices.Contains(term, pool[i]) {
				term, shape = append(term, pool[i]), append(shape, sizes[i])
				seen[pool[i]] = true
			}
		}
		terms, shapes = append(terms, string(term)), append(shapes, shape)
	}
	var out []byte
	for i := range len(pool) {
		if seen[pool[i]] && r.IntN(3) == 0 {
			out = append(out, pool[i])
		}
	}
	return strings.Join(terms, ",") + "->" + string(out), shapes
}

// TestSlicingFewestSlices: nary_matmul_chain_64's stored path sliced to an
// eighth of its largest intermediate cuts its output label i, which costs
// no FLOPs in any number of blocks: of equally cheap slicings the planner
// keeps the one of fewest slices, the 8 the limit needs at least, not one
// slice per value (64).
func TestSlicingFewestSlices(t *testing.T) {
	for _, in := range loadInstances(t) {
		if in.Name != "nary_matmul_chain_64" {
			continue
		}
		sp := in.Paths["opt_flops"]
		whole, err := einsum.NewPlan(in.Equation(), in.Shapes, einsum.WithPath(sp.Path))
		if err != nil {
			t.Fatal(err)
		}
		largest := 0.0
		for _, st := range whole.Steps[:len(whole.Steps)-1] {
			largest = max(largest, st.Size)
		}
		p, err := einsum.NewPlan(in.Equation(), in.Shapes, einsum.WithPath(sp.Path), einsum.WithMemoryLimit(largest/8))
		if err != nil {
			t.Fatal(err)
		}
		if s := p.Slicing; s == nil || s.Count != 8 || math.Abs(s.Flops/whole.Flops-1) > 1e-9 {
			t.Fatalf("slicing %+v: want 8 slices at the unsliced FLOPs %v", s, whole.Flops)
		}
		return
	}
	t.Fatal("nary_matmul_chain_64 not found")
}
