package cpu

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/goferro/goferro/graph"
)

// UnaryOp names an elementwise operation of one operand. Neg, Conj and Abs
// are defined on every numeric dtype (Conj is the identity on real ones;
// Abs of a complex tensor has the real dtype of the same precision); Exp,
// Log and Sqrt on float and complex dtypes. None is defined on Bool.
type UnaryOp uint8

// BinaryOp names an elementwise arithmetic operation of two operands. All
// are defined on every numeric dtype except OpMax and OpMin, which are not
// defined on complex dtypes. None is defined on Bool.
//
// Integer division is numpy's floor division (x // y: the quotient rounded
// toward negative infinity, -7 / 2 = -4) and gives 0 for a zero divisor (the
// value numpy produces); integer OpPow with a negative exponent is an error
// wrapping tensor.ErrDomain, as numpy raises ValueError ("Integers to
// negative integer powers are not allowed"). OpMax and OpMin propagate
// NaNs. Integer arithmetic wraps around on overflow.
type BinaryOp uint8

// CompareOp names an elementwise comparison; its result has dtype Bool.
// OpEq and OpNe are defined on every dtype; the orderings on float and
// integer dtypes only (not complex, not Bool). Comparisons with NaN are
// false except OpNe, as in Go and IEEE 754.
type CompareOp uint8

// The elementwise operations (see UnaryOp, BinaryOp and CompareOp). Each is
// the graph op code of the same name (graph.OpCode): the CPU engine runs an
// instruction's code as it stands, and the names are graph's.
const (
	OpNeg  = UnaryOp(graph.OpNeg)
	OpConj = UnaryOp(graph.OpConj)
	OpAbs  = UnaryOp(graph.OpAbs)
	OpExp  = UnaryOp(graph.OpExp)
	OpLog  = UnaryOp(graph.OpLog)
	OpSqrt = UnaryOp(graph.OpSqrt)

	OpAdd = BinaryOp(graph.OpAdd)
	OpSub = BinaryOp(graph.OpSub)
	OpMul = BinaryOp(graph.OpMul)
	OpDiv = BinaryOp(graph.OpDiv)
	OpPow = BinaryOp(graph.OpPow)
	OpMax = BinaryOp(graph.OpMax)
	OpMin = BinaryOp(graph.OpMin)

	OpEq = CompareOp(graph.OpEq)
	OpNe = CompareOp(graph.OpNe)
	OpLt = CompareOp(graph.OpLt)
	OpLe = CompareOp(graph.OpLe)
	OpGt = CompareOp(graph.OpGt)
	OpGe = CompareOp(graph.OpGe)
)

// String returns the lowercase name of the operation ("neg", "exp", ...).
func (op UnaryOp) String() string { return opString(opUnary, uint8(op)) }

// String returns the lowercase name of the operation ("add", "pow", ...).
func (op BinaryOp) String() string { return opString(opBinary, uint8(op)) }

// String returns the lowercase name of the comparison ("eq", "lt", ...).
func (op CompareOp) String() string { return opString(opCompare, uint8(op)) }

// opKind is a kind of elementwise operation: its index in kinds.
type opKind uint8

const (
	opNone opKind = iota
	opUnary
	opBinary
	opCompare
)

// opCode is the type of an elementwise operation (UnaryOp, BinaryOp,
// CompareOp).
type opCode interface {
	~uint8
	fmt.Stringer
}

// kindInfo is what the errors of a kind of elementwise operation say.
type kindInfo struct {
	kind  opKind
	calls [2]string // its functions: "Binary", "BinaryInto"
	noun  string    // what an operation of the kind is called
	// names holds the calls' names by op code, built once (see nameCalls)
	// so that the hot path does not concatenate strings: "Binary(add)",
	// "BinaryInto(add)"; "" for codes that are no operation of the kind.
	names [2]*[256]string
}

var kinds = [...]kindInfo{
	opUnary:   {kind: opUnary, calls: [2]string{"Unary", "UnaryInto"}, noun: "unary operation"},
	opBinary:  {kind: opBinary, calls: [2]string{"Binary", "BinaryInto"}, noun: "binary operation"},
	opCompare: {kind: opCompare, calls: [2]string{"Compare", "CompareInto"}, noun: "comparison"},
}

// reduceCallNames are the names of the calls of Reduce ([0]) and
// ReduceInto ([1]) by op, as kindInfo.names.
var reduceCallNames [2]*[256]string

// opString is the name of op as an operation of kind k: graph's name, or
// "binary(99)" when op is none.
func opString(k opKind, op uint8) string {
	if kernels[op].kind == k {
		return graph.OpCode(op).String()
	}
	return strings.ToLower(kinds[k].calls[0]) + "(" + strconv.Itoa(int(op)) + ")"
}

// callName returns names[op], or fn(s) for an op that has no name.
func callName(names *[256]string, op uint8, fn string, s fmt.Stringer) string {
	if n := names[op]; n != "" {
		return n
	}
	return fn + "(" + s.String() + ")"
}

// nameCalls builds the names of the calls (kindInfo.names and
// reduceCallNames).
func nameCalls() {
	for k := opUnary; k <= opCompare; k++ {
		d := &kinds[k]
		for into, fn := range d.calls {
			names := new([256]string)
			for op := range kernels {
				if kernels[op].kind == k {
					names[op] = fn + "(" + graph.OpCode(op).String() + ")"
				}
			}
			d.names[into] = names
		}
	}
	for into, fn := range [2]string{"Reduce", "ReduceInto"} {
		names := new([256]string)
		for op := ReduceSum; op <= ReduceMean; op++ {
			names[op] = fn + "(" + op.String() + ")"
		}
		reduceCallNames[into] = names
	}
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
