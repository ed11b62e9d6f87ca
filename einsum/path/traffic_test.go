package path

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// naiveTraffic is the weighted objective of a path computed step by step
// from Evaluate: its FLOPs, plus ww times the elements every step writes,
// plus rw times the elements of every operand every step reads.
func naiveTraffic(t testing.TB, n Network, p Path, ww, rw float64) float64 {
	t.Helper()
	c := mustCost(t, n, p)
	var sizes []float64 // the live terms, in linear-path order
	for _, in := range n.Inputs {
		s := 1.0
		for _, l := range in {
			s *= float64(n.Sizes[l])
		}
		sizes = append(sizes, s)
	}
	total := 0.0
	for i, step := range p {
		total += c.Steps[i].Flops + ww*c.Steps[i].Size
		pos := slices.Sorted(slices.Values(step))
		for j := len(pos) - 1; j >= 0; j-- {
			total += rw * sizes[pos[j]]
			sizes = slices.Delete(sizes, pos[j], pos[j]+1)
		}
		sizes = append(sizes, c.Steps[i].Size)
	}
	return total
}

// bruteForceTraffic returns the least naiveTraffic over every pairwise
// order.
func bruteForceTraffic(t testing.TB, n Network, ww, rw float64) float64 {
	best := math.Inf(1)
	var rec func(p Path, m int)
	rec = func(p Path, m int) {
		if m == 1 {
			best = min(best, naiveTraffic(t, n, p, ww, rw))
			return
		}
		for i := 0; i < m; i++ {
			for j := i + 1; j < m; j++ {
				rec(append(slices.Clone(p), []int{i, j}), m-1)
			}
		}
	}
	rec(nil, len(n.Inputs))
	return best
}

var trafficWeights = [][2]float64{{0, 64}, {64, 64}, {3, 100}}

// TestOptimalCountsTraffic checks Optimal's objective with write and read
// weights against brute force over every pairwise order.
func TestOptimalCountsTraffic(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for trial := 0; trial < 60; trial++ {
		n := randomNetwork(r, 2+r.IntN(5))
		for _, w := range trafficWeights {
			o := Options{WriteWeight: w[0], ReadWeight: w[1]}
			got := naiveTraffic(t, n, must(Optimal(context.Background(), n, o)), w[0], w[1])
			if best := bruteForceTraffic(t, n, w[0], w[1]); got > best*(1+1e-9) {
				t.Fatalf("%+v, weights %v: optimal path costs %g, brute force %g", n, w, got, best)
			}
		}
	}
}

// TestTreeCostCountsTraffic checks the score Search and Auto rank trees
// by against the step-by-step objective.
func TestTreeCostCountsTraffic(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for trial := 0; trial < 40; trial++ {
		n := graphNetwork(r, 3+r.IntN(30))
		p, err := RandomGreedy(context.Background(), n, Options{Trials: 1, Seed: r.Uint64()})
		if err != nil {
			t.Fatal(err)
		}
		pairs, err := pairsOf(len(n.Inputs), p)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range trafficWeights {
			_, _, score := newTree(&n, pairs).cost(w[0], w[1])
			if want := naiveTraffic(t, n, p, w[0], w[1]); math.Abs(math.Exp2(score)-want) > 1e-9*want {
				t.Fatalf("%+v, path %v, weights %v: tree score %g, step by step %g", n, p, w, math.Exp2(score), want)
			}
		}
	}
}

// TestReconfigureCountsTraffic checks that reconfiguring a whole tree
// (Subtree as large as the network) under write and read weights reaches
// the weighted optimum.
func TestReconfigureCountsTraffic(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	for trial := 0; trial < 60; trial++ {
		n := randomNetwork(r, 3+r.IntN(4))
		// From the path with the fewest FLOPs too: the weighted optimum
		// may have more.
		starts := []Path{must(Greedy(n, Options{})), must(Optimal(context.Background(), n, Options{}))}
		for _, w := range trafficWeights {
			best := bruteForceTraffic(t, n, w[0], w[1])
			for _, start := range starts {
				o := Options{WriteWeight: w[0], ReadWeight: w[1], Subtree: MaxOptimal}
				p, err := Reconfigure(context.Background(), n, start, o)
				if err != nil {
					t.Fatal(err)
				}
				if got := naiveTraffic(t, n, p, w[0], w[1]); got > best*(1+1e-9) {
					t.Fatalf("%+v, weights %v: path %v reconfigured to %v costs %g, brute force %g", n, w, start, p, got, best)
				}
			}
		}
	}
}
