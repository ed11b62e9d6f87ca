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

func mustCost(t testing.TB, n Network, p Path) Cost {
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
		if got, best := mustCost(t, n, p).Flops, mustCost(t, n, must(Optimal(context.Background(), n, Options{}))).Flops; got > best*(1+1e-9) {
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
	b := newBisector(context.Background(), &n, rand.New(rand.NewPCG(1, 2)), Options{})
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
		pairs, ok := eliminationRun(context.Background(), &n, Options{}, r, r.Float64())
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
	pairs, _ := eliminationRun(context.Background(), &grid, Options{}, nil, 0)
	c := mustCost(t, grid, Linear(len(grid.Inputs), pairs))
	// Min-degree on a 4×4 grid has width at most 5: intermediates of at
	// most 2^5 elements.
	if c.LargestIntermediate > 32 {
		t.Fatalf("largest intermediate %g, want at most 32", c.LargestIntermediate)
	}
	if _, ok := eliminationRun(context.Background(), &grid, Options{MemoryLimit: 2}, nil, 0); ok {
		t.Fatal("a memory limit of 2 elements should not be met")
	}
}

// TestMemoryLimitKeepsFreePath: a memory limit that the unconstrained path
// already meets changes nothing. On a 10×10 lattice the optimizers used to
// fail with ErrMemoryLimit at limits up to 8 times the unconstrained
// path's largest intermediate (issue 13).
func TestMemoryLimitKeepsFreePath(t *testing.T) {
	n := Lattice(10, 10, 2)
	ctx := context.Background()
	for name, opt := range map[string]func(Options) (Path, error){
		"greedy": func(o Options) (Path, error) { return Greedy(n, o) },
		"auto":   func(o Options) (Path, error) { return Auto(ctx, n, o) },
		"search": func(o Options) (Path, error) {
			o.Trials, o.Time = 6, time.Minute
			return Search(ctx, n, o)
		},
	} {
		free, err := opt(Options{})
		if err != nil {
			t.Fatal(err)
		}
		big, _, _ := largest(n, free)
		for _, f := range []float64{1, 2, 4, 8} {
			p, err := opt(Options{MemoryLimit: f * big})
			if err != nil {
				t.Fatalf("%s, limit %g (free path's largest intermediate %g): %v", name, f*big, big, err)
			}
			if name != "search" && p.String() != free.String() {
				t.Errorf("%s, limit %g: the path changed though the free one fits", name, f*big)
			}
			if got, _, _ := largest(n, p); got > f*big {
				t.Errorf("%s, limit %g: intermediate of %g elements", name, f*big, got)
			}
		}
		// Below the free path's largest intermediate, a path within the
		// limit or ErrMemoryLimit, never another error.
		p, err := opt(Options{MemoryLimit: big / 2})
		switch {
		case errors.Is(err, ErrMemoryLimit):
		case err != nil:
			t.Fatalf("%s, limit %g: %v", name, big/2, err)
		default:
			if got, _, _ := largest(n, p); got > big/2 {
				t.Errorf("%s, limit %g: intermediate of %g elements", name, big/2, got)
			}
		}
	}
}

// TestAutoBudgetIsWork: Auto's result does not depend on time: its
// reconfiguration is bounded by a count of subtree solves, so a time
// option (which bounded it before, making Auto differ from run to run on
// thousands of tensors; issue 13) changes nothing.
func TestAutoBudgetIsWork(t *testing.T) {
	g, err := RandomRegular(300, 3, 2, 7)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []Network{g, Lattice(16, 16, 2)} {
		a := must(Auto(context.Background(), n, Options{Time: time.Nanosecond}))
		b := must(Auto(context.Background(), n, Options{Time: time.Minute}))
		if a.String() != b.String() {
			t.Errorf("%d inputs: Auto gives different paths within 1 ns (%.2f log10 FLOPs) and 1 min (%.2f)",
				len(n.Inputs), mustCost(t, n, a).Log10Flops(), mustCost(t, n, b).Log10Flops())
		}
	}
}

// TestCostsBeyondFloat64: paths whose FLOPs pass float64's range (10^308)
// are still told apart: a chain whose two orders cost 2^993 + 2^1241 and
// 2^1241 + 2^1365 FLOPs, and a regular graph of 100 tensors with bonds of 2^40, where
// every optimizer must do at least as well as greedy by log2 FLOPs. The
// costs used to overflow to +Inf, which the optimizers took for paths
// that do not exist (issue 13).
func TestCostsBeyondFloat64(t *testing.T) {
	// Groups X, Y, Z, W of 6, 6, 4 and 10 labels of 2^62: A(X,Y) B(Y,Z) C(Z,W).
	var n Network
	group := func(k int) []int {
		var g []int
		for range k {
			g = append(g, len(n.Sizes))
			n.Sizes = append(n.Sizes, 1<<62)
		}
		return g
	}
	x, y, z, w := group(6), group(6), group(4), group(10)
	n.Inputs = [][]int{slices.Concat(x, y), slices.Concat(y, z), slices.Concat(z, w)}
	n.Output = slices.Concat(x, w)
	// (AB)C: X·Y·Z·2 + X·Z·W·2 = 2^993 + 2^1241 (Y and Z are summed away).
	want := 1241 + math.Log2(1+math.Exp2(993-1241))
	c := mustCost(t, n, Path{{0, 1}, {0, 1}})
	if !math.IsInf(c.Flops, 1) || math.Abs(c.Log2Flops-want) > 1e-9 || math.Abs(c.Log10Flops()-want*math.Log10(2)) > 1e-9 {
		t.Fatalf("cost %g, log2 %v, log10 %v; want +Inf, %v", c.Flops, c.Log2Flops, c.Log10Flops(), want)
	}
	p, err := Optimal(context.Background(), n, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := mustCost(t, n, p).Log2Flops; math.Abs(got-want) > 1e-9 {
		t.Fatalf("optimal path %v costs 2^%v, want 2^%v", p, got, want)
	}

	g, err := RandomRegular(100, 3, 1<<40, 3)
	if err != nil {
		t.Fatal(err)
	}
	gc := mustCost(t, g, must(Greedy(g, Options{})))
	if !math.IsInf(gc.Flops, 1) {
		t.Fatalf("greedy costs %g FLOPs; the test needs more than float64 holds", gc.Flops)
	}
	for name, opt := range map[string]func() (Path, error){
		"auto":   func() (Path, error) { return Auto(context.Background(), g, Options{}) },
		"random": func() (Path, error) { return RandomGreedy(context.Background(), g, Options{Trials: 8}) },
		"search": func() (Path, error) {
			return Search(context.Background(), g, Options{Trials: 8, Time: time.Minute})
		},
		"reconfigure": func() (Path, error) {
			return Reconfigure(context.Background(), g, must(Greedy(g, Options{})), Options{})
		},
	} {
		p, err := opt()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if c := mustCost(t, g, p); c.Log2Flops > gc.Log2Flops+1e-9 {
			t.Errorf("%s: 2^%.1f FLOPs, greedy 2^%.1f", name, c.Log2Flops, gc.Log2Flops)
		} else {
			t.Logf("%s: 10^%.1f FLOPs, greedy 10^%.1f", name, c.Log10Flops(), gc.Log10Flops())
		}
	}
}

// objective returns log2 of p's cost by o's objective (FLOPs plus the
// weighted writes and reads), as Search ranks trees.
func objective(t testing.TB, n Network, p Path, o Options) float64 {
	t.Helper()
	pairs, err := pairsOf(len(n.Inputs), p)
	if err != nil {
		t.Fatal(err)
	}
	return treeCandidate(newTree(&n, pairs), nil, o).score
}

// TestSearchOptimalUpTo12: Search's last pass reorders subtrees of 12
// leaves, which on a network of up to 12 inputs is the whole tree, so
// there Search finds Optimal's cost, by FLOPs alone and with a write
// weight, whatever its candidates (issue 19), when no TimeModel is set.
// With DefaultTimeModel, Search may return a tree up to rerankSlack
// dearer that the model predicts faster.
func TestSearchOptimalUpTo12(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for trial := 0; trial < 40; trial++ {
		n := graphNetwork(r, 9+r.IntN(4))
		for _, ww := range []float64{0, 64} {
			o := Options{Trials: 3, Seed: uint64(trial), Time: time.Minute, WriteWeight: ww}
			best := objective(t, n, must(Optimal(context.Background(), n, o)), o)
			for _, m := range []*TimeModel{nil, &DefaultTimeModel} {
				o.Model = m
				got := objective(t, n, must(Search(context.Background(), n, o)), o)
				if slack := math.Log2(rerankSlack); m == nil && got > best+1e-9 || got > best+slack+1e-9 {
					t.Fatalf("trial %d, write weight %g, model %v: Search's path costs 2^%.4f, Optimal's 2^%.4f", trial, ww, m, got, best)
				}
			}
		}
	}
}
