package graph

import (
	"errors"
	"slices"
	"testing"

	"github.com/goferro/goferro/tensor"
)

// TestLowerDot: the batched-matmul form of dot_general, and bad attributes
// as errors rather than panics.
func TestLowerDot(t *testing.T) {
	a := Attrs{LhsBatch: []int{1}, RhsBatch: []int{0}, LhsContract: []int{3, 0}, RhsContract: []int{2, 3}}
	d, err := LowerDot(&a, tensor.Shape{2, 5, 7, 3}, tensor.Shape{5, 11, 3, 2, 13})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Batch, []int{5}) || d.Batches() != 5 || d.M != 7 || d.N != 11*13 || d.K != 3*2 {
		t.Errorf("batch %v, m %d, n %d, k %d", d.Batch, d.M, d.N, d.K)
	}
	if !slices.Equal(d.LhsPerm, []int{1, 2, 3, 0}) || !slices.Equal(d.RhsPerm, []int{0, 2, 3, 1, 4}) {
		t.Errorf("permutations %v and %v", d.LhsPerm, d.RhsPerm)
	}
	for _, c := range []struct {
		a    Attrs
		kind error
	}{
		{Attrs{LhsContract: []int{1}}, ErrAttr},
		{Attrs{LhsContract: []int{2}, RhsContract: []int{0}}, ErrAttr},
		{Attrs{LhsContract: []int{0, 0}, RhsContract: []int{0, 1}}, ErrAttr},
		{Attrs{LhsContract: []int{0}, RhsContract: []int{0}}, ErrShape},
	} {
		if _, err := LowerDot(&c.a, tensor.Shape{2, 3}, tensor.Shape{3, 4}); !errors.Is(err, c.kind) {
			t.Errorf("%+v: %v, want %v", c.a, err, c.kind)
		}
	}
}
