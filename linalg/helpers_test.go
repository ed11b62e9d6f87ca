package linalg

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"

	"github.com/goferro/goferro/tensor"
)

// The checks compute in complex128 on row-major copies, with naive loops,
// so that they share no code with the factorisations they check.

// cm is a row-major complex128 matrix for reference computations.
type cm struct {
	r, c int
	v    []complex128
}

func newCM(r, c int) cm                 { return cm{r, c, make([]complex128, r*c)} }
func (a cm) at(i, j int) complex128     { return a.v[i*a.c+j] }
func (a cm) set(i, j int, x complex128) { a.v[i*a.c+j] = x }
func (a cm) add(i, j int, x complex128) { a.v[i*a.c+j] += x }
func (a cm) String() string             { return fmt.Sprintf("%d×%d", a.r, a.c) }
func cmMul(a, b cm) cm {
	out := newCM(a.r, b.c)
	for i := range a.r {
		for k := range a.c {
			x := a.at(i, k)
			if x == 0 {
				continue
			}
			for j := range b.c {
				out.add(i, j, x*b.at(k, j))
			}
		}
	}
	return out
}

func (a cm) adj() cm {
	out := newCM(a.c, a.r)
	for i := range a.r {
		for j := range a.c {
			out.set(j, i, cmplx.Conj(a.at(i, j)))
		}
	}
	return out
}

func (a cm) norm() float64 {
	s := 0.0
	for _, x := range a.v {
		s += real(x)*real(x) + imag(x)*imag(x)
	}
	return math.Sqrt(s)
}

func diffNorm(a, b cm) float64 {
	s := 0.0
	for i, x := range a.v {
		d := x - b.v[i]
		s += real(d)*real(d) + imag(d)*imag(d)
	}
	return math.Sqrt(s)
}

// tb is what the helpers need of a test: *testing.T, *testing.B and
// rapid's *rapid.T all have it.
type tb interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Fatal(args ...any)
}

// matricesOf splits a tensor of shape (..., r, c) into its matrices.
func matricesOf(t tb, x *tensor.Tensor) []cm {
	t.Helper()
	s := x.ShapeView()
	r, c := s[len(s)-2], s[len(s)-1]
	v := x.Complex128Values()
	if v == nil && x.Len() > 0 {
		t.Fatalf("cannot read %v", s)
	}
	var out []cm
	for b := range count(s[:len(s)-2]) {
		m := newCM(r, c)
		copy(m.v, v[b*r*c:(b+1)*r*c])
		out = append(out, m)
	}
	return out
}

// vectorsOf splits a tensor of shape (..., k) into its vectors.
func vectorsOf(x *tensor.Tensor) [][]float64 {
	s := x.ShapeView()
	k := s[len(s)-1]
	v := x.Complex128Values()
	var out [][]float64
	for b := range count(s[:len(s)-1]) {
		row := make([]float64, k)
		for i := range row {
			row[i] = real(v[b*k+i])
		}
		out = append(out, row)
	}
	return out
}

func diag(s []float64, r, c int) cm {
	out := newCM(r, c)
	for i, x := range s {
		out.set(i, i, complex(x, 0))
	}
	return out
}

// orthoErr returns ‖Qᴴ·Q − I‖_F (columns) for a matrix with orthonormal
// columns.
func orthoErr(q cm) float64 {
	g := cmMul(q.adj(), q)
	for i := range g.r {
		g.add(i, i, -1)
	}
	return g.norm()
}

// eps returns numpy's finfo(dt).eps.
func eps(dt tensor.DType) float64 {
	if dt == tensor.Float32 || dt == tensor.Complex64 {
		return 0x1p-23
	}
	return 0x1p-52
}

var allDTypes = []tensor.DType{tensor.Float32, tensor.Float64, tensor.Complex64, tensor.Complex128}

// randCM returns a matrix of standard normal entries (complex when cplx).
func randCM(rng *rand.Rand, r, c int, cplx bool) cm {
	a := newCM(r, c)
	for i := range a.v {
		if cplx {
			a.v[i] = complex(rng.NormFloat64(), rng.NormFloat64()) / math.Sqrt2
		} else {
			a.v[i] = complex(rng.NormFloat64(), 0)
		}
	}
	return a
}

// orthonormal returns an r×c matrix with orthonormal columns (c ≤ r), by
// modified Gram–Schmidt (twice) on a random matrix.
func orthonormal(rng *rand.Rand, r, c int, cplx bool) cm {
	a := randCM(rng, r, c, cplx)
	for range 2 {
		for j := range c {
			for p := range j {
				var d complex128
				for i := range r {
					d += cmplx.Conj(a.at(i, p)) * a.at(i, j)
				}
				for i := range r {
					a.add(i, j, -d*a.at(i, p))
				}
			}
			n := 0.0
			for i := range r {
				n += real(a.at(i, j))*real(a.at(i, j)) + imag(a.at(i, j))*imag(a.at(i, j))
			}
			n = math.Sqrt(n)
			for i := range r {
				a.set(i, j, a.at(i, j)/complex(n, 0))
			}
		}
	}
	return a
}

// kinds of test matrix.
var kinds = []string{"random", "illcond", "rankdef", "degenerate"}

// spectrum returns the singular values (or eigenvalues) a kind of matrix
// is built with, or nil for "random".
func spectrum(kind string, k int, dt tensor.DType) []float64 {
	s := make([]float64, k)
	switch kind {
	case "random":
		return nil
	case "illcond": // condition number 1/√ε·10⁻¹
		for i := range s {
			s[i] = math.Pow(10*math.Sqrt(eps(dt)), float64(i)/float64(max(k-1, 1)))
		}
	case "rankdef": // half the values exactly zero
		for i := range s {
			if i < k/2 {
				s[i] = 1 + float64(i)
			}
		}
	case "degenerate": // three distinct values, each repeated
		for i := range s {
			s[i] = []float64{3, 1, 0.5}[i%3]
		}
	}
	return s
}

// testMatrix returns an m×n matrix of the kind: Gaussian, or U·diag(s)·Vᴴ
// with Haar-like U, V and the kind's spectrum.
func testMatrix(kind string, m, n int, dt tensor.DType, seed uint64) cm {
	rng := rand.New(rand.NewPCG(seed, uint64(m)<<20|uint64(n)))
	cplx := dt.IsComplex()
	k := min(m, n)
	s := spectrum(kind, k, dt)
	if s == nil {
		return randCM(rng, m, n, cplx)
	}
	u, v := orthonormal(rng, m, k, cplx), orthonormal(rng, n, k, cplx)
	return cmMul(cmMul(u, diag(s, k, k)), v.adj())
}

// hermitianMatrix returns an n×n Hermitian matrix of the kind.
func hermitianMatrix(kind string, n int, dt tensor.DType, seed uint64) cm {
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	cplx := dt.IsComplex()
	s := spectrum(kind, n, dt)
	if s == nil {
		g := randCM(rng, n, n, cplx)
		h := newCM(n, n)
		for i := range n {
			for j := range n {
				h.set(i, j, (g.at(i, j)+cmplx.Conj(g.at(j, i)))/2)
			}
		}
		return h
	}
	for i := range s { // mix signs: eigenvalues need not be positive
		if i%2 == 1 {
			s[i] = -s[i]
		}
	}
	u := orthonormal(rng, n, n, cplx)
	h := cmMul(cmMul(u, diag(s, n, n)), u.adj())
	for i := range n { // exactly Hermitian
		for j := range i {
			h.set(j, i, cmplx.Conj(h.at(i, j)))
		}
		h.set(i, i, complex(real(h.at(i, i)), 0))
	}
	return h
}

// toTensor returns the matrices as a tensor of dtype dt and shape
// (batch..., r, c).
func toTensor(t tb, ms []cm, dt tensor.DType, batch ...int) *tensor.Tensor {
	t.Helper()
	r, c := ms[0].r, ms[0].c
	var all []complex128
	for _, m := range ms {
		all = append(all, m.v...)
	}
	shape := shapeOf(batch, r, c)
	var x *tensor.Tensor
	var err error
	switch dt {
	case tensor.Float32:
		v := make([]float32, len(all))
		for i, z := range all {
			v[i] = float32(real(z))
		}
		x, err = tensor.New(v, shape...)
	case tensor.Float64:
		v := make([]float64, len(all))
		for i, z := range all {
			v[i] = real(z)
		}
		x, err = tensor.New(v, shape...)
	case tensor.Complex64:
		v := make([]complex64, len(all))
		for i, z := range all {
			v[i] = complex64(z)
		}
		x, err = tensor.New(v, shape...)
	default:
		x, err = tensor.New(all, shape...)
	}
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// roundTo returns a rounded to dt's precision, so that references see the
// same input as the factorisation.
func roundTo(a cm, dt tensor.DType) cm {
	out := newCM(a.r, a.c)
	for i, z := range a.v {
		switch dt {
		case tensor.Float32:
			out.v[i] = complex(float64(float32(real(z))), 0)
		case tensor.Float64:
			out.v[i] = complex(real(z), 0)
		case tensor.Complex64:
			out.v[i] = complex128(complex64(z))
		default:
			out.v[i] = z
		}
	}
	return out
}

// shapes are the (m, n) the accuracy tests cover: empty, tiny, square,
// rectangular both ways, and beyond one block of reflectors.
var shapes = [][2]int{{0, 0}, {0, 3}, {3, 0}, {1, 1}, {2, 2}, {5, 5}, {7, 3}, {3, 7}, {33, 33}, {64, 37}, {37, 64}, {64, 64}}

func errorIs(err, target error) bool { return errors.Is(err, target) }

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)) }
