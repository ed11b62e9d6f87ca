package cpu

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
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

// TestSlicedRunNestedLoops: random contractions sliced over two labels or
// more, with steps that depend on outer sliced labels alone (hoisted
// parts of a level above 0), give the naive result to 1e-12 on 1 to 3
// threads, and every hoisted part runs as often as the nested loops need:
// once for level 0, and for level j once per block of the first j labels
// in each worker's run of consecutive slices (counted here by listing the
// blocks of every slice); the slice itself runs Count times.
func TestSlicedRunNestedLoops(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 17))
	nested := 0
	for i := range 300 {
		eq, shapes := nestEquation(r)
		whole, err := einsum.NewPlan(eq, shapes)
		if err != nil || len(whole.Steps) < 3 {
			continue
		}
		limit := 0.0
		for _, st := range whole.Steps[:len(whole.Steps)-1] {
			limit = max(limit, st.Size/8)
		}
		p, err := einsum.NewPlan(eq, shapes, einsum.WithPath(whole.Path), einsum.WithMemoryLimit(limit), einsum.WithSearch(0, 0, uint64(i)))
		if err != nil || p.Slicing == nil || !slices.ContainsFunc(p.Slicing.Hoisted, func(h einsum.Part) bool { return h.Level > 0 }) {
			continue
		}
		nested++
		s := p.Slicing
		ops := make([]*tensor.Tensor, len(shapes))
		for k, sh := range shapes {
			if ops[k], err = tensor.Randn(r, tensor.Float64, sh...); err != nil {
				t.Fatal(err)
			}
		}
		want, err := naive.Contract(p.Inputs, p.Output, p.Sizes, ops)
		if err != nil {
			t.Fatal(err)
		}
		for threads := 1; threads <= 3; threads++ {
			c, err := NewContraction(p, WithThreads(threads))
			if err != nil {
				t.Fatal(err)
			}
			runs := make([]atomic.Int64, len(s.Hoisted)+1)
			c.sliced.ran = func(k int) { runs[k].Add(1) }
			got, err := c.Execute(context.Background(), ops...)
			if err != nil {
				t.Fatal(err)
			}
			if err := tensor.CheckClose(got, want, 1e-12, 1e-12); err != nil {
				t.Fatalf("%s %v sliced over %v/%v, %d threads: %v", eq, shapes, s.Labels, s.Blocks, threads, err)
			}
			workers := min(threads, s.Count)
			for k, h := range s.Hoisted {
				want := 1
				if h.Level > 0 {
					want = 0
					for w := range workers {
						blocks := map[string]bool{}
						for slice := range c.sliced.slicesOf(w, workers, 0, s.Count) {
							blocks[fmt.Sprint(s.Values(slice, nil)[:h.Level])] = true
						}
						want += len(blocks)
					}
				}
				if got := runs[k].Load(); got != int64(want) {
					t.Errorf("%s sliced over %v/%v, %d threads: hoisted part %d (level %d) ran %d times, want %d", eq, s.Labels, s.Blocks, threads, k, h.Level, got, want)
				}
			}
			if got := runs[len(s.Hoisted)].Load(); got != int64(s.Count) {
				t.Errorf("%s, %d threads: %d slices ran, want %d", eq, threads, got, s.Count)
			}
		}
	}
	if nested < 20 {
		t.Errorf("only %d plans hoist a part into a loop", nested)
	}
	t.Logf("%d plans hoist a part into a loop", nested)
}

// nestEquation returns a random equation of 4 to 7 operands of 2 or 3
// labels, drawn from 8 labels of extents 2 to 4, with a random output.
func nestEquation(r *rand.Rand) (string, [][]int) {
	const pool = "abcdefgh"
	sizes := make([]int, len(pool))
	for i := range sizes {
		sizes[i] = 2 + r.IntN(3)
	}
	var terms []string
	var shapes [][]int
	seen := map[byte]bool{}
	for range 4 + r.IntN(4) {
		var term []byte
		var shape []int
		for len(term) < 2+r.IntN(2) {
			if i := r.IntN(len(pool)); !slices.Contains(term, pool[i]) {
				term, shape = append(term, pool[i]), append(shape, sizes[i])
				seen[pool[i]] = true
			}
		}
		terms, shapes = append(terms, string(term)), append(shapes, shape)
	}
	var out []byte
	for i := range len(pool) {
		if seen[pool[i]] && r.IntN(3) == 0 {
			out = append(out, pool[i])
		}
	}
	return strings.Join(terms, ",") + "->" + string(out), shapes
}
