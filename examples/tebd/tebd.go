package main

import (
	"context"
	"fmt"
	"math"
	"math/cmplx"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/examples/internal/spinchain"
	"github.com/goferro/goferro/linalg"
	"github.com/goferro/goferro/tensor"
)

// mps is a matrix product state of complex128 site tensors A[i] of shape
// (left bond, 2, right bond), bonds of extent 1 at the ends; the amplitude
// of |s₀…s_{L−1}⟩ is the product A[0][:, s₀, :]···A[L−1][:, s_{L−1}, :].
type mps []*tensor.Tensor

// neel returns the Néel state |↑↓↑↓…⟩ of L spins, every bond of extent 1.
func neel(L int) mps {
	m := make(mps, L)
	for i := range m {
		a := make([]complex128, 2)
		a[i%2] = 1
		m[i] = tensor.Must(tensor.New(a, 1, 2, 1))
	}
	return m
}

// neelIndex returns the index of the Néel state in spinchain's basis.
func neelIndex(L int) int {
	s := 0
	for i := 1; i < L; i += 2 {
		s |= 1 << (L - 1 - i)
	}
	return s
}

// bondGate returns exp(−i·τ·h) for the two-site term h (spinchain.BondTerm)
// as the tensor U[s, s', t, t'], shape (2, 2, 2, 2), complex128, from the
// eigendecomposition h = V·diag(w)·Vᵀ.
func bondGate(tau float64) (*tensor.Tensor, error) {
	h, err := spinchain.BondTerm().Reshape(4, 4)
	if err != nil {
		return nil, err
	}
	w, v, err := linalg.Eigh(h)
	if err != nil {
		return nil, fmt.Errorf("bond gate: %w", err)
	}
	ws, vs := w.Complex128Values(), v.Complex128Values()
	u := make([]complex128, 16)
	for x := range 4 {
		for y := range 4 {
			for n := range 4 {
				u[x*4+y] += vs[x*4+n] * cmplx.Exp(complex(0, -tau*real(ws[n]))) * vs[y*4+n]
			}
		}
	}
	return tensor.New(u, 2, 2, 2, 2)
}

// truncation is how the SVD of a bond after a gate is cut: at most
// maxBond singular values, and none whose dropping leaves a relative
// discarded weight within cutoff.
type truncation struct {
	maxBond int
	cutoff  float64
}

// apply applies the gate u to the sites i and i+1 of m, whose orthogonality
// centre is site i (rightward) or i+1 (not rightward), and splits the pair
// again with a truncated SVD, moving the centre to site i+1 (rightward) or
// i: the singular values go to that site. It returns the discarded weight
// (the Frobenius norm of what the truncation dropped, relative to the
// pair's, which is one for a normalised state).
func (m mps) apply(ctx context.Context, u *tensor.Tensor, i int, rightward bool, tr truncation) (float64, error) {
	theta, err := cpu.ContractContext(ctx, "aib,bjc->aijc", []*tensor.Tensor{m[i], m[i+1]})
	if err != nil {
		return 0, err
	}
	if theta, err = cpu.ContractContext(ctx, "ijkl,aklc->aijc", []*tensor.Tensor{u, theta}); err != nil {
		return 0, err
	}
	sp, err := linalg.SplitSVDContext(ctx, theta, []int{0, 1}, linalg.SVDOptions{MaxRank: tr.maxBond, RelTol: tr.cutoff})
	if err != nil {
		return 0, err
	}
	if rightward {
		m[i] = sp.Left
		m[i+1], err = cpu.ContractContext(ctx, "b,bjc->bjc", []*tensor.Tensor{sp.S, sp.Right})
	} else {
		m[i], err = cpu.ContractContext(ctx, "aib,b->aib", []*tensor.Tensor{sp.Left, sp.S})
		m[i+1] = sp.Right
	}
	return sp.Discarded, err
}

// step advances m by one time step dt with the symmetric (second-order)
// Trotter splitting exp(−i·H·dt) ≈ Π←·Π→, where Π→ applies
// exp(−i·hᵢ·dt/2) to the bonds from left to right and Π← the same gates
// from right to left. The orthogonality centre, at site 0 on entry, rides
// along with the gates to site L−1 and back, so that each truncation is
// that of a canonical form. It returns the sum of the squared discarded
// weights.
func (m mps) step(ctx context.Context, half *tensor.Tensor, tr truncation) (float64, error) {
	var lost float64
	for i := range len(m) - 1 {
		d, err := m.apply(ctx, half, i, true, tr)
		if err != nil {
			return lost, err
		}
		lost += d * d
	}
	for i := len(m) - 2; i >= 0; i-- {
		d, err := m.apply(ctx, half, i, false, tr)
		if err != nil {
			return lost, err
		}
		lost += d * d
	}
	return lost, nil
}

// maxBond returns the largest bond extent of m.
func (m mps) maxBond() int {
	b := 1
	for _, a := range m {
		b = max(b, a.Dim(2))
	}
	return b
}

// dense contracts m into its 2^L amplitudes, in spinchain's basis.
func (m mps) dense(ctx context.Context) ([]complex128, error) {
	v, err := m[0].Reshape(2, m[0].Dim(2)) // the left bond is 1
	if err != nil {
		return nil, err
	}
	for _, a := range m[1:] {
		next, err := cpu.ContractContext(ctx, "xb,bjc->xjc", []*tensor.Tensor{v, a})
		if err != nil {
			return nil, err
		}
		if v, err = next.Reshape(next.Dim(0)*2, next.Dim(2)); err != nil {
			return nil, err
		}
	}
	return v.Complex128Values(), nil
}

// exactEvolution holds the eigendecomposition H = V·diag(w)·Vᵀ of the
// dense Hamiltonian, from which the exact state at any time follows.
type exactEvolution struct {
	w, v []float64
	n    int
}

func newExactEvolution(L int) (*exactEvolution, error) {
	w, v, err := linalg.Eigh(spinchain.Hamiltonian(L))
	if err != nil {
		return nil, fmt.Errorf("exact diagonalisation: %w", err)
	}
	ws, err := tensor.Values[float64](w)
	if err != nil {
		return nil, err
	}
	vs, err := tensor.Values[float64](v)
	if err != nil {
		return nil, err
	}
	return &exactEvolution{w: ws, v: vs, n: len(ws)}, nil
}

// state returns exp(−i·H·t)·|s⟩ for the basis state s:
// Σₙ V[x, n]·exp(−i·wₙ·t)·V[s, n] for every x.
func (e *exactEvolution) state(s int, t float64) []complex128 {
	c := make([]complex128, e.n)
	for k := range c {
		c[k] = complex(e.v[s*e.n+k], 0) * cmplx.Exp(complex(0, -e.w[k]*t))
	}
	psi := make([]complex128, e.n)
	for x := range psi {
		row := e.v[x*e.n : (x+1)*e.n]
		var a complex128
		for k, ck := range c {
			a += complex(row[k], 0) * ck
		}
		psi[x] = a
	}
	return psi
}

// energy returns ⟨ψ|H|ψ⟩/⟨ψ|ψ⟩ from the eigendecomposition:
// Σₙ wₙ·|⟨vₙ|ψ⟩|² / Σₙ |⟨vₙ|ψ⟩|².
func (e *exactEvolution) energy(psi []complex128) float64 {
	var num, den float64
	for k := range e.n {
		var a complex128
		for x, p := range psi {
			a += complex(e.v[x*e.n+k], 0) * p
		}
		p := real(a)*real(a) + imag(a)*imag(a)
		num += e.w[k] * p
		den += p
	}
	return num / den
}

// infidelity returns 1 − |⟨a|b⟩|²/(⟨a|a⟩·⟨b|b⟩).
func infidelity(a, b []complex128) float64 {
	var ab complex128
	var aa, bb float64
	for i := range a {
		ab += cmplx.Conj(a[i]) * b[i]
		aa += real(a[i])*real(a[i]) + imag(a[i])*imag(a[i])
		bb += real(b[i])*real(b[i]) + imag(b[i])*imag(b[i])
	}
	return math.Max(0, 1-(real(ab)*real(ab)+imag(ab)*imag(ab))/(aa*bb))
}
