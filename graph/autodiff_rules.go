package graph

import "slices"

// The derivative rules of the core ops. Elementwise operands of a Program
// have the result's shape (broadcasts are explicit instructions), so the
// elementwise rules never reduce over broadcast axes: the broadcast rule
// does.

// vjp returns the cotangents of the operands of ins given the cotangent g
// of its result (the zero Value for an operand that gets none).
func (t *adTrace) vjp(ins *Instruction, g Value) ([]Value, error) {
	x := t.args(ins)
	y := t.val[ins.Outputs[0].Slot]
	dt := ins.Outputs[0].DType
	a := &ins.Attrs
	r := make([]Value, len(x))
	switch ins.Code {
	case OpConstant, OpEq, OpNe, OpLt, OpLe, OpGt, OpGe:
		// no differentiable operands
	case OpNeg:
		r[0] = Neg(g)
	case OpAbs:
		if xt := x[0].DType(); xt.IsComplex() {
			// d|z| = Re(conj(z)·dz)/|z|; transposed: ȳ·conj(z)/|z|.
			r[0] = Mul(Convert(Div(g, t.safe(y)), xt), Conj(x[0]))
		} else {
			r[0] = Mul(g, t.sign(x[0]))
		}
	case OpExp:
		r[0] = Mul(g, y)
	case OpLog:
		r[0] = Div(g, x[0])
	case OpSqrt:
		r[0] = Div(g, Mul(t.scalar(dt, 2), y))
	case OpReciprocal:
		r[0] = Neg(Mul(g, Square(y)))
	case OpSquare:
		r[0] = Mul(g, Mul(t.scalar(dt, 2), x[0]))
	case OpConj:
		r[0] = Conj(g)
	case OpAdd:
		r[0], r[1] = g, g
	case OpSub:
		r[0], r[1] = g, Neg(g)
	case OpMul:
		r[0], r[1] = Mul(g, x[1]), Mul(g, x[0])
	case OpDiv:
		gy := Div(g, x[1])
		r[0], r[1] = gy, Neg(Mul(gy, y))
	case OpPow:
		r[0], r[1] = Mul(g, t.powDx(x[0], x[1])), Mul(g, t.powDy(x[0], y))
	case OpMax, OpMin:
		m := t.pick(ins.Code, x[0], x[1])
		r[0], r[1] = Mul(g, m), Sub(g, Mul(g, m))
	case OpSelect:
		z := t.zeros(Type{DType: dt, Shape: ins.Outputs[0].Shape})
		r[1], r[2] = Select(x[0], g, z), Select(x[0], z, g)
	case OpConvert:
		// Real to complex adds a zero imaginary part, complex to real
		// keeps the real part, float widths round: each transposes to
		// the conversion back.
		if from := x[0].DType(); differentiable(from) {
			r[0] = Convert(g, from)
		}
	case OpReduceSum:
		r[0] = t.expand(g, a.Axes, x[0])
	case OpReduceProd:
		// ∂(Πx)/∂x_i = Πx / x_i: exact for nonzero x only.
		r[0] = Div(t.expand(Mul(g, y), a.Axes, x[0]), x[0])
	case OpReduceMax, OpReduceMin:
		// Ties share the cotangent equally.
		m := Convert(Eq(x[0], t.expand(y, a.Axes, x[0])), dt)
		n := t.expand(ReduceSum(m, a.Axes...), a.Axes, x[0])
		r[0] = Mul(t.expand(g, a.Axes, x[0]), Div(m, n))
	case OpReshape:
		r[0] = apply1("reshape", Attrs{Shape: x[0].Shape()}, g)
	case OpPermute:
		inv := make([]int, len(a.Perm))
		for i, p := range a.Perm {
			inv[p] = i
		}
		r[0] = apply1("permute", Attrs{Perm: inv}, g)
	case OpBroadcast:
		r[0] = sumTo(g, x[0].Type().Shape)
	case OpSlice:
		r[0] = t.unslice(g, a, x[0].Type().Shape)
	case OpConcatenate:
		off := 0
		for k, xk := range x {
			sh := xk.Type().Shape
			at := wholeSlice(len(sh))
			at.Start[a.Axis], at.Limit[a.Axis] = off, off+sh[a.Axis].Size
			off += sh[a.Axis].Size
			r[k] = apply1("slice", at, g)
		}
	case OpDiagonal:
		r[0] = apply1("embed_diagonal", Attrs{Axes: slices.Clone(a.Axes)}, g)
	case OpEmbedDiagonal:
		r[0] = apply1("diagonal", Attrs{Axes: slices.Clone(a.Axes)}, g)
	default: // dot_general has its own path (dotVJP)
		return nil, t.unsupported(ins)
	}
	return r, nil
}

// jvp returns the tangent of the result of ins given the tangents dx of
// its operands (the zero Value where an operand has none; at least one
// has one).
func (t *adTrace) jvp(ins *Instruction, dx []Value) (Value, error) {
	x := t.args(ins)
	y := t.val[ins.Outputs[0].Slot]
	dt := ins.Outputs[0].DType
	a := &ins.Attrs
	d0 := dx[0]
	switch ins.Code {
	case OpEq, OpNe, OpLt, OpLe, OpGt, OpGe:
		return Value{}, nil
	case OpNeg, OpConj, OpReduceSum, OpReshape, OpPermute, OpBroadcast, OpSlice, OpDiagonal, OpEmbedDiagonal:
		// Linear: the op itself.
		if !d0.Valid() {
			return Value{}, nil
		}
		return apply1(ins.Op, a.clone(), d0), nil
	case OpConvert:
		if !d0.Valid() {
			return Value{}, nil
		}
		return Convert(d0, dt), nil
	case OpConcatenate:
		ds := make([]Value, len(x))
		for k := range x {
			ds[k] = dx[k]
			if !ds[k].Valid() {
				ds[k] = t.zeros(x[k].Type())
			}
		}
		return apply1("concatenate", a.clone(), ds...), nil
	case OpAbs:
		if x[0].DType().IsComplex() {
			return Div(Convert(Mul(Conj(x[0]), d0), dt), t.safe(y)), nil
		}
		return Mul(d0, t.sign(x[0])), nil
	case OpExp:
		return Mul(d0, y), nil
	case OpLog:
		return Div(d0, x[0]), nil
	case OpSqrt:
		return Div(d0, Mul(t.scalar(dt, 2), y)), nil
	case OpReciprocal:
		return Neg(Mul(d0, Square(y))), nil
	case OpSquare:
		return Mul(d0, Mul(t.scalar(dt, 2), x[0])), nil
	case OpAdd:
		return sumTangents(d0, dx[1]), nil
	case OpSub:
		return sumTangents(d0, negT(dx[1])), nil
	case OpMul:
		return sumTangents(mulT(d0, x[1]), mulT(dx[1], x[0])), nil
	case OpDiv:
		return sumTangents(divT(d0, x[1]), negT(mulT(divT(dx[1], x[1]), y))), nil
	case OpPow:
		return sumTangents(mulT(d0, t.powDx(x[0], x[1])), mulT(dx[1], t.powDy(x[0], y))), nil
	case OpMax, OpMin:
		m := t.pick(ins.Code, x[0], x[1])
		var d1 Value
		if dx[1].Valid() {
			d1 = Sub(dx[1], Mul(dx[1], m))
		}
		return sumTangents(mulT(d0, m), d1), nil
	case OpSelect:
		d1, d2 := dx[1], dx[2]
		if !d1.Valid() && !d2.Valid() {
			return Value{}, nil
		}
		ty := Type{DType: dt, Shape: ins.Outputs[0].Shape}
		if !d1.Valid() {
			d1 = t.zeros(ty)
		}
		if !d2.Valid() {
			d2 = t.zeros(ty)
		}
		return Select(x[0], d1, d2), nil
	case OpReduceProd:
		return ReduceSum(Mul(d0, Div(t.expand(y, a.Axes, x[0]), x[0])), a.Axes...), nil
	case OpReduceMax, OpReduceMin:
		m := Convert(Eq(x[0], t.expand(y, a.Axes, x[0])), dt)
		n := ReduceSum(m, a.Axes...)
		return Div(ReduceSum(Mul(d0, m), a.Axes...), n), nil
	case OpDotGeneral:
		var l, r Value
		if d0.Valid() {
			l = apply1("dot_general", a.clone(), d0, x[1])
		}
		if dx[1].Valid() {
			r = apply1("dot_general", a.clone(), x[0], dx[1])
		}
		return sumTangents(l, r), nil
	}
	return Value{}, t.unsupported(ins)
}

// args returns the Values of the operands of ins.
func (t *adTrace) args(ins *Instruction) []Value {
	x := make([]Value, len(ins.Inputs))
	for k, s := range ins.Inputs {
		x[k] = t.val[s]
	}
	return x
}

// sumTangents adds two tangents, either of which may be absent.
func sumTangents(a, b Value) Value {
	switch {
	case !a.Valid():
		return b
	case !b.Valid():
		return a
	}
	return Add(a, b)
}

// mulT, divT and negT propagate an absent tangent.
func mulT(d, x Value) Value {
	if !d.Valid() {
		return d
	}
	return Mul(d, x)
}

func divT(d, x Value) Value {
	if !d.Valid() {
		return d
	}
	return Div(d, x)
}

func negT(d Value) Value {
	if !d.Valid() {
		return d
	}
	return Neg(d)
}

// sign returns the sign of real x (0 at 0) in x's dtype.
func (t *adTrace) sign(x Value) Value {
	dt := x.DType()
	z := t.scalar(dt, 0)
	return Sub(Convert(Gt(x, z), dt), Convert(Lt(x, z), dt))
}

// safe returns real v with its zeros replaced by ones, a divisor that
// keeps 0/0 out of rules whose numerator vanishes with v.
func (t *adTrace) safe(v Value) Value {
	dt := v.DType()
	return Select(Eq(v, t.scalar(dt, 0)), t.scalar(dt, 1), v)
}

// powDx is ∂(x^y)/∂x = y·x^(y−1).
func (t *adTrace) powDx(x, y Value) Value {
	return Mul(y, Pow(x, Sub(y, t.scalar(y.DType(), 1))))
}

// powDy is ∂(x^y)/∂y = x^y·log x, taken as 0 where x = 0 (as JAX does).
func (t *adTrace) powDy(x, out Value) Value {
	dt := x.DType()
	z := t.scalar(dt, 0)
	zero := Eq(x, z)
	return Mul(out, Select(zero, z, Log(Select(zero, t.scalar(dt, 1), x))))
}

// pick returns, in x's dtype, 1 where max (min) takes x, 0 where it takes
// y and ½ on ties.
func (t *adTrace) pick(code OpCode, x, y Value) Value {
	dt := x.DType()
	wins := Gt(x, y)
	if code == OpMin {
		wins = Lt(x, y)
	}
	return Select(wins, t.scalar(dt, 1), Select(Eq(x, y), t.scalar(dt, 0.5), t.scalar(dt, 0)))
}

// expand undoes a reduction over axes: v (x's shape without axes) is
// broadcast back to x's shape.
func (t *adTrace) expand(v Value, axes []int, x Value) Value {
	sh := x.Type().Shape
	kept := make(Shape, len(sh))
	copy(kept, sh)
	for _, ax := range axes {
		kept[ax] = Size(1)
	}
	return BroadcastTo(apply1("reshape", Attrs{Shape: kept}, v), sh)
}

// sumTo is the transpose of broadcasting to g's shape from shape to: g
// summed over the axes a broadcast added or stretched, reshaped to to.
func sumTo(g Value, to Shape) Value {
	sh := g.Type().Shape
	off := len(sh) - len(to)
	var axes []int
	for i, d := range sh {
		if i < off || (to[i-off] == Size(1) && d != Size(1)) {
			axes = append(axes, i)
		}
	}
	if len(axes) > 0 {
		g = ReduceSum(g, axes...)
	}
	return apply1("reshape", Attrs{Shape: to.Clone()}, g)
}

// wholeSlice returns slice attributes taking all of every axis of a
// rank-r operand.
func wholeSlice(r int) Attrs {
	a := Attrs{Start: make([]int, r), Limit: make([]int, r), Stride: make([]int, r)}
	for i := range a.Limit {
		a.Limit[i], a.Stride[i] = -1, 1
	}
	return a
}

// unslice is the transpose of slice a of an operand of shape to: g
// scattered into zeros, one sliced axis at a time. A strided axis of m
// elements is interleaved with stride−1 zeros (reshape to (m, 1),
// concatenate zeros to (m, stride), reshape to m·stride, cut to the
// range); the range is then padded with zeros before and after.
func (t *adTrace) unslice(g Value, a *Attrs, to Shape) Value {
	for i, d := range to {
		if d.Sym != "" {
			continue // symbolic axes are taken whole
		}
		st, lim, str := a.Start[i], a.Limit[i], a.Stride[i]
		if lim == -1 {
			lim = d.Size
		}
		if st == 0 && lim == d.Size && str == 1 {
			continue
		}
		sh := g.Type().Shape
		m := sh[i].Size
		if str > 1 && m > 0 {
			wide := slices.Insert(sh.Clone(), i+1, Size(1))
			col := apply1("reshape", Attrs{Shape: wide.Clone()}, g)
			wide[i+1] = Size(str - 1)
			zs := t.zeros(Type{DType: g.DType(), Shape: wide.Clone()})
			g = Concatenate(i+1, col, zs)
			flat := sh.Clone()
			flat[i] = Size(m * str)
			g = apply1("reshape", Attrs{Shape: flat}, g)
			if m*str > lim-st {
				cut := wholeSlice(len(flat))
				cut.Limit[i] = lim - st
				g = apply1("slice", cut, g)
			}
		} else if str > 1 {
			lim = st // no element taken: all zeros
		}
		parts := []Value{}
		pad := func(n int) {
			if n > 0 {
				ps := g.Type().Shape.Clone()
				ps[i] = Size(n)
				parts = append(parts, t.zeros(Type{DType: g.DType(), Shape: ps}))
			}
		}
		pad(st)
		parts = append(parts, g)
		pad(d.Size - lim)
		if len(parts) > 1 {
			g = Concatenate(i, parts...)
		}
	}
	return g
}

// freeAxes returns the axes of a rank-r operand in neither list, in order.
func freeAxes(r int, batch, contract []int) []int {
	var out []int
	for i := 0; i < r; i++ {
		if !slices.Contains(batch, i) && !slices.Contains(contract, i) {
			out = append(out, i)
		}
	}
	return out
}

// axisRange returns lo, lo+1, ..., hi−1.
func axisRange(lo, hi int) []int {
	out := make([]int, 0, hi-lo)
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}

// dotVJP transposes dot_general l·r with attributes a, whose result has
// the batch axes, then l's free axes, then r's free axes; its cotangent g
// may be held permuted. Each operand's cotangent is a dot_general of g with
// the other operand (no conjugation, see VJP), left in the axis order the
// dot_general gives.
func dotVJP(g cotangent, l, r Value, a *Attrs) (cotangent, cotangent) {
	nb := len(a.LhsBatch)
	lf := freeAxes(l.Rank(), a.LhsBatch, a.LhsContract)
	rf := freeAxes(r.Rank(), a.RhsBatch, a.RhsContract)
	// where[i]: the axis of g.v holding axis i of the result
	where := axisRange(0, g.v.Rank())
	if g.perm != nil {
		where = invertPerm(g.perm)
	}
	at := func(axes []int) []int {
		out := make([]int, len(axes))
		for k, ax := range axes {
			out[k] = where[ax]
		}
		return out
	}
	gb, glf, grf := at(axisRange(0, nb)), at(axisRange(nb, nb+len(lf))), at(axisRange(nb+len(lf), nb+len(lf)+len(rf)))
	return transposeDot(g.v, r, gb, a.LhsBatch, a.RhsBatch, grf, rf, glf, lf, paired(a.RhsContract, a.LhsContract)),
		transposeDot(g.v, l, gb, a.RhsBatch, a.LhsBatch, glf, lf, grf, rf, paired(a.LhsContract, a.RhsContract))
}

// transposeDot returns the cotangent of one operand x of a dot_general
// from the result's cotangent g and the other operand o: g's axes gc are
// contracted with o's axes oc; g's axes gb[k], x's axis xb[k] and o's axis
// ob[k] are the batch pairs; g's remaining axis gk[i] stands for x's axis
// gx[i], and o's remaining axes, in o's order, for x's axes ox. The result
// is held permuted unless the product comes out in x's axis order with g
// first or second.
func transposeDot(g, o Value, gb, xb, ob, gc, oc, gk, gx, ox []int) cotangent {
	// List the batch pairs in x's axis order.
	k := axisRange(0, len(xb))
	slices.SortFunc(k, func(i, j int) int { return xb[i] - xb[j] })
	gbs, obs, src := make([]int, len(k)), make([]int, len(k)), make([]int, 0, len(xb)+len(gx)+len(ox))
	for i, kk := range k {
		gbs[i], obs[i] = gb[kk], ob[kk]
		src = append(src, xb[kk])
	}
	// g's remaining axes gk, in g's order, stand for x's axes gx
	order := axisRange(0, len(gk))
	slices.SortFunc(order, func(i, j int) int { return gk[i] - gk[j] })
	gRest := make([]int, len(order))
	for i, kk := range order {
		gRest[i] = gx[kk]
	}
	first := append(append(slices.Clone(src), gRest...), ox...) // g·o
	second := append(append(src, ox...), gRest...)              // o·g
	if !isIdentityPerm(first) && isIdentityPerm(second) {
		return cotangent{v: DotGeneral(o, g, DotDims{LhsBatch: obs, RhsBatch: gbs, LhsContract: oc, RhsContract: gc})}
	}
	c := cotangent{v: DotGeneral(g, o, DotDims{LhsBatch: gbs, RhsBatch: obs, LhsContract: gc, RhsContract: oc})}
	if !isIdentityPerm(first) {
		c.perm = first
	}
	return c
}

// isIdentityPerm reports whether p is 0, 1, ..., len(p)−1.
func isIdentityPerm(p []int) bool {
	for i, v := range p {
		if v != i {
			return false
		}
	}
	return true
}

// paired returns, for the axes of from in increasing order, their
// partners in to (from[k] pairs with to[k]).
func paired(from, to []int) []int {
	sorted := slices.Clone(from)
	slices.Sort(sorted)
	out := make([]int, len(sorted))
	for j, ax := range sorted {
		out[j] = to[slices.Index(from, ax)]
	}
	return out
}

// invertPerm returns the inverse permutation of src: where axis j holds
// axis src[j], axis i is held at position invertPerm(src)[i].
func invertPerm(src []int) []int {
	inv := make([]int, len(src))
	for j, s := range src {
		inv[s] = j
	}
	return inv
}
