package graph_test

import (
	"context"
	"errors"
	"fmt"
	"math/cmplx"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/graph/ref"
	"github.com/goferro/goferro/linalg"
	"github.com/goferro/goferro/tensor"
)

// The gradient checker on the derivative rules of package linalg's ops
// (an extension family: its rules come through graph.OpFamily.VJP and
// JVP). The outputs are gauge-invariant functions of the factors, whose
// finite differences are defined: eigenvalues and singular values,
// V·diag(f(w))·Vᴴ, U·diag(f(S))·Vh, U·Vh, |V_ij|², |U_ij|², and the real
// factors themselves (whose only gauge, a sign per vector, is fixed
// locally); Q and R themselves, which Householder QR makes smooth for full
// rank in both dtypes. Shapes are random: square, tall, wide, batched,
// SVDs truncated to a random rank, QR in both modes where the rule
// exists; inputs are strided views every other round.
//
// Tolerance: the core checker's (fdTol = 1e-6). The derivatives of the
// factors grow as the reciprocals of the spectral gaps g (relative to
// ‖A‖ ≈ 1 for these n ≤ 8 matrices of entries in [−1, 1]), their third
// derivatives as 1/g³, so the central difference's truncation error
// h²·|f”'|/6 stays below 1e-6 for gaps above about 0.03; the seeded draws
// (PCG(18, 3)) stay clear of smaller ones. Near-degenerate spectra, where
// finite differences mean nothing, have their own test with exact
// references (TestLinalgDegenerate). The transpose identity is exact.

// adjoint returns the conjugate transpose of the last two axes of x.
func adjoint(x graph.Value) graph.Value {
	r := x.Rank()
	perm := make([]int, r)
	for i := range perm {
		perm[i] = i
	}
	perm[r-2], perm[r-1] = r-1, r-2
	return graph.Conj(graph.Permute(x, perm...))
}

// scaled returns x·diag(s) for a stack of matrices x and vectors s (real).
func scaled(x, s graph.Value) graph.Value {
	sh := s.Shape()
	r := len(sh)
	row := append(sh[:r-1:r-1], graph.Size(1), sh[r-1])
	return graph.Mul(x, graph.Convert(graph.Reshape(s, row), x.DType()))
}

// modulus2 returns |x|² elementwise.
func modulus2(x graph.Value) graph.Value { return graph.Square(graph.Abs(x)) }

func linalgCases(rng *rand.Rand) []adCase {
	ext := func() int { return 1 + rng.IntN(4) }
	var cases []adCase
	for _, dt := range []tensor.DType{f64, c128} {
		n := ext()
		sq := []adInput{{dt, []int{n, n}, anyValue}}
		batched := []adInput{{dt, []int{2, n, n}, anyValue}}
		eigh := func(f func(w, v graph.Value) []graph.Value) func([]graph.Value) []graph.Value {
			return func(x []graph.Value) []graph.Value {
				w, v := linalg.GraphEigh(x[0])
				return f(w, v)
			}
		}
		cases = append(cases,
			adCase{"eigh/w/" + dt.String(), sq, eigh(func(w, v graph.Value) []graph.Value { return []graph.Value{w} })},
			adCase{"eigh/V·exp(w)·Vᴴ/" + dt.String(), batched, eigh(func(w, v graph.Value) []graph.Value {
				return []graph.Value{graph.MatMul(scaled(v, graph.Exp(w)), adjoint(v))}
			})},
			adCase{"eigh/|V|²,w²/" + dt.String(), sq, eigh(func(w, v graph.Value) []graph.Value {
				return []graph.Value{modulus2(v), graph.Square(w)}
			})},
		)
		if dt == f64 {
			cases = append(cases, adCase{"eigh/V/" + dt.String(), sq, eigh(func(w, v graph.Value) []graph.Value { return []graph.Value{v} })})
		}
		m, k := ext(), ext()
		for _, shape := range [][]int{{m, m}, {m + k, m}, {m, m + k}, {2, m + k, m}} {
			in := []adInput{{dt, shape, anyValue}}
			kk := min(shape[len(shape)-2], shape[len(shape)-1])
			for _, rank := range []int{0, 1 + rng.IntN(kk)} {
				name := fmt.Sprintf("%v/rank=%d/%s", shape, rank, dt)
				svd := func(f func(u, s, vh graph.Value) []graph.Value) func([]graph.Value) []graph.Value {
					return func(x []graph.Value) []graph.Value {
						u, s, vh := linalg.GraphSVD(x[0], linalg.Reduced, rank)
						return f(u, s, vh)
					}
				}
				cases = append(cases,
					adCase{"svd/S/" + name, in, svd(func(u, s, vh graph.Value) []graph.Value { return []graph.Value{s} })},
					adCase{"svd/U·exp(S)·Vh/" + name, in, svd(func(u, s, vh graph.Value) []graph.Value {
						return []graph.Value{graph.MatMul(scaled(u, graph.Exp(s)), vh)}
					})},
					adCase{"svd/U·Vh,|U|²,|Vh|²/" + name, in, svd(func(u, s, vh graph.Value) []graph.Value {
						return []graph.Value{graph.MatMul(u, vh), modulus2(u), modulus2(vh)}
					})},
				)
				if dt == f64 {
					cases = append(cases, adCase{"svd/U,Vh/" + name, in, svd(func(u, s, vh graph.Value) []graph.Value { return []graph.Value{u, vh} })})
				}
			}
			for _, mode := range []linalg.Mode{linalg.Reduced, linalg.Complete} {
				if mode == linalg.Complete && shape[len(shape)-2] > shape[len(shape)-1] {
					continue
				}
				cases = append(cases,
					adCase{fmt.Sprintf("qr/Q,R/%v/%v/%s", shape, mode, dt), in, func(x []graph.Value) []graph.Value {
						q, r := linalg.GraphQR(x[0], mode)
						return []graph.Value{q, r}
					}},
					adCase{fmt.Sprintf("qr/R only/%v/%v/%s", shape, mode, dt), in, func(x []graph.Value) []graph.Value {
						_, r := linalg.GraphQR(x[0], mode)
						return []graph.Value{r}
					}},
				)
			}
		}
		for _, lower := range []bool{false, true} {
			cases = append(cases, adCase{fmt.Sprintf("solve_triangular/lower=%v/%s", lower, dt),
				[]adInput{{dt, []int{2, n, n}, positive}, {dt, []int{2, n, k}, anyValue}},
				func(x []graph.Value) []graph.Value {
					return []graph.Value{linalg.GraphSolveTriangular(x[0], x[1], lower)}
				}})
		}
	}
	return cases
}

func TestGradientCheckLinalg(t *testing.T) {
	// The second-order checks differentiate the rules' own programs too
	// (the broadened reciprocals, the masks, the triangular solves, the
	// SVD computed again).
	runGradientChecks(t, rand.New(rand.NewPCG(18, 3)), linalgCases)
}

// unitaryMatrix returns a random n×n unitary (orthogonal for float64)
// matrix as row-major values: the Q of a QR factorisation.
func unitaryMatrix(t *testing.T, seed uint64, dt tensor.DType, n int) []complex128 {
	t.Helper()
	x, err := tensor.Randn(tensor.NewRNG(seed), dt, n, n)
	if err != nil {
		t.Fatal(err)
	}
	q, _, err := linalg.QR(x, linalg.Reduced)
	if err != nil {
		t.Fatal(err)
	}
	return q.Complex128Values()
}

// product returns the row-major values of L·diag(d)·Rᴴ for row-major m×k
// L and n×k R.
func product(l []complex128, d []float64, r []complex128, m, n int) []complex128 {
	k := len(d)
	out := make([]complex128, m*n)
	for i := range m {
		for j := range n {
			for p := range k {
				out[i*n+j] += l[i*k+p] * complex(d[p], 0) * cmplx.Conj(r[j*k+p])
			}
		}
	}
	return out
}

// Near-degenerate and exactly degenerate spectra (eigenvalues 0.5 and
// 0.5 + δ; singular values 1 and 1 + δ, and a zero one) give finite
// derivatives, and exact ones where the loss allows: Σw² = ‖A‖² (the
// gradient of which, through the lower triangle Eigh reads, is 4·conj(A)
// below the diagonal and 2·Re A on it), Σs² = ‖A‖² (gradient 2·conj(A)),
// Σ|V_ij|² and Σ|U_ij|² (constants: gradient 0), for every δ; the
// reconstructions V·diag(w)·Vᴴ and U·diag(S)·Vh (the identity: the
// gradient is the cotangent B, read through the lower triangle for eigh)
// for δ = 1e-4 only, since at smaller gaps the broadening drops the
// divided difference of the degenerate pair (see package linalg), and
// not at a zero singular value (where s = |·| has a kink) of a complex
// matrix, whose phase term is 0/0 there, nor of a tall one, where it is
// degenerate with the null space of Aᴴ.
func TestLinalgDegenerate(t *testing.T) {
	for _, dt := range []tensor.DType{f64, c128} {
		for _, delta := range []float64{0, 1e-13, 1e-9, 1e-4} {
			const n = 4
			name := fmt.Sprintf("%v/δ=%g", dt, delta)
			ones := func(shape ...int) *tensor.Tensor {
				return newTensor(t, f64, shape, slices.Repeat([]complex128{1}, numel(shape)), false)
			}
			rng := rand.New(rand.NewPCG(uint64(delta*1e4), 5))
			bs := randVals(rng, anyValue, dt, n*n)
			cot := newTensor(t, dt, []int{n, n}, bs, false)
			check := func(what string, got, want []complex128, tol float64) {
				t.Helper()
				for i := range got {
					if cmplx.IsNaN(got[i]) || cmplx.IsInf(got[i]) || (want != nil && !approx(got[i], want[i], tol)) {
						t.Fatalf("%s: %s: gradient %v, want %v", name, what, got, want)
					}
				}
			}

			// eigh
			q := unitaryMatrix(t, 1, dt, n)
			a := product(q, []float64{-1, 0.5, 0.5 + delta, 2}, q, n, n)
			for i := range n {
				a[i*n+i] = complex(real(a[i*n+i]), 0)
			}
			b := graph.NewBuilder()
			x := b.Input("a", dt, graph.Dims(n, n))
			w, v := linalg.GraphEigh(x)
			outs := []graph.Value{graph.ReduceSum(graph.Square(w)), graph.ReduceSum(modulus2(v)), graph.MatMul(scaled(v, w), adjoint(v))}
			at := newTensor(t, dt, []int{n, n}, a, false)
			want2, wantB := make([]complex128, n*n), make([]complex128, n*n)
			for i := range n {
				for j := range i + 1 {
					want2[i*n+j] = 4 * cmplx.Conj(a[i*n+j])
					wantB[i*n+j] = bs[i*n+j] + cmplx.Conj(bs[j*n+i])
					if i == j {
						want2[i*n+j], wantB[i*n+j] = complex(2*real(a[i*n+i]), 0), complex(real(bs[i*n+i]), 0)
					}
				}
			}
			zero := newTensor(t, dt, []int{n, n}, make([]complex128, n*n), false)
			check("eigh Σw²", vjpOf(t, outs, []int{0}, at, ones(), tensor.Scalar(0.0), zero)[3], want2, 1e-12)
			check("eigh Σ|V|²", vjpOf(t, outs, []int{0}, at, tensor.Scalar(0.0), ones(), zero)[3], make([]complex128, n*n), 1e-12)
			var want []complex128
			if delta >= 1e-4 {
				want = wantB
			}
			check("eigh V·diag(w)·Vᴴ", vjpOf(t, outs, []int{0}, at, tensor.Scalar(0.0), tensor.Scalar(0.0), cot)[3], want, 1e-6)

			// svd: square and tall, without and with a zero singular
			// value (a kink, s = |·|: exact for a real square matrix only)
			exact := delta >= 1e-4
			for _, c := range []struct {
				m     int
				last  float64
				exact bool
			}{{n, 0.5, exact}, {n, 0, exact && dt == f64}, {n + 2, 0.5, exact}, {n + 2, 0, false}} {
				m := c.m
				u := unitaryMatrix(t, 2, dt, m)
				uk := make([]complex128, m*n)
				for i := range m {
					copy(uk[i*n:(i+1)*n], u[i*m:i*m+n])
				}
				a := product(uk, []float64{2, 1, 1 + delta, c.last}, unitaryMatrix(t, 3, dt, n), m, n)
				b := graph.NewBuilder()
				x := b.Input("a", dt, graph.Dims(m, n))
				uv, s, vh := linalg.GraphSVD(x, linalg.Reduced, 0)
				outs := []graph.Value{graph.ReduceSum(graph.Square(s)), graph.ReduceSum(modulus2(uv)), graph.MatMul(scaled(uv, s), vh)}
				at := newTensor(t, dt, []int{m, n}, a, false)
				want2 := make([]complex128, m*n)
				for i := range want2 {
					want2[i] = 2 * cmplx.Conj(a[i])
				}
				bs := randVals(rng, anyValue, dt, m*n)
				cot := newTensor(t, dt, []int{m, n}, bs, false)
				zero := newTensor(t, dt, []int{m, n}, make([]complex128, m*n), false)
				check(fmt.Sprintf("svd %d×%d Σs²", m, n), vjpOf(t, outs, []int{0}, at, ones(), tensor.Scalar(0.0), zero)[3], want2, 1e-12)
				check(fmt.Sprintf("svd %d×%d Σ|U|²", m, n), vjpOf(t, outs, []int{0}, at, tensor.Scalar(0.0), ones(), zero)[3], make([]complex128, m*n), 1e-12)
				var want []complex128
				if c.exact {
					want = bs
				}
				check(fmt.Sprintf("svd %d×%d U·diag(S)·Vh", m, n), vjpOf(t, outs, []int{0}, at, tensor.Scalar(0.0), tensor.Scalar(0.0), cot)[3], want, 1e-6)
			}
		}
	}
}

// The derivative program of a loss through the factorisations is an
// ordinary program: the runtime runs it on the CPU engine, and with its
// inputs on a fake device (which runs the core families only: the
// placer moves the data to the CPU engine), with the reference
// interpreter's result.
func TestLinalgVJPOnRuntime(t *testing.T) {
	b := graph.NewBuilder()
	x := b.Input("x", c128, graph.Dims(5, 3))
	u, s, vh := linalg.GraphSVD(x, linalg.Reduced, 2)
	_, r := linalg.GraphQR(x, linalg.Reduced)
	w, v := linalg.GraphEigh(graph.MatMul(adjoint(x), x))
	loss := graph.Add(graph.Add(graph.ReduceSum(modulus2(graph.MatMul(scaled(u, graph.Exp(s)), vh))), graph.ReduceSum(modulus2(r))),
		graph.ReduceSum(modulus2(graph.MatMul(scaled(v, graph.Exp(w)), adjoint(v)))))
	p, err := graph.Compile(loss)
	if err != nil {
		t.Fatal(err)
	}
	q, err := graph.VJP(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	in := []*tensor.Tensor{tensor.Must(tensor.Randn(tensor.NewRNG(18), c128, 5, 3)), tensor.Scalar(1.0)}
	want, err := ref.Run(q, in...)
	if err != nil {
		t.Fatal(err)
	}
	d, install := goferrotest.NewFakeDevice("fake.gpu.v1")
	rt, err := goferro.NewRuntime(goferro.WithEngine(cpu.NewEngine()), install)
	if err != nil {
		t.Fatal(err)
	}
	check := func(got []*tensor.Tensor) {
		t.Helper()
		for k := range want {
			if err := tensor.CheckClose(got[k], want[k], 1e-12, 1e-12); err != nil {
				t.Errorf("output %d: %v", k, err)
			}
		}
	}
	ctx := context.Background()
	got, err := rt.RunTensors(ctx, q, in, goferro.OnEngines(cpu.EngineID))
	if err != nil {
		t.Fatal(err)
	}
	check(got)
	// with the inputs on the device
	var bufs []*driver.Buffer
	for _, x := range in {
		buf, err := d.Upload(x)
		if err != nil {
			t.Fatal(err)
		}
		defer buf.Release()
		bufs = append(bufs, buf)
	}
	prep, err := rt.Prepare(ctx, q, bufs)
	if err != nil {
		t.Fatal(err)
	}
	outs, err := rt.Execute(ctx, prep, bufs)
	if err != nil {
		t.Fatal(err)
	}
	check(outs)
}

// Where the rules have no answer, VJP and JVP say so: complete QR of a
// tall matrix, complete SVD of a non-square one, symbolic extents.
func TestLinalgAutodiffUnsupported(t *testing.T) {
	for _, c := range []struct {
		name  string
		shape graph.Shape
		out   func(x graph.Value) graph.Value
	}{
		{"complete QR, m > n", graph.Dims(4, 3), func(x graph.Value) graph.Value { q, _ := linalg.GraphQR(x, linalg.Complete); return q }},
		{"complete SVD, m < n", graph.Dims(3, 4), func(x graph.Value) graph.Value { _, s, _ := linalg.GraphSVD(x, linalg.Complete, 0); return s }},
		{"symbolic eigh", graph.Shape{graph.Sym("n"), graph.Sym("n")}, func(x graph.Value) graph.Value { w, _ := linalg.GraphEigh(x); return w }},
		{"symbolic QR", graph.Shape{graph.Sym("n"), graph.Sym("n")}, func(x graph.Value) graph.Value { _, r := linalg.GraphQR(x, linalg.Reduced); return r }},
	} {
		b := graph.NewBuilder()
		p, err := graph.Compile(c.out(b.Input("x", f64, c.shape)))
		if err != nil {
			t.Fatal(err)
		}
		for name, f := range map[string]func(*graph.Program, ...int) (*graph.Program, error){"VJP": graph.VJP, "JVP": graph.JVP} {
			q, err := f(p, 0)
			var ge *graph.Error
			if q != nil || !errors.Is(err, graph.ErrUnsupported) || !errors.As(err, &ge) {
				t.Errorf("%s: %s: got %v, %v; want an *Error of kind ErrUnsupported", c.name, name, q, err)
			}
		}
	}
}
