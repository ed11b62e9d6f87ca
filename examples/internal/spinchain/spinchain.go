// Package spinchain holds what the examples share about the open
// spin-1/2 Heisenberg chain H = Σᵢ Sᵢ·Sᵢ₊₁: its single-site operators, the
// two-site term, and the dense Hamiltonian with its exact diagonalisation
// for the chains short enough to hold it.
//
// A chain of L spins has the basis of product states |s₀…s_{L−1}⟩, spin
// i up (s = 0) or down (s = 1), numbered by the bits of their index: bit
// L−1−i is sᵢ, so that site 0 is the slowest index, as in a matrix
// product state contracted from the left.
package spinchain

import (
	"fmt"

	"github.com/goferro/goferro/linalg"
	"github.com/goferro/goferro/tensor"
)

// The spin-1/2 operators in the basis (|↑⟩, |↓⟩): S⁺ = |↑⟩⟨↓|,
// S⁻ = |↓⟩⟨↑|, Sᶻ = diag(½, −½). S·S' = ½(S⁺S'⁻ + S⁻S'⁺) + SᶻS'ᶻ keeps
// every matrix element real.
var (
	Identity = [2][2]float64{{1, 0}, {0, 1}}
	SPlus    = [2][2]float64{{0, 1}, {0, 0}}
	SMinus   = [2][2]float64{{0, 0}, {1, 0}}
	SZ       = [2][2]float64{{0.5, 0}, {0, -0.5}}
)

// MaxExactSites bounds the chains whose dense Hamiltonian Hamiltonian
// builds: L = 12 holds 128 MiB.
const MaxExactSites = 12

// BondTerm returns the two-site term S·S' as the tensor h[s, s', t, t'] =
// ⟨s s'|S·S'|t t'⟩, shape (2, 2, 2, 2), float64: ¼ on the parallel states,
// −¼ on the antiparallel ones and ½ between these two.
func BondTerm() *tensor.Tensor {
	data := make([]float64, 16)
	for s := range 4 {
		switch s {
		case 0b00, 0b11:
			data[s*4+s] = 0.25
		default:
			data[s*4+s] = -0.25
			data[s*4+(s^0b11)] = 0.5
		}
	}
	return tensor.Must(tensor.New(data, 2, 2, 2, 2))
}

// Hamiltonian returns the dense Hamiltonian of the open chain of L spins,
// shape (2^L, 2^L), float64, in the package's basis. Each bond (i, i+1)
// adds ¼ to the diagonal of the states where the two spins are parallel;
// where they are antiparallel it adds −¼ and ½ between the state and the
// one with both spins flipped. L must be at most MaxExactSites.
func Hamiltonian(L int) *tensor.Tensor {
	n := 1 << L
	data := make([]float64, n*n)
	for s := range n {
		for i := range L - 1 {
			pair := 1<<(L-1-i) | 1<<(L-2-i)
			if bits := s & pair; bits == 0 || bits == pair {
				data[s*n+s] += 0.25
			} else {
				data[s*n+s] -= 0.25
				data[s*n+(s^pair)] += 0.5
			}
		}
	}
	return tensor.Must(tensor.New(data, n, n))
}

// GroundEnergy returns the lowest eigenvalue of the Hamiltonian of the
// open chain of L spins, found by diagonalising it with linalg.Eigh.
func GroundEnergy(L int) (float64, error) {
	w, _, err := linalg.Eigh(Hamiltonian(L))
	if err != nil {
		return 0, fmt.Errorf("exact diagonalisation: %w", err)
	}
	e0, err := w.Complex128At(0)
	return real(e0), err
}
