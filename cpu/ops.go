package cpu

import "fmt"

// UnaryOp names an elementwise operation of one operand.
type UnaryOp uint8

// The unary operations. Neg, Conj and Abs are defined on every numeric dtype
// (Conj is the identity on real ones; Abs of a complex tensor has the real
// dtype of the same precision); Exp, Log and Sqrt on float and complex
// dtypes. None is defined on Bool.
const (
	OpNeg UnaryOp = iota + 1
	OpConj
	OpAbs
	OpExp
	OpLog
	OpSqrt
)

var unaryNames = [...]string{OpNeg: "neg", OpConj: "conj", OpAbs: "abs", OpExp: "exp", OpLog: "log", OpSqrt: "sqrt"}

// String returns the lowercase name of the operation ("neg", "exp", ...).
func (op UnaryOp) String() string {
	if op > 0 && int(op) < len(unaryNames) {
		return unaryNames[op]
	}
	return fmt.Sprintf("unary(%d)", uint8(op))
}

// BinaryOp names an elementwise arithmetic operation of two operands.
type BinaryOp uint8

// The binary operations, all defined on every numeric dtype except OpMax and
// OpMin, which are not defined on complex dtypes. None is defined on Bool.
//
// Integer division truncates toward zero and gives 0 for a zero divisor (the
// value numpy produces); integer OpPow with a negative exponent gives the
// truncated real result (1 or -1 for bases ±1, 0 otherwise). OpMax and OpMin
// propagate NaNs. Integer arithmetic wraps around on overflow.
const (
	OpAdd BinaryOp = iota + 1
	OpSub
	OpMul
	OpDiv
	OpPow
	OpMax
	OpMin
)

var binaryNames = [...]string{OpAdd: "add", OpSub: "sub", OpMul: "mul", OpDiv: "div", OpPow: "pow", OpMax: "max", OpMin: "min"}

// String returns the lowercase name of the operation ("add", "pow", ...).
func (op BinaryOp) String() string {
	if op > 0 && int(op) < len(binaryNames) {
		return binaryNames[op]
	}
	return fmt.Sprintf("binary(%d)", uint8(op))
}

// CompareOp names an elementwise comparison; its result has dtype Bool.
type CompareOp uint8

// The comparisons. OpEq and OpNe are defined on every dtype; the orderings
// on float and integer dtypes only (not complex, not Bool). Comparisons with
// NaN are false except OpNe, as in Go and IEEE 754.
const (
	OpEq CompareOp = iota + 1
	OpNe
	OpLt
	OpLe
	OpGt
	OpGe
)

var compareNames = [...]string{OpEq: "eq", OpNe: "ne", OpLt: "lt", OpLe: "le", OpGt: "gt", OpGe: "ge"}

// String returns the lowercase name of the comparison ("eq", "lt", ...).
func (op CompareOp) String() string {
	if op > 0 && int(op) < len(compareNames) {
		return compareNames[op]
	}
	return fmt.Sprintf("compare(%d)", uint8(op))
}

// ReduceOp names a reduction over a set of axes.
type ReduceOp uint8

// The reductions. ReduceSum, ReduceProd and ReduceMean are defined on every
// numeric dtype, ReduceMax and ReduceMin on float and integer dtypes; none on
// Bool. Sums and products accumulate in the element type (integers wrap
// around). ReduceMean of an integer tensor is computed in float64 and has
// dtype Float64; of a float or complex tensor it keeps the dtype. ReduceMax
// and ReduceMin propagate NaNs, and over an empty set of elements they are an
// error (they have no identity); an empty ReduceSum is 0, ReduceProd 1,
// ReduceMean NaN.
const (
	ReduceSum ReduceOp = iota + 1
	ReduceProd
	ReduceMax
	ReduceMin
	ReduceMean
)

var reduceNames = [...]string{ReduceSum: "sum", ReduceProd: "prod", ReduceMax: "max", ReduceMin: "min", ReduceMean: "mean"}

// String returns the lowercase name of the reduction ("sum", "mean", ...).
func (op ReduceOp) String() string {
	if op > 0 && int(op) < len(reduceNames) {
		return reduceNames[op]
	}
	return fmt.Sprintf("reduce(%d)", uint8(op))
}

// Kernel names for errors ("Binary(add)", "BinaryInto(add)", ...), built
// once so the hot path does not concatenate strings.
var (
	unaryFnNames   = fnNames("Unary", unaryNames[:])
	unaryIntoNames = fnNames("UnaryInto", unaryNames[:])
	binaryFnNames  = fnNames("Binary", binaryNames[:])
	binaryIntoName = fnNames("BinaryInto", binaryNames[:])
	compareFnNames = fnNames("Compare", compareNames[:])
	compareIntoNms = fnNames("CompareInto", compareNames[:])
	reduceFnNames  = fnNames("Reduce", reduceNames[:])
	reduceIntoNms  = fnNames("ReduceInto", reduceNames[:])
)

func fnNames(fn string, ops []string) []string {
	out := make([]string, len(ops))
	for i, op := range ops {
		out[i] = fn + "(" + op + ")"
	}
	return out
}

// fnName returns names[op], or fn(op) built on the spot for an unknown op.
func fnName(names []string, op uint8, fn string, s fmt.Stringer) string {
	if int(op) < len(names) && op > 0 {
		return names[op]
	}
	return fn + "(" + s.String() + ")"
}
