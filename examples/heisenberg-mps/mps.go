package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

// bondDims returns the L+1 bond dimensions of an open MPS of L spins with
// bond dimension at most chi: D₀ = D_L = 1 and Dᵢ = min(chi, 2^i, 2^(L−i)),
// the largest that can be full rank across each cut.
func bondDims(L, chi int) []int {
	d := make([]int, L+1)
	for i := range d {
		d[i] = min(chi, 1<<min(i, L-i, 30))
	}
	return d
}

// siteShape is the shape of the MPS tensor of site i: (Dᵢ, 2, Dᵢ₊₁).
func siteShape(dims []int, i int) []int { return []int{dims[i], 2, dims[i+1]} }

// energyProgram traces and compiles the Rayleigh quotient
// E(A₀, …, A_{L−1}) = ⟨ψ|H|ψ⟩ / ⟨ψ|ψ⟩ of the real MPS with bond dimensions
// dims, H the Heisenberg MPO. Both contractions sweep from left to right:
// the environment of the numerator, env[a, w, b] (bra bond, MPO bond, ket
// bond), takes one site per einsum,
//
//	env ← Σ env[a,w,b]·A[a,s,c]·W[w,v,s,t]·A[b,t,d],  giving env[c,v,d],
//
// starting from the left boundary (MPO bond 4) and closed on the right by
// MPO bond 0; the norm's environment n[a, b] likewise without W.
func energyProgram(dims []int) (*graph.Program, error) {
	L := len(dims) - 1
	b := graph.NewBuilder()
	w := b.Constant(heisenbergMPO())
	left := make([]float64, mpoBond)
	left[mpoBond-1] = 1
	right := make([]float64, mpoBond)
	right[0] = 1
	env := b.Constant(tensor.Must(tensor.New(left, 1, mpoBond, 1)))
	norm := b.Constant(tensor.Must(tensor.Ones(tensor.Float64, 1, 1)))
	for i := range L {
		a := b.Input("A"+strconv.Itoa(i), tensor.Float64, graph.Dims(siteShape(dims, i)...))
		env = graph.Einsum("awb,asc,wvst,btd->cvd", env, a, w, a)
		norm = graph.Einsum("ab,asc,bsd->cd", norm, a, a)
	}
	num := graph.Einsum("awb,w->", env, b.Constant(tensor.Must(tensor.New(right, mpoBond))))
	return graph.Compile(graph.Div(num, graph.ReduceSum(norm)))
}

// evaluator computes the energy and its gradient with respect to every
// MPS tensor by running one prepared program, the VJP of the energy
// program, on a goferro runtime.
type evaluator struct {
	rt     *goferro.Runtime
	prep   *goferro.Prepared
	sites  []*tensor.Tensor // the MPS tensors, refilled from x before each run
	inputs []*driver.Buffer // sites, then the cotangent 1 of the energy
	runs   int              // programs executed
}

// newEvaluator compiles the energy program of an MPS with bond dimensions
// dims and its VJP, and prepares the VJP once on rt with opts.
func newEvaluator(ctx context.Context, rt *goferro.Runtime, dims []int, opts ...goferro.RunOption) (*evaluator, error) {
	p, err := energyProgram(dims)
	if err != nil {
		return nil, fmt.Errorf("energy program: %w", err)
	}
	wrt := make([]int, len(dims)-1)
	for i := range wrt {
		wrt[i] = i
	}
	q, err := graph.VJP(p, wrt...)
	if err != nil {
		return nil, fmt.Errorf("energy gradient program: %w", err)
	}
	e := &evaluator{rt: rt}
	for i := range wrt {
		s := tensor.Must(tensor.Zeros(tensor.Float64, siteShape(dims, i)...))
		e.sites = append(e.sites, s)
		e.inputs = append(e.inputs, driver.HostBuffer(s, nil))
	}
	e.inputs = append(e.inputs, driver.HostBuffer(tensor.Scalar(1.0), nil))
	if e.prep, err = rt.Prepare(ctx, q, e.inputs, opts...); err != nil {
		return nil, fmt.Errorf("preparing the energy gradient program: %w", err)
	}
	return e, nil
}

// numParams returns the number of MPS elements, the length of x.
func (e *evaluator) numParams() int {
	n := 0
	for _, s := range e.sites {
		n += s.Len()
	}
	return n
}

// eval returns the energy of the MPS whose tensors, flattened in site
// order, are x, and stores its gradient in grad (when not nil).
func (e *evaluator) eval(ctx context.Context, x, grad []float64) (float64, error) {
	off := 0
	for _, s := range e.sites {
		off += copy(s.Data().([]float64), x[off:])
	}
	out, err := e.rt.Execute(ctx, e.prep, e.inputs)
	if err != nil {
		return 0, err
	}
	e.runs++
	if grad != nil {
		off = 0
		for _, g := range out[1:] {
			n, err := copyTensor(grad[off:], g)
			if err != nil {
				return 0, err
			}
			off += n
		}
	}
	energy, err := out[0].Complex128At()
	return real(energy), err
}

// copyTensor copies the float64 elements of t, in row-major order, to dst
// and returns their number.
func copyTensor(dst []float64, t *tensor.Tensor) (int, error) {
	t = t.Contiguous()
	data, err := tensor.Buffer[float64](t)
	if err != nil {
		return 0, err
	}
	return copy(dst, data[t.Offset():t.Offset()+t.Len()]), nil
}

// randomMPS returns the elements of a random MPS with bond dimensions
// dims, flattened in site order: independent normal elements of site i
// scaled by 1/√(2·Dᵢ), so that each transfer matrix roughly preserves the
// norm and ⟨ψ|ψ⟩ stays near 1 for any L.
func randomMPS(rng *rand.Rand, dims []int) []float64 {
	var x []float64
	for i := range len(dims) - 1 {
		scale := 1 / math.Sqrt(float64(2*dims[i]))
		for range dims[i] * 2 * dims[i+1] {
			x = append(x, scale*rng.NormFloat64())
		}
	}
	return x
}
