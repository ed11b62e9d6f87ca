package path

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// opt_einsum's paths on the networks of the suite (goferro bench paths;
// bench/paths-vs-opt-einsum.py with opt_einsum 3.4.1.dev25, log10 FLOPs of
// its greedy path, which is deterministic).
var optEinsumGreedy = map[string]float64{
	"lattice_15x15": 9.34,
	"lattice_32x32": 15.97,
	"lattice_45x45": 21.07,
	"regular3_200":  16.08,
	"regular3_1000": 73.81,
}

// qualityNetwork builds a network of the suite by name.
func qualityNetwork(t testing.TB, name string) Network {
	var rows, cols, nt int
	if _, err := fmt.Sscanf(name, "lattice_%dx%d", &rows, &cols); err == nil {
		return Lattice(rows, cols, 2)
	}
	if _, err := fmt.Sscanf(name, "regular3_%d", &nt); err != nil {
		t.Fatalf("unknown network %s", name)
	}
	n, err := RandomRegular(nt, 3, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPathQuality: Greedy finds opt_einsum's greedy path (numpy's greedy,
// which it used to reproduce, costs 10^29.8 on the 45×45 lattice), and
// Auto, the default, does at least as well as Greedy and within a factor
// of 10 of opt_einsum's greedy on the networks of up to 300 tensors
// (issue 13).
func TestPathQuality(t *testing.T) {
	for name, ref := range optEinsumGreedy {
		n := qualityNetwork(t, name)
		g := mustCost(t, n, must(Greedy(n, Options{})))
		if d := g.Log10Flops() - ref; d > 0.01 || d < -0.01 {
			t.Errorf("%s: greedy 10^%.2f FLOPs, opt_einsum's greedy 10^%.2f", name, g.Log10Flops(), ref)
		}
		if len(n.Inputs) > 300 {
			continue // auto's test stays small; BenchmarkOptimizers has the rest
		}
		t0 := time.Now()
		a := mustCost(t, n, must(Auto(context.Background(), n, Options{})))
		t.Logf("%s: greedy 10^%.2f, auto 10^%.2f in %v; opt_einsum's greedy 10^%.2f", name, g.Log10Flops(), a.Log10Flops(), time.Since(t0), ref)
		if a.Log2Flops > g.Log2Flops+1e-9 || a.Log10Flops() > ref+1 {
			t.Errorf("%s: auto 10^%.2f FLOPs, greedy 10^%.2f, opt_einsum's greedy 10^%.2f", name, a.Log10Flops(), g.Log10Flops(), ref)
		}
	}
}

// BenchmarkOptimizers plans the networks of goferro bench paths (square
// lattices and random 3-regular graphs up to 5,000 tensors) with greedy,
// auto and search, and reports log10 of the FLOPs of each path:
//
//	go test ./einsum/path -run '^$' -bench Optimizers -benchtime 1x
func BenchmarkOptimizers(b *testing.B) {
	for _, name := range []string{"lattice_15x15", "lattice_32x32", "lattice_45x45", "lattice_70x70",
		"regular3_200", "regular3_1000", "regular3_2000", "regular3_5000"} {
		n := qualityNetwork(b, name)
		for _, opt := range []struct {
			name string
			run  func() (Path, error)
		}{
			{"greedy", func() (Path, error) { return Greedy(n, Options{}) }},
			{"auto", func() (Path, error) { return Auto(context.Background(), n, Options{}) }},
			{"search", func() (Path, error) { return Search(context.Background(), n, Options{}) }},
		} {
			b.Run(name+"/"+opt.name, func(b *testing.B) {
				var c Cost
				for range b.N {
					c = mustCost(b, n, must(opt.run()))
				}
				b.ReportMetric(c.Log10Flops(), "log10flops")
			})
		}
	}
}

// TestSingleFrontSweepsLattice: grown as a single front from its corner, an
// L×L lattice given row by row is swept row by row, whose largest
// intermediate has the L bonds below the rows done and the one to the
// right of the current site: 2^(L+1) elements, against 2^(1.5 L) or so
// for opt_einsum's greedy; Auto takes the sweep (10^17.9 FLOPs on a 45×45
// lattice against greedy's 10^21.1).
func TestSingleFrontSweepsLattice(t *testing.T) {
	for _, L := range []int{8, 12, 20} {
		n := Lattice(L, L, 2)
		pairs, err := greedyRun(&n, Options{}, greedyParams{alpha: 1, front: true, single: true})
		if err != nil {
			t.Fatal(err)
		}
		sweep := mustCost(t, n, Linear(len(n.Inputs), pairs))
		if sweep.Log2Largest != float64(L+1) {
			t.Errorf("%d×%d: largest intermediate 2^%v, want 2^%d", L, L, sweep.Log2Largest, L+1)
		}
		a := mustCost(t, n, must(Auto(context.Background(), n, Options{})))
		if a.Log2Flops > sweep.Log2Flops+1e-9 {
			t.Errorf("%d×%d: auto 2^%.2f FLOPs, the sweep 2^%.2f", L, L, a.Log2Flops, sweep.Log2Flops)
		}
	}
}
