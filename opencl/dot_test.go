package opencl

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/goferro/goferro/tensor"
)

// dotCase is a dot_general of operands of shapes as and bs over batch
// axes lb, rb and contracting axes lc, rc.
type dotCase struct {
	name           string
	as, bs         tensor.Shape
	lb, rb, lc, rc []int
}

// checkDots runs every case for every dtype on random strided operands and
// compares the result with the naive reference.
func checkDots(t *testing.T, q *Queue, ctx context.Context, r *rand.Rand, dts []tensor.DType, cases []dotCase) {
	t.Helper()
	for _, dt := range dts {
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

func TestDotGeneral(t *testing.T) {
	q, ctx, r := testRig(t, 33)
	checkDots(t, q, ctx, r, []tensor.DType{tensor.Float32, tensor.Complex64, tensor.Int32}, []dotCase{
		{"plain matmul ij,jk->ik", tensor.Shape{20, 30}, tensor.Shape{30, 18}, nil, nil, []int{1}, []int{0}},
		{"batched with b last in a: bij,bjk->bik", tensor.Shape{17, 9, 3}, tensor.Shape{3, 9, 21}, []int{2}, []int{0}, []int{1}, []int{1}},
		{"two contracting and two free axes: ijkl,kjm->ilm", tensor.Shape{4, 5, 6, 3}, tensor.Shape{6, 5, 7}, nil, nil, []int{2, 1}, []int{0, 1}},
		{"outer product", tensor.Shape{5}, tensor.Shape{4}, nil, nil, nil, nil},
		{"inner product to a scalar", tensor.Shape{33}, tensor.Shape{33}, nil, nil, []int{0}, []int{0}},
	})
	x := mustEmpty(t, q, tensor.Float32, 3, 4)
	if _, err := q.DotGeneral(ctx, x, x, nil, nil, []int{1}, []int{1, 0}); !errors.Is(err, ErrArgument) {
		t.Fatalf("unpaired dims: %v", err)
	}
	if _, err := q.DotGeneral(ctx, x, x, nil, nil, []int{1}, []int{0}); !errors.Is(err, ErrShape) {
		t.Fatalf("extent mismatch: %v", err)
	}
}

// TestDotGeneralShapes covers the lowerings DotGeneral picks beyond a
// plain batched GEMM: batches of dot products (m = n = 1) and of outer
// products (k = 1) run as a broadcast product and a sum, and more
// independent batch axes than the GEMM kernels take (ten extent-2 axes
// ordered oppositely in the two operands) loop over the excess on the
// host. Both match the naive reference.
func TestDotGeneralShapes(t *testing.T) {
	q, ctx, r := testRig(t, 35)
	ten := make(tensor.Shape, 10)
	fwd, rev := make([]int, 10), make([]int, 10)
	for i := range ten {
		ten[i], fwd[i], rev[i] = 2, i, 9-i
	}
	checkDots(t, q, ctx, r, []tensor.DType{tensor.Float32, tensor.Complex64}, []dotCase{
		{"batched-dot", tensor.Shape{7, 33}, tensor.Shape{33, 7}, []int{0}, []int{1}, []int{1}, []int{0}},
		{"batched-outer", tensor.Shape{6, 5}, tensor.Shape{4, 6}, []int{0}, []int{1}, nil, nil},
		{"extent-1-contraction", tensor.Shape{3, 1}, tensor.Shape{1, 4}, nil, nil, []int{1}, []int{0}},
		{"ten-batch-axes", append(ten.Clone(), 3, 4), append(ten.Clone(), 4, 5), fwd, rev, []int{11}, []int{10}},
		{"ten-batch-axes-dot", append(ten.Clone(), 9), append(ten.Clone(), 9), fwd, rev, []int{10}, []int{10}},
	})
}

// dotRef is a naive dot_general.
func dotRef(t *testing.T, dt tensor.DType, a, b *tensor.Tensor, lb, rb, lc, rc []int) *tensor.Tensor {
	isIn := func(x int, s []int) bool {
		for _, v := range s {
			if v == x {
				return true
			}
		}
		return false
	}
	var lfree, rfree []int
	for i := 0; i < a.Rank(); i++ {
		if !isIn(i, lb) && !isIn(i, lc) {
			lfree = append(lfree, i)
		}
	}
	for i := 0; i < b.Rank(); i++ {
		if !isIn(i, rb) && !isIn(i, rc) {
			rfree = append(rfree, i)
		}
	}
	var out, kshape tensor.Shape
	for _, ax := range lb {
		out = append(out, a.Dim(ax))
	}
	for _, ax := range lfree {
		out = append(out, a.Dim(ax))
	}
	for _, ax := range rfree {
		out = append(out, b.Dim(ax))
	}
	for _, ax := range lc {
		kshape = append(kshape, a.Dim(ax))
	}
	want, _ := tensor.Zeros(dt, out...)
	forEach(out, func(idx []int) {
		ai, bi := make([]int, a.Rank()), make([]int, b.Rank())
		p := 0
		for k := range lb {
			ai[lb[k]], bi[rb[k]] = idx[p], idx[p]
			p++
		}
		for _, ax := range lfree {
			ai[ax] = idx[p]
			p++
		}
		for _, ax := range rfree {
			bi[ax] = idx[p]
			p++
		}
		var acc complex128
		forEach(kshape, func(kk []int) {
			for k := range lc {
				ai[lc[k]], bi[rc[k]] = kk[k], kk[k]
			}
			x, _ := a.Complex128At(ai...)
			y, _ := b.Complex128At(bi...)
			acc += x * y
		})
		want.SetComplex128(acc, idx...)
	})
	return want
}
