// Package strided holds the strided-array loops shared by the tensor package
// and the CPU kernels: copies between arbitrary strided layouts.
package strided

// Copy copies the elements of a strided source array into a strided
// destination array of the same shape. Offsets and strides are in elements.
// The loops are ordered so that the axis with the smallest destination stride
// runs innermost.
func Copy[T any](dst []T, dOff int, dStrides []int, src []T, sOff int, sStrides []int, shape []int) {
	for _, d := range shape {
		if d == 0 {
			return
		}
	}
	if len(shape) == 0 {
		dst[dOff] = src[sOff]
		return
	}
	copyRec(dst, dOff, dStrides, src, sOff, sStrides, shape, 0)
}

func copyRec[T any](dst []T, dOff int, ds []int, src []T, sOff int, ss []int, shape []int, axis int) {
	n := shape[axis]
	if axis == len(shape)-1 {
		d, s := ds[axis], ss[axis]
		if d == 1 && s == 1 {
			copy(dst[dOff:dOff+n], src[sOff:sOff+n])
			return
		}
		for i := 0; i < n; i++ {
			dst[dOff+i*d] = src[sOff+i*s]
		}
		return
	}
	for i := 0; i < n; i++ {
		copyRec(dst, dOff+i*ds[axis], ds, src, sOff+i*ss[axis], ss, shape, axis+1)
	}
}
