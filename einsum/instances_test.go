package einsum_test

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/einsum/instance"
	"github.com/goferro/goferro/einsum/path"
)

// instanceDir finds shared/einsum-instances from the repository or the
// workspace.
func instanceDir(t testing.TB) string {
	for _, d := range []string{"../shared/einsum-instances", "../../shared/einsum-instances", "/work/shared/einsum-instances"} {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			return d
		}
	}
	t.Skip("shared/einsum-instances not found")
	return ""
}

func loadInstances(t testing.TB) []*instance.Instance {
	out, err := instance.LoadDir(instanceDir(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 19 {
		t.Fatalf("found %d instances, want 19", len(out))
	}
	return out
}

// flopsConventionMatches: the bin_* files count one FLOP per multiply-add
// and nary_matmul_chain_64 stores a wrong value (see the README).
func flopsConventionMatches(name string) bool {
	return !strings.HasPrefix(name, "bin_") && !strings.HasPrefix(name, "nary_")
}

func TestInstancesStoredPaths(t *testing.T) {
	for _, in := range loadInstances(t) {
		for _, strat := range in.PathNames() {
			sp := in.Paths[strat]
			p, err := einsum.NewPlan(in.Equation(), in.Shapes, einsum.WithPath(sp.Path))
			if err != nil {
				t.Errorf("%s %s: %v", in.Name, strat, err)
				continue
			}
			if d := math.Abs(p.Log2Size() - sp.Log2Size); d > 1e-3 {
				t.Errorf("%s %s: log2_size %.4f, stored %.4f", in.Name, strat, p.Log2Size(), sp.Log2Size)
			}
			if flopsConventionMatches(in.Name) {
				if d := math.Abs(p.Log10Flops() - sp.Log10Flops); d > 1e-3 {
					t.Errorf("%s %s: log10_flops %.4f, stored %.4f", in.Name, strat, p.Log10Flops(), sp.Log10Flops)
				}
			}
			if len(p.Steps) != len(sp.Path) {
				t.Errorf("%s %s: %d steps for a %d-step path", in.Name, strat, len(p.Steps), len(sp.Path))
			}
		}
	}
}

// TestInstancesOptimizers checks the path optimizers on every instance
// against its stored opt_flops path, with FLOPs counted the same way for
// both (the stored log10_flops of bin_* and nary_* use other conventions):
// Search (with the default write weight and with FLOPs alone) and Auto
// must come within 10x, in under 2 s; Greedy within 10^2.5.
func TestInstancesOptimizers(t *testing.T) {
	for _, in := range loadInstances(t) {
		ref, err := einsum.NewPlan(in.Equation(), in.Shapes, einsum.WithPath(in.Paths["opt_flops"].Path))
		if err != nil {
			t.Fatal(err)
		}
		for _, opt := range []string{einsum.OptimizeSearch, "search-flops", einsum.OptimizeAuto, einsum.OptimizeGreedy} {
			slack := 1.0
			if opt == einsum.OptimizeGreedy {
				slack = 2.5
			}
			opts := []einsum.Option{einsum.WithOptimizer(opt), einsum.WithSearch(0, time.Second, 1)}
			if opt == "search-flops" {
				opts = []einsum.Option{einsum.WithOptimizer(einsum.OptimizeSearch), einsum.WithWriteWeight(0), einsum.WithSearch(0, time.Second, 1)}
			}
			t0 := time.Now()
			p, err := einsum.NewPlan(in.Equation(), in.Shapes, opts...)
			took := time.Since(t0)
			if err != nil {
				t.Errorf("%s %s: %v", in.Name, opt, err)
				continue
			}
			t.Logf("%-52s %-12s log10_flops %.4f (stored path %.4f) log2_size %.2f in %v", in.Name, opt, p.Log10Flops(), ref.Log10Flops(), p.Log2Size(), took.Round(time.Millisecond))
			if p.Log10Flops() > ref.Log10Flops()+slack {
				t.Errorf("%s %s: log10_flops %.4f, more than %.1f above the stored path's %.4f", in.Name, opt, p.Log10Flops(), slack, ref.Log10Flops())
			}
			if opt != einsum.OptimizeGreedy && took > 2*time.Second {
				t.Errorf("%s %s: planning took %v, want under 2 s", in.Name, opt, took)
			}
		}
	}
}

// pathObjective is the cost Search minimizes for a plan's path with write
// weight ww: its FLOPs plus ww times the elements of every step's result.
func pathObjective(t *testing.T, p *einsum.Plan, ww float64) float64 {
	t.Helper()
	c, err := path.Evaluate(path.Network{Inputs: p.Inputs, Output: p.Output, Sizes: p.Sizes}, p.Path)
	if err != nil {
		t.Fatal(err)
	}
	cost := c.Flops
	for _, s := range c.Steps {
		cost += ww * s.Size
	}
	return cost
}

// TestSearchSentence4 (issue 19): on lm_batch_likelihood_sentence_4_4d,
// Search's paths had 10^8.47–8.70 FLOPs against the stored path's
// 10^8.464, and ran up to 1.35× slower: it ranked its candidates before
// reconfiguring them, and the tree that ends cheapest starts among the
// dearest. Bounded by trials, not time, so that the test is deterministic,
// it must reach the stored path's FLOPs when it minimizes FLOPs (without
// the time model, which prefers paths of 10^8.51 FLOPs, as the default
// write weight does), and the stored path's cost (FLOPs and writes) with
// the default write weight.
func TestSearchSentence4(t *testing.T) {
	in, err := instance.Load(filepath.Join(instanceDir(t), "lm_batch_likelihood_sentence_4_4d.json"))
	if err != nil {
		t.Fatal(err)
	}
	stored, err := einsum.NewPlan(in.Equation(), in.Shapes, einsum.WithPath(in.Paths["opt_flops"].Path))
	if err != nil {
		t.Fatal(err)
	}
	for seed := range uint64(3) {
		for _, ww := range []float64{0, einsum.DefaultWriteWeight} {
			opts := []einsum.Option{einsum.WithOptimizer(einsum.OptimizeSearch), einsum.WithWriteWeight(ww),
				einsum.WithSearch(path.DefaultSearchTrials, time.Hour, seed)}
			if ww == 0 {
				opts = append(opts, einsum.WithTimeModel(nil))
			}
			p, err := einsum.NewPlan(in.Equation(), in.Shapes, opts...)
			if err != nil {
				t.Fatal(err)
			}
			got, want := pathObjective(t, p, ww), pathObjective(t, stored, ww)
			t.Logf("seed %d, write weight %g: log10 FLOPs %.4f (stored %.4f), cost 10^%.4f (stored 10^%.4f)",
				seed, ww, p.Log10Flops(), stored.Log10Flops(), math.Log10(got), math.Log10(want))
			if got > want*(1+1e-9) {
				t.Errorf("seed %d, write weight %g: cost 10^%.4f, the stored path's 10^%.4f", seed, ww, math.Log10(got), math.Log10(want))
			}
		}
	}
}
