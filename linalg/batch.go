package linalg

import (
	"github.com/goferro/goferro/internal/level1"
	"github.com/goferro/goferro/internal/strided"
	"github.com/goferro/goferro/tensor"
)

// matrices checks that t is a stack of matrices (rank ≥ 2) of a float or
// complex dtype and returns the batch shape and the matrix extents.
func matrices(op string, t *tensor.Tensor) (batch []int, m, n int, err error) {
	if t == nil {
		return nil, 0, 0, newError(op, ErrArgument, "nil tensor")
	}
	if dt := t.DType(); !dt.IsFloat() && !dt.IsComplex() {
		return nil, 0, 0, newError(op, tensor.ErrDType, "%v is not a float or complex dtype", dt)
	}
	s := t.ShapeView()
	if len(s) < 2 {
		return nil, 0, 0, newError(op, tensor.ErrShape, "rank-%d tensor %v is not a (stack of) matrix", len(s), s)
	}
	r := len(s)
	return append([]int(nil), s[:r-2]...), s[r-2], s[r-1], nil
}

// count returns the number of matrices in a batch.
func count(batch []int) int {
	n := 1
	for _, d := range batch {
		n *= d
	}
	return n
}

// shapeOf returns batch followed by dims.
func shapeOf(batch []int, dims ...int) []int {
	return append(append(make([]int, 0, len(batch)+len(dims)), batch...), dims...)
}

// values returns t's elements in row-major order, for reading only: the
// tensor's own buffer when it is contiguous, else a copy.
func values[T scalar](op string, t *tensor.Tensor) ([]T, error) {
	if t.IsContiguous() && t.Len() > 0 {
		if buf, err := tensor.Buffer[T](t); err == nil {
			return buf[t.Offset() : t.Offset()+t.Len()], nil
		}
	}
	v, err := tensor.Values[T](t)
	if err != nil {
		return nil, &Error{Op: op, Kind: tensor.ErrDType, Msg: "reading the input", Err: err}
	}
	return v, nil
}

// load returns matrix b of the row-major stack vals of m×n matrices as a
// column-major matrix, or its conjugate transpose (n×m) when adjoint is
// set, on a scratch buffer (which the caller may recycle).
func load[T scalar](vals []T, b, m, n int, adjoint bool) mat[T] {
	src := vals[b*m*n : (b+1)*m*n]
	if adjoint {
		a := scratch[T](n, m)
		for i := range m {
			level1.Conj(a.col(i), src[i*n:(i+1)*n])
		}
		return a
	}
	return loadColumns(src, m, n, m)
}

// loadRows copies matrix b of the row-major stack vals (m×n matrices) into
// a row-major matrix on a scratch buffer whose rows are paddedLD(n) apart.
func loadRows[T scalar](vals []T, b, m, n int) mat[T] {
	ld := paddedLD[T](n)
	a := scratch[T](ld, m)
	src := vals[b*m*n : (b+1)*m*n]
	for i := range m {
		copy(a.data[i*ld:i*ld+n], src[i*n:(i+1)*n])
	}
	return mat[T]{rows: m, cols: n, ld: ld, data: a.data, rowMajor: true}
}

// loadPadded is load (not adjoint) with the columns paddedLD apart.
func loadPadded[T scalar](vals []T, b, m, n int) mat[T] {
	return loadColumns(vals[b*m*n:(b+1)*m*n], m, n, paddedLD[T](m))
}

// loadColumns copies the row-major m×n src into a column-major matrix on a
// scratch buffer whose columns are ld ≥ m apart.
func loadColumns[T scalar](src []T, m, n, ld int) mat[T] {
	a := scratch[T](ld, n)
	a.rows = m
	strided.Copy(a.data, 0, []int{1, a.ld}, src, 0, []int{n, 1}, []int{m, n})
	return a
}

// paddedLD is the distance loadPadded puts between the columns of m
// rows (and loadRows between rows of m columns): m rounded up to whole
// 64-byte lines, so that every column starts a line, and one line more
// where that is a multiple of 1 KiB, whose columns would share a few L1
// sets (see strided's setSafeRows): GEMM's kernels read and write 12 or 16
// of them at a time, and a leaf's passes 16 rows of a row-major copy. One
// thread, alternating (AMD EPYC, Zen 5): QR's rank-16 update of a 256×240
// float64 block ran at 82.8 GFLOP/s with columns 2 KiB apart against 85.6
// a line further, and the whole QR of n = 256 took 1–2% less (on the
// row-major copy, 14% less); whole lines took 2–2.5% off float64 QRs of
// n = 249, 250 and 1023, 4% off 511 and 7% off 255.
func paddedLD[T scalar](m int) int {
	size := int(sizeOf[T]())
	line := 64 / size
	ld := (m + line - 1) / line * line
	if ld == 0 || ld*size%1024 != 0 {
		return ld
	}
	return ld + line
}

// store writes a (or its conjugate transpose when adjoint is set) as
// matrix b of the row-major stack out.
func store[T scalar](out []T, b int, a mat[T], adjoint bool) {
	r, c := a.rows, a.cols
	dst := out[b*r*c : (b+1)*r*c]
	if adjoint {
		for j := range c {
			level1.Conj(dst[j*r:(j+1)*r], a.col(j))
		}
		return
	}
	strided.Copy(dst, 0, []int{c, 1}, a.data, 0, []int{1, a.ld}, []int{r, c})
}

// storeUpper is store for the upper trapezoidal part of a (on and above
// its diagonal; what lies below it is ignored) into a stack of zeros. It
// copies a's columns in bands of upperBand, each down to the band's last
// row on the diagonal, and clears what that copied from below the
// diagonal: about half of a square R's elements, and of store's memory
// traffic.
func storeUpper[T scalar](out []T, b int, a mat[T], adjoint bool) {
	r, c := a.rows, a.cols
	dst := out[b*r*c : (b+1)*r*c]
	if a.rowMajor { // each row's part from the diagonal on, in place
		for i := range min(r, c) {
			copy(dst[i*c+i:(i+1)*c], a.data[i*a.ld+i:i*a.ld+c])
		}
		return
	}
	if adjoint {
		for j := range c {
			top := min(j+1, r)
			level1.Conj(dst[j*r:j*r+top], a.col(j)[:top])
		}
		return
	}
	for j0 := 0; j0 < c; j0 += upperBand {
		w, top := min(upperBand, c-j0), min(j0+upperBand, r)
		strided.CopyPlane(dst, j0, c, 1, a.data, j0*a.ld, 1, a.ld, top, w)
		for i := j0 + 1; i < top; i++ {
			clear(dst[i*c+j0 : i*c+min(i, j0+w)])
		}
	}
}

// upperBand is storeUpper's band width: a multiple of the 8×8 tiles of
// strided.CopyPlane's transposing kernel.
const upperBand = 32

// newTensor wraps a row-major buffer; the extents always match.
func newTensor[T tensor.Elem](data []T, shape []int) *tensor.Tensor {
	t, err := tensor.New(data, shape...)
	if err != nil {
		panic("linalg: internal error: " + err.Error())
	}
	return t
}

// realTensor returns the float64 values vals as a tensor of the real
// dtype that belongs to T (float32 for float32 and complex64).
func realTensor[T scalar](vals []float64, shape []int) *tensor.Tensor {
	var z T
	switch any(z).(type) {
	case float32, complex64:
		f := make([]float32, len(vals))
		for i, v := range vals {
			f[i] = float32(v)
		}
		return newTensor(f, shape)
	}
	return newTensor(vals, shape)
}
