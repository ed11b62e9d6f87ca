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
// one slice (Slicing.Plan), walking them from the prepared operands to
// find the sliced labels each depends on, and so its loop level (one more
// than the position in Labels of the innermost; 0 for none): the Hoisted
// parts hold the steps of the outer levels, each part of one level, its
// result carrying no label of an inner loop and within limit, reading
// operands and earlier parts of outer levels only; Sliced holds the steps
// of the innermost level; and Flops counts every step once per block
// combination of the labels of its level and those outside it. It returns
// the number of hoisted steps.
func checkHoisted(t *testing.T, name string, p *einsum.Plan, limit float64) int {
	t.Helper()
	s := p.Slicing
	one := s.Plan
	m := len(s.Labels)
	depends := make([][]int, len(one.Prep), len(one.Prep)+len(one.Steps)) // sliced labels below each value
	for i := range one.Prep {
		for _, l := range one.Prep[i].Kept() {
			if slices.Contains(s.Labels, l) {
				depends[i] = append(depends[i], l)
			}
		}
	}
	perLevel := make([]int, m+1)
	flops := 0.0
	for _, st := range one.Steps {
		d := slices.Clone(depends[st.Left])
		if st.Right >= 0 {
			d = append(d, depends[st.Right]...)
		}
		depends = append(depends, d)
		level := 0
		for j, l := range s.Labels {
			if slices.Contains(d, l) {
				level = j + 1
			}
		}
		perLevel[level]++
		f := st.Flops
		for j := range level {
			f *= float64(s.Extents[j] / s.Blocks[j])
		}
		flops += f
	}
	if math.Abs(flops-s.Flops) > 1e-9*flops {
		t.Errorf("%s: Flops %v, want %v (steps per level %v, %d slices)", name, s.Flops, flops, perLevel, s.Count)
	}
	hoistedSteps := len(one.Steps) - perLevel[m]
	if hoistedSteps == 0 {
		if s.Sliced != nil || len(s.Hoisted) != 0 {
			t.Errorf("%s: every step in the innermost loop, but %d parts hoisted", name, len(s.Hoisted))
		}
		return 0
	}
	if s.Sliced == nil {
		t.Fatalf("%s: steps per level %v, none hoisted", name, perLevel)
	}
	got := make([]int, m+1)
	for k, h := range s.Hoisted {
		if h.Level < 0 || h.Level >= m || k > 0 && h.Level < s.Hoisted[k-1].Level {
			t.Fatalf("%s: hoisted part %d at level %d (%d labels sliced), after one at level %d", name, k, h.Level, m, s.Hoisted[max(k-1, 0)].Level)
		}
		got[h.Level] += len(h.Plan.Steps)
		for _, i := range h.Operands {
			if j := i - len(p.Inputs); j >= k || j >= 0 && s.Hoisted[j].Level >= h.Level {
				t.Errorf("%s: hoisted part %d (level %d) reads %d, not an operand or a part of an outer level", name, k, h.Level, i)
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
			if j := slices.Index(s.Labels, slices.Index(p.Labels, h.Plan.Labels[l])); j >= h.Level {
				t.Errorf("%s: hoisted result %d of level %d carries sliced label %s", name, k, h.Level, h.Plan.Labels[l])
			}
		}
	}
	got[m] = len(s.Sliced.Plan.Steps)
	if !slices.Equal(got, perLevel) {
		t.Errorf("%s: steps per level %v in the parts, want %v", name, got, perLevel)
	}
	if !slices.Equal(s.Sliced.Plan.OutputShape, one.OutputShape) {
		t.Errorf("%s: a slice's output %v, want %v", name, s.Sliced.Plan.OutputShape, one.OutputShape)
	}
	return hoistedSteps
}

// TestSlicingHoistsRandom plans random contractions under a quarter of
// their largest intermediate and checks the hoisting (checkHoisted), some
// of it within the loop of an outer sliced label.
func TestSlicingHoistsRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 9))
	cases, hoisted, nested := 0, 0, 0
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
		if slices.ContainsFunc(p.Slicing.Hoisted, func(h einsum.Part) bool { return h.Level > 0 }) {
			nested++
		}
	}
	if cases < 100 || hoisted < 20 || nested < 5 {
		t.Errorf("%d sliced plans, %d with hoisted steps, %d in a loop", cases, hoisted, nested)
	}
	t.Logf("%d sliced plans, %d with hoisted steps, %d in a loop", cases, hoisted, nested)
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
