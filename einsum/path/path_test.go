package path

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// chain is A(a,b)·B(b,c)·C(c,d) with a=2, b=30, c=3, d=40.
func chain() Network {
	return Network{Inputs: [][]int{{0, 1}, {1, 2}, {2, 3}}, Output: []int{0, 3}, Sizes: []int{2, 30, 3, 40}}
}

func TestEvaluate(t *testing.T) {
	n := chain()
	// (A·B)·C: 2·30·3·2 + 2·3·40·2 = 360 + 480.
	c, err := Evaluate(n, Path{{0, 1}, {0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Flops != 840 || c.LargestIntermediate != 80 {
		t.Fatalf("cost %+v", c)
	}
	// A·(B·C): 30·3·40·2 + 2·30·40·2.
	c, _ = Evaluate(n, Path{{1, 2}, {0, 1}})
	if c.Flops != 7200+4800 || c.LargestIntermediate != 1200 {
		t.Fatalf("cost %+v", c)
	}
	for _, bad := range []Path{{{0, 1}}, {{0, 3}, {0, 1}}, {{0, 0}, {0, 1}}, {{}, {0, 1}}} {
		if _, err := Evaluate(n, bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("Evaluate(%v) = %v, want ErrInvalid", bad, err)
		}
	}
	if _, err := Evaluate(Network{Inputs: [][]int{{0, 0}}, Sizes: []int{2}}, Path{{0}}); !errors.Is(err, ErrInvalid) {
		t.Errorf("repeated label: %v", err)
	}
}

func TestOptimalIsOptimal(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 60; trial++ {
		n := randomNetwork(r, 2+r.IntN(5))
		c := mustCost(t, n, must(Optimal(context.Background(), n, Options{})))
		best := bruteForce(n)
		if c.Flops > best*(1+1e-9) {
			t.Fatalf("%+v: optimal %g flops, brute force %g", n, c.Flops, best)
		}
		for _, f := range []func(Network) (Path, error){
			func(n Network) (Path, error) { return Greedy(n, Options{}) },
			func(n Network) (Path, error) {
				return RandomGreedy(context.Background(), n, Options{Trials: 8, Seed: 5, Time: time.Second})
			},
		} {
			p, err := f(n)
			if err != nil {
				t.Fatal(err)
			}
			if c, err := Evaluate(n, p); err != nil || c.Flops < best*(1-1e-9) {
				t.Fatalf("greedy path %v: %v (flops %g below optimum %g)", p, err, c.Flops, best)
			}
		}
	}
}

func randomNetwork(r *rand.Rand, nt int) Network {
	nl := 2 + r.IntN(6)
	n := Network{Sizes: make([]int, nl)}
	for l := range n.Sizes {
		n.Sizes[l] = 1 + r.IntN(5)
	}
	used := map[int]bool{}
	for t := 0; t < nt; t++ {
		var in []int
		for _, l := range r.Perm(nl)[:min(nl, 1+r.IntN(3))] {
			in = append(in, l)
			used[l] = true
		}
		n.Inputs = append(n.Inputs, in)
	}
	for l := range used {
		if r.IntN(3) == 0 {
			n.Output = append(n.Output, l)
		}
	}
	slices.Sort(n.Output)
	return n
}

// bruteForce returns the fewest FLOPs over every pairwise order.
func bruteForce(n Network) float64 {
	best := math.Inf(1)
	var rec func(p Path, m int)
	rec = func(p Path, m int) {
		if m == 1 {
			if c, err := Evaluate(n, p); err == nil {
				best = min(best, c.Flops)
			}
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

func TestMemoryLimit(t *testing.T) {
	n := chain()
	p, err := Optimal(context.Background(), n, Options{MemoryLimit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := Evaluate(n, p); c.LargestIntermediate > 100 && len(p) > 1 {
		t.Fatalf("path %v exceeds the limit", p)
	}
	four := Network{Inputs: [][]int{{0, 1}, {1, 2}, {2, 3}, {3, 0}}, Sizes: []int{8, 8, 8, 8}}
	if _, err := Optimal(context.Background(), four, Options{MemoryLimit: 4}); !errors.Is(err, ErrMemoryLimit) {
		t.Fatalf("optimal: %v, want ErrMemoryLimit", err)
	}
	if _, err := Greedy(four, Options{MemoryLimit: 4}); !errors.Is(err, ErrMemoryLimit) {
		t.Fatalf("greedy: %v, want ErrMemoryLimit", err)
	}
	big := Network{Sizes: []int{2}}
	for i := 0; i <= MaxOptimal; i++ {
		big.Inputs = append(big.Inputs, []int{0})
	}
	if _, err := Optimal(context.Background(), big, Options{}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("too large: %v", err)
	}
}

func TestRandomGreedyDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	n := randomNetwork(r, 12)
	checkDeterministic(t, RandomGreedy, n, Options{Trials: 20, Seed: 42, Time: 10 * time.Second})
	if s := (Path{{0, 1}, {0, 1}}).String(); s != "[[0,1],[0,1]]" {
		t.Fatalf("String %q", s)
	}
}
