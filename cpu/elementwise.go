package cpu

import "github.com/goferro/goferro/tensor"

// resultDType returns the dtype of op applied to dt, or an error if op is
// not defined on dt.
func (op UnaryOp) resultDType(name string, dt tensor.DType) (tensor.DType, error) {
	if op < OpNeg || op > OpSqrt {
		return tensor.Invalid, errorf(name, tensor.ErrDType, "unknown unary operation %v", op)
	}
	if unaryKernel(op, dt) == nil {
		return tensor.Invalid, errorf(name, tensor.ErrDType, "%v is not defined on %v", op, dt)
	}
	if op == OpAbs {
		return dt.Real(), nil
	}
	return dt, nil
}

// Unary applies op elementwise and returns the result as a new row-major
// tensor. Its dtype is a's, except for OpAbs of a complex tensor, which has
// the real dtype of the same precision.
func Unary(op UnaryOp, a *tensor.Tensor) (*tensor.Tensor, error) {
	name := fnName(unaryFnNames, uint8(op), "Unary", op)
	if err := checkNotNil(name, a); err != nil {
		return nil, err
	}
	dt, err := op.resultDType(name, a.DType())
	if err != nil {
		return nil, err
	}
	dst, err := tensor.Zeros(dt, a.ShapeView()...)
	if err != nil {
		return nil, wrapError(name, tensor.ErrShape, err, "allocating the result")
	}
	unaryKernel(op, a.DType())(ops(dst, a))
	return dst, nil
}

// UnaryInto applies op elementwise to a, broadcast to dst's shape, and writes
// the result into dst, which must have the result dtype (see Unary).
func UnaryInto(op UnaryOp, dst, a *tensor.Tensor) error {
	name := fnName(unaryIntoNames, uint8(op), "UnaryInto", op)
	if err := checkNotNil(name, dst, a); err != nil {
		return err
	}
	dt, err := op.resultDType(name, a.DType())
	if err != nil {
		return err
	}
	if dst.DType() != dt {
		return errorf(name, tensor.ErrDType, "destination is %v, result is %v", dst.DType(), dt)
	}
	if err := checkDst(name, dst, a); err != nil {
		return err
	}
	unaryKernel(op, a.DType())(ops(dst, a))
	return nil
}

// checkDst checks a destination against the operands it receives.
func checkDst(name string, dst *tensor.Tensor, srcs ...*tensor.Tensor) error {
	if err := checkWritable(name, dst); err != nil {
		return err
	}
	return broadcastInto(name, dst, srcs...)
}

// binaryCheck validates the operands of a binary operation and returns the
// kernel.
func binaryCheck(name string, op BinaryOp, a, b *tensor.Tensor) (runner, error) {
	if err := checkNotNil(name, a, b); err != nil {
		return nil, err
	}
	if err := sameDType(name, a, b); err != nil {
		return nil, err
	}
	if op < OpAdd || op > OpMin {
		return nil, errorf(name, tensor.ErrDType, "unknown binary operation %v", op)
	}
	k := binaryKernel(op, a.DType())
	if k == nil {
		return nil, errorf(name, tensor.ErrDType, "%v is not defined on %v", op, a.DType())
	}
	return k, nil
}

// Binary applies op elementwise to a and b, broadcast against each other,
// and returns the result as a new row-major tensor of their dtype.
func Binary(op BinaryOp, a, b *tensor.Tensor) (*tensor.Tensor, error) {
	name := fnName(binaryFnNames, uint8(op), "Binary", op)
	k, err := binaryCheck(name, op, a, b)
	if err != nil {
		return nil, err
	}
	dst, err := newResult(name, a.DType(), a, b)
	if err != nil {
		return nil, err
	}
	k(ops(dst, a, b))
	return dst, nil
}

// BinaryInto applies op elementwise to a and b, broadcast to dst's shape, and
// writes the result into dst, which must have their dtype.
func BinaryInto(op BinaryOp, dst, a, b *tensor.Tensor) error {
	name := fnName(binaryIntoName, uint8(op), "BinaryInto", op)
	k, err := binaryCheck(name, op, a, b)
	if err != nil {
		return err
	}
	if err := checkNotNil(name, dst); err != nil {
		return err
	}
	if dst.DType() != a.DType() {
		return errorf(name, tensor.ErrDType, "destination is %v, operands are %v", dst.DType(), a.DType())
	}
	if err := checkDst(name, dst, a, b); err != nil {
		return err
	}
	k(ops(dst, a, b))
	return nil
}

// newResult allocates a row-major tensor of dtype dt with the broadcast
// shape of the operands.
func newResult(name string, dt tensor.DType, ts ...*tensor.Tensor) (*tensor.Tensor, error) {
	// Operands of one shape (the usual case) need no broadcast, nor its
	// shape copies; Zeros copies the shape it is given.
	shape := ts[0].ShapeView()
	for _, t := range ts[1:] {
		if !t.ShapeView().Equal(shape) {
			var err error
			if shape, err = broadcastShape(name, ts...); err != nil {
				return nil, err
			}
			break
		}
	}
	dst, err := tensor.Zeros(dt, shape...)
	if err != nil {
		return nil, wrapError(name, tensor.ErrShape, err, "allocating the result")
	}
	return dst, nil
}

// compareCheck validates the operands of a comparison and returns the kernel.
func compareCheck(name string, op CompareOp, a, b *tensor.Tensor) (runner, error) {
	if err := checkNotNil(name, a, b); err != nil {
		return nil, err
	}
	if err := sameDType(name, a, b); err != nil {
		return nil, err
	}
	if op < OpEq || op > OpGe {
		return nil, errorf(name, tensor.ErrDType, "unknown comparison %v", op)
	}
	k := compareKernel(op, a.DType())
	if k == nil {
		return nil, errorf(name, tensor.ErrDType, "%v is not defined on %v", op, a.DType())
	}
	return k, nil
}

// Compare compares a and b elementwise, broadcast against each other, and
// returns a new row-major Bool tensor.
func Compare(op CompareOp, a, b *tensor.Tensor) (*tensor.Tensor, error) {
	name := fnName(compareFnNames, uint8(op), "Compare", op)
	k, err := compareCheck(name, op, a, b)
	if err != nil {
		return nil, err
	}
	dst, err := newResult(name, tensor.Bool, a, b)
	if err != nil {
		return nil, err
	}
	k(ops(dst, a, b))
	return dst, nil
}

// CompareInto compares a and b, broadcast to dst's shape, into the Bool
// tensor dst.
func CompareInto(op CompareOp, dst, a, b *tensor.Tensor) error {
	name := fnName(compareIntoNms, uint8(op), "CompareInto", op)
	k, err := compareCheck(name, op, a, b)
	if err != nil {
		return err
	}
	if err := checkNotNil(name, dst); err != nil {
		return err
	}
	if dst.DType() != tensor.Bool {
		return errorf(name, tensor.ErrDType, "destination is %v, not bool", dst.DType())
	}
	if err := checkDst(name, dst, a, b); err != nil {
		return err
	}
	k(ops(dst, a, b))
	return nil
}

func selectCheck(name string, cond, a, b *tensor.Tensor) error {
	if err := checkNotNil(name, cond, a, b); err != nil {
		return err
	}
	if cond.DType() != tensor.Bool {
		return errorf(name, tensor.ErrDType, "condition is %v, not bool", cond.DType())
	}
	return sameDType(name, a, b)
}

// Select returns where(cond, a, b): a new row-major tensor holding a's
// element where cond is true and b's where it is false. cond must be Bool,
// a and b must share a dtype (any dtype), and all three broadcast together.
func Select(cond, a, b *tensor.Tensor) (*tensor.Tensor, error) {
	const name = "Select"
	if err := selectCheck(name, cond, a, b); err != nil {
		return nil, err
	}
	dst, err := newResult(name, a.DType(), cond, a, b)
	if err != nil {
		return nil, err
	}
	selectKernel(a.DType())(ops(dst, cond, a, b))
	return dst, nil
}

// SelectInto writes where(cond, a, b), broadcast to dst's shape, into dst,
// which must have a's dtype.
func SelectInto(dst, cond, a, b *tensor.Tensor) error {
	const name = "SelectInto"
	if err := selectCheck(name, cond, a, b); err != nil {
		return err
	}
	if err := checkNotNil(name, dst); err != nil {
		return err
	}
	if dst.DType() != a.DType() {
		return errorf(name, tensor.ErrDType, "destination is %v, operands are %v", dst.DType(), a.DType())
	}
	if err := checkDst(name, dst, cond, a, b); err != nil {
		return err
	}
	selectKernel(a.DType())(ops(dst, cond, a, b))
	return nil
}

// Add returns a + b elementwise (see Binary).
func Add(a, b *tensor.Tensor) (*tensor.Tensor, error) { return Binary(OpAdd, a, b) }

// Sub returns a - b elementwise (see Binary).
func Sub(a, b *tensor.Tensor) (*tensor.Tensor, error) { return Binary(OpSub, a, b) }

// Mul returns a · b elementwise (see Binary).
func Mul(a, b *tensor.Tensor) (*tensor.Tensor, error) { return Binary(OpMul, a, b) }

// Div returns a / b elementwise (see Binary for integer division).
func Div(a, b *tensor.Tensor) (*tensor.Tensor, error) { return Binary(OpDiv, a, b) }

// Pow returns a raised to the power b elementwise (see Binary).
func Pow(a, b *tensor.Tensor) (*tensor.Tensor, error) { return Binary(OpPow, a, b) }

// Maximum returns the elementwise maximum of a and b (see Binary).
func Maximum(a, b *tensor.Tensor) (*tensor.Tensor, error) { return Binary(OpMax, a, b) }

// Minimum returns the elementwise minimum of a and b (see Binary).
func Minimum(a, b *tensor.Tensor) (*tensor.Tensor, error) { return Binary(OpMin, a, b) }

// Neg returns -a elementwise (see Unary).
func Neg(a *tensor.Tensor) (*tensor.Tensor, error) { return Unary(OpNeg, a) }

// Conj returns the complex conjugate of a (a copy of a for real dtypes).
func Conj(a *tensor.Tensor) (*tensor.Tensor, error) { return Unary(OpConj, a) }

// Abs returns |a| elementwise; complex tensors give their real dtype.
func Abs(a *tensor.Tensor) (*tensor.Tensor, error) { return Unary(OpAbs, a) }

// Exp returns e**a elementwise, for float and complex tensors.
func Exp(a *tensor.Tensor) (*tensor.Tensor, error) { return Unary(OpExp, a) }

// Log returns the natural logarithm of a elementwise, for float and complex
// tensors (log of a negative float is NaN).
func Log(a *tensor.Tensor) (*tensor.Tensor, error) { return Unary(OpLog, a) }

// Sqrt returns the square root of a elementwise, for float and complex
// tensors (sqrt of a negative float is NaN).
func Sqrt(a *tensor.Tensor) (*tensor.Tensor, error) { return Unary(OpSqrt, a) }

// Eq returns a == b elementwise as a Bool tensor.
func Eq(a, b *tensor.Tensor) (*tensor.Tensor, error) { return Compare(OpEq, a, b) }

// Ne returns a != b elementwise as a Bool tensor.
func Ne(a, b *tensor.Tensor) (*tensor.Tensor, error) { return Compare(OpNe, a, b) }

// Lt returns a < b elementwise as a Bool tensor (float and integer dtypes).
func Lt(a, b *tensor.Tensor) (*tensor.Tensor, error) { return Compare(OpLt, a, b) }

// Le returns a <= b elementwise as a Bool tensor (float and integer dtypes).
func Le(a, b *tensor.Tensor) (*tensor.Tensor, error) { return Compare(OpLe, a, b) }

// Gt returns a > b elementwise as a Bool tensor (float and integer dtypes).
func Gt(a, b *tensor.Tensor) (*tensor.Tensor, error) { return Compare(OpGt, a, b) }

// Ge returns a >= b elementwise as a Bool tensor (float and integer dtypes).
func Ge(a, b *tensor.Tensor) (*tensor.Tensor, error) { return Compare(OpGe, a, b) }
