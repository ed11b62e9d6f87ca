package path

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// graphNetwork is a random connected network of nt tensors: a random tree
// of bonds plus extra bonds, some labels shared by three or four tensors
// (hyperedges), a few open labels, sizes 2 to 6.
func graphNetwork(r *rand.Rand, nt int) Network {
	var n Network
	label := func(size int, ts ...int) {
		l := len(n.Sizes)
		n.Sizes = append(n.Sizes, size)
		for _, t := range ts {
			if !slices.Contains(n.Inputs[t], l) {
				n.Inputs[t] = append(n.Inputs[t], l)
			}
		}
	}
	n.Inputs = make([][]int, nt)
	for t := 1; t < nt; t++ {
		label(2+r.IntN(5), t, r.IntN(t))
	}
	for range nt / 2 {
		label(2+r.IntN(5), r.IntN(nt), r.IntN(nt))
	}
	for range nt / 8 {
		label(2+r.IntN(3), r.IntN(nt), r.IntN(nt), r.IntN(nt), r.IntN(nt))
	}
	for range 2 {
		label(2+r.IntN(3), r.IntN(nt))
		n.Output = append(n.Output, len(n.Sizes)-1)
	}
	return n
}

func mustCost(t *testing.T, n Network, p Path) Cost {
	t.Helper()
	c, err := Evaluate(n, p)
	if err != nil {
		t.Fatalf("path %v: %v", p, err)
	}
	return c
}

func TestReconfigureFindsOptimum(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for trial := 0; trial < 80; trial++ {
		n := randomNetwork(r, 3+r.IntN(8))
		g := must(Greedy(n, Options{}))
		// A subtree as large as the network is the whole tree.
		p, err := Reconfigure(context.Background(), n, g, Options{Subtree: MaxOptimal})
		if err != nil {
			t.Fatal(err)
		}
		// Optimal agrees with brute force (TestOptimalIsOptimal).
		if got, best := mustCost(t, n, p).Flops, mustCost(t, n, must(Optimal(n, Options{}))).Flops; got > best*(1+1e-9) {
			t.Fatalf("%+v: reconfigured %g flops, optimum %g", n, got, best)
		}
	}
}

func TestReconfigureNeverWorse(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 40; trial++ {
		n := graphNetwork(r, 10+r.IntN(40))
		for _, k := range []int{0, 3, 6} {
			start, err := RandomGreedy(context.Background(), n, Options{Trials: 1 + r.IntN(20), Seed: r.Uint64()})
			if err != nil {
				t.Fatal(err)
			}
			p, err := Reconfigure(context.Background(), n, start, Options{Subtree: k})
			if err != nil {
				t.Fatal(err)
			}
			if before, after := mustCost(t, n, start), mustCost(t, n, p); after.Flops > before.Flops*(1+1e-9) {
				t.Fatalf("k=%d: reconfiguration raised FLOPs from %g to %g", k, before.Flops, after.Flops)
			}
			if len(p) != len(n.Inputs)-1 {
				t.Fatalf("%d steps for %d inputs", len(p), len(n.Inputs))
			}
		}
	}
}

func TestReconfigureSplitsWideSteps(t *testing.T) {
	n := chain()
	p, err := Reconfigure(context.Background(), n, Path{{2, 1, 0}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c := mustCost(t, n, p); c.Flops != 840 {
		t.Fatalf("path %v: %g flops, want the optimal 840", p, c.Flops)
	}
	if _, err := Reconfigure(context.Background(), n, Path{{0, 1}}, Options{}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("unfinished path: %v", err)
	}
}

func TestSearchBeatsGreedy(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := 0; trial < 25; trial++ {
		n := graphNetwork(r, 10+r.IntN(50))
		g := must(Greedy(n, Options{}))
		for _, opt := range []func() (Path, error){
			func() (Path, error) {
				return Search(context.Background(), n, Options{Trials: 16, Seed: uint64(trial), Time: time.Minute})
			},
			func() (Path, error) { return Auto(context.Background(), n, Options{}) },
		} {
			p, err := opt()
			if err != nil {
				t.Fatal(err)
			}
			if gc, sc := mustCost(t, n, g), mustCost(t, n, p); sc.Flops > gc.Flops*(1+1e-9) {
				t.Fatalf("%g flops, greedy %g", sc.Flops, gc.Flops)
			}
		}
	}
}

func TestSearchDeterministic(t *testing.T) {
	n := graphNetwork(rand.New(rand.NewPCG(1, 1)), 60)
	checkDeterministic(t, Search, n, Options{Trials: 12, Seed: 3, Time: time.Minute})
	c, _ := Auto(context.Background(), n, Options{})
	d, _ := Auto(context.Background(), n, Options{})
	if c.String() != d.String() {
		t.Fatal("Auto is not deterministic")
	}
}

func TestSearchMemoryLimit(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for trial := 0; trial < 20; trial++ {
		n := graphNetwork(r, 20+r.IntN(30))
		free := mustCost(t, n, must(Search(context.Background(), n, Options{Trials: 8, Seed: 1})))
		limit := free.LargestIntermediate / 4
		for name, opt := range map[string]func() (Path, error){
			"search": func() (Path, error) {
				return Search(context.Background(), n, Options{Trials: 8, Seed: 1, MemoryLimit: limit})
			},
			"auto": func() (Path, error) { return Auto(context.Background(), n, Options{MemoryLimit: limit}) },
		} {
			p, err := opt()
			if errors.Is(err, ErrMemoryLimit) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			c := mustCost(t, n, p)
			for _, s := range c.Steps[:len(c.Steps)-1] {
				if s.Size > limit {
					t.Fatalf("%s: intermediate of %g elements, limit %g", name, s.Size, limit)
				}
			}
		}
	}
}

// checkDeterministic runs opt twice with the same options and fails unless
// both runs find the same path.
func checkDeterministic(t *testing.T, opt func(context.Context, Network, Options) (Path, error), n Network, o Options) {
	t.Helper()
	a, err := opt(context.Background(), n, o)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := opt(context.Background(), n, o)
	if a.String() != b.String() {
		t.Fatalf("same seed, different paths:\n%v\n%v", a, b)
	}
}

func must(p Path, err error) Path {
	if err != nil {
		panic(err)
	}
	return p
}

func TestSearchMinimizeSize(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for trial := 0; trial < 10; trial++ {
		n := graphNetwork(r, 30)
		flops := mustCost(t, n, must(Search(context.Background(), n, Options{Trials: 16, Seed: 2})))
		size := mustCost(t, n, must(Search(context.Background(), n, Options{Trials: 16, Seed: 2, Minimize: "size"})))
		if size.LargestIntermediate > flops.LargestIntermediate {
			t.Fatalf("minimizing size gave %g elements, minimizing FLOPs %g", size.LargestIntermediate, flops.LargestIntermediate)
		}
	}
}

func TestSearchCanceled(t *testing.T) {
	n := graphNetwork(rand.New(rand.NewPCG(2, 2)), 300)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	t0 := time.Now()
	p, err := Search(ctx, n, Options{Trials: 1000, Time: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	mustCost(t, n, p)
	if d := time.Since(t0); d > 5*time.Second {
		t.Fatalf("a canceled search took %v", d)
	}
}

// TestBisectCutsThinBond: two dense clusters joined by one bond of size 2
// are split along that bond.
func TestBisectCutsThinBond(t *testing.T) {
	var n Network
	n.Inputs = make([][]int, 12)
	bond := func(size, a, b int) {
		n.Inputs[a] = append(n.Inputs[a], len(n.Sizes))
		n.Inputs[b] = append(n.Inputs[b], len(n.Sizes))
		n.Sizes = append(n.Sizes, size)
	}
	for c := 0; c < 2; c++ {
		for i := 0; i < 6; i++ {
			for j := i + 1; j < 6; j++ {
				bond(8, 6*c+i, 6*c+j)
			}
		}
	}
	bond(2, 0, 6)
	b := newBisector(&n, rand.New(rand.NewPCG(1, 2)), Options{})
	b.imbalance = 0.3
	all := make([]int, 12)
	for i := range all {
		all[i] = i
	}
	for trial := 0; trial < 20; trial++ {
		l, r := b.split(all)
		slices.Sort(l)
		slices.Sort(r)
		if !(slices.Equal(l, []int{0, 1, 2, 3, 4, 5}) && slices.Equal(r, []int{6, 7, 8, 9, 10, 11}) ||
			slices.Equal(r, []int{0, 1, 2, 3, 4, 5}) && slices.Equal(l, []int{6, 7, 8, 9, 10, 11})) {
			t.Fatalf("split %v | %v, want the two clusters", l, r)
		}
	}
}

// TestSearchOddNetworks: disconnected networks, labels of extent 0 and 1,
// scalars and outer products all get valid paths no worse than greedy's.
func TestSearchOddNetworks(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for trial := 0; trial < 300; trial++ {
		n := randomNetwork(r, 3+r.IntN(12))
		for l := range n.Sizes {
			if r.IntN(10) == 0 {
				n.Sizes[l] = r.IntN(2) // 0 or 1
			}
		}
		if r.IntN(5) == 0 {
			n.Inputs = append(n.Inputs, []int{}) // a scalar
		}
		g, err := Greedy(n, Options{})
		if err != nil {
			t.Fatal(err)
		}
		gc := mustCost(t, n, g)
		for name, opt := range map[string]func() (Path, error){
			"search": func() (Path, error) {
				return Search(context.Background(), n, Options{Trials: 6, Seed: uint64(trial), Time: time.Minute})
			},
			"auto":        func() (Path, error) { return Auto(context.Background(), n, Options{}) },
			"reconfigure": func() (Path, error) { return Reconfigure(context.Background(), n, g, Options{Subtree: 4}) },
		} {
			p, err := opt()
			if err != nil {
				t.Fatalf("%s on %+v: %v", name, n, err)
			}
			if c := mustCost(t, n, p); c.Flops > gc.Flops*(1+1e-9) {
				t.Fatalf("%s on %+v: %g flops, greedy %g", name, n, c.Flops, gc.Flops)
			}
		}
	}
}

// TestEliminationOrder: variable elimination gives valid trees, keeps the
// intermediates of a graphical model (pairwise factors on a 4×4 grid of
// binary variables) within the width of the grid, and reports a memory
// limit it cannot meet.
func TestEliminationOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for trial := 0; trial < 50; trial++ {
		n := graphNetwork(r, 5+r.IntN(40))
		pairs, ok := eliminationRun(&n, Options{}, r, r.Float64())
		if !ok {
			t.Fatal("no tree without a memory limit")
		}
		mustCost(t, n, Linear(len(n.Inputs), pairs))
	}
	var grid Network
	v := func(i, j int) int { return 4*i + j }
	for range 16 {
		grid.Sizes = append(grid.Sizes, 2)
	}
	for i := 0; i < 4; i++ {
		for j := 0; j < 4; j++ {
			if i+1 < 4 {
				grid.Inputs = append(grid.Inputs, []int{v(i, j), v(i+1, j)})
			}
			if j+1 < 4 {
				grid.Inputs = append(grid.Inputs, []int{v(i, j), v(i, j+1)})
			}
		}
	}
	pairs, _ := eliminationRun(&grid, Options{}, nil, 0)
	c := mustCost(t, grid, Linear(len(grid.Inputs), pairs))
	// Min-degree on a 4×4 grid has width at most 5: intermediates of at
	// most 2^5 elements.
	if c.LargestIntermediate > 32 {
		t.Fatalf("largest intermediate %g, want at most 32", c.LargestIntermediate)
	}
	if _, ok := eliminationRun(&grid, Options{MemoryLimit: 2}, nil, 0); ok {
		t.Fatal("a memory limit of 2 elements should not be met")
	}
}
