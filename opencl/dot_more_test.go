package opencl

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/goferro/goferro/tensor"
)

// TestDotGeneralShapes covers the lowerings DotGeneral picks beyond a
// plain batched GEMM: batches of dot products (m = n = 1) and of outer
// products (k = 1) run as a broadcast product and a sum, and more
// independent batch axes than the GEMM kernels take (ten extent-2 axes
// ordered oppositely in the two operands) loop over the excess on the
// host. Both match the naive reference.
func TestDotGeneralShapes(t *testing.T) {
	q := testQueue(t)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(35, 36))
	ten := make(tensor.Shape, 10)
	fwd, rev := make([]int, 10), make([]int, 10)
	for i := range ten {
		ten[i], fwd[i], rev[i] = 2, i, 9-i
	}
	type dcase struct {
		name           string
		as, bs         tensor.Shape
		lb, rb, lc, rc []int
	}
	cases := []dcase{
		{"batched-dot", tensor.Shape{7, 33}, tensor.Shape{33, 7}, []int{0}, []int{1}, []int{1}, []int{0}},
		{"batched-outer", tensor.Shape{6, 5}, tensor.Shape{4, 6}, []int{0}, []int{1}, nil, nil},
		{"extent-1-contraction", tensor.Shape{3, 1}, tensor.Shape{1, 4}, nil, nil, []int{1}, []int{0}},
		{"ten-batch-axes", append(ten.Clone(), 3, 4), append(ten.Clone(), 4, 5), fwd, rev, []int{11}, []int{10}},
		{"ten-batch-axes-dot", append(ten.Clone(), 9), append(ten.Clone(), 9), fwd, rev, []int{10}, []int{10}},
	}
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Complex64} {
		for _, c := range cases {
			ha, da := stridedPair(t, q, r, dt, c.as)
			hb, db := stridedPair(t, q, r, dt, c.bs)
			out, err := q.DotGeneral(ctx, da, db, c.lb, c.rb, c.lc, c.rc)
			if err != nil {
				t.Fatalf("%v %s: %v", dt, c.name, err)
			}
			want := dotRef(t, dt, ha, hb, c.lb, c.rb, c.lc, c.rc)
			if err := tensor.CheckClose(download(t, q, out), want, 1e-4, 1e-4); err != nil {
				t.Fatalf("%v %s: %v", dt, c.name, err)
			}
			da.Release()
			db.Release()
			out.Release()
		}
	}
}
