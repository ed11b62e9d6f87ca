package graph

import (
	"sort"

	"github.com/goferro/goferro/tensor"
)

// Core family names.
const (
	FamilyConstant    = "core.constant"    // constant
	FamilyElementwise = "core.elementwise" // unary, binary, select, convert
	FamilyReduce      = "core.reduce"      // reduce_sum, reduce_prod, reduce_max, reduce_min
	FamilyLayout      = "core.layout"      // reshape, permute, broadcast, slice, concatenate, diagonal, embed_diagonal
	FamilyDotGeneral  = "core.dot_general" // dot_general
	FamilyEinsum      = "core.einsum"      // einsum (lowered by Compile; never in a Program)
)

// UnaryOps are the elementwise unary ops. Dtype rules: neg, square, conj:
// any numeric type, result the same (conj is the identity on real types);
// abs: numeric, result the real counterpart (abs of an integer stays
// integer); exp, log, sqrt, reciprocal: float or complex, same type. No
// unary op is defined on bool.
var UnaryOps = opNames(OpNeg, OpConj)

// BinaryOps are the elementwise binary ops, which broadcast their operands
// (numpy rules) and require equal dtypes. add, sub, mul, div, pow: numeric,
// same type (integer div floors as numpy's //, integer pow refuses negative
// exponents with tensor.ErrDomain at run time); max, min: real numeric
// (float or integer), NaNs propagate; eq, ne: any type, bool result; lt,
// le, gt, ge: real numeric, bool result. The names and semantics are those
// of the CPU kernels (package cpu).
var BinaryOps = opNames(OpAdd, OpGe)

// ReduceOps are the reductions over Attrs.Axes (at least one axis,
// increasing): reduce_sum, reduce_prod (numeric) and reduce_max, reduce_min
// (real numeric). The reduced axes are removed from the shape.
var ReduceOps = opNames(OpReduceSum, OpReduceMin)

// LayoutOps are the data-movement ops.
var LayoutOps = opNames(OpReshape, OpEmbedDiagonal)

var (
	famConstant    = &OpFamily{Name: FamilyConstant, Ops: opNames(OpConstant, OpConstant), Infer: inferConstant, Pure: true}
	famElementwise = &OpFamily{Name: FamilyElementwise, Ops: opNames(OpNeg, OpConvert), Infer: inferElementwise, Pure: true}
	famReduce      = &OpFamily{Name: FamilyReduce, Ops: opNames(OpReduceSum, OpReduceMin), Infer: inferReduce, Pure: true}
	famLayout      = &OpFamily{Name: FamilyLayout, Ops: opNames(OpReshape, OpEmbedDiagonal), Infer: inferLayout, Pure: true}
	famDotGeneral  = &OpFamily{Name: FamilyDotGeneral, Ops: opNames(OpDotGeneral, OpDotGeneral), Infer: inferDotGeneral, Pure: true}
	famEinsum      = &OpFamily{Name: FamilyEinsum, Ops: opNames(OpEinsum, OpEinsum), Infer: inferEinsum, Pure: true}
)

var unaryOp, binaryOp = setOf(UnaryOps), setOf(BinaryOps)

func setOf(xs []string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

func init() {
	for _, f := range []*OpFamily{famConstant, famElementwise, famReduce, famLayout, famDotGeneral, famEinsum} {
		MustRegister(f)
	}
}

func arity(op string, in []Type, n int) error {
	if len(in) != n {
		return errorf(op, ErrArity, "takes %d operands, got %d", n, len(in))
	}
	return nil
}

func one(t Type) []Type { return []Type{t} }

func inferConstant(op string, a *Attrs, in []Type) ([]Type, error) {
	if err := arity(op, in, 0); err != nil {
		return nil, err
	}
	if a.Value == nil {
		return nil, errorf(op, ErrAttr, "no value")
	}
	if !a.Value.DType().Valid() {
		return nil, errorf(op, ErrDType, "invalid dtype %v", a.Value.DType())
	}
	return one(Type{DType: a.Value.DType(), Shape: FromTensorShape(a.Value.Shape())}), nil
}

func isRealNumeric(d tensor.DType) bool { return d.IsFloat() || d.IsInt() }

func inferElementwise(op string, a *Attrs, in []Type) ([]Type, error) {
	switch {
	case unaryOp[op]:
		if err := arity(op, in, 1); err != nil {
			return nil, err
		}
		dt := in[0].DType
		var ok bool
		out := dt
		switch op {
		case "neg", "square", "conj":
			ok = dt.IsNumeric()
		case "abs":
			ok, out = dt.IsNumeric(), dt.Real()
		default:
			ok = dt.IsFloat() || dt.IsComplex()
		}
		if !ok {
			return nil, errorf(op, ErrDType, "not defined for %v", dt)
		}
		return one(Type{DType: out, Shape: in[0].Shape}), nil
	case binaryOp[op]:
		if err := arity(op, in, 2); err != nil {
			return nil, err
		}
		if in[0].DType != in[1].DType {
			return nil, errorf(op, ErrDType, "operand dtypes differ: %v and %v (convert one explicitly)", in[0].DType, in[1].DType)
		}
		dt := in[0].DType
		var ok bool
		out := dt
		switch op {
		case "add", "sub", "mul", "div", "pow":
			ok = dt.IsNumeric()
		case "max", "min":
			ok = isRealNumeric(dt)
		case "eq", "ne":
			ok, out = dt.Valid(), tensor.Bool
		case "lt", "le", "gt", "ge":
			ok, out = isRealNumeric(dt), tensor.Bool
		}
		if !ok {
			return nil, errorf(op, ErrDType, "not defined for %v", dt)
		}
		s, err := broadcastShapes(op, in[0].Shape, in[1].Shape)
		if err != nil {
			return nil, err
		}
		return one(Type{DType: out, Shape: s}), nil
	case op == "select":
		if err := arity(op, in, 3); err != nil {
			return nil, err
		}
		if in[0].DType != tensor.Bool {
			return nil, errorf(op, ErrDType, "condition has dtype %v, want bool", in[0].DType)
		}
		if in[1].DType != in[2].DType {
			return nil, errorf(op, ErrDType, "branch dtypes differ: %v and %v", in[1].DType, in[2].DType)
		}
		s, err := broadcastShapes(op, in[0].Shape, in[1].Shape, in[2].Shape)
		if err != nil {
			return nil, err
		}
		return one(Type{DType: in[1].DType, Shape: s}), nil
	case op == "convert":
		if err := arity(op, in, 1); err != nil {
			return nil, err
		}
		if !a.DType.Valid() || !in[0].DType.Valid() {
			return nil, errorf(op, ErrDType, "cannot convert %v to %v", in[0].DType, a.DType)
		}
		return one(Type{DType: a.DType, Shape: in[0].Shape}), nil
	}
	return nil, errorf(op, ErrUnknownOp, "not an elementwise op")
}

// broadcastShapes is numpy broadcasting extended to symbolic extents: equal
// extents (equal symbols) agree, and an extent 1 stretches to anything; two
// different symbols, or a symbol against a concrete extent other than 1,
// cannot be reconciled statically and are an ErrShape error.
func broadcastShapes(op string, shapes ...Shape) (Shape, error) {
	rank := 0
	for _, s := range shapes {
		rank = max(rank, len(s))
	}
	out := make(Shape, rank)
	for i := range out {
		out[i] = Size(1)
	}
	for _, s := range shapes {
		off := rank - len(s)
		for i, d := range s {
			o := out[off+i]
			switch {
			case o == d || d == Size(1):
			case o == Size(1):
				out[off+i] = d
			default:
				return nil, errorf(op, ErrShape, "shapes %v cannot be broadcast: axis %d has extents %v and %v", shapes, off+i-rank, o, d)
			}
		}
	}
	return out, nil
}

func inferReduce(op string, a *Attrs, in []Type) ([]Type, error) {
	if err := arity(op, in, 1); err != nil {
		return nil, err
	}
	dt := in[0].DType
	ok := dt.IsNumeric()
	if op == "reduce_max" || op == "reduce_min" {
		ok = isRealNumeric(dt)
	}
	if !ok {
		return nil, errorf(op, ErrDType, "not defined for %v", dt)
	}
	r := len(in[0].Shape)
	if len(a.Axes) == 0 {
		return nil, errorf(op, ErrAttr, "no axes to reduce (an empty reduction is the operand itself)")
	}
	drop := make([]bool, r)
	for k, ax := range a.Axes {
		if ax < 0 || ax >= r {
			return nil, errorf(op, ErrAttr, "axis %d out of range for rank %d", ax, r)
		}
		if k > 0 && ax <= a.Axes[k-1] {
			return nil, errorf(op, ErrAttr, "axes %v must be increasing and distinct", a.Axes)
		}
		drop[ax] = true
	}
	out := Shape{}
	for i, d := range in[0].Shape {
		if !drop[i] {
			out = append(out, d)
		}
	}
	return one(Type{DType: dt, Shape: out}), nil
}

func inferLayout(op string, a *Attrs, in []Type) ([]Type, error) {
	if op == "concatenate" {
		return inferConcat(op, a, in)
	}
	if err := arity(op, in, 1); err != nil {
		return nil, err
	}
	x := in[0]
	r := len(x.Shape)
	switch op {
	case "reshape":
		if a.Shape == nil {
			return nil, errorf(op, ErrAttr, "no target shape")
		}
		if err := a.Shape.validate(op); err != nil {
			return nil, err
		}
		if !sameVolume(x.Shape, a.Shape) {
			return nil, errorf(op, ErrShape, "cannot reshape %v to %v: element counts differ", x.Shape, a.Shape)
		}
		return one(Type{DType: x.DType, Shape: a.Shape}), nil
	case "permute":
		if err := checkPerm(op, a.Perm, r); err != nil {
			return nil, err
		}
		out := make(Shape, r)
		for i, p := range a.Perm {
			out[i] = x.Shape[p]
		}
		return one(Type{DType: x.DType, Shape: out}), nil
	case "broadcast":
		if a.Shape == nil {
			return nil, errorf(op, ErrAttr, "no target shape")
		}
		if err := a.Shape.validate(op); err != nil {
			return nil, err
		}
		if len(a.Shape) < r {
			return nil, errorf(op, ErrShape, "cannot broadcast %v to fewer axes %v", x.Shape, a.Shape)
		}
		off := len(a.Shape) - r
		for i, d := range x.Shape {
			if d != a.Shape[off+i] && d != Size(1) {
				return nil, errorf(op, ErrShape, "cannot broadcast %v to %v: axis %d", x.Shape, a.Shape, i)
			}
		}
		return one(Type{DType: x.DType, Shape: a.Shape}), nil
	case "slice":
		if len(a.Start) != r || len(a.Limit) != r || len(a.Stride) != r {
			return nil, errorf(op, ErrAttr, "start %v, limit %v, stride %v for rank %d", a.Start, a.Limit, a.Stride, r)
		}
		out := make(Shape, r)
		for i, d := range x.Shape {
			st, lim, str := a.Start[i], a.Limit[i], a.Stride[i]
			if str < 1 {
				return nil, errorf(op, ErrAttr, "stride %d at axis %d (must be >= 1)", str, i)
			}
			if d.Sym != "" {
				if st != 0 || lim != -1 || str != 1 {
					return nil, errorf(op, ErrShape, "axis %d has symbolic extent %s and can only be taken whole", i, d.Sym)
				}
				out[i] = d
				continue
			}
			if lim == -1 {
				lim = d.Size
			}
			if st < 0 || lim < st || lim > d.Size {
				return nil, errorf(op, ErrAttr, "range [%d, %d) out of bounds for axis %d of extent %d", st, a.Limit[i], i, d.Size)
			}
			out[i] = Size((lim - st + str - 1) / str)
		}
		return one(Type{DType: x.DType, Shape: out}), nil
	case "diagonal":
		if len(a.Axes) < 2 {
			return nil, errorf(op, ErrAttr, "needs at least two axes, got %v", a.Axes)
		}
		marked := make([]bool, r)
		first := r
		var ext Dim
		for k, ax := range a.Axes {
			if ax < 0 || ax >= r {
				return nil, errorf(op, ErrAttr, "axis %d out of range for rank %d", ax, r)
			}
			if marked[ax] {
				return nil, errorf(op, ErrAttr, "axis %d repeated in %v", ax, a.Axes)
			}
			if k > 0 && x.Shape[ax] != ext {
				return nil, errorf(op, ErrShape, "axes %v have different extents in %v", a.Axes, x.Shape)
			}
			marked[ax], ext, first = true, x.Shape[ax], min(first, ax)
		}
		out := Shape{}
		for i, d := range x.Shape {
			if i == first {
				out = append(out, ext)
			} else if !marked[i] {
				out = append(out, d)
			}
		}
		return one(Type{DType: x.DType, Shape: out}), nil
	case "embed_diagonal":
		R := r + len(a.Axes) - 1
		if len(a.Axes) < 2 {
			return nil, errorf(op, ErrAttr, "needs at least two axes, got %v", a.Axes)
		}
		marked := make([]bool, R)
		first := R
		for _, ax := range a.Axes {
			if ax < 0 || ax >= R {
				return nil, errorf(op, ErrAttr, "axis %d out of range for result rank %d", ax, R)
			}
			if marked[ax] {
				return nil, errorf(op, ErrAttr, "axis %d repeated in %v", ax, a.Axes)
			}
			marked[ax], first = true, min(first, ax)
		}
		if !x.DType.IsNumeric() && x.DType != tensor.Bool {
			return nil, errorf(op, ErrDType, "not defined for %v", x.DType)
		}
		out := make(Shape, R)
		src := 0
		ext := x.Shape[first]
		for j := range out {
			switch {
			case j == first:
				out[j] = ext
				src++
			case marked[j]:
				out[j] = ext
			default:
				out[j] = x.Shape[src]
				src++
			}
		}
		return one(Type{DType: x.DType, Shape: out}), nil
	}
	return nil, errorf(op, ErrUnknownOp, "not a layout op")
}

func checkPerm(op string, perm []int, r int) error {
	if len(perm) != r {
		return errorf(op, ErrAttr, "permutation %v for rank %d", perm, r)
	}
	seen := make([]bool, r)
	for _, p := range perm {
		if p < 0 || p >= r || seen[p] {
			return errorf(op, ErrAttr, "%v is not a permutation of %d axes", perm, r)
		}
		seen[p] = true
	}
	return nil
}

// sameVolume reports whether two shapes certainly have the same element
// count: equal concrete products and the same multiset of symbols.
func sameVolume(a, b Shape) bool {
	pa, sa := volume(a)
	pb, sb := volume(b)
	if pa != pb || len(sa) != len(sb) {
		return false
	}
	for i := range sa {
		if sa[i] != sb[i] {
			return false
		}
	}
	return true
}

func volume(s Shape) (int, []string) {
	p := 1
	var syms []string
	for _, d := range s {
		if d.Sym != "" {
			syms = append(syms, d.Sym)
		} else {
			p *= d.Size
		}
	}
	if p == 0 {
		return 0, nil // zero elements whatever the symbols
	}
	sort.Strings(syms)
	return p, syms
}

func inferConcat(op string, a *Attrs, in []Type) ([]Type, error) {
	if len(in) == 0 {
		return nil, errorf(op, ErrArity, "needs at least one operand")
	}
	r := len(in[0].Shape)
	if a.Axis < 0 || a.Axis >= r {
		return nil, errorf(op, ErrAttr, "axis %d out of range for rank %d", a.Axis, r)
	}
	out := in[0].Shape.Clone()
	total := 0
	for k, t := range in {
		if t.DType != in[0].DType {
			return nil, errorf(op, ErrDType, "operand %d has dtype %v, operand 0 %v", k, t.DType, in[0].DType)
		}
		if len(t.Shape) != r {
			return nil, errorf(op, ErrShape, "operand %d has rank %d, operand 0 rank %d", k, len(t.Shape), r)
		}
		for i, d := range t.Shape {
			if i == a.Axis {
				if d.Sym != "" {
					return nil, errorf(op, ErrShape, "operand %d has symbolic extent %s on the concatenation axis", k, d.Sym)
				}
				total += d.Size
			} else if d != out[i] {
				return nil, errorf(op, ErrShape, "operand %d has shape %v, incompatible with %v off axis %d", k, t.Shape, out, a.Axis)
			}
		}
	}
	out[a.Axis] = Size(total)
	return one(Type{DType: in[0].DType, Shape: out}), nil
}

func checkDims(op, side string, dims []int, r int, used []bool) error {
	for _, d := range dims {
		if d < 0 || d >= r {
			return errorf(op, ErrAttr, "%s dimension %d out of range for rank %d", side, d, r)
		}
		if used[d] {
			return errorf(op, ErrAttr, "%s dimension %d used twice", side, d)
		}
		used[d] = true
	}
	return nil
}

// checkDotDims checks dot_general's batch and contracting dimensions
// against the operand ranks len(lu) and len(ru), marking the dimensions
// they name in lu and ru.
func checkDotDims(op string, a *Attrs, lu, ru []bool) error {
	if len(a.LhsBatch) != len(a.RhsBatch) || len(a.LhsContract) != len(a.RhsContract) {
		return errorf(op, ErrAttr, "batch dims %v/%v or contracting dims %v/%v differ in number", a.LhsBatch, a.RhsBatch, a.LhsContract, a.RhsContract)
	}
	for _, c := range [...]struct {
		side string
		dims []int
		used []bool
	}{{"lhs batch", a.LhsBatch, lu}, {"lhs contracting", a.LhsContract, lu},
		{"rhs batch", a.RhsBatch, ru}, {"rhs contracting", a.RhsContract, ru}} {
		if err := checkDims(op, c.side, c.dims, len(c.used), c.used); err != nil {
			return err
		}
	}
	return nil
}

func inferDotGeneral(op string, a *Attrs, in []Type) ([]Type, error) {
	if err := arity(op, in, 2); err != nil {
		return nil, err
	}
	l, r := in[0], in[1]
	if l.DType != r.DType {
		return nil, errorf(op, ErrDType, "operand dtypes differ: %v and %v", l.DType, r.DType)
	}
	if !l.DType.IsNumeric() {
		return nil, errorf(op, ErrDType, "not defined for %v", l.DType)
	}
	lu, ru := make([]bool, len(l.Shape)), make([]bool, len(r.Shape))
	if err := checkDotDims(op, a, lu, ru); err != nil {
		return nil, err
	}
	out := Shape{}
	for k := range a.LhsBatch {
		ld, rd := l.Shape[a.LhsBatch[k]], r.Shape[a.RhsBatch[k]]
		if ld != rd {
			return nil, errorf(op, ErrShape, "batch dimension pair %d: lhs extent %v, rhs extent %v", k, ld, rd)
		}
		out = append(out, ld)
	}
	for k := range a.LhsContract {
		ld, rd := l.Shape[a.LhsContract[k]], r.Shape[a.RhsContract[k]]
		if ld != rd {
			return nil, errorf(op, ErrShape, "contracting dimension pair %d: lhs extent %v, rhs extent %v", k, ld, rd)
		}
	}
	for i, d := range l.Shape {
		if !lu[i] {
			out = append(out, d)
		}
	}
	for i, d := range r.Shape {
		if !ru[i] {
			out = append(out, d)
		}
	}
	return one(Type{DType: l.DType, Shape: out}), nil
}
