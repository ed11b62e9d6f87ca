package graph

import "strconv"

// OpCode is the number of a core op. Compile and Validate (and so decoding)
// resolve every instruction's op name to its code once (Instruction.Code),
// so that engines dispatch with a switch rather than a string lookup per
// instruction. The name stays the serialised form: codes are not part of
// the JSON or text forms, nor of the fingerprint, and may be renumbered.
type OpCode uint8

// The op codes: OpExtension for the ops of extension families, one code per
// core op otherwise, in the order of the op lists (UnaryOps, BinaryOps,
// ReduceOps, LayoutOps).
const (
	OpExtension OpCode = iota // an op of an extension family
	OpConstant
	OpNeg
	OpAbs
	OpExp
	OpLog
	OpSqrt
	OpReciprocal
	OpSquare
	OpConj
	OpAdd
	OpSub
	OpMul
	OpDiv
	OpPow
	OpMax
	OpMin
	OpEq
	OpNe
	OpLt
	OpLe
	OpGt
	OpGe
	OpSelect
	OpConvert
	OpReduceSum
	OpReduceProd
	OpReduceMax
	OpReduceMin
	OpReshape
	OpPermute
	OpBroadcast
	OpSlice
	OpConcatenate
	OpDiagonal
	OpEmbedDiagonal
	OpDotGeneral
	OpEinsum
)

// opCodeNames is the one table of core op names; the op lists and the
// families are built from it.
var opCodeNames = [...]string{
	OpConstant: "constant",
	OpNeg:      "neg", OpAbs: "abs", OpExp: "exp", OpLog: "log", OpSqrt: "sqrt",
	OpReciprocal: "reciprocal", OpSquare: "square", OpConj: "conj",
	OpAdd: "add", OpSub: "sub", OpMul: "mul", OpDiv: "div", OpPow: "pow", OpMax: "max", OpMin: "min",
	OpEq: "eq", OpNe: "ne", OpLt: "lt", OpLe: "le", OpGt: "gt", OpGe: "ge",
	OpSelect: "select", OpConvert: "convert",
	OpReduceSum: "reduce_sum", OpReduceProd: "reduce_prod", OpReduceMax: "reduce_max", OpReduceMin: "reduce_min",
	OpReshape: "reshape", OpPermute: "permute", OpBroadcast: "broadcast", OpSlice: "slice",
	OpConcatenate: "concatenate", OpDiagonal: "diagonal", OpEmbedDiagonal: "embed_diagonal",
	OpDotGeneral: "dot_general",
	OpEinsum:     "einsum",
}

// String returns the op's name ("add", "dot_general"), or "op(N)" for a
// number that is no core op (OpExtension included).
func (c OpCode) String() string {
	if c > OpExtension && int(c) < len(opCodeNames) {
		return opCodeNames[c]
	}
	return "op(" + strconv.Itoa(int(c)) + ")"
}

// opCodeOf maps core op names to their codes; Register consults it once
// per op, and every later lookup gets the code with the family.
var opCodeOf = func() map[string]OpCode {
	m := make(map[string]OpCode, len(opCodeNames))
	for c, name := range opCodeNames {
		if name != "" {
			m[name] = OpCode(c)
		}
	}
	return m
}()

// opNames returns the names of the codes first..last, in order.
func opNames(first, last OpCode) []string {
	out := make([]string, 0, last-first+1)
	for c := first; c <= last; c++ {
		out = append(out, opCodeNames[c])
	}
	return out
}
