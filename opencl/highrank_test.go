package opencl

import (
	"context"
	"testing"

	"github.com/goferro/goferro/tensor"
)

// TestHighRankPermute: permutations and binary ops over more independent
// axes than the kernels take (maxRank) split the excess axes into a host
// loop of launches instead of failing (rank-14 and rank-16 permutations of
// extent-2 axes occur in the tensornetwork_permutation instances).
func TestHighRankPermute(t *testing.T) {
	q := testQueue(t)
	ctx := context.Background()
	for _, rank := range []int{9, 14, 16} {
		shape := make([]int, rank)
		perm := make([]int, rank)
		for i := range shape {
			shape[i] = 2
			if i == 1 {
				shape[i] = 3
			}
			perm[i] = (i*5 + 3) % rank // a permutation when gcd(5, rank) = 1
		}
		if rank%5 == 0 {
			t.Fatal("bad rank")
		}
		h, err := tensor.Rand(tensor.NewRNG(uint64(rank)), tensor.Float64, shape...)
		if err != nil {
			t.Fatal(err)
		}
		d, err := q.Upload(ctx, h)
		if err != nil {
			t.Fatal(err)
		}
		p, err := q.Permute(ctx, d, perm...)
		if err != nil {
			t.Fatalf("rank %d: %v", rank, err)
		}
		got, err := q.Download(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		hv, err := h.Permute(perm...)
		if err != nil {
			t.Fatal(err)
		}
		if err := tensor.CheckClose(got, hv, 0, 0); err != nil {
			t.Fatalf("rank %d permute: %v", rank, err)
		}
		// a binary op of a permuted view and the contiguous permutation
		v, err := d.Permute(perm...)
		if err != nil {
			t.Fatal(err)
		}
		s, err := q.Binary(ctx, Add, v, p)
		if err != nil {
			t.Fatalf("rank %d add: %v", rank, err)
		}
		gs, err := q.Download(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		hs, _ := tensor.Values[float64](gs)
		hw, _ := tensor.Values[float64](hv)
		for i := range hs {
			if hs[i] != 2*hw[i] {
				t.Fatalf("rank %d add: element %d is %v, want %v", rank, i, hs[i], 2*hw[i])
			}
		}
		for _, x := range []*Tensor{d, p, v, s} {
			x.Release()
		}
	}
}
