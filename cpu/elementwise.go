package cpu

import (
	"github.com/goferro/goferro/internal/strided"
	"github.com/goferro/goferro/tensor"
)

// unaryKernel returns the runner of op for operands of dtype dt and the
// dtype of its result, or the error that op is none or is not defined on
// dt.
func unaryKernel(name string, op UnaryOp, dt tensor.DType) (runner, tensor.DType, error) {
	k := lookup(opUnary, uint8(op), dt)
	if k == nil {
		return nil, tensor.Invalid, kernelError(name, opUnary, uint8(op), dt)
	}
	if op == OpAbs {
		return k, dt.Real(), nil
	}
	return k, dt, nil
}

// Unary applies op elementwise and returns the result as a new row-major
// tensor. Its dtype is a's, except for OpAbs of a complex tensor, which has
// the real dtype of the same precision.
func Unary(op UnaryOp, a *tensor.Tensor) (*tensor.Tensor, error) {
	name := callName(kinds[opUnary].names[0], uint8(op), "Unary", op)
	if err := checkNotNil(name, a); err != nil {
		return nil, err
	}
	k, dt, err := unaryKernel(name, op, a.DType())
	if err != nil {
		return nil, err
	}
	dst, err := tensor.Zeros(dt, a.ShapeView()...)
	if err != nil {
		return nil, wrapError(name, tensor.ErrShape, err, "allocating the result")
	}
	k(ops(dst, a))
	return dst, nil
}

// UnaryInto applies op elementwise to a, broadcast to dst's shape, and writes
// the result into dst, which must have the result dtype (see Unary).
func UnaryInto(op UnaryOp, dst, a *tensor.Tensor) error {
	name := callName(kinds[opUnary].names[1], uint8(op), "UnaryInto", op)
	if err := checkNotNil(name, dst, a); err != nil {
		return err
	}
	k, dt, err := unaryKernel(name, op, a.DType())
	if err != nil {
		return err
	}
	if err := checkDstDType(name, dst, "result is", dt); err != nil {
		return err
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

// checkDst checks a destination against the operands it receives.
func checkDst(name string, dst *tensor.Tensor, srcs ...*tensor.Tensor) error {
	if err := checkWritable(name, dst); err != nil {
		return err
	}
	return broadcastInto(name, dst, srcs...)
}

// checkDstDType checks that dst has the result's dtype dt; the error says
// what it wanted as "destination is int32, " + want + " float64".
func checkDstDType(name string, dst *tensor.Tensor, want string, dt tensor.DType) error {
	if dst.DType() != dt {
		return dstDTypeError(name, dst.DType(), want, dt)
	}
	return nil
}

// dstDTypeError is checkDstDType's error (out of line: checkDstDType
// inlines).
func dstDTypeError(name string, got tensor.DType, want string, dt tensor.DType) error {
	return errorf(name, tensor.ErrDType, "destination is %v, %s %v", got, want, dt)
}

// pairKernel validates the operands of op, a binary operation or a
// comparison (kind k), and returns its runner.
func pairKernel(name string, k opKind, op uint8, a, b *tensor.Tensor) (runner, error) {
	if err := checkNotNil(name, a, b); err != nil {
		return nil, err
	}
	if err := sameDType(name, a, b); err != nil {
		return nil, err
	}
	run := lookup(k, op, a.DType())
	if run == nil {
		return nil, kernelError(name, k, op, a.DType())
	}
	if k == opBinary && op == uint8(OpPow) {
		if err := checkPow(name, b); err != nil {
			return nil, err
		}
	}
	return run, nil
}

// checkPow refuses integer exponents below zero, as numpy does.
func checkPow(name string, exp *tensor.Tensor) error {
	neg := false
	switch exp.DType() {
	case tensor.Int32:
		neg = anyNegative[int32](exp)
	case tensor.Int64:
		neg = anyNegative[int64](exp)
	}
	if neg {
		return errorf(name, tensor.ErrDomain, "integers to negative integer powers are not allowed")
	}
	return nil
}

// anyNegative reports whether some element of t is below zero.
func anyNegative[T integer](t *tensor.Tensor) bool {
	b := buf[T](t)
	neg := false
	strided.Rows(t.ShapeView(), [][]int{t.StridesView()}, []int{t.Offset()}, func(n int, o, s []int) {
		for p := o[0]; n > 0; n-- {
			neg = neg || b[p] < 0
			p += s[0]
		}
	})
	return neg
}

// pairDType is the dtype of the result of an operation of kind k on
// operands of dtype dt, and how an error about a destination names it.
func pairDType(k opKind, dt tensor.DType) (tensor.DType, string) {
	if k == opCompare {
		return tensor.Bool, "not"
	}
	return dt, "operands are"
}

// pair is Binary and Compare: op, of the kind d describes, on a and b into
// a new tensor.
func pair[Op opCode](d *kindInfo, op Op, a, b *tensor.Tensor) (*tensor.Tensor, error) {
	name := callName(d.names[0], uint8(op), d.calls[0], op)
	run, err := pairKernel(name, d.kind, uint8(op), a, b)
	if err != nil {
		return nil, err
	}
	dt, _ := pairDType(d.kind, a.DType())
	dst, err := newResult(name, dt, a, b)
	if err != nil {
		return nil, err
	}
	run(ops(dst, a, b))
	return dst, nil
}

// pairInto is BinaryInto and CompareInto: op, of the kind d describes, on a
// and b into dst.
func pairInto[Op opCode](d *kindInfo, op Op, dst, a, b *tensor.Tensor) error {
	name := callName(d.names[1], uint8(op), d.calls[1], op)
	run, err := pairKernel(name, d.kind, uint8(op), a, b)
	if err != nil {
		return err
	}
	if err := checkNotNil(name, dst); err != nil {
		return err
	}
	dt, want := pairDType(d.kind, a.DType())
	if err := checkDstDType(name, dst, want, dt); err != nil {
		return err
	}
	if err := checkDst(name, dst, a, b); err != nil {
		return err
	}
	o := ops(dst, a, b)
	if err := o.unalias(name, false); err != nil {
		return err
	}
	run(o)
	return nil
}

// Binary applies op elementwise to a and b, broadcast against each other,
// and returns the result as a new row-major tensor of their dtype.
func Binary(op BinaryOp, a, b *tensor.Tensor) (*tensor.Tensor, error) {
	return pair(&kinds[opBinary], op, a, b)
}

// BinaryInto applies op elementwise to a and b, broadcast to dst's shape, and
// writes the result into dst, which must have their dtype.
func BinaryInto(op BinaryOp, dst, a, b *tensor.Tensor) error {
	return pairInto(&kinds[opBinary], op, dst, a, b)
}

// Compare compares a and b elementwise, broadcast against each other, and
// returns a new row-major Bool tensor.
func Compare(op CompareOp, a, b *tensor.Tensor) (*tensor.Tensor, error) {
	return pair(&kinds[opCompare], op, a, b)
}

// CompareInto compares a and b, broadcast to dst's shape, into the Bool
// tensor dst.
func CompareInto(op CompareOp, dst, a, b *tensor.Tensor) error {
	return pairInto(&kinds[opCompare], op, dst, a, b)
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
	if err := checkDstDType(name, dst, "operands are", a.DType()); err != nil {
		return err
	}
	if err := checkDst(name, dst, cond, a, b); err != nil {
		return err
	}
	o := ops(dst, cond, a, b)
	if err := o.unalias(name, false); err != nil {
		return err
	}
	selectKernel(a.DType())(o)
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
