package path

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// nestOrder's order costs the fewest FLOPs of every order of the labels,
// counted by trying each (the FLOPs it reports are those of its order).
func TestNestOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		m := 1 + r.IntN(5)
		steps := 1 + r.IntN(8)
		logFlops, masks := make([]float64, steps), make([]uint64, steps)
		for k := range steps {
			logFlops[k] = 10 * r.Float64()
			masks[k] = uint64(r.IntN(1 << m))
		}
		counts := make([]float64, m)
		for j := range counts {
			counts[j] = math.Log2(float64(2 + r.IntN(9)))
		}
		order, got := nestOrder(logFlops, masks, counts)
		if want := nestedFlops(logFlops, masks, counts, order); math.Abs(got-want) > 1e-9 {
			t.Fatalf("order %v: reported 2^%v FLOPs, it costs 2^%v", order, got, want)
		}
		best := math.Inf(1)
		for _, o := range permutations(m) {
			total := 0.0
			for k, f := range logFlops {
				level := 0
				for pos, j := range o {
					if masks[k]&(1<<j) != 0 {
						level = pos + 1
					}
				}
				for _, j := range o[:level] {
					f += counts[j]
				}
				total += math.Exp2(f)
			}
			best = min(best, math.Log2(total))
		}
		if math.Abs(got-best) > 1e-9 {
			t.Fatalf("flops %v masks %v counts %v: order %v costs 2^%v, the best 2^%v", logFlops, masks, counts, order, got, best)
		}
	}
}

// Two labels sliced, a of 3 blocks and b of 9, a step of 1000 FLOPs that
// depends on b alone and one of 10 that depends on both: b outermost runs
// the first 9 times (9,000 + 270 FLOPs), a outermost 27 times (27,000 +
// 270); with every step that depends on a sliced label in every slice, as
// before nesting, 27,270.
func TestNestOrderPutsTheExpensiveStepOutside(t *testing.T) {
	logFlops := []float64{math.Log2(1000), math.Log2(10)}
	masks := []uint64{0b10, 0b11}
	counts := []float64{math.Log2(3), math.Log2(9)}
	order, got := nestOrder(logFlops, masks, counts)
	if !slices.Equal(order, []int{1, 0}) || math.Abs(got-math.Log2(9270)) > 1e-9 {
		t.Errorf("order %v, 2^%v FLOPs; want [1 0], %v", order, got, 9270)
	}
}

// Levels of the chain a·b·c·d (labels 0..4) along ((ab)(cd)) with labels 4
// then 0 sliced: ab depends on 0 alone (level 2), cd on 4 alone (level
// 1), the last step on both (level 2); with 0 outermost ab is level 1.
func TestLevels(t *testing.T) {
	n := Network{Inputs: [][]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}}, Output: []int{0, 4}, Sizes: []int{2, 3, 4, 5, 6}}
	p := Path{{0, 1}, {0, 1}, {0, 1}}
	for _, c := range []struct {
		sliced, want []int
	}{
		{[]int{4, 0}, []int{2, 1, 2}},
		{[]int{0, 4}, []int{1, 2, 2}},
		{[]int{3}, []int{0, 1, 1}},
		{nil, []int{0, 0, 0}},
	} {
		if got, err := Levels(n, p, c.sliced); err != nil || !slices.Equal(got, c.want) {
			t.Errorf("sliced %v: levels %v (%v), want %v", c.sliced, got, err, c.want)
		}
	}
	if _, err := Levels(n, Path{{0, 7}}, nil); err == nil {
		t.Error("a path that does not fit: no error")
	}
}

// Slicing random networks: the FLOPs and peak Slice reports are those of
// its nested loops run one slice at a time (naiveLoops), and its order of
// the labels costs the fewest FLOPs (naiveNested tries every order), or
// with a write weight the least FLOPs and weighted writes of the slices'
// results.
func TestSliceNestedRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	nested := 0
	for i := range 60 {
		writes := float64(64 * (i % 2))
		n := randomNetwork(r, 4+r.IntN(6))
		for l := range n.Sizes {
			n.Sizes[l] = []int{2, 3, 4, 6}[r.IntN(4)]
		}
		p, err := Greedy(n, Options{})
		if err != nil {
			t.Fatal(err)
		}
		big, _, _ := largest(n, p)
		s, err := Slice(context.Background(), n, p, max(1, big/8), Options{Trials: 8, WriteWeight: writes})
		if err != nil || len(s.Labels) == 0 {
			continue
		}
		nested += min(len(s.Labels)-1, 1)
		peak, flops := naiveLoops(t, n, s)
		if s.Peak != peak || math.Abs(s.Log2Flops-math.Log2(flops)) > 1e-9 {
			t.Fatalf("%+v sliced %v/%v: peak %v FLOPs %v, the loops %v %v", n, s.Labels, s.Sizes, s.Peak, s.Flops, peak, flops)
		}
		if want := naiveNested(t, n, s, s.Path, writes); math.Abs(s.log2Cost-want) > 1e-9 {
			t.Fatalf("%+v sliced %v/%v, write weight %v: cost 2^%v, the best order 2^%v", n, s.Labels, s.Sizes, writes, s.log2Cost, want)
		}
	}
	if nested < 5 {
		t.Errorf("only %d slicings of more than one label", nested)
	}
}
