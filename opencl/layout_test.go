package opencl

import (
	"math"
	"testing"

	"github.com/goferro/goferro/tensor"
)

func TestLayoutOps(t *testing.T) {
	q, ctx, r := testRig(t, 31)
	host, dev := stridedPair(t, q, r, tensor.Float64, tensor.Shape{4, 6, 5})
	defer dev.Release()
	for _, rs := range [][]tensor.Range{
		{tensor.R(1, 3)},
		{tensor.All, {Start: 5, Stop: math.MinInt, Step: -2}},
		{{Start: -1, Stop: -5, Step: -1}, tensor.R(2, 100), {Start: 0, Stop: 5, Step: 3}},
		{tensor.R(3, 1)},
	} {
		hv, err := host.Slice(rs...)
		if err != nil {
			t.Fatal(err)
		}
		dv, err := dev.Slice(rs...)
		if err != nil {
			t.Fatal(err)
		}
		if err := tensor.CheckClose(download(t, q, dv), hv, 0, 0); err != nil {
			t.Fatalf("slice %v: %v", rs, err)
		}
		dv.Release()
	}
	// reshape of a strided tensor copies; of a contiguous one it views
	rs, err := q.Reshape(ctx, dev, 20, 6)
	if err != nil {
		t.Fatal(err)
	}
	hr, _ := host.Reshape(20, 6)
	if err := tensor.CheckClose(download(t, q, rs), hr, 0, 0); err != nil {
		t.Fatal(err)
	}
	rs.Release()
	// broadcast
	b, err := q.Broadcast(ctx, dev, 2, 4, 6, 5)
	if err != nil {
		t.Fatal(err)
	}
	hb, _ := host.BroadcastTo(2, 4, 6, 5)
	if err := tensor.CheckClose(download(t, q, b), hb, 0, 0); err != nil {
		t.Fatal(err)
	}
	b.Release()
	// concatenate along axis 1
	h2, d2 := stridedPair(t, q, r, tensor.Float64, tensor.Shape{4, 2, 5})
	defer d2.Release()
	c, err := q.Concatenate(ctx, 1, dev, d2, dev)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	want, _ := tensor.Zeros(tensor.Float64, 4, 14, 5)
	forEach(want.Shape(), func(idx []int) {
		i, j, k := idx[0], idx[1], idx[2]
		var v complex128
		switch {
		case j < 6:
			v, _ = host.Complex128At(i, j, k)
		case j < 8:
			v, _ = h2.Complex128At(i, j-6, k)
		default:
			v, _ = host.Complex128At(i, j-8, k)
		}
		want.SetComplex128(v, idx...)
	})
	if err := tensor.CheckClose(download(t, q, c), want, 0, 0); err != nil {
		t.Fatal(err)
	}
	// embed_diagonal: (4, 5) → (4, 6, 4... ) inverse of diagonal(0, 2)
	hx, dx := stridedPair(t, q, r, tensor.Float64, tensor.Shape{4, 6})
	defer dx.Release()
	e, err := q.EmbedDiagonal(ctx, dx, tensor.Shape{4, 6, 4}, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Release()
	we, _ := tensor.Zeros(tensor.Float64, 4, 6, 4)
	wd, _ := we.Diagonal(0, 2)
	tensor.CopyInto(wd, hx)
	if err := tensor.CheckClose(download(t, q, e), we, 0, 0); err != nil {
		t.Fatal(err)
	}
}
