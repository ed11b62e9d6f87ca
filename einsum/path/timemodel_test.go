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

// TestTimeModelStep checks Step against values computed by hand from the
// formula in TimeModel's comment (issue 19).
func TestTimeModelStep(t *testing.T) {
	tm := TimeModel{Half: 9, Cap: 10, Write: 2}
	for _, c := range []struct {
		batch, m, n, k float64
		want           float64
	}{
		// slowdown (1+9/9)(1+9/9) = 4: 2·9·9·3·4 + 2·2·81.
		{2, 9, 9, 3, 1944 + 324},
		// slowdown (1+9/18)(1+9/36) = 1.875: 1296·1.875 + 2·648.
		{1, 18, 36, 2, 2430 + 1296},
		// batched dot products: (1+9)(1+9) = 100, capped at 10.
		{2, 1, 1, 5, 100 + 4},
		// nothing summed (k = 1): a loop over the result, 36 + 2·36.
		{4, 3, 3, 1, 36 + 72},
		// extents below 1 count as 1: (1+9)(1+9) capped, no k term.
		{0, 0, 0, 0, 1 + 2},
	} {
		if got := tm.Step(c.batch, c.m, c.n, c.k); math.Abs(got-c.want) > 1e-9*c.want {
			t.Errorf("Step(%g, %g, %g, %g) = %g, want %g", c.batch, c.m, c.n, c.k, got, c.want)
		}
	}
	// Without a cap the slowdown of batched dot products is (1+9)(1+9).
	if got, want := (TimeModel{Half: 9}).Step(2, 1, 1, 5), 1000.0; math.Abs(got-want) > 1e-9 {
		t.Errorf("uncapped Step(2, 1, 1, 5) = %g, want %g", got, want)
	}
}

// TestTimeModelLog2Time checks that a path's time is the sum of its
// steps' and that Log2Time rejects a path that does not fit the network.
func TestTimeModelLog2Time(t *testing.T) {
	// A(b,i,j) B(b,j,k) C(k,l) -> (b,i,l): step 1 is a batched GEMM of
	// 5 × 4×6 over j = 3, step 2 a GEMM of (5·4)×2 over k = 6.
	n := Network{Inputs: [][]int{{0, 1, 2}, {0, 2, 3}, {3, 4}}, Output: []int{0, 1, 4}, Sizes: []int{5, 4, 3, 6, 2}}
	tm := TimeModel{Half: 8, Cap: 50, Write: 16}
	got, err := tm.Log2Time(n, Path{{0, 1}, {0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	want := math.Log2(tm.Step(5, 4, 6, 3) + tm.Step(1, 20, 2, 6))
	if math.Abs(got-want) > 1e-9 {
		t.Errorf("Log2Time = %g, want %g", got, want)
	}
	if _, err := tm.Log2Time(n, Path{{0, 3}}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Log2Time of an invalid path: err = %v, want ErrInvalid", err)
	}
}

// gadgetNetwork is copies of a three-tensor network whose trees (T0·T1)·T2
// and T0·(T1·T2) have the same FLOPs (11,664) and write the same elements
// (648 intermediate, 81 output) but not the same GEMMs: the first runs 27
// products of 3×8 over 8, then 3 of 27×1 over 8; the second one product
// of 216×3 over 8, then 81 dot products of 8. Copies share no label, so
// that the network is past Optimal's size for Search.
func gadgetNetwork(copies int) Network {
	var n Network
	for c := range copies {
		l := 4 * c // labels a(3) b(8) c(27) d(8) of this copy
		n.Inputs = append(n.Inputs, []int{l, l + 1, l + 2}, []int{l + 1, l + 2, l + 3}, []int{l, l + 3})
		n.Output = append(n.Output, l, l+2)
		n.Sizes = append(n.Sizes, 3, 8, 27, 8)
	}
	return n
}

// TestSearchPicksFasterTree: among trees of equal FLOPs and writes, Search
// returns the one the time model predicts to run fastest (issue 19).
func TestSearchPicksFasterTree(t *testing.T) {
	one := gadgetNetwork(1)
	slow, fast := Path{{0, 1}, {0, 1}}, Path{{1, 2}, {0, 1}}
	cs, cf := mustCost(t, one, slow), mustCost(t, one, fast)
	if cs.Flops != cf.Flops || cs.Steps[0].Size != cf.Steps[0].Size {
		t.Fatalf("the gadget's trees differ in cost: FLOPs %g and %g, intermediates %g and %g", cs.Flops, cf.Flops, cs.Steps[0].Size, cf.Steps[0].Size)
	}
	ts, _ := DefaultTimeModel.Log2Time(one, slow)
	tf, _ := DefaultTimeModel.Log2Time(one, fast)
	if tf >= ts {
		t.Fatalf("the model predicts 2^%.3f for the big GEMM's tree, 2^%.3f for the batched one's", tf, ts)
	}
	n := gadgetNetwork(3)
	for _, ww := range []float64{0, 64} {
		o := Options{Trials: 8, Time: time.Minute, WriteWeight: ww, Model: &DefaultTimeModel}
		p := must(Search(context.Background(), n, o))
		// The batched tree of copy c keeps its labels c and d (4c+2 and
		// 4c+3) in its intermediate; the fast one sums d away first.
		got, _ := DefaultTimeModel.Log2Time(n, p)
		for _, s := range mustCost(t, n, p).Steps {
			for c := range 3 {
				if slices.Contains(s.Labels, 4*c+2) && slices.Contains(s.Labels, 4*c+3) {
					t.Errorf("write weight %g: Search's path %v (predicted 2^%.3f) takes copy %d's batched tree", ww, p, got, c)
				}
			}
		}
	}
}

// TestPolish: rotating contractions never makes the objective worse nor
// the predicted time longer, honours the memory limit, and leaves a tree
// whose costs are those of its path rebuilt from scratch.
func TestPolish(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	faster := 0
	for trial := range 30 {
		n := graphNetwork(r, 10+r.IntN(30))
		o := Options{WriteWeight: float64(64 * (trial % 2))}
		pairs, err := greedyRun(&n, o, greedyParams{alpha: 1, front: true})
		if err != nil {
			t.Fatal(err)
		}
		tr := newTree(&n, pairs)
		before, beforeTime := treeCandidate(tr, nil, o), DefaultTimeModel.logTreeTime(tr)
		if trial%3 == 0 {
			o.MemoryLimit = math.Exp2(before.largest)
		}
		DefaultTimeModel.polish(tr, o)
		after, afterTime := treeCandidate(tr, nil, o), DefaultTimeModel.logTreeTime(tr)
		if after.score > before.score+1e-9 || afterTime > beforeTime+1e-9 {
			t.Fatalf("trial %d: polish took objective 2^%.4f to 2^%.4f, time 2^%.4f to 2^%.4f", trial, before.score, after.score, beforeTime, afterTime)
		}
		if o.MemoryLimit > 0 && !tr.fits(o.MemoryLimit) {
			t.Fatalf("trial %d: polish broke the memory limit %g", trial, o.MemoryLimit)
		}
		if afterTime < beforeTime-1e-9 {
			faster++
		}
		p := tr.path()
		c := mustCost(t, n, p)
		rebuilt, err := pairsOf(len(n.Inputs), p)
		if err != nil {
			t.Fatal(err)
		}
		fresh := newTree(&n, rebuilt)
		if f := treeCandidate(fresh, nil, o); math.Abs(f.score-after.score) > 1e-9 || math.Abs(f.flops-c.Log2Flops) > 1e-9 {
			t.Fatalf("trial %d: polished tree scores 2^%.6f, its path rebuilt 2^%.6f (FLOPs 2^%.6f, Evaluate 2^%.6f)", trial, after.score, f.score, f.flops, c.Log2Flops)
		}
		if ft := DefaultTimeModel.logTreeTime(fresh); math.Abs(ft-afterTime) > 1e-9 {
			t.Fatalf("trial %d: polished tree's time 2^%.6f, its path rebuilt 2^%.6f", trial, afterTime, ft)
		}
	}
	if faster == 0 {
		t.Error("polish never found a faster tree")
	}
}
