package einsum_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/einsum/naive"
	"github.com/goferro/goferro/tensor"
)

// TestStepsAgainstNaive evaluates plans step by step with naive loops
// (naive.Replay) and compares them with the whole equation evaluated at
// once: the planner's preparation and steps are right without any
// executor.
func TestStepsAgainstNaive(t *testing.T) {
	cases := []struct {
		eq     string
		shapes [][]int
		path   [][]int
	}{
		{"ij,jk->ik", [][]int{{2, 3}, {3, 4}}, nil},
		{"iij,jk,kl->li", [][]int{{2, 2, 3}, {3, 4}, {4, 5}}, [][]int{{2, 1}, {1, 0}}},
		{"ab,bc,cd,de->ae", [][]int{{2, 3}, {3, 1}, {3, 4}, {4, 2}}, [][]int{{0, 1, 2}, {0, 1}}},
		{"...ij,...jk->...ik", [][]int{{2, 1, 2, 3}, {4, 3, 2}}, nil},
		{"ij,k->j", [][]int{{3, 4}, {5}}, nil},
		{"ijk->kj", [][]int{{2, 3, 4}}, nil},
		{"ab,bc->ac", [][]int{{2, 3}, {3, 4}}, [][]int{{0, 1}, {0}}},
		{"abc,cd,db,e->ae", [][]int{{2, 3, 4}, {4, 2}, {2, 3}, {3}}, nil},
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range cases {
		var opts []einsum.Option
		if c.path != nil {
			opts = append(opts, einsum.WithPath(c.path))
		}
		p, err := einsum.NewPlan(c.eq, c.shapes, opts...)
		if err != nil {
			t.Fatalf("%s: %v", c.eq, err)
		}
		var ops []*tensor.Tensor
		for _, s := range c.shapes {
			x, _ := tensor.Rand(tensor.NewRNG(r.Uint64()), tensor.Complex128, s...)
			ops = append(ops, x)
		}
		got, err := naive.Replay(p, ops)
		if err != nil {
			t.Fatalf("%s: %v", c.eq, err)
		}
		want, err := naive.Contract(p.Inputs, p.Output, p.Sizes, ops)
		if err != nil {
			t.Fatal(err)
		}
		if err := tensor.CheckClose(got, want, 1e-12, 1e-12); err != nil {
			t.Errorf("%s path %v: %v", c.eq, p.Path, err)
		}
		if last := p.Steps[len(p.Steps)-1]; fmt.Sprint(last.OutLabels) != fmt.Sprint(p.Output) {
			t.Errorf("%s: last step writes %v, the output is %v", c.eq, last.OutLabels, p.Output)
		}
	}
}
