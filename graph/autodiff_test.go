package graph_test

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/graph/ref"
	"github.com/goferro/goferro/tensor"
)

// The gradient checker. For a program f, random inputs x, a random
// direction v (one tangent per differentiated input) and a random
// cotangent u (one per output), it checks
//
//	JVP(x; v)          ≈ (f(x + h·v) − f(x − h·v)) / 2h   elementwise,
//	Re Σ VJP(x; u)·v   ≈ Re Σ u·JVP(x; v)                  (the transpose, exact),
//
// and that both derivative programs reproduce f's outputs. Inputs are
// drawn from domains where every op is smooth (away from 0 for log, sqrt,
// reciprocal, div, pow; ties of max/min/abs have probability 0), and are
// passed as strided views (column-major, with an offset) half the time.
//
// Tolerance. With h = 1e-5 and inputs, directions and derivatives of order
// one, the central difference has truncation error h²·|f”'|/6 ≈ 1e-11
// and rounding error about ε·|f|/h ≈ 2e-16/1e-5 = 2e-11, in float64 and in
// complex128 alike (each part is a float64). fdTol = 1e-6 (relative to
// 1 + |value|) leaves more than four orders of magnitude for the larger
// third derivatives of exp, reciprocal and pow on the sampled domains,
// while a wrong rule (a missing factor, a sign, a conjugate, a transposed
// axis) is off by order one. The transpose identity involves no
// approximation: only rounding of sums of a few hundred terms, so
// exactTol = 1e-10.
const (
	fdStep   = 1e-5
	fdTol    = 1e-6
	exactTol = 1e-10
)

// domain selects how an input is drawn.
type domain int

const (
	anyValue domain = iota // real and imaginary parts uniform in [−1, 1)
	positive               // real part in [0.5, 1.5), imaginary part in [−0.5, 0.5)
)

type adInput struct {
	dt     tensor.DType
	shape  []int
	domain domain
}

// adCase is one program to check: its inputs and how to build it.
type adCase struct {
	name   string
	inputs []adInput
	build  func(x []graph.Value) []graph.Value
}

func (c adCase) compile(t *testing.T) *graph.Program {
	t.Helper()
	b := graph.NewBuilder()
	xs := make([]graph.Value, len(c.inputs))
	for i, in := range c.inputs {
		xs[i] = b.Input(fmt.Sprintf("x%d", i), in.dt, graph.Dims(in.shape...))
	}
	p, err := graph.Compile(c.build(xs)...)
	if err != nil {
		t.Fatalf("%s: compile: %v", c.name, err)
	}
	return p
}

// draw returns a random value of the domain (real part only for real
// dtypes).
func draw(rng *rand.Rand, d domain, dt tensor.DType) complex128 {
	re, im := 2*rng.Float64()-1, 2*rng.Float64()-1
	if d == positive {
		re, im = re/2+1, im/2
	}
	if !dt.IsComplex() {
		im = 0
	}
	return complex(re, im)
}

// newTensor returns a tensor of dtype dt (float64 or complex128) holding
// vals in row-major order; a strided column-major view with an offset
// when view is set.
func newTensor(t *testing.T, dt tensor.DType, shape []int, vals []complex128, view bool) *tensor.Tensor {
	t.Helper()
	n := len(vals)
	strides := make([]int, len(shape))
	off := 0
	if view {
		off = 1
		s := 1
		for i, d := range shape {
			strides[i] = s
			s *= max(d, 1)
		}
	} else {
		s := 1
		for i := len(shape) - 1; i >= 0; i-- {
			strides[i] = s
			s *= max(shape[i], 1)
		}
	}
	// place vals[k] (row-major k) at its strided position
	pos := func(k int) int {
		p := off
		for i := len(shape) - 1; i >= 0; i-- {
			p += (k % shape[i]) * strides[i]
			k /= shape[i]
		}
		return p
	}
	var out *tensor.Tensor
	var err error
	switch dt {
	case tensor.Float64:
		buf := make([]float64, n+off)
		for k, v := range vals {
			buf[pos(k)] = real(v)
		}
		out, err = tensor.FromStrided(buf, shape, strides, off)
	case tensor.Complex128:
		buf := make([]complex128, n+off)
		for k, v := range vals {
			buf[pos(k)] = v
		}
		out, err = tensor.FromStrided(buf, shape, strides, off)
	case tensor.Int64:
		buf := make([]int64, n+off)
		for k, v := range vals {
			buf[pos(k)] = int64(10 * real(v))
		}
		out, err = tensor.FromStrided(buf, shape, strides, off)
	default:
		t.Fatalf("newTensor: dtype %v", dt)
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func numel(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

func randVals(rng *rand.Rand, d domain, dt tensor.DType, n int) []complex128 {
	v := make([]complex128, n)
	for i := range v {
		v[i] = draw(rng, d, dt)
	}
	return v
}

func runRef(t *testing.T, p *graph.Program, in ...*tensor.Tensor) [][]complex128 {
	t.Helper()
	outs, err := ref.Run(p, in...)
	if err != nil {
		t.Fatalf("run: %v\n%v", err, p)
	}
	vals := make([][]complex128, len(outs))
	for k, o := range outs {
		vals[k] = o.Complex128Values()
	}
	return vals
}

func approx(a, b complex128, tol float64) bool {
	return cmplx.Abs(a-b) <= tol*(1+cmplx.Abs(b))
}

// pairing is Re Σ u·w, the real pairing VJP transposes under.
func pairing(u, w []complex128) float64 {
	s := 0.0
	for i := range u {
		s += real(u[i] * w[i])
	}
	return s
}

// checkGradients runs the gradient checker on one program with one random
// draw.
// p is the program; c names it and describes its inputs.
func checkGradients(t *testing.T, c adCase, p *graph.Program, rng *rand.Rand, view bool) {
	t.Helper()
	var wrt []int
	for i, in := range c.inputs {
		if in.dt.IsFloat() || in.dt.IsComplex() {
			wrt = append(wrt, i)
		}
	}
	vjp, err := graph.VJP(p, wrt...)
	if err != nil {
		t.Fatalf("%s: VJP: %v\n%v", c.name, err, p)
	}
	jvp, err := graph.JVP(p, wrt...)
	if err != nil {
		t.Fatalf("%s: JVP: %v\n%v", c.name, err, p)
	}
	for j, w := range wrt {
		if got, want := vjp.SlotType(vjp.Outputs[len(p.Outputs)+j]), p.Inputs[w].Type(); !got.Equal(want) {
			t.Fatalf("%s: VJP gives %v for input %d, want %v", c.name, got, w, want)
		}
	}
	for k, s := range p.Outputs {
		if got, want := jvp.SlotType(jvp.Outputs[len(p.Outputs)+k]), p.SlotType(s); !got.Equal(want) {
			t.Fatalf("%s: JVP gives %v for output %d, want %v", c.name, got, k, want)
		}
	}
	xs := make([][]complex128, len(c.inputs))
	vs := make([][]complex128, len(c.inputs))
	for i, in := range c.inputs {
		xs[i] = randVals(rng, in.domain, in.dt, numel(in.shape))
		vs[i] = randVals(rng, anyValue, in.dt, numel(in.shape))
	}
	tensors := func(shift float64) []*tensor.Tensor {
		out := make([]*tensor.Tensor, len(c.inputs))
		for i, in := range c.inputs {
			v := append([]complex128{}, xs[i]...)
			if in.dt.IsFloat() || in.dt.IsComplex() {
				for k := range v {
					v[k] += complex(shift, 0) * vs[i][k]
				}
			}
			out[i] = newTensor(t, in.dt, in.shape, v, view)
		}
		return out
	}
	x := tensors(0)
	y := runRef(t, p, x...)
	plus, minus := runRef(t, p, tensors(fdStep)...), runRef(t, p, tensors(-fdStep)...)

	// JVP against finite differences.
	jin := append([]*tensor.Tensor{}, x...)
	for _, w := range wrt {
		jin = append(jin, newTensor(t, c.inputs[w].dt, c.inputs[w].shape, vs[w], view))
	}
	jout := runRef(t, jvp, jin...)
	dy := jout[len(y):]
	for k := range y {
		for e := range y[k] {
			if !approx(jout[k][e], y[k][e], exactTol) {
				t.Fatalf("%s: JVP program output %d[%d] = %v, the program gives %v", c.name, k, e, jout[k][e], y[k][e])
			}
			fd := (plus[k][e] - minus[k][e]) / complex(2*fdStep, 0)
			if p.SlotType(p.Outputs[k]).DType.IsFloat() || p.SlotType(p.Outputs[k]).DType.IsComplex() {
				if !approx(dy[k][e], fd, fdTol) {
					t.Fatalf("%s: JVP output %d[%d] = %v, finite difference %v\n%v", c.name, k, e, dy[k][e], fd, jvp)
				}
			}
		}
	}

	// VJP: the transpose of the JVP under Re Σ u·w.
	vin := append([]*tensor.Tensor{}, x...)
	lhs := 0.0
	for k, s := range p.Outputs {
		ty := p.SlotType(s)
		shape, _ := ty.Shape.Concrete()
		u := randVals(rng, anyValue, ty.DType, len(y[k]))
		if ty.DType == tensor.Float64 || ty.DType == tensor.Complex128 {
			lhs += pairing(u, dy[k])
			vin = append(vin, newTensor(t, ty.DType, shape, u, view))
		} else {
			zero, _ := tensor.Zeros(ty.DType, shape...)
			vin = append(vin, zero)
		}
	}
	vout := runRef(t, vjp, vin...)
	for k := range y {
		for e := range y[k] {
			if !approx(vout[k][e], y[k][e], exactTol) {
				t.Fatalf("%s: VJP program output %d[%d] = %v, the program gives %v", c.name, k, e, vout[k][e], y[k][e])
			}
		}
	}
	rhs := 0.0
	for j, w := range wrt {
		rhs += pairing(vout[len(y)+j], vs[w])
	}
	if math.Abs(lhs-rhs) > exactTol*(1+math.Abs(lhs)) {
		t.Fatalf("%s: Re Σ u·JVP(v) = %v, Re Σ VJP(u)·v = %v\n%v", c.name, lhs, rhs, vjp)
	}
}

const (
	f64  = tensor.Float64
	c128 = tensor.Complex128
)

// adCases returns the op cases with random extents drawn from rng, in
// float64 and complex128 where the op takes both.
func adCases(rng *rand.Rand) []adCase {
	n := func() int { return 1 + rng.IntN(4) }
	a, b, c, d := n(), n(), n(), n()
	var cases []adCase
	unary := []struct {
		name string
		f    func(graph.Value) graph.Value
		dom  domain
	}{
		{"neg", graph.Neg, anyValue}, {"abs", graph.Abs, anyValue}, {"exp", graph.Exp, anyValue},
		{"log", graph.Log, positive}, {"sqrt", graph.Sqrt, positive},
		{"reciprocal", graph.Reciprocal, positive}, {"square", graph.Square, anyValue},
		{"conj", graph.Conj, anyValue},
	}
	binary := []struct {
		name    string
		f       func(x, y graph.Value) graph.Value
		dx, dy  domain
		complex bool
	}{
		{"add", graph.Add, anyValue, anyValue, true}, {"sub", graph.Sub, anyValue, anyValue, true},
		{"mul", graph.Mul, anyValue, anyValue, true}, {"div", graph.Div, anyValue, positive, true},
		{"pow", graph.Pow, positive, anyValue, true},
		{"max", graph.Maximum, anyValue, anyValue, false}, {"min", graph.Minimum, anyValue, anyValue, false},
	}
	for _, dt := range []tensor.DType{f64, c128} {
		for _, u := range unary {
			cases = append(cases, adCase{u.name + "/" + dt.String(), []adInput{{dt, []int{a, b}, u.dom}},
				func(x []graph.Value) []graph.Value { return []graph.Value{u.f(x[0])} }})
		}
		for _, o := range binary {
			if dt == c128 && !o.complex {
				continue
			}
			cases = append(cases, adCase{o.name + "/" + dt.String(), []adInput{{dt, []int{a, b}, o.dx}, {dt, []int{a, b}, o.dy}},
				func(x []graph.Value) []graph.Value { return []graph.Value{o.f(x[0], x[1])} }})
			// x used twice, and an implicit broadcast of y
			cases = append(cases, adCase{o.name + "/shared+broadcast/" + dt.String(), []adInput{{dt, []int{a, b}, o.dx}, {dt, []int{b}, o.dy}},
				func(x []graph.Value) []graph.Value { return []graph.Value{o.f(graph.Mul(x[0], x[0]), x[1])} }})
		}
		in3 := []adInput{{dt, []int{a, b, c}, anyValue}}
		pos3 := []adInput{{dt, []int{a, b, c}, positive}}
		one := func(f func(x graph.Value) graph.Value) func([]graph.Value) []graph.Value {
			return func(x []graph.Value) []graph.Value { return []graph.Value{f(x[0])} }
		}
		cases = append(cases,
			adCase{"reduce_sum/" + dt.String(), in3, one(func(x graph.Value) graph.Value { return graph.ReduceSum(x, 0, 2) })},
			adCase{"reduce_sum_all/" + dt.String(), in3, one(func(x graph.Value) graph.Value { return graph.ReduceSum(x) })},
			adCase{"reduce_prod/" + dt.String(), pos3, one(func(x graph.Value) graph.Value { return graph.ReduceProd(x, 1) })},
			adCase{"reshape/" + dt.String(), in3, one(func(x graph.Value) graph.Value { return graph.Reshape(x, graph.Dims(c, a*b)) })},
			adCase{"permute/" + dt.String(), in3, one(func(x graph.Value) graph.Value { return graph.Permute(x, 2, 0, 1) })},
			adCase{"broadcast/" + dt.String(), []adInput{{dt, []int{a, 1, c}, anyValue}},
				one(func(x graph.Value) graph.Value { return graph.BroadcastTo(x, graph.Dims(d, a, b, c)) })},
			adCase{"slice/" + dt.String(), []adInput{{dt, []int{a + 4, b, c + 5}, anyValue}},
				one(func(x graph.Value) graph.Value {
					return graph.Slice(x, tensor.Range{Start: 1, Stop: a + 3, Step: 2}, tensor.Range{Full: true}, tensor.Range{Start: 2, Stop: c + 5, Step: 3})
				})},
			adCase{"concatenate/" + dt.String(), []adInput{{dt, []int{a, b}, anyValue}, {dt, []int{a, c}, anyValue}, {dt, []int{a, 1}, anyValue}},
				func(x []graph.Value) []graph.Value { return []graph.Value{graph.Concatenate(1, x[0], x[1], x[2])} }},
			adCase{"diagonal/" + dt.String(), []adInput{{dt, []int{a, b, a}, anyValue}},
				one(func(x graph.Value) graph.Value { return graph.Diagonal(x, 0, 2) })},
			adCase{"embed_diagonal/" + dt.String(), []adInput{{dt, []int{b, a}, anyValue}},
				one(func(x graph.Value) graph.Value { return graph.EmbedDiagonal(x, 0, 2) })},
			adCase{"select/" + dt.String(), []adInput{{f64, []int{a, b}, anyValue}, {dt, []int{a, b}, anyValue}, {dt, []int{b}, anyValue}},
				func(x []graph.Value) []graph.Value {
					cond := graph.Gt(x[0], x[0].Builder().Scalar(f64, 0))
					return []graph.Value{graph.Select(cond, x[1], x[2]), cond}
				}},
			adCase{"dot_general/" + dt.String(), []adInput{{dt, []int{c, a, b}, anyValue}, {dt, []int{b, d, c}, anyValue}},
				func(x []graph.Value) []graph.Value {
					return []graph.Value{graph.DotGeneral(x[0], x[1], graph.DotDims{LhsBatch: []int{0}, RhsBatch: []int{2}, LhsContract: []int{2}, RhsContract: []int{0}})}
				}},
			adCase{"dot_general2/" + dt.String(), []adInput{{dt, []int{a, b, c}, anyValue}, {dt, []int{c, d, b}, anyValue}},
				func(x []graph.Value) []graph.Value {
					return []graph.Value{graph.DotGeneral(x[0], x[1], graph.DotDims{LhsContract: []int{2, 1}, RhsContract: []int{0, 2}})}
				}},
			// a batch axis, a free axis and a contracted axis in
			// cyclic order on both sides
			adCase{"dot_general3/" + dt.String(), []adInput{{dt, []int{b, c, a}, anyValue}, {dt, []int{d, c, b}, anyValue}},
				func(x []graph.Value) []graph.Value {
					return []graph.Value{graph.DotGeneral(x[0], x[1], graph.DotDims{LhsBatch: []int{1}, RhsBatch: []int{1}, LhsContract: []int{0}, RhsContract: []int{2}})}
				}},
			adCase{"einsum/" + dt.String(), []adInput{{dt, []int{a, b}, anyValue}, {dt, []int{b, c}, anyValue}, {dt, []int{c, a}, anyValue}, {dt, []int{d}, anyValue}},
				func(x []graph.Value) []graph.Value {
					return []graph.Value{graph.Einsum("ij,jk,ki,l->il", x...), graph.Einsum("ij,ji->", graph.Einsum("ij,jk->ik", x[0], x[1]), x[2])}
				}},
		)
	}
	// a network of 50 tensors: a ring of matrices with a dangling leg
	// and a batch label, planned by the default optimizer
	var terms []string
	var ring []adInput
	for i := range 50 {
		terms = append(terms, string([]rune{'z', rune(0x100 + i), rune(0x100 + (i+1)%50)}))
		ring = append(ring, adInput{f64, []int{2, 2, 2}, anyValue})
	}
	terms[7] += "y"
	ring[7].shape = []int{2, 2, 2, 3}
	cases = append(cases, adCase{"einsum/ring50", ring,
		func(x []graph.Value) []graph.Value {
			return []graph.Value{graph.Einsum(strings.Join(terms, ",")+"->yz", x...)}
		}})
	// a random network: 6 tensors of rank 3 or 4 over 7 labels in random
	// orders, keeping 2 labels, so the transposed contractions meet
	// every axis order
	ext := make([]int, 7)
	for i := range ext {
		ext[i] = 2 + rng.IntN(2)
	}
	var rterms []string
	var rin []adInput
	for range 6 {
		ls := rng.Perm(7)[:3+rng.IntN(2)]
		var term []rune
		var shape []int
		for _, l := range ls {
			term = append(term, rune('a'+l))
			shape = append(shape, ext[l])
		}
		rterms = append(rterms, string(term))
		rin = append(rin, adInput{f64, shape, anyValue})
	}
	keep := string(rterms[0][:1]) + string(rterms[5][len(rterms[5])-1:])
	if keep[0] == keep[1] {
		keep = keep[:1]
	}
	eq := strings.Join(rterms, ",") + "->" + keep
	cases = append(cases, adCase{"einsum/random " + eq, rin,
		func(x []graph.Value) []graph.Value { return []graph.Value{graph.Einsum(eq, x...)} }})
	cases = append(cases,
		adCase{"reduce_max/float64", []adInput{{f64, []int{a, b, c}, anyValue}},
			func(x []graph.Value) []graph.Value { return []graph.Value{graph.ReduceMax(x[0], 1, 2)} }},
		adCase{"reduce_min/float64", []adInput{{f64, []int{a, b, c}, anyValue}},
			func(x []graph.Value) []graph.Value { return []graph.Value{graph.ReduceMin(x[0], 0)} }},
		adCase{"convert/real-complex-real", []adInput{{f64, []int{a, b}, anyValue}, {c128, []int{a, b}, anyValue}},
			func(x []graph.Value) []graph.Value {
				z := graph.Mul(graph.Convert(x[0], c128), x[1])
				return []graph.Value{z, graph.Convert(graph.Square(z), f64)}
			}},
		adCase{"convert/from-int", []adInput{{tensor.Int64, []int{a}, anyValue}, {f64, []int{a}, anyValue}},
			func(x []graph.Value) []graph.Value {
				return []graph.Value{graph.Mul(graph.Convert(x[0], f64), x[1])}
			}},
	)
	return cases
}

func TestGradientCheck(t *testing.T) {
	runGradientChecks(t, rand.New(rand.NewPCG(18, 1)), adCases)
}

// runGradientChecks checks three draws of the cases, every other one on
// strided views of its inputs, then checks the cases' VJP programs
// themselves (second order), whose instructions include every rule's own
// output (sign, masks, safe divisors, transposed contractions), with
// respect to the inputs and the cotangents.
func runGradientChecks(t *testing.T, rng *rand.Rand, cases func(*rand.Rand) []adCase) {
	for round := 0; round < 3; round++ {
		for _, c := range cases(rng) {
			t.Run(fmt.Sprintf("%s/%d", c.name, round), func(t *testing.T) {
				checkGradients(t, c, c.compile(t), rng, round%2 == 1)
			})
		}
	}
	for _, c := range cases(rng) {
		t.Run(c.name+"/vjp", func(t *testing.T) { checkSecondOrder(t, c, rng) })
	}
}

// checkSecondOrder runs the gradient checker on the VJP program of c, with
// respect to c's inputs and the cotangents.
func checkSecondOrder(t *testing.T, c adCase, rng *rand.Rand) {
	t.Helper()
	p := c.compile(t)
	var wrt []int
	for i, in := range c.inputs {
		if in.dt.IsFloat() || in.dt.IsComplex() {
			wrt = append(wrt, i)
		}
	}
	q, err := graph.VJP(p, wrt...)
	if err != nil {
		t.Fatal(err)
	}
	c2 := adCase{name: c.name + "/vjp", inputs: slices.Clone(c.inputs)}
	for _, s := range p.Outputs {
		ty := p.SlotType(s)
		shape, _ := ty.Shape.Concrete()
		if ty.DType != f64 && ty.DType != c128 {
			t.Skipf("output of type %v", ty)
		}
		c2.inputs = append(c2.inputs, adInput{ty.DType, shape, anyValue})
	}
	checkGradients(t, c2, q, rng, false)
}

// vjpOf compiles out, takes its VJP with respect to wrt and runs it on the
// inputs and cotangents, returning the VJP program's outputs.
func vjpOf(t *testing.T, out []graph.Value, wrt []int, in ...*tensor.Tensor) [][]complex128 {
	t.Helper()
	p, err := graph.Compile(out...)
	if err != nil {
		t.Fatal(err)
	}
	q, err := graph.VJP(p, wrt...)
	if err != nil {
		t.Fatal(err)
	}
	return runRef(t, q, in...)
}

func mustTensor[T tensor.Elem](t *testing.T, data []T, shape ...int) *tensor.Tensor {
	t.Helper()
	x, err := tensor.New(data, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// The complex convention: for a real loss L, VJP with cotangent 1 gives
// ∂L/∂x − i·∂L/∂y (JAX's), and holomorphic ops are transposed without
// conjugation.
func TestVJPComplexConvention(t *testing.T) {
	z := []complex128{3 + 4i, -1 + 2i, 0.5 - 0.25i}
	w := []complex128{2 - 1i, 1i, -3}
	b := graph.NewBuilder()
	zv := b.Input("z", c128, graph.Dims(3))
	wv := b.Input("w", c128, graph.Dims(3))
	loss := graph.ReduceSum(graph.Square(graph.Abs(zv))) // Σ|z|², real
	holo := graph.ReduceSum(graph.Mul(zv, wv))           // Σ z·w, holomorphic
	got := vjpOf(t, []graph.Value{loss, holo}, []int{0},
		mustTensor(t, z, 3), mustTensor(t, w, 3), mustTensor(t, []float64{1}), mustTensor(t, []complex128{0}))
	for i := range z {
		// L = x² + y²: ∂L/∂x − i·∂L/∂y = 2x − 2iy = 2·conj(z).
		if want := 2 * cmplx.Conj(z[i]); !approx(got[2][i], want, exactTol) {
			t.Errorf("VJP of Σ|z|² at z[%d] = %v, want 2·conj(z) = %v", i, got[2][i], want)
		}
	}
	got = vjpOf(t, []graph.Value{loss, holo}, []int{0},
		mustTensor(t, z, 3), mustTensor(t, w, 3), mustTensor(t, []float64{0}), mustTensor(t, []complex128{1}))
	for i := range z {
		if !approx(got[2][i], w[i], exactTol) {
			t.Errorf("VJP of Σz·w at z[%d] = %v, want w = %v (no conjugate)", i, got[2][i], w[i])
		}
	}
}

// Ties of max, min, reduce_max and reduce_min share the cotangent equally.
func TestVJPTies(t *testing.T) {
	b := graph.NewBuilder()
	x := b.Input("x", f64, graph.Dims(2, 3))
	y := b.Input("y", f64, graph.Dims(2, 3))
	out := []graph.Value{graph.ReduceMax(x, 1), graph.ReduceMin(x, 0), graph.Maximum(x, y)}
	xs := []float64{1, 3, 3, 2, 2, 0}
	ys := []float64{1, 0, 5, 2, 2, 2}
	got := vjpOf(t, out, []int{0, 1},
		mustTensor(t, xs, 2, 3), mustTensor(t, ys, 2, 3),
		mustTensor(t, []float64{1, 10}, 2), mustTensor(t, []float64{100, 1000, 10000}, 3), mustTensor(t, []float64{1, 1, 1, 1, 1, 1}, 2, 3))
	// reduce_max rows: [1 3 3] → ½,½ on the 3s (×1); [2 2 0] → ½,½ (×10).
	// reduce_min columns: [1 2] → row 0 (×100); [3 2] → row 1 (×1000);
	// [3 0] → row 1 (×10000). max(x, y): ties at (0,0), (1,0), (1,1).
	wantX := []float64{0 + 100 + 0.5, 0.5 + 1, 0.5 + 0, 5 + 0.5, 5 + 1000 + 0.5, 10000 + 0}
	wantY := []float64{0.5, 0, 1, 0.5, 0.5, 1}
	for i := range wantX {
		if got[3][i] != complex(wantX[i], 0) || got[4][i] != complex(wantY[i], 0) {
			t.Fatalf("gradients %v and %v, want %v and %v", got[3], got[4], wantX, wantY)
		}
	}
}

// JVP of VJP gives Hessian-vector products: f(x) = Σ exp(x)·x² + xᵀAx has
// H = diag(exp(x)·(x² + 4x + 2)) + A + Aᵀ.
func TestHessianVectorProduct(t *testing.T) {
	const n = 4
	b := graph.NewBuilder()
	x := b.Input("x", f64, graph.Dims(n))
	a := b.Input("a", f64, graph.Dims(n, n))
	f := graph.Add(graph.ReduceSum(graph.Mul(graph.Exp(x), graph.Square(x))), graph.Einsum("i,ij,j->", x, a, x))
	p, err := graph.Compile(f)
	if err != nil {
		t.Fatal(err)
	}
	g, err := graph.VJP(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	h, err := graph.JVP(g, 0) // inputs x, a, cotangent0, tangent_x; outputs f, ∇f, df, H·v
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	xs, vs, as := make([]float64, n), make([]float64, n), make([]float64, n*n)
	for i := range xs {
		xs[i], vs[i] = 2*rng.Float64()-1, 2*rng.Float64()-1
	}
	for i := range as {
		as[i] = 2*rng.Float64() - 1
	}
	out := runRef(t, h, mustTensor(t, xs, n), mustTensor(t, as, n, n), mustTensor(t, []float64{1}), mustTensor(t, vs, n))
	if len(out) != 4 {
		t.Fatalf("%d outputs, want 4", len(out))
	}
	// Reverse over reverse: the VJP of ∇f with cotangent v is Hᵀv = Hv.
	gg, err := graph.VJP(g, 0) // inputs x, a, cotangent0, cotangent0', cotangent1; outputs f, ∇f, Hv
	if err != nil {
		t.Fatal(err)
	}
	rr := runRef(t, gg, mustTensor(t, xs, n), mustTensor(t, as, n, n), mustTensor(t, []float64{1}), mustTensor(t, []float64{0}), mustTensor(t, vs, n))
	for i := 0; i < n; i++ {
		e := math.Exp(xs[i])
		want := e * (xs[i]*xs[i] + 4*xs[i] + 2) * vs[i]
		grad := e * (xs[i]*xs[i] + 2*xs[i])
		for j := 0; j < n; j++ {
			want += (as[i*n+j] + as[j*n+i]) * vs[j]
			grad += (as[i*n+j] + as[j*n+i]) * xs[j]
		}
		if !approx(out[1][i], complex(grad, 0), exactTol) {
			t.Errorf("∇f[%d] = %v, want %v", i, out[1][i], grad)
		}
		if !approx(out[3][i], complex(want, 0), exactTol) {
			t.Errorf("(H·v)[%d] = %v, want %v", i, out[3][i], want)
		}
		if !approx(rr[2][i], complex(want, 0), exactTol) {
			t.Errorf("reverse over reverse: (H·v)[%d] = %v, want %v", i, rr[2][i], want)
		}
	}
}

// Symbolic extents survive both transformations.
func TestAutodiffSymbolic(t *testing.T) {
	b := graph.NewBuilder()
	x := b.Input("x", f64, graph.Shape{graph.Sym("n"), graph.Size(2)})
	w := b.Input("w", f64, graph.Dims(2))
	p, err := graph.Compile(graph.ReduceSum(graph.Mul(x, w), 1))
	if err != nil {
		t.Fatal(err)
	}
	q, err := graph.VJP(p, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 3} {
		xs, ct := make([]float64, 2*n), make([]float64, n)
		for i := range xs {
			xs[i] = float64(i + 1)
		}
		for i := range ct {
			ct[i] = float64(10 * (i + 1))
		}
		out := runRef(t, q, mustTensor(t, xs, n, 2), mustTensor(t, []float64{2, -1}, 2), mustTensor(t, ct, n))
		// ∂/∂x[i,j] = ct[i]·w[j]; ∂/∂w[j] = Σ_i ct[i]·x[i,j].
		for i := 0; i < n; i++ {
			for j, wj := range []float64{2, -1} {
				if out[1][2*i+j] != complex(ct[i]*wj, 0) {
					t.Fatalf("n=%d: ∂/∂x = %v", n, out[1])
				}
			}
		}
		for j := 0; j < 2; j++ {
			s := 0.0
			for i := 0; i < n; i++ {
				s += ct[i] * xs[2*i+j]
			}
			if out[2][j] != complex(s, 0) {
				t.Fatalf("n=%d: ∂/∂w = %v, want [%v]", n, out[2], s)
			}
		}
	}
	if _, err := graph.JVP(p, 0, 1); err != nil {
		t.Fatal(err)
	}
}

// An input the outputs do not depend on gets a zero gradient; an output
// that does not depend on the inputs gets a zero tangent.
func TestAutodiffDisconnected(t *testing.T) {
	b := graph.NewBuilder()
	x := b.Input("x", f64, graph.Dims(2))
	_ = b.Input("unused", f64, graph.Dims(3))
	p, err := graph.Compile(graph.Exp(x), b.Scalar(f64, 5))
	if err != nil {
		t.Fatal(err)
	}
	q, err := graph.VJP(p, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	out := runRef(t, q, mustTensor(t, []float64{0, 1}, 2), mustTensor(t, []float64{1, 2, 3}, 3), mustTensor(t, []float64{1, 1}, 2), mustTensor(t, []float64{1}))
	if out[2][0] != 1 || out[2][1] != complex(math.E, 0) || len(out[3]) != 3 || out[3][0] != 0 || out[3][1] != 0 || out[3][2] != 0 {
		t.Fatalf("VJP gives %v and %v, want [1 e] and zeros", out[2], out[3])
	}
	r, err := graph.JVP(p, 1)
	if err != nil {
		t.Fatal(err)
	}
	out = runRef(t, r, mustTensor(t, []float64{0, 1}, 2), mustTensor(t, []float64{1, 2, 3}, 3), mustTensor(t, []float64{1, 1, 1}, 3))
	if out[2][0] != 0 || out[2][1] != 0 || out[3][0] != 0 {
		t.Fatalf("JVP gives %v and %v, want zeros", out[2], out[3])
	}
}

func TestAutodiffErrors(t *testing.T) {
	b := graph.NewBuilder()
	x := b.Input("x", f64, graph.Dims(4))
	k := b.Input("k", tensor.Int64, graph.Dims(4))
	scaled := b.Op("graphtest.scale", graph.Attrs{Ext: map[string]string{"factor": "2"}}, x)[0]
	halves := b.Op("graphtest.split2", graph.Attrs{}, x)
	p, err := graph.Compile(graph.Add(x, graph.Convert(k, f64)))
	if err != nil {
		t.Fatal(err)
	}
	ext, err := graph.Compile(scaled)
	if err != nil {
		t.Fatal(err)
	}
	ext2, err := graph.Compile(halves[1])
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		p    *graph.Program
		wrt  []int
		kind error
	}{
		{"nil program", nil, []int{0}, graph.ErrValue},
		{"no wrt", p, nil, graph.ErrAttr},
		{"out of range", p, []int{2}, graph.ErrAttr},
		{"negative", p, []int{-1}, graph.ErrAttr},
		{"repeated", p, []int{0, 0}, graph.ErrAttr},
		{"integer input", p, []int{1}, graph.ErrDType},
		{"extension op", ext, []int{0}, graph.ErrUnsupported},
		{"multi-result extension op", ext2, []int{0}, graph.ErrUnsupported},
	} {
		for name, f := range map[string]func(*graph.Program, ...int) (*graph.Program, error){"VJP": graph.VJP, "JVP": graph.JVP} {
			q, err := f(c.p, c.wrt...)
			var ge *graph.Error
			if q != nil || !errors.Is(err, c.kind) || !errors.As(err, &ge) {
				t.Errorf("%s: %s: got %v, %v; want an *Error of kind %v", c.name, name, q, err, c.kind)
			}
		}
	}
}

// The gradient of f(x) = Σ x² is 2x.
func ExampleVJP() {
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(3))
	p, _ := graph.Compile(graph.ReduceSum(graph.Square(x)))
	g, err := graph.VJP(p, 0) // inputs x, cotangent0; outputs f, ∂f/∂x
	if err != nil {
		fmt.Println(err)
		return
	}
	xs, _ := tensor.New([]float64{1, 2, 3}, 3)
	out, _ := ref.Run(g, xs, tensor.Scalar(1.0))
	fmt.Println(out[0].Data(), out[1].Data())
	// Output: [14] [2 4 6]
}

// An input returned as an output, twice, gets the sum of both cotangents
// (and JVP returns its tangent twice).
func TestAutodiffInputAsOutput(t *testing.T) {
	b := graph.NewBuilder()
	x := b.Input("x", f64, graph.Dims(2))
	p, err := graph.Compile(x, x)
	if err != nil {
		t.Fatal(err)
	}
	q, err := graph.VJP(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := runRef(t, q, mustTensor(t, []float64{5, 6}, 2), mustTensor(t, []float64{1, 2}, 2), mustTensor(t, []float64{10, 20}, 2))
	if out[2][0] != 11 || out[2][1] != 22 {
		t.Fatalf("VJP gives %v, want [11 22]", out[2])
	}
	r, err := graph.JVP(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	out = runRef(t, r, mustTensor(t, []float64{5, 6}, 2), mustTensor(t, []float64{3, 4}, 2))
	if out[2][1] != 4 || out[3][0] != 3 {
		t.Fatalf("JVP gives %v and %v, want [3 4] twice", out[2], out[3])
	}
}
