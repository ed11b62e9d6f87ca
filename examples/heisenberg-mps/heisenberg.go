package main

import (
	"github.com/goferro/goferro/examples/internal/spinchain"
	"github.com/goferro/goferro/tensor"
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
	set(0, 0, spinchain.Identity, 1)
	set(1, 0, spinchain.SPlus, 1)
	set(2, 0, spinchain.SMinus, 1)
	set(3, 0, spinchain.SZ, 1)
	set(4, 1, spinchain.SMinus, 0.5)
	set(4, 2, spinchain.SPlus, 0.5)
	set(4, 3, spinchain.SZ, 1)
	set(4, 4, spinchain.Identity, 1)
	return tensor.Must(tensor.New(data, mpoBond, mpoBond, 2, 2))
}
