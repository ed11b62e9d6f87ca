package path

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Cutting one label to every divisor of its size: sliceCosts gives the
// FLOPs and the elements above the limit that Evaluate gives for the path
// in the network with that label cut.
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
		sc, c, err := newSliceCosts(n, p)
		if err != nil {
			t.Fatal(err)
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
			t.Fatalf("%+v path %v: over %v, want %v", n, p, got, want)
		}
		for l, d := range n.Sizes {
			for _, size := range divisors(max(d, 1)) {
				cut := n
				cut.Sizes = append([]int(nil), n.Sizes...)
				cut.Sizes[l] = size
				want, err := Evaluate(cut, p)
				if err != nil {
					t.Fatal(err)
				}
				gotOver, gotFlops := sc.cut(l, d, size, limit)
				if gotOver != over(want) || math.Abs(gotFlops-want.Log2Flops) > 1e-9 {
					t.Fatalf("%+v path %v, label %d cut %d -> %d: over %v log2 FLOPs %v, Evaluate %v %v",
						n, p, l, d, size, gotOver, gotFlops, over(want), want.Log2Flops)
				}
			}
		}
	}
}
