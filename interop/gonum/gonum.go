package gonum

import (
	"fmt"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/cblas128"
	"gonum.org/v1/gonum/mat"

	"github.com/goferro/goferro/tensor"
)

// Errors wrap the tensor package's sentinels, so callers branch with
// errors.Is(err, tensor.ErrShape) and the like.
func errorf(op string, kind error, format string, args ...any) error {
	return fmt.Errorf("gonum.%s: %w: %s", op, kind, fmt.Sprintf(format, args...))
}

// FromDense returns a float64 tensor of shape (rows, columns) that shares
// m's memory: writes through either are seen by both. Its row stride is m's
// stride, so a view of a larger matrix (as Dense.Slice returns) is shared
// too. The zero Dense gives a new (0, 0) tensor.
func FromDense(m *mat.Dense) (*tensor.Tensor, error) {
	if m == nil {
		return nil, errorf("FromDense", tensor.ErrLayout, "nil matrix")
	}
	raw := m.RawMatrix()
	return fromGeneral("FromDense", raw.Data, raw.Rows, raw.Cols, raw.Stride)
}

// FromCDense is FromDense for complex matrices: a complex128 tensor that
// shares m's memory.
func FromCDense(m *mat.CDense) (*tensor.Tensor, error) {
	if m == nil {
		return nil, errorf("FromCDense", tensor.ErrLayout, "nil matrix")
	}
	raw := m.RawCMatrix()
	return fromGeneral("FromCDense", raw.Data, raw.Rows, raw.Cols, raw.Stride)
}

// FromVecDense returns a rank-1 float64 tensor that shares v's memory, with
// v's increment as its stride. The zero VecDense gives a new empty tensor.
func FromVecDense(v *mat.VecDense) (*tensor.Tensor, error) {
	if v == nil {
		return nil, errorf("FromVecDense", tensor.ErrLayout, "nil vector")
	}
	raw := v.RawVector()
	if raw.N == 0 {
		return tensor.Zeros(tensor.Float64, 0)
	}
	return tensor.FromStrided(raw.Data, tensor.Shape{raw.N}, []int{raw.Inc}, 0)
}

func fromGeneral[T float64 | complex128](op string, data []T, rows, cols, stride int) (*tensor.Tensor, error) {
	if rows == 0 || cols == 0 {
		return tensor.Zeros(tensor.DTypeOf[T](), rows, cols)
	}
	return tensor.FromStrided(data, tensor.Shape{rows, cols}, []int{stride, 1}, 0)
}

// ToDense returns the rank-2 tensor t as a *mat.Dense. A float64 tensor
// whose rows are each contiguous and do not overlap (column stride 1, row
// stride at least the number of columns, as in any row-major tensor and
// any slice of one) is shared, not copied: writes through either are seen
// by both. Any other float64 layout (a transpose, a reversed or broadcast
// axis) is copied, and float32, int32 and int64 tensors are converted into
// a new matrix (int64 values beyond 2⁵³ round). Complex tensors (see
// ToCDense) and bool tensors give an error matching tensor.ErrDType; a rank
// other than 2 or an extent of 0, which gonum matrices cannot have, one
// matching tensor.ErrShape.
func ToDense(t *tensor.Tensor) (*mat.Dense, error) {
	const op = "ToDense"
	if err := checkMatrix(op, t); err != nil {
		return nil, err
	}
	r, c := t.Dim(0), t.Dim(1)
	if t.DType() == tensor.Float64 {
		if data, stride, ok := shared[float64](t); ok {
			var m mat.Dense
			m.SetRawMatrix(blas64.General{Rows: r, Cols: c, Stride: stride, Data: data})
			return &m, nil
		}
	}
	vals, err := realValues(op, t)
	if err != nil {
		return nil, err
	}
	return mat.NewDense(r, c, vals), nil
}

// ToCDense is ToDense for complex matrices: a complex128 tensor whose rows
// are contiguous is shared, any other layout copied, and the other numeric
// dtypes converted (a real value v becomes v+0i). Bool tensors give an
// error matching tensor.ErrDType.
func ToCDense(t *tensor.Tensor) (*mat.CDense, error) {
	const op = "ToCDense"
	if err := checkMatrix(op, t); err != nil {
		return nil, err
	}
	r, c := t.Dim(0), t.Dim(1)
	if t.DType() == tensor.Complex128 {
		if data, stride, ok := shared[complex128](t); ok {
			var m mat.CDense
			m.SetRawCMatrix(cblas128.General{Rows: r, Cols: c, Stride: stride, Data: data})
			return &m, nil
		}
	}
	if !t.DType().IsNumeric() {
		return nil, errorf(op, tensor.ErrDType, "%v tensor", t.DType())
	}
	vals := t.Complex128Values()
	if vals == nil {
		return nil, errorf(op, tensor.ErrShape, "cannot copy a tensor of shape %v", t.ShapeView())
	}
	return mat.NewCDense(r, c, vals), nil
}

// ToVecDense returns the rank-1 tensor t as a *mat.VecDense. A float64
// tensor with a positive stride is shared; a reversed or broadcast one is
// copied, and float32, int32 and int64 tensors are converted, as ToDense
// does. Other dtypes give an error matching tensor.ErrDType; a rank other
// than 1 or a length of 0 one matching tensor.ErrShape.
func ToVecDense(t *tensor.Tensor) (*mat.VecDense, error) {
	const op = "ToVecDense"
	if t == nil {
		return nil, errorf(op, tensor.ErrLayout, "nil tensor")
	}
	if t.Rank() != 1 || t.Len() == 0 {
		return nil, errorf(op, tensor.ErrShape, "shape %v is not a non-empty vector", t.ShapeView())
	}
	n := t.Len()
	if t.DType() == tensor.Float64 {
		inc := t.StridesView()[0]
		if n == 1 {
			inc = 1
		}
		if inc > 0 {
			buf, _ := tensor.Buffer[float64](t)
			var v mat.VecDense
			v.SetRawVector(blas64.Vector{N: n, Inc: inc, Data: buf[t.Offset() : t.Offset()+(n-1)*inc+1]})
			return &v, nil
		}
	}
	vals, err := realValues(op, t)
	if err != nil {
		return nil, err
	}
	return mat.NewVecDense(n, vals), nil
}

// checkMatrix checks that t is a non-empty rank-2 tensor.
func checkMatrix(op string, t *tensor.Tensor) error {
	if t == nil {
		return errorf(op, tensor.ErrLayout, "nil tensor")
	}
	if t.Rank() != 2 || t.Len() == 0 {
		return errorf(op, tensor.ErrShape, "shape %v is not a non-empty matrix", t.ShapeView())
	}
	return nil
}

// shared returns the slice of t's buffer and the row stride that describe
// the rank-2 tensor t in gonum's layout, if it has one: each row contiguous,
// rows at a stride of at least the row length. A stride that does not
// matter (the column stride of one column, the row stride of one row) may
// be anything.
func shared[T float64 | complex128](t *tensor.Tensor) (data []T, stride int, ok bool) {
	r, c := t.Dim(0), t.Dim(1)
	st := t.StridesView()
	stride = st[0]
	if r == 1 {
		stride = c
	}
	if (c > 1 && st[1] != 1) || stride < c {
		return nil, 0, false
	}
	buf, err := tensor.Buffer[T](t)
	if err != nil {
		return nil, 0, false
	}
	off := t.Offset()
	return buf[off : off+(r-1)*stride+c], stride, true
}

// realValues returns the elements of a real numeric tensor in row-major
// order as float64.
func realValues(op string, t *tensor.Tensor) ([]float64, error) {
	switch t.DType() {
	case tensor.Float64:
		return tensor.Values[float64](t)
	case tensor.Float32, tensor.Int32, tensor.Int64:
		cv := t.Complex128Values()
		if cv == nil {
			return nil, errorf(op, tensor.ErrShape, "cannot copy a tensor of shape %v", t.ShapeView())
		}
		out := make([]float64, len(cv))
		for i, v := range cv {
			out[i] = real(v)
		}
		return out, nil
	}
	return nil, errorf(op, tensor.ErrDType, "%v tensor; gonum's real matrices hold float64", t.DType())
}
