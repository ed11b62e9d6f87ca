package cpu

import (
	"fmt"

	"github.com/goferro/goferro/internal/errs"
	"github.com/goferro/goferro/tensor"
)

// KernelError is the error type of the CPU kernels. Kind is one of the
// tensor package's sentinels (tensor.ErrShape, tensor.ErrDType,
// tensor.ErrIndex, tensor.ErrLayout), so callers branch with
// errors.Is(err, tensor.ErrDType) or inspect Op with errors.As.
type KernelError struct {
	Op   string // the kernel that failed, e.g. "Binary(add)"
	Kind error  // a tensor sentinel error
	Msg  string // what exactly was wrong
	Err  error  // an underlying cause (for example a *tensor.Error), if any
}

// Error formats the error as "cpu.Op: message[: cause]".
func (e *KernelError) Error() string { return errs.Message("cpu."+e.Op, e.Msg, e.Err) }

// Unwrap returns the kind and the cause, so errors.Is matches both.
func (e *KernelError) Unwrap() []error { return errs.Unwrap(e.Kind, e.Err) }

func errorf(op string, kind error, format string, args ...any) error {
	return &KernelError{Op: op, Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// wrapError wraps an error from the tensor package, keeping its kind.
func wrapError(op string, kind error, err error, format string, args ...any) error {
	return &KernelError{Op: op, Kind: kind, Msg: fmt.Sprintf(format, args...), Err: err}
}

// checkNotNil rejects nil tensors.
func checkNotNil(op string, ts ...*tensor.Tensor) error {
	for i, t := range ts {
		if t == nil {
			return errorf(op, tensor.ErrLayout, "operand %d is a nil tensor", i)
		}
	}
	return nil
}

// checkWritable rejects destinations that address one element from several
// indices (a zero stride on an axis of extent > 1): writes through them would
// race with each other.
func checkWritable(op string, dst *tensor.Tensor) error {
	st := dst.StridesView()
	for i, d := range dst.ShapeView() {
		if d > 1 && st[i] == 0 {
			return errorf(op, tensor.ErrLayout, "destination has stride 0 on axis %d of extent %d", i, d)
		}
	}
	return nil
}

// broadcastInto checks that the operands broadcast to exactly dst's shape.
func broadcastInto(op string, dst *tensor.Tensor, srcs ...*tensor.Tensor) error {
	r := dst.Rank()
	for k, s := range srcs {
		sr := s.Rank()
		if sr > r {
			return errorf(op, tensor.ErrShape, "operand %d of shape %v has more axes than the destination shape %v", k, s.Shape(), dst.Shape())
		}
		for i := 0; i < sr; i++ {
			if d, want := s.Dim(i), dst.Dim(r-sr+i); d != want && d != 1 {
				return errorf(op, tensor.ErrShape, "operand %d of shape %v does not broadcast to the destination shape %v", k, s.Shape(), dst.Shape())
			}
		}
	}
	return nil
}

// broadcastShape returns the broadcast of the operands' shapes.
func broadcastShape(op string, ts ...*tensor.Tensor) (tensor.Shape, error) {
	shapes := make([]tensor.Shape, len(ts))
	for i, t := range ts {
		shapes[i] = t.ShapeView() // BroadcastShapes only reads them
	}
	out, err := tensor.BroadcastShapes(shapes...)
	if err != nil {
		return nil, wrapError(op, tensor.ErrShape, err, "operands do not broadcast")
	}
	return out, nil
}

// sameDType checks that every operand has the dtype of the first.
func sameDType(op string, ts ...*tensor.Tensor) error {
	for _, t := range ts[1:] {
		if t.DType() != ts[0].DType() {
			return errorf(op, tensor.ErrDType, "operand dtypes %v and %v differ", ts[0].DType(), t.DType())
		}
	}
	return nil
}
