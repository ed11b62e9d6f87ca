package linalg

import (
	"fmt"
	"testing"

	"github.com/goferro/goferro/tensor"
)

// SolveTriangular reads one triangle of A: the solution satisfies
// tri(A)·X = B, checked by a plain product, with garbage in the other
// triangle, batched, and for a transposed (strided) view of A.
func TestSolveTriangular(t *testing.T) {
	for _, dt := range allDTypes {
		for _, lower := range []bool{false, true} {
			for _, nk := range [][2]int{{0, 2}, {1, 1}, {3, 0}, {4, 5}, {40, 3}} {
				n, k := nk[0], nk[1]
				t.Run(fmt.Sprintf("%v/lower=%v/%d×%d", dt, lower, n, k), func(t *testing.T) {
					rng := newRand(uint64(n*10 + k))
					var as, tris, bs []cm
					for range 2 {
						a := randCM(rng, n, n, dt.IsComplex())
						tri := newCM(n, n)
						for i := range n {
							a.add(i, i, complex(float64(n)+1, 0)) // well conditioned
							for j := range n {
								if i == j || (i > j) == lower {
									tri.set(i, j, a.at(i, j))
								}
							}
						}
						a, tri = roundTo(a, dt), roundTo(tri, dt)
						as, tris, bs = append(as, a), append(tris, tri), append(bs, roundTo(randCM(rng, n, k, dt.IsComplex()), dt))
					}
					x, err := SolveTriangular(toTensor(t, as, dt, 2), toTensor(t, bs, dt, 2), lower)
					if err != nil {
						t.Fatal(err)
					}
					// the same through a strided view: Aᵀ's transpose
					at := make([]cm, 2)
					for i, a := range as {
						at[i] = newCM(n, n)
						for r := range n {
							for c := range n {
								at[i].set(r, c, a.at(c, r))
							}
						}
					}
					view, err := toTensor(t, at, dt, 2).Permute(0, 2, 1)
					if err != nil {
						t.Fatal(err)
					}
					xv, err := SolveTriangular(view, toTensor(t, bs, dt, 2), lower)
					if err != nil {
						t.Fatal(err)
					}
					xs, xvs := matricesOf(t, x), matricesOf(t, xv)
					for b := range 2 {
						if e := diffNorm(cmMul(tris[b], xs[b]), bs[b]); e > tol(dt, n, n)*tris[b].norm()*xs[b].norm() && e > 0 {
							t.Errorf("matrix %d: ‖tri(A)·X − B‖ = %.3g", b, e)
						}
						if e := diffNorm(xs[b], xvs[b]); e != 0 {
							t.Errorf("matrix %d: the strided view gives a different X (‖ΔX‖ = %.3g)", b, e)
						}
					}
				})
			}
		}
	}
}

func TestSolveTriangularErrors(t *testing.T) {
	z := func(dt tensor.DType, shape ...int) *tensor.Tensor {
		x, err := tensor.Zeros(dt, shape...)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	f64 := tensor.Float64
	for _, c := range []struct {
		name string
		a, b *tensor.Tensor
		kind error
	}{
		{"nil", nil, z(f64, 2, 2), ErrArgument},
		{"dtypes", z(f64, 2, 2), z(tensor.Complex128, 2, 1), tensor.ErrDType},
		{"integers", z(tensor.Int64, 2, 2), z(tensor.Int64, 2, 1), tensor.ErrDType},
		{"not square", z(f64, 2, 3), z(f64, 2, 1), tensor.ErrShape},
		{"rows", z(f64, 2, 2), z(f64, 3, 1), tensor.ErrShape},
		{"batch", z(f64, 2, 2, 2), z(f64, 3, 2, 1), tensor.ErrShape},
		{"rank", z(f64, 2), z(f64, 2, 1), tensor.ErrShape},
	} {
		if _, err := SolveTriangular(c.a, c.b, false); !errorIs(err, c.kind) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.kind)
		}
	}
}
