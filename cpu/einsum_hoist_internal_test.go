package cpu

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/einsum/naive"
	"github.com/goferro/goferro/tensor"
)

// The chain ab·bc·cd·de (a and e of 8 values, the others 4) under a
// limit of 16 elements: bc·cd makes bd (16), but every path's second
// step holds 32 elements, with a or e, so the output label a is sliced,
// and bc·cd, which carries no sliced label, is hoisted. The sliced run computes ab once, before the
// slices (one hoisted program), runs the two other steps per slice (the
// program it runs per slice has those two steps alone), and gives the
// naive result on 1 and 3 threads and for every split of the slices.
func TestSlicedRunHoists(t *testing.T) {
	shapes := [][]int{{8, 4}, {4, 4}, {4, 4}, {4, 8}}
	p, err := einsum.NewPlan("ab,bc,cd,de->ae", shapes, einsum.WithPath([][]int{{1, 2}, {0, 2}, {0, 1}}), einsum.WithMemoryLimit(16))
	if err != nil {
		t.Fatal(err)
	}
	s := p.Slicing
	if s == nil || len(s.Hoisted) != 1 {
		t.Fatalf("slicing %+v: want one hoisted result", s)
	}
	r := rand.New(rand.NewPCG(1, 2))
	ops := make([]*tensor.Tensor, len(shapes))
	for i, sh := range shapes {
		if ops[i], err = tensor.Randn(r, tensor.Float64, sh...); err != nil {
			t.Fatal(err)
		}
	}
	want, err := naive.Contract(p.Inputs, p.Output, p.Sizes, ops)
	if err != nil {
		t.Fatal(err)
	}
	for _, threads := range []int{1, 3} {
		c, err := NewContraction(p, WithThreads(threads))
		if err != nil {
			t.Fatal(err)
		}
		run := c.sliced
		if len(run.hoisted) != 1 || run.slice.Plan() != s.Sliced.Plan || len(run.slice.Plan().Steps) != 2 || len(run.hoisted[0].Plan().Steps) != 1 {
			t.Fatalf("%d hoisted programs, %d steps per slice: want 1 hoisted of 1 step, and 2 per slice", len(run.hoisted), len(run.slice.Plan().Steps))
		}
		got, err := c.Execute(context.Background(), ops...)
		if err != nil {
			t.Fatal(err)
		}
		if err := tensor.CheckClose(got, want, 1e-12, 1e-12); err != nil {
			t.Errorf("%d threads: %v", threads, err)
		}
		sum, err := tensor.Zeros(tensor.Float64, 8, 8)
		if err != nil {
			t.Fatal(err)
		}
		for lo := 0; lo < s.Count; lo += 2 {
			part, err := c.ExecuteSlices(context.Background(), lo, min(lo+2, s.Count), ops...)
			if err != nil {
				t.Fatal(err)
			}
			if err := BinaryInto(OpAdd, sum, sum, part); err != nil {
				t.Fatal(err)
			}
		}
		if err := tensor.CheckClose(sum, want, 1e-12, 1e-12); err != nil {
			t.Errorf("%d threads, slices two at a time: %v", threads, err)
		}
	}
}
