package opencl

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/goferro/goferro/tensor"
)

func devDTypes(q *Queue) []tensor.DType {
	var dts []tensor.DType
	for _, dt := range tensor.DTypes {
		if q.fp64OK("", dt) == nil {
			dts = append(dts, dt)
		}
	}
	return dts
}

func TestCompare(t *testing.T) {
	q := testQueue(t)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(25, 26))
	for _, dt := range devDTypes(q) {
		for op := CompareOp(0); op < numCompare; op++ {
			if !q.SupportsCompare(op, dt) {
				x := mustEmpty(t, q, dt, 2)
				if _, err := q.Compare(ctx, op, x, x); !errors.Is(err, ErrUnsupported) {
					t.Fatalf("%v %v: %v", op, dt, err)
				}
				continue
			}
			_, sa, sb := broadcastShapes(r)
			ha, da := stridedPair(t, q, r, dt, sa)
			hb, db := stridedPair(t, q, r, dt, sb)
			if dt == tensor.Int32 || dt == tensor.Bool {
				// make equal elements likely
				hb, db = ha, da
				if err := da.Buffer().Retain(); err != nil {
					t.Fatal(err)
				}
			}
			out, err := q.Compare(ctx, op, da, db)
			if err != nil {
				t.Fatalf("%v %v: %v", op, dt, err)
			}
			shape := out.Shape()
			ba, _ := ha.BroadcastTo(shape...)
			bb, _ := hb.BroadcastTo(shape...)
			want, _ := tensor.Zeros(tensor.Bool, shape...)
			forEach(shape, func(idx []int) {
				x, _ := ba.Complex128At(idx...)
				y, _ := bb.Complex128At(idx...)
				var v bool
				switch op {
				case Eq:
					v = x == y
				case Ne:
					v = x != y
				case Lt:
					v = real(x) < real(y)
				case Le:
					v = real(x) <= real(y)
				case Gt:
					v = real(x) > real(y)
				case Ge:
					v = real(x) >= real(y)
				}
				want.Set(v, idx...)
			})
			if err := tensor.CheckClose(download(t, q, out), want, 0, 0); err != nil {
				t.Fatalf("%v %v %v %v: %v", op, dt, sa, sb, err)
			}
			da.Release()
			db.Release()
			out.Release()
		}
	}
}

func TestSelect(t *testing.T) {
	q := testQueue(t)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(27, 28))
	for _, dt := range devDTypes(q) {
		hc, dc := stridedPair(t, q, r, tensor.Bool, tensor.Shape{4, 1})
		ha, da := stridedPair(t, q, r, dt, tensor.Shape{3})
		hb, db := stridedPair(t, q, r, dt, tensor.Shape{4, 3})
		out, err := q.Select(ctx, dc, da, db)
		if err != nil {
			t.Fatalf("%v: %v", dt, err)
		}
		want, _ := tensor.Zeros(dt, 4, 3)
		forEach(want.Shape(), func(idx []int) {
			c, _ := hc.Complex128At(idx[0], 0)
			v, _ := hb.Complex128At(idx...)
			if c != 0 {
				v, _ = ha.Complex128At(idx[1])
			}
			want.SetComplex128(v, idx...)
		})
		if err := tensor.CheckClose(download(t, q, out), want, 0, 0); err != nil {
			t.Fatalf("%v: %v", dt, err)
		}
		if _, err := q.Select(ctx, da, da, db); dt != tensor.Bool && !errors.Is(err, ErrArgument) {
			t.Fatalf("non-bool condition: %v", err)
		}
		for _, x := range []*Tensor{dc, da, db, out} {
			x.Release()
		}
	}
}

func TestConvert(t *testing.T) {
	q := testQueue(t)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(29, 30))
	for _, from := range devDTypes(q) {
		h, d := stridedPair(t, q, r, from, tensor.Shape{3, 5})
		if from.IsFloat() || from.IsComplex() {
			// spread values over (-50, 50) so integer truncation is exercised
			s, _ := tensor.Full(from, 100, 1)
			o, _ := tensor.Full(from, -50, 1)
			ds, _ := q.Upload(ctx, s)
			do, _ := q.Upload(ctx, o)
			m, _ := q.Binary(ctx, Mul, d, ds)
			a, _ := q.Binary(ctx, Add, m, do)
			for _, x := range []*Tensor{ds, do, m, d} {
				x.Release()
			}
			d = a
			h = download(t, q, d)
		}
		for _, to := range devDTypes(q) {
			out, err := q.Convert(ctx, d, to)
			if err != nil {
				t.Fatalf("%v→%v: %v", from, to, err)
			}
			want, _ := tensor.Zeros(to, 3, 5)
			forEach(want.Shape(), func(idx []int) {
				v, _ := h.Complex128At(idx...)
				switch {
				case to == tensor.Bool:
					if v != 0 {
						v = 1
					}
				case !to.IsComplex():
					v = complex(real(v), 0)
					if to.IsInt() {
						v = complex(float64(int64(real(v))), 0)
					}
				}
				want.SetComplex128(v, idx...)
			})
			rt, at := tol(to)
			if from == tensor.Float32 || from == tensor.Complex64 {
				rt, at = 1e-6, 1e-6
			}
			if err := tensor.CheckClose(download(t, q, out), want, rt, at); err != nil {
				t.Fatalf("%v→%v: %v", from, to, err)
			}
			out.Release()
		}
		d.Release()
	}
}
