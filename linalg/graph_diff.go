package linalg

import (
	"slices"

	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

// The derivative rules of the family's ops (graph.OpFamily.VJP and JVP),
// built from graph ops only, so that derivative programs run wherever the
// forward program does. They follow package graph's conventions: JVP maps
// a complex tangent real-linearly, and VJP is its transpose under the real
// pairing Re Σ u·v without conjugation (JAX's). The reverse rules are
// derived in the conjugate pairing Re tr(Ḡᴴ·dY) of the literature
// (PyTorch's), so each conjugates the cotangents it receives and the
// cotangent it returns.
//
// Gauge. The eigenvectors of eigh and the singular vectors of svd are
// unique only up to a phase each (a sign for real matrices), and up to a
// unitary rotation within a degenerate eigenvalue or singular value. A
// loss must not depend on that choice for its derivative to be defined:
// functions of w or S, V·diag(f(w))·Vᴴ, U·diag(f(S))·Vh, |U_ij|², products
// such as U·Vh. The rules return the derivative of such losses; the
// tangent of V or U itself is that of one particular gauge (Vᴴ·dV with a
// zero diagonal; for svd Vᴴ·dV with a zero diagonal and the imaginary
// diagonal of Uᴴ·dA·V given to U), which for complex matrices is not
// the phase convention of Eigh or SVD, so finite differences of complex V
// or U themselves do not match it. Real factors have no continuous gauge:
// there the tangents are those of the factors themselves.
//
// Eigh reads the lower triangle of A and the real part of its diagonal
// (see Eigh); its rules differentiate that reading, so the strict upper
// triangle and the imaginary part of the diagonal get zero cotangents.
// The triangular solve likewise reads one triangle of A.
//
// Degenerate spectra. The rules divide by differences of eigenvalues
// (λⱼ − λᵢ), of squared singular values (sⱼ² − sᵢ²), and by singular
// values. Each such reciprocal 1/x is taken as x/(x² + η²) (Lorentzian
// broadening), with η² = ε·scale², ε the machine epsilon of the dtype and
// scale the matrix's largest |λ|, s² or s: the broadened reciprocal is
// bounded by 1/(2η), smooth (so derivatives of the derivative program are
// defined too) and zero at x = 0, and it differs from 1/x by a relative
// η²/x² = ε·(scale/x)², below 1e-6 for gaps above 2e-5 of the scale in
// float64, while the exact reciprocal would amplify the numerators'
// rounding errors without bound as x → 0. Zeroing the reciprocals of gaps
// below a tolerance would do as well at first order but is discontinuous
// in A, which second derivatives (JVP of VJP) would see. For losses that
// are invariant under rotations within a degenerate subspace, the
// numerators vanish with the gaps and the result is finite; no rule can
// recover the 0/0 limit exactly (for V·f(w)·Vᴴ the divided difference
// f′(λ)), so at an exact degeneracy those terms are dropped rather than
// turned into NaN or Inf. The same holds at a zero singular value, where
// s = |·| has a kink: the complex phase term and, for a non-square
// matrix, the coupling to the null space are 0/0 there. The diagonal of
// the gap matrices, zero by construction, is cut off explicitly (see
// gapInverses). A zero matrix gets η = 0, and the 0/0 there is taken as 0.
//
// QR (m ≥ n) uses the standard rule: with C = Qᴴ·dA·R⁻¹,
// Ω = tril(C, −1) − tril(C, −1)ᴴ + i·Im diag(C) (the diagonal of R is real
// in Householder QR, which fixes the phases), dQ = Q·Ω + (I − Q·Qᴴ)·dA·R⁻¹
// and dR = (C − Ω)·R; for m < n, A = [X | Y] with X square gives Q and
// the first m columns of R from X, and the rest of R is Qᴴ·Y. R⁻¹ is
// applied by OpSolveTriangular: a rank-deficient A has no derivative
// (infinities or NaN). Complete QR with m > n (Q's extra columns) and
// complete SVD of a non-square matrix (U's or V's extra columns, a basis
// chosen freely) have no rules: ErrUnsupported.
//
// Truncated SVD: the kept singular vectors couple to the discarded ones
// (with singular values that are not zero), so the rules compute the
// reduced SVD of A again for the discarded vectors and apply the
// untruncated rule to the kept factors followed by the discarded ones,
// with zero cotangents for the latter.

// vjpDecomp is the family's graph.VJPFunc.
func vjpDecomp(c *graph.DiffCall, ct []graph.Value) ([]graph.Value, error) {
	at, err := parseAttrs(c.Op, c.Attrs)
	if err != nil {
		return nil, err
	}
	switch c.Op {
	case OpEigh:
		return eighVJP(c, ct)
	case OpSVD:
		return svdVJP(c, at, ct)
	case OpQR:
		return qrVJP(c, at, ct)
	case OpSolveTriangular:
		return solveVJP(c, at, ct[0])
	}
	return nil, graphErr(c.Op, graph.ErrUnknownOp, "not an op of %s", Family)
}

// jvpDecomp is the family's graph.JVPFunc.
func jvpDecomp(c *graph.DiffCall, tan []graph.Value) ([]graph.Value, error) {
	at, err := parseAttrs(c.Op, c.Attrs)
	if err != nil {
		return nil, err
	}
	switch c.Op {
	case OpEigh:
		return eighJVP(c, tan[0])
	case OpSVD:
		return svdJVP(c, at, tan[0])
	case OpQR:
		return qrJVP(c, at, tan[0])
	case OpSolveTriangular:
		return solveJVP(c, at, tan)
	}
	return nil, graphErr(c.Op, graph.ErrUnknownOp, "not an op of %s", Family)
}

// eighJVP: with dH the Hermitian matrix Eigh reads from dA and
// C = Vᴴ·dH·V, dw = Re diag(C) and dV = V·(F∘C), F_ij = 1/(λⱼ − λᵢ).
func eighJVP(c *graph.DiffCall, da graph.Value) ([]graph.Value, error) {
	w, v := c.Outputs[0], c.Outputs[1]
	if _, _, _, err := concreteMatrix(c.Op, da); err != nil {
		return nil, err
	}
	dh, err := hermitianRead(da)
	if err != nil {
		return nil, err
	}
	cm := mm(mH(v), mm(dh, v))
	dw := graph.Convert(diagOf(cm), w.DType())
	dv := mm(v, graph.Mul(cm, eigGaps(w, v.DType())))
	return []graph.Value{dw, dv}, nil
}

// eighVJP: Āᴴ = V·(diag(w̄) + F∘(Vᴴ·V̄))·Vᴴ in the conjugate pairing,
// then the transpose of reading the Hermitian matrix from A's lower
// triangle.
func eighVJP(c *graph.DiffCall, ct []graph.Value) ([]graph.Value, error) {
	w, v := c.Outputs[0], c.Outputs[1]
	if _, _, _, err := concreteMatrix(c.Op, v); err != nil {
		return nil, err
	}
	dt := v.DType()
	var mid graph.Value
	if ct[0].Valid() {
		mid = diagMat(graph.Convert(ct[0], dt))
	}
	if ct[1].Valid() {
		mid = add(mid, graph.Mul(eigGaps(w, dt), mm(mH(v), graph.Conj(ct[1]))))
	}
	g := mm(v, mm(mid, mH(v)))
	a, err := hermitianReadT(g)
	if err != nil {
		return nil, err
	}
	return []graph.Value{graph.Conj(a)}, nil
}

// hermitianRead returns the Hermitian matrix Eigh reads from a: its
// lower triangle, mirrored, with the real part of the diagonal.
func hermitianRead(a graph.Value) (graph.Value, error) {
	l, err := triangle(a, strictLower)
	if err != nil {
		return graph.Value{}, err
	}
	d := diagMat(graph.Convert(graph.Convert(diagOf(a), a.DType().Real()), a.DType()))
	return graph.Add(graph.Add(l, mH(l)), d), nil
}

// hermitianReadT is the adjoint of hermitianRead in the conjugate pairing:
// the strict lower triangle of g + gᴴ and the real part of g's diagonal.
func hermitianReadT(g graph.Value) (graph.Value, error) {
	return triangle(graph.Add(g, mH(g)), lowerHalfDiagonal)
}

// svdJVP: with P = Uᴴ·dA·V, dS = Re diag(P),
// dU = U·(F∘(P·S + S·Pᴴ) + i·Im diag(P)·S⁻¹) + (dA·V − U·P)·S⁻¹ and
// dV = V·(F∘(S·P + Pᴴ·S)) + (dAᴴ·U − V·Pᴴ)·S⁻¹, F_ij = 1/(sⱼ² − sᵢ²), on
// the kept factors followed by the discarded ones.
func svdJVP(c *graph.DiffCall, at decompAttrs, da graph.Value) ([]graph.Value, error) {
	f, err := newSVDDiff(c, at)
	if err != nil {
		return nil, err
	}
	dt := da.DType()
	sc := graph.Convert(f.s, dt)
	p := mm(mH(f.u), mm(da, f.v))
	ds := graph.Convert(diagOf(p), f.s.DType())
	ps := scaleCols(p, sc)
	sp := scaleRows(p, sc)
	mid := graph.Mul(f.gaps, graph.Add(ps, mH(ps)))
	if dt.IsComplex() {
		mid = graph.Add(mid, diagMat(graph.Mul(imagPart(diagOf(p)), f.inv)))
	}
	du := mm(f.u, mid)
	dv := mm(f.v, graph.Mul(f.gaps, graph.Add(sp, mH(sp))))
	if f.m > f.k {
		du = graph.Add(du, scaleCols(graph.Sub(mm(da, f.v), mm(f.u, p)), f.inv))
	}
	if f.n > f.k {
		dv = graph.Add(dv, scaleCols(graph.Sub(mm(mH(da), f.u), mm(f.v, mH(p))), f.inv))
	}
	return []graph.Value{f.kept(du), f.kept(ds), mH(f.kept(dv))}, nil
}

// svdVJP: with J = Uᴴ·Ū and K = Vᴴ·V̄ (conjugate pairing, V̄ = Vhᴴ's
// cotangent), Āᴴ = U·Γ·Vᴴ + (Ū − U·J)·S⁻¹·Vᴴ + U·S⁻¹·(V̄ − V·K)ᴴ where
// Γ = diag(s̄) + (F∘(J − Jᴴ))·S + S·(F∘(K − Kᴴ)) + i·Im diag(J)·S⁻¹.
func svdVJP(c *graph.DiffCall, at decompAttrs, ct []graph.Value) ([]graph.Value, error) {
	f, err := newSVDDiff(c, at)
	if err != nil {
		return nil, err
	}
	dt := c.Inputs[0].DType()
	sc := graph.Convert(f.s, dt)
	var gamma, a graph.Value
	if ct[0].Valid() {
		ub := f.pad(graph.Conj(ct[0]))
		j := mm(mH(f.u), ub)
		gamma = scaleCols(graph.Mul(f.gaps, graph.Sub(j, mH(j))), sc)
		if dt.IsComplex() {
			gamma = graph.Add(gamma, diagMat(graph.Mul(imagPart(diagOf(j)), f.inv)))
		}
		if f.m > f.k {
			a = mm(scaleCols(graph.Sub(ub, mm(f.u, j)), f.inv), mH(f.v))
		}
	}
	if ct[1].Valid() {
		gamma = add(gamma, diagMat(graph.Convert(f.pad(ct[1]), dt)))
	}
	if ct[2].Valid() {
		vb := f.pad(mT(ct[2]))
		k := mm(mH(f.v), vb)
		gamma = add(gamma, scaleRows(graph.Mul(f.gaps, graph.Sub(k, mH(k))), sc))
		if f.n > f.k {
			a = add(a, mm(scaleCols(f.u, f.inv), mH(graph.Sub(vb, mm(f.v, k)))))
		}
	}
	if gamma.Valid() {
		a = add(a, mm(f.u, mm(gamma, mH(f.v))))
	}
	return []graph.Value{graph.Conj(a)}, nil
}

// svdDiff holds what the SVD rules work with: the factors U, S and V,
// the kept ones followed, when the op truncates, by the discarded ones of
// a reduced SVD computed again; F and S⁻¹, broadened, in A's dtype; the
// extents m×n, k singular values in all and r kept.
type svdDiff struct {
	u, s, v    graph.Value
	gaps, inv  graph.Value
	m, n, k, r int
}

func newSVDDiff(c *graph.DiffCall, at decompAttrs) (*svdDiff, error) {
	x := c.Inputs[0]
	batch, m, n, err := concreteMatrix(c.Op, x)
	if err != nil {
		return nil, err
	}
	k := min(m, n)
	if at.mode == Complete && m != n {
		return nil, graphErr(c.Op, graph.ErrUnsupported, "no derivative for the complete SVD of a %d×%d matrix: the extra singular vectors are a basis chosen freely; use the reduced mode", m, n)
	}
	u, s, v := c.Outputs[0], c.Outputs[1], mH(c.Outputs[2])
	r := s.Shape()[len(batch)].Size
	f := &svdDiff{m: m, n: n, k: k, r: r}
	if r < k {
		uf, sf, vhf := GraphSVD(x, Reduced, 0)
		u = graph.Concatenate(-1, u, lastSlice(uf, r, k))
		s = graph.Concatenate(-1, s, lastSlice(sf, r, k))
		v = graph.Concatenate(-1, v, lastSlice(mH(vhf), r, k))
	}
	f.u, f.s, f.v = u, s, v
	s2 := graph.Square(s)
	f.gaps = graph.Convert(gapInverses(s2, graph.Square(maxLast(s2, 2))), x.DType())
	f.inv = graph.Convert(broadened(s, graph.Square(maxLast(s, 1))), x.DType())
	return f, nil
}

// kept returns the first r entries of the last axis (of k).
func (f *svdDiff) kept(x graph.Value) graph.Value {
	if f.r == f.k {
		return x
	}
	return lastSlice(x, 0, f.r)
}

// pad appends zeros to the last axis, from r entries to k.
func (f *svdDiff) pad(x graph.Value) graph.Value {
	if f.r == f.k {
		return x
	}
	sh := x.Shape()
	sh[len(sh)-1] = graph.Size(f.k - f.r)
	return graph.Concatenate(-1, x, zeros(x, sh))
}

// qrJVP: see the package comment above; for m < n the square rule on the
// first m columns, and dR₂ = dQᴴ·Y + Qᴴ·dY for the rest.
func qrJVP(c *graph.DiffCall, at decompAttrs, da graph.Value) ([]graph.Value, error) {
	x := c.Inputs[0]
	q, r := c.Outputs[0], c.Outputs[1]
	_, m, n, err := qrShape(c.Op, x, at)
	if err != nil {
		return nil, err
	}
	if m >= n {
		dq, dr, err := qrTallJVP(q, r, da, m > n)
		return []graph.Value{dq, dr}, err
	}
	r1 := lastSlice(r, 0, m)
	dq, dr1, err := qrTallJVP(q, r1, lastSlice(da, 0, m), false)
	if err != nil {
		return nil, err
	}
	dr2 := graph.Add(mm(mH(dq), lastSlice(x, m, n)), mm(mH(q), lastSlice(da, m, n)))
	return []graph.Value{dq, graph.Concatenate(-1, dr1, dr2)}, nil
}

// qrTallJVP is the rule for m ≥ n; tall says m > n.
func qrTallJVP(q, r, da graph.Value, tall bool) (dq, dr graph.Value, err error) {
	y := mT(GraphSolveTriangular(mT(r), mT(da), true)) // dA·R⁻¹
	cm := mm(mH(q), y)
	l, err := triangle(cm, strictLower)
	if err != nil {
		return dq, dr, err
	}
	omega := graph.Sub(l, mH(l))
	if cm.DType().IsComplex() {
		omega = graph.Add(omega, diagMat(imagPart(diagOf(cm))))
	}
	dq = mm(q, omega)
	if tall {
		dq = graph.Add(dq, graph.Sub(y, mm(q, cm)))
	}
	return dq, mm(graph.Sub(cm, omega), r), nil
}

// qrVJP: for m ≥ n, with M = Qᴴ·Q̄ − R̄·Rᴴ (conjugate pairing) and
// Φ = tril(M − Mᴴ, −1) + ½·diag(M − Mᴴ), Āᴴ = Q·R̄ + (Q·Φ + Q̄ − Q·Qᴴ·Q̄)·R⁻ᴴ;
// for m < n the same on the first m columns with Q̄ + Y·R̄₂ᴴ for Q̄, and
// Q·R̄₂ for Y.
func qrVJP(c *graph.DiffCall, at decompAttrs, ct []graph.Value) ([]graph.Value, error) {
	x := c.Inputs[0]
	q, r := c.Outputs[0], c.Outputs[1]
	_, m, n, err := qrShape(c.Op, x, at)
	if err != nil {
		return nil, err
	}
	var qb, rb graph.Value
	if ct[0].Valid() {
		qb = graph.Conj(ct[0])
	}
	if ct[1].Valid() {
		rb = graph.Conj(ct[1])
	}
	if m >= n {
		a, err := qrTallVJP(q, r, qb, rb, m > n)
		return []graph.Value{graph.Conj(a)}, err
	}
	var rb1, ay graph.Value
	if rb.Valid() {
		rb1 = lastSlice(rb, 0, m)
		rb2 := lastSlice(rb, m, n)
		qb = add(qb, mm(lastSlice(x, m, n), mH(rb2)))
		ay = mm(q, rb2)
	}
	ax, err := qrTallVJP(q, lastSlice(r, 0, m), qb, rb1, false)
	if err != nil {
		return nil, err
	}
	if !ay.Valid() {
		ay = zeros(x, lastSlice(x, m, n).Shape())
	}
	return []graph.Value{graph.Conj(graph.Concatenate(-1, ax, ay))}, nil
}

// qrTallVJP is the conjugate-pairing rule for m ≥ n (qb or rb may be
// absent; not both); tall says m > n.
func qrTallVJP(q, r, qb, rb graph.Value, tall bool) (graph.Value, error) {
	var mt, a graph.Value
	if qb.Valid() {
		mt = mm(mH(q), qb)
	}
	if rb.Valid() {
		mt = sub(mt, mm(rb, mH(r)))
		a = mm(q, rb)
	}
	phi, err := triangle(graph.Sub(mt, mH(mt)), lowerHalfDiagonal)
	if err != nil {
		return graph.Value{}, err
	}
	b := mm(q, phi)
	if tall && qb.Valid() {
		b = graph.Add(b, graph.Sub(qb, mm(q, mm(mH(q), qb))))
	}
	// B·R⁻ᴴ = (R⁻¹·Bᴴ)ᴴ
	return add(a, mH(GraphSolveTriangular(r, mH(b), false))), nil
}

// qrShape checks that the QR rules cover x's factorisation.
func qrShape(op string, x graph.Value, at decompAttrs) (graph.Shape, int, int, error) {
	batch, m, n, err := concreteMatrix(op, x)
	if err == nil && at.mode == Complete && m > n {
		err = graphErr(op, graph.ErrUnsupported, "no derivative for the complete QR of a %d×%d matrix (m > n: Q's extra columns); use the reduced mode", m, n)
	}
	return batch, m, n, err
}

// solveJVP: dX = A⁻¹·(dB − tri(dA)·X).
func solveJVP(c *graph.DiffCall, at decompAttrs, tan []graph.Value) ([]graph.Value, error) {
	a, x := c.Inputs[0], c.Outputs[0]
	rhs := tan[1]
	if tan[0].Valid() {
		part := upper
		if at.lower {
			part = lower
		}
		da, err := triangle(tan[0], part)
		if err != nil {
			return nil, err
		}
		rhs = sub(rhs, mm(da, x))
	}
	return []graph.Value{GraphSolveTriangular(a, rhs, at.lower)}, nil
}

// solveVJP: B̄ = A⁻ᵀ·X̄ and Ā = −tri(B̄·Xᵀ) (no conjugation: the map is
// complex-linear).
func solveVJP(c *graph.DiffCall, at decompAttrs, xb graph.Value) ([]graph.Value, error) {
	a, x := c.Inputs[0], c.Outputs[0]
	bb := GraphSolveTriangular(mT(a), xb, !at.lower)
	part := upper
	if at.lower {
		part = lower
	}
	ab, err := triangle(graph.Neg(mm(bb, mT(x))), part)
	if err != nil {
		return nil, err
	}
	return []graph.Value{ab, bb}, nil
}

// Matrix helpers on stacks of matrices (..., m, n).

// mT transposes the last two axes.
func mT(x graph.Value) graph.Value {
	r := x.Rank()
	perm := make([]int, r)
	for i := range perm {
		perm[i] = i
	}
	perm[r-2], perm[r-1] = r-1, r-2
	return graph.Permute(x, perm...)
}

// mH is the conjugate transpose of the last two axes.
func mH(x graph.Value) graph.Value {
	if x.DType().IsComplex() {
		return graph.Conj(mT(x))
	}
	return mT(x)
}

// mm is the (batched) matrix product.
func mm(x, y graph.Value) graph.Value { return graph.MatMul(x, y) }

// diagOf returns the diagonals, shape (..., n).
func diagOf(x graph.Value) graph.Value { return graph.Diagonal(x, -2, -1) }

// diagMat returns the diagonal matrices of the vectors x (..., n).
func diagMat(x graph.Value) graph.Value {
	r := x.Rank()
	return graph.EmbedDiagonal(x, r-1, r)
}

// scaleCols multiplies column j of x by s[..., j] (x·diag(s)).
func scaleCols(x, s graph.Value) graph.Value {
	sh := s.Shape()
	r := len(sh)
	return graph.Mul(x, graph.Reshape(s, slices.Concat(sh[:r-1], graph.Shape{graph.Size(1), sh[r-1]})))
}

// scaleRows multiplies row i of x by s[..., i] (diag(s)·x).
func scaleRows(x, s graph.Value) graph.Value {
	return graph.Mul(x, graph.Reshape(s, append(s.Shape(), graph.Size(1))))
}

// imagPart returns i·Im x in x's dtype (zero for a real x).
func imagPart(x graph.Value) graph.Value {
	h := x.Builder().Scalar(x.DType(), 0.5)
	return graph.Mul(h, graph.Sub(x, graph.Conj(x)))
}

// lastSlice returns x[..., lo:hi].
func lastSlice(x graph.Value, lo, hi int) graph.Value {
	rg := make([]tensor.Range, x.Rank())
	for i := range rg {
		rg[i] = tensor.Range{Full: true}
	}
	rg[len(rg)-1] = tensor.Range{Start: lo, Stop: hi, Step: 1}
	return graph.Slice(x, rg...)
}

// zeros returns zeros of x's dtype and the given shape.
func zeros(x graph.Value, sh graph.Shape) graph.Value {
	return graph.BroadcastTo(x.Builder().Scalar(x.DType(), 0), sh)
}

// add and sub combine terms, either of which may be absent.
func add(x, y graph.Value) graph.Value {
	switch {
	case !x.Valid():
		return y
	case !y.Valid():
		return x
	}
	return graph.Add(x, y)
}

func sub(x, y graph.Value) graph.Value {
	if !x.Valid() {
		return graph.Neg(y)
	}
	return add(x, graph.Neg(y))
}

// maxLast returns the largest entry of each vector x (..., n), with ones
// axes of extent 1 in place of the last, to scale vectors (ones = 1) or
// matrices (ones = 2).
func maxLast(x graph.Value, ones int) graph.Value {
	sh := x.Shape()
	return graph.Reshape(graph.ReduceMax(x, -1), slices.Concat(sh[:len(sh)-1], slices.Repeat(graph.Shape{graph.Size(1)}, ones)))
}

// differences returns the matrices D_ij = x_j − x_i of the vectors x.
func differences(x graph.Value) graph.Value {
	sh := x.Shape()
	r := len(sh)
	row := slices.Concat(sh[:r-1], graph.Shape{graph.Size(1), sh[r-1]})
	col := slices.Concat(sh[:r-1], graph.Shape{sh[r-1], graph.Size(1)})
	return graph.Sub(graph.Reshape(x, row), graph.Reshape(x, col))
}

// broadened returns x/(x² + ε·scale2), the reciprocal of x broadened as
// the comment at the top of this file says, for real x and scale2 (which
// broadcasts against x); 0 where both vanish.
func broadened(x, scale2 graph.Value) graph.Value {
	b := x.Builder()
	dt := x.DType()
	eps := 0x1p-52
	if dt == tensor.Float32 {
		eps = 0x1p-23
	}
	den := graph.Add(graph.Square(x), graph.Mul(b.Scalar(dt, complex(eps, 0)), scale2))
	den = graph.Select(graph.Eq(den, b.Scalar(dt, 0)), b.Scalar(dt, 1), den)
	return graph.Div(x, den)
}

// gapInverses returns the matrices F_ij = 1/(x_j − x_i) of the vectors x,
// broadened with scale2, and F_ii = 0. The diagonal, a difference that
// is zero by construction, is cut off explicitly: where the broadened
// reciprocal's derivative at zero (1/η², huge) would reach it, the two
// cotangents of x_i − x_i would cancel in rounding error.
func gapInverses(x, scale2 graph.Value) graph.Value {
	f := broadened(differences(x), scale2)
	return graph.Sub(f, diagMat(diagOf(f)))
}

// eigGaps returns F_ij = 1/(λⱼ − λᵢ), broadened, in dtype dt.
func eigGaps(w graph.Value, dt tensor.DType) graph.Value {
	return graph.Convert(gapInverses(w, graph.Square(maxLast(graph.Abs(w), 2))), dt)
}

// A part of a square matrix that triangle keeps.
type part int

const (
	lower             part = iota // the lower triangle and the diagonal
	upper                         // the upper triangle and the diagonal
	strictLower                   // below the diagonal
	lowerHalfDiagonal             // below the diagonal, and half the diagonal
)

// triangle returns the part p of the matrices x (concrete extents), the
// rest zero.
func triangle(x graph.Value, p part) (graph.Value, error) {
	sh := x.Shape()
	d := sh[len(sh)-1]
	if d.IsSym() {
		return graph.Value{}, graphErr("linalg", graph.ErrUnsupported, "derivative rules need concrete matrix extents, not %v", d)
	}
	n := d.Size
	keep, half := make([]bool, n*n), make([]bool, n*n)
	for i := range n {
		for j := range n {
			switch p {
			case lower, lowerHalfDiagonal:
				keep[i*n+j] = i >= j
			case upper:
				keep[i*n+j] = i <= j
			case strictLower:
				keep[i*n+j] = i > j
			}
			half[i*n+j] = p == lowerHalfDiagonal && i == j
		}
	}
	b := x.Builder()
	mask := func(v []bool) graph.Value {
		t, err := tensor.New(v, n, n)
		if err != nil {
			return b.Constant(nil)
		}
		return b.Constant(t)
	}
	zero := b.Scalar(x.DType(), 0)
	out := graph.Select(mask(keep), x, zero)
	if p == lowerHalfDiagonal {
		out = graph.Select(mask(half), graph.Mul(b.Scalar(x.DType(), 0.5), x), out)
	}
	return out, nil
}

// concreteMatrix returns the batch shape and the concrete matrix extents
// of x, or an ErrUnsupported error.
func concreteMatrix(op string, x graph.Value) (graph.Shape, int, int, error) {
	sh := x.Shape()
	r := len(sh)
	m, n := sh[r-2], sh[r-1]
	if m.IsSym() || n.IsSym() {
		return nil, 0, 0, graphErr(op, graph.ErrUnsupported, "derivative rules need concrete matrix extents, not %v×%v", m, n)
	}
	return sh[:r-2], m.Size, n.Size, nil
}
