package graph_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/goferro/goferro/graph"
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
	rng := rand.New(rand.NewPCG(18, 3))
	for round := 0; round < 3; round++ {
		for _, c := range linalgCases(rng) {
			t.Run(fmt.Sprintf("%s/%d", c.name, round), func(t *testing.T) {
				checkGradients(t, c, c.compile(t), rng, round%2 == 1)
			})
		}
	}
	// Second order: the rules' own programs (the broadened reciprocals,
	// the masks, the triangular solves, the SVD computed again) are
	// differentiated too.
	for _, c := range linalgCases(rng) {
		t.Run(c.name+"/vjp", func(t *testing.T) { checkSecondOrder(t, c, rng) })
	}
}
