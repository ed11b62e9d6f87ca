package cpu

import (
	"github.com/goferro/goferro/internal/strided"
	"github.com/goferro/goferro/tensor"
)

// Convert returns a new row-major tensor holding a's elements converted to
// dtype dt, following Go's conversion rules: floats to integers truncate
// toward zero (NaN and out-of-range values give an unspecified integer, as
// in numpy), complex to real keeps the real part, real to complex has a
// zero imaginary part, anything to Bool is x != 0 and Bool to numbers is 0
// or 1. Converting to a's own dtype returns a copy.
func Convert(a *tensor.Tensor, dt tensor.DType) (*tensor.Tensor, error) {
	const name = "Convert"
	if err := checkNotNil(name, a); err != nil {
		return nil, err
	}
	k := convertKernel(a.DType(), dt)
	if k == nil {
		return nil, errorf(name, tensor.ErrDType, "cannot convert %v to %v", a.DType(), dt)
	}
	dst, err := tensor.Zeros(dt, a.ShapeView()...)
	if err != nil {
		return nil, wrapError(name, tensor.ErrShape, err, "allocating the result")
	}
	k(ops(dst, a))
	return dst, nil
}

// ConvertInto converts a, broadcast to dst's shape, to dst's dtype and
// writes it into dst (see Convert).
func ConvertInto(dst, a *tensor.Tensor) error {
	const name = "ConvertInto"
	if err := checkNotNil(name, dst, a); err != nil {
		return err
	}
	k := convertKernel(a.DType(), dst.DType())
	if k == nil {
		return errorf(name, tensor.ErrDType, "cannot convert %v to %v", a.DType(), dst.DType())
	}
	if err := checkDst(name, dst, a); err != nil {
		return err
	}
	o := ops(dst, a)
	if err := o.unalias(name, false); err != nil {
		return err
	}
	k(o)
	return nil
}

func realToReal[D, S ordered](n int, d []D, do, ds int, a []S, ao, as int) {
	if ds == 1 && as == 1 {
		d, a := d[do:do+n], a[ao:ao+n]
		for i := range d {
			d[i] = D(a[i])
		}
		return
	}
	for ; n > 0; n-- {
		d[do] = D(a[ao])
		do, ao = do+ds, ao+as
	}
}

func realToComplex[D cplx, S ordered](n int, d []D, do, ds int, a []S, ao, as int) {
	for ; n > 0; n-- {
		d[do] = D(complex(float64(a[ao]), 0))
		do, ao = do+ds, ao+as
	}
}

func complexToReal[D ordered, S cplx](n int, d []D, do, ds int, a []S, ao, as int) {
	for ; n > 0; n-- {
		d[do] = D(real(complex128(a[ao])))
		do, ao = do+ds, ao+as
	}
}

func complexToComplex[D, S cplx](n int, d []D, do, ds int, a []S, ao, as int) {
	for ; n > 0; n-- {
		d[do] = D(a[ao])
		do, ao = do+ds, ao+as
	}
}

func toBool[S tensor.Number](n int, d []bool, do, ds int, a []S, ao, as int) {
	for ; n > 0; n-- {
		d[do] = a[ao] != 0
		do, ao = do+ds, ao+as
	}
}

func fromBool[D tensor.Number](n int, d []D, do, ds int, a []bool, ao, as int) {
	for ; n > 0; n-- {
		if a[ao] {
			d[do] = 1
		} else {
			d[do] = 0
		}
		do, ao = do+ds, ao+as
	}
}

func copyRunner[T tensor.Elem](o kernelArgs) {
	dst, src := o.t[0], o.t[1]
	if n, off, st, ok := flat(&o); ok {
		d := buf[T](dst)[off[0] : off[0]+n]
		if st[1] == 0 {
			v := buf[T](src)[off[1]]
			for i := range d {
				d[i] = v
			}
			return
		}
		// Same row-major order on both sides: one contiguous copy, as
		// strided.Copy ends up making (copy has memmove semantics).
		copy(d, buf[T](src)[off[1]:off[1]+n])
		return
	}
	shape := dst.ShapeView()
	strided.Copy(buf[T](dst), dst.Offset(), dst.StridesView(), buf[T](src), src.Offset(), bstrides(src, shape), shape)
}
