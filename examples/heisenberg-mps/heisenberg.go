package main

import (
	"fmt"

	"github.com/goferro/goferro/linalg"
	"github.com/goferro/goferro/tensor"
)

// The spin-1/2 operators in the basis (|↑⟩, |↓⟩): S⁺ = |↑⟩⟨↓|,
// S⁻ = |↓⟩⟨↑|, Sᶻ = diag(½, −½). S·S' = ½(S⁺S'⁻ + S⁻S'⁺) + SᶻS'ᶻ keeps
// every matrix element real.
var (
	identity = [2][2]float64{{1, 0}, {0, 1}}
	sPlus    = [2][2]float64{{0, 1}, {0, 0}}
	sMinus   = [2][2]float64{{0, 0}, {1, 0}}
	sZ       = [2][2]float64{{0.5, 0}, {0, -0.5}}
)

// mpoBond is the bond dimension of the Heisenberg MPO.
const mpoBond = 5

// heisenbergMPO returns the site tensor W[a, b, s, t] of the matrix product
// operator of H = Σᵢ Sᵢ·Sᵢ₊₁, shape (5, 5, 2, 2): a and b are the left and
// right MPO bonds, s and t the bra and ket physical indices. As a 5×5
// matrix of operators it is lower triangular,
//
//	I   0    0    0   0
//	S⁺  0    0    0   0
//	S⁻  0    0    0   0
//	Sᶻ  0    0    0   0
//	0   ½S⁻  ½S⁺  Sᶻ  I
//
// so that the product of L of them between the row vector e₄ on the left
// and the column vector e₀ on the right is H: every path from bond 4 to
// bond 0 either stays on I, or steps down once through one of the three
// couplings of a neighbouring pair.
func heisenbergMPO() *tensor.Tensor {
	data := make([]float64, mpoBond*mpoBond*2*2)
	set := func(a, b int, op [2][2]float64, c float64) {
		for s := range 2 {
			for t := range 2 {
				data[((a*mpoBond+b)*2+s)*2+t] = c * op[s][t]
			}
		}
	}
	set(0, 0, identity, 1)
	set(1, 0, sPlus, 1)
	set(2, 0, sMinus, 1)
	set(3, 0, sZ, 1)
	set(4, 1, sMinus, 0.5)
	set(4, 2, sPlus, 0.5)
	set(4, 3, sZ, 1)
	set(4, 4, identity, 1)
	return tensor.Must(tensor.New(data, mpoBond, mpoBond, 2, 2))
}

// maxExactSites bounds the chain length: the exact diagonalisation holds
// the dense 2^L × 2^L Hamiltonian (L = 12: 128 MiB).
const maxExactSites = 12

// heisenbergMatrix returns the dense Hamiltonian of the open chain of L
// spins, shape (2^L, 2^L), in the basis of the product states |s₀…s_{L−1}⟩
// numbered by the bits of their index (bit L−1−i set when spin i is down,
// so that site 0 is the slowest index, as in the MPS). Each bond (i, i+1)
// adds ¼ to the diagonal of the states where the two spins are parallel;
// where they are antiparallel it adds −¼ and ½ between the state and the
// one with both spins flipped.
func heisenbergMatrix(L int) *tensor.Tensor {
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

// exactGroundEnergy returns the lowest eigenvalue of the Hamiltonian of the
// open chain of L spins, found by diagonalising it with linalg.Eigh.
func exactGroundEnergy(L int) (float64, error) {
	w, _, err := linalg.Eigh(heisenbergMatrix(L))
	if err != nil {
		return 0, fmt.Errorf("exact diagonalisation: %w", err)
	}
	e0, err := w.Complex128At(0)
	return real(e0), err
}
