package opencl

import (
	"testing"

	"github.com/goferro/goferro/tensor"
)

// TestEinsumLoweringOnDevice runs the lowered forms of einsums the way a
// planner would emit them — diagonal and permutation views, broadcasting
// products, reductions and batched GEMM — entirely on the device, and
// checks them against naive host loops.
func TestEinsumLoweringOnDevice(t *testing.T) {
	q, ctx, r := testRig(t, 23)
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Complex64} {
		const I, J, K, B = 5, 7, 6, 3
		// "iij,bjk,k->bik"
		hx, dx := stridedPair(t, q, r, dt, tensor.Shape{I, I, J})
		hy, dy := stridedPair(t, q, r, dt, tensor.Shape{B, J, K})
		hz, dz := stridedPair(t, q, r, dt, tensor.Shape{K})
		defer dx.Release()
		defer dy.Release()
		defer dz.Release()
		// 1. iij -> ij : a diagonal view, no copy
		diag := keep(t)(dx.Diagonal(0, 1))
		// 2. bjk,k -> bjk : broadcasting product
		yz := keep(t)(q.Binary(ctx, Mul, dy, dz))
		// 3. ij,bjk -> bik : batched GEMM with a broadcast batch axis
		d3, err := diag.Reshape(1, I, J)
		if err != nil {
			// the diagonal view is not contiguous: make it so (permute family)
			c := keep(t)(q.Contiguous(ctx, diag))
			if d3, err = c.Reshape(1, I, J); err != nil {
				t.Fatal(err)
			}
		}
		defer d3.Release()
		out := keep(t)(q.MatMul(ctx, d3, yz))
		// 4. bik -> ki : a sum over b and a transpose, as "bik->ki"
		s := keep(t)(q.Reduce(ctx, Sum, out, false, 0))
		ki := keep(t)(q.Permute(ctx, s, 1, 0))

		want, _ := tensor.Zeros(dt, B, I, K)
		forEach(want.Shape(), func(idx []int) {
			b, i, k := idx[0], idx[1], idx[2]
			var acc complex128
			for j := 0; j < J; j++ {
				x, _ := hx.Complex128At(i, i, j)
				y, _ := hy.Complex128At(b, j, k)
				z, _ := hz.Complex128At(k)
				acc += x * y * z
			}
			want.SetComplex128(acc, idx...)
		})
		if err := tensor.CheckClose(download(t, q, out), want, 1e-4, 1e-5); err != nil {
			t.Fatalf("%v iij,bjk,k->bik: %v", dt, err)
		}
		wki, _ := tensor.Zeros(dt, K, I)
		forEach(wki.Shape(), func(idx []int) {
			var acc complex128
			for b := 0; b < B; b++ {
				v, _ := want.Complex128At(b, idx[1], idx[0])
				acc += v
			}
			wki.SetComplex128(acc, idx...)
		})
		if err := tensor.CheckClose(download(t, q, ki), wki, 1e-4, 1e-5); err != nil {
			t.Fatalf("%v bik->ki: %v", dt, err)
		}
	}
}
