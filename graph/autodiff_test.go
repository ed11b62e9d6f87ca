package graph_test

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
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

// checkGradients runs the gradient checker on c with one random draw.
func checkGradients(t *testing.T, c adCase, rng *rand.Rand, view bool) {
	t.Helper()
	p := c.compile(t)
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
	rng := rand.New(rand.NewPCG(18, 1))
	for round := 0; round < 3; round++ {
		for _, c := range adCases(rng) {
			t.Run(fmt.Sprintf("%s/%d", c.name, round), func(t *testing.T) {
				checkGradients(t, c, rng, round%2 == 1)
			})
		}
	}
}
