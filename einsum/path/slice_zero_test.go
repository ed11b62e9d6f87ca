package path

import (
	"context"
	"errors"
	"testing"
)

// A label of extent 0 is never sliced (it once divided by zero): in
// ab,bd,ad,c-> with c of extent 0, every path has an intermediate of 64
// elements, so Slice cuts a, b or d, or fails with ErrMemoryLimit.
func TestSliceZeroExtent(t *testing.T) {
	n := Network{Inputs: [][]int{{0, 1}, {1, 3}, {0, 3}, {2}}, Output: []int{}, Sizes: []int{8, 8, 0, 8}}
	p, err := Greedy(n, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, limit := range []float64{1, 4, 16} {
		s, err := Slice(context.Background(), n, p, limit, Options{Seed: 1})
		if err != nil && !errors.Is(err, ErrMemoryLimit) {
			t.Fatalf("limit %v: %v", limit, err)
		}
		for j, l := range s.Labels {
			if n.Sizes[l] < 2 || s.Sizes[j] < 1 {
				t.Fatalf("limit %v: sliced label %d of extent %d into blocks of %d", limit, l, n.Sizes[l], s.Sizes[j])
			}
		}
	}
}
