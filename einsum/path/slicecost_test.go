package path

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Cutting one label to every divisor of its size, after some labels are
// sliced already: sliceCosts gives the elements above the limit that
// Evaluate gives for the path in the network with that label cut, and the
// FLOPs of all the slices run as nested loops in the best order of the
// labels, as naiveNested counts them by trying every order (or with every
// step that depends on no sliced label once and the others in every
// slice, as naiveHoisted counts them; or, recomputing every step, the
// slices times the FLOPs of one).
func TestSliceCostsAgainstEvaluate(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for range 300 {
		n := randomNetwork(r, 2+r.IntN(7))
		for l := range n.Sizes {
			n.Sizes[l] = []int{1, 2, 4, 6, 12}[r.IntN(5)]
		}
		p, err := Greedy(n, Options{})
		if err != nil {
			t.Fatal(err)
		}
		// Slice up to three labels already, into blocks of a random divisor.
		s := Slicing{Slices: 1}
		for range r.IntN(4) {
			l := r.IntN(len(n.Sizes))
			if d := n.Sizes[l]; d > 1 && !slices.Contains(s.Labels, l) {
				ds := divisors(d)
				size := ds[r.IntN(len(ds)-1)]
				s.Labels, s.Sizes = append(s.Labels, l), append(s.Sizes, size)
				s.Slices *= float64(d / size)
			}
		}
		cur := s.Network(n)
		sc, c, err := newSliceCosts(cur, p, s.Labels, s.blocks(n), countNested, 0)
		if err != nil {
			t.Fatal(err)
		}
		hoisted, _, _ := newSliceCosts(cur, p, s.Labels, s.blocks(n), countHoisted, 0)
		written, _, _ := newSliceCosts(cur, p, s.Labels, s.blocks(n), countNested, 64)
		if got, want := written.flops(), naiveNested(t, n, s, p, 64); math.Abs(got-want) > 1e-9 {
			t.Fatalf("%+v path %v sliced %v/%v: log2 cost with writes %v, want %v", n, p, s.Labels, s.Sizes, got, want)
		}
		all, _, _ := newSliceCosts(cur, p, s.Labels, s.blocks(n), countAll, 0)
		if got, want := sc.flops(), naiveNested(t, n, s, p, 0); math.Abs(got-want) > 1e-9 {
			t.Fatalf("%+v path %v sliced %v/%v: log2 FLOPs %v, want %v", n, p, s.Labels, s.Sizes, got, want)
		}
		if got, want := hoisted.flops(), naiveHoisted(t, n, s, p); math.Abs(got-want) > 1e-9 {
			t.Fatalf("%+v path %v sliced %v/%v: log2 FLOPs hoisted %v, want %v", n, p, s.Labels, s.Sizes, got, want)
		}
		limit := c.LargestIntermediate / float64(1+r.IntN(8))
		over := func(c Cost) float64 {
			t := 0.0
			for _, st := range c.Steps[:len(c.Steps)-1] {
				if st.Size > limit {
					t += st.Size
				}
			}
			return t
		}
		if got, want := sc.over(limit), over(c); got != want {
			t.Fatalf("%+v path %v: over %v, want %v", cur, p, got, want)
		}
		for l, d := range cur.Sizes {
			for _, size := range divisors(max(d, 1)) {
				cut := s
				cut.Labels, cut.Sizes = slices.Clone(s.Labels), slices.Clone(s.Sizes)
				if j := slices.Index(cut.Labels, l); j >= 0 {
					cut.Sizes[j] = size
				} else {
					cut.Labels, cut.Sizes = append(cut.Labels, l), append(cut.Sizes, size)
				}
				cut.Slices *= float64(d / size)
				want, err := Evaluate(cut.Network(n), p)
				if err != nil {
					t.Fatal(err)
				}
				wantFlops := naiveNested(t, n, cut, p, 0)
				gotOver, gotFlops := sc.cut(l, d, size, limit)
				_, recomputed := all.cut(l, d, size, limit)
				if _, got := written.cut(l, d, size, limit); math.Abs(got-naiveNested(t, n, cut, p, 64)) > 1e-9 {
					t.Fatalf("%+v path %v sliced %v/%v, label %d cut %d -> %d: log2 cost with writes %v, want %v",
						n, p, s.Labels, s.Sizes, l, d, size, got, naiveNested(t, n, cut, p, 64))
				}
				if _, got := hoisted.cut(l, d, size, limit); math.Abs(got-naiveHoisted(t, n, cut, p)) > 1e-9 {
					t.Fatalf("%+v path %v sliced %v/%v, label %d cut %d -> %d: log2 FLOPs hoisted %v, want %v",
						n, p, s.Labels, s.Sizes, l, d, size, got, naiveHoisted(t, n, cut, p))
				}
				if want := math.Log2(cut.Slices) + want.Log2Flops; math.Abs(recomputed-want) > 1e-9 {
					t.Fatalf("%+v path %v sliced %v/%v, label %d cut %d -> %d: log2 FLOPs recomputing every step %v, want %v",
						n, p, s.Labels, s.Sizes, l, d, size, recomputed, want)
				}
				if gotOver != over(want) || math.Abs(gotFlops-wantFlops) > 1e-9 {
					t.Fatalf("%+v path %v sliced %v/%v, label %d cut %d -> %d: over %v log2 FLOPs %v, want %v %v",
						n, p, s.Labels, s.Sizes, l, d, size, gotOver, gotFlops, over(want), wantFlops)
				}
			}
		}
	}
}

// naiveHoisted returns log2 of the FLOPs of all the slices of s along p:
// those of every step whose operands' inputs (found by walking the path
// back) carry no sliced label once, the others s.Slices times.
func naiveHoisted(t *testing.T, n Network, s Slicing, p Path) float64 {
	t.Helper()
	c, err := Evaluate(s.Network(n), p)
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := p.IDs(len(n.Inputs))
	total := 0.0
	for si, st := range c.Steps {
		f := st.Flops
		for _, l := range labelsBelow(n, ids, len(n.Inputs)+si) {
			if slices.Contains(s.Labels, l) {
				f *= s.Slices
				break
			}
		}
		total += f
	}
	return math.Log2(total)
}

// labelsBelow returns the labels of the inputs below value id of path p
// in n (ids as Path.IDs gives them), found by walking the path back.
func labelsBelow(n Network, ids [][]int, id int) []int {
	if id < len(n.Inputs) {
		return n.Inputs[id]
	}
	var ls []int
	for _, o := range ids[id-len(n.Inputs)] {
		ls = append(ls, labelsBelow(n, ids, o)...)
	}
	return ls
}

// naiveNested returns log2 of the fewest FLOPs of all the slices of s
// along p run as nested loops, over every order of the sliced labels:
// each step once per combination of blocks of the labels in the order up
// to the innermost one its inputs carry; writes times the elements of a
// slice's result are added to the last step's FLOPs.
func naiveNested(t *testing.T, n Network, s Slicing, p Path, writes float64) float64 {
	t.Helper()
	c, err := Evaluate(s.Network(n), p)
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := p.IDs(len(n.Inputs))
	best := math.Inf(1)
	for _, order := range permutations(len(s.Labels)) {
		total := 0.0
		for si, st := range c.Steps {
			below := labelsBelow(n, ids, len(n.Inputs)+si)
			level := 0
			for pos, j := range order {
				if slices.Contains(below, s.Labels[j]) {
					level = pos + 1
				}
			}
			f := st.Flops
			if si == len(c.Steps)-1 {
				f += writes * st.Size
			}
			for _, j := range order[:level] {
				f *= float64(n.Sizes[s.Labels[j]] / s.Sizes[j])
			}
			total += f
		}
		best = min(best, total)
	}
	return math.Log2(best)
}

// permutations returns every order of 0..m-1.
func permutations(m int) [][]int {
	if m == 0 {
		return [][]int{{}}
	}
	var all [][]int
	for _, p := range permutations(m - 1) {
		for i := range m {
			q := append(append(slices.Clone(p[:i]), m-1), p[i:]...)
			all = append(all, q)
		}
	}
	return all
}
