package spinchain

import (
	"math"
	"slices"
	"testing"
)

// kron returns the Kronecker product of the square matrices a and b.
func kron(a, b [][]float64) [][]float64 {
	n, m := len(a), len(b)
	k := make([][]float64, n*m)
	for i := range k {
		k[i] = make([]float64, n*m)
		for j := range k[i] {
			k[i][j] = a[i/m][j/m] * b[i%m][j%m]
		}
	}
	return k
}

func matrix(op [2][2]float64) [][]float64 { return [][]float64{op[0][:], op[1][:]} }

// The dense Hamiltonian equals Σᵢ I⊗…⊗(Sˣ⊗Sˣ + Sʸ⊗Sʸ + Sᶻ⊗Sᶻ)⊗…⊗I built
// from Kronecker products, with Sˣ⊗Sˣ + Sʸ⊗Sʸ = ½(S⁺⊗S⁻ + S⁻⊗S⁺); the
// bond term is the Hamiltonian of two spins; and the lowest eigenvalue is
// the exact ground-state energy of the short chains: −3/4 (the singlet)
// for two spins, −3/4 − √3/2 for four.
func TestHamiltonian(t *testing.T) {
	const L = 4
	n := 1 << L
	want := make([][]float64, n)
	for i := range want {
		want[i] = make([]float64, n)
	}
	for i := range L - 1 {
		for _, term := range [][2][2][2]float64{{SPlus, SMinus}, {SMinus, SPlus}, {SZ, SZ}} {
			c := 1.0
			if term[0] != SZ {
				c = 0.5
			}
			k := [][]float64{{c}}
			for j := range L {
				op := Identity
				switch j {
				case i:
					op = term[0]
				case i + 1:
					op = term[1]
				}
				k = kron(k, matrix(op))
			}
			for r := range n {
				for s := range n {
					want[r][s] += k[r][s]
				}
			}
		}
	}
	h := Hamiltonian(L).Data().([]float64)
	for r := range n {
		for s := range n {
			if h[r*n+s] != want[r][s] {
				t.Fatalf("H[%d, %d] = %g, want %g", r, s, h[r*n+s], want[r][s])
			}
		}
	}
	if got, want := BondTerm().Data().([]float64), Hamiltonian(2).Data().([]float64); !slices.Equal(got, want) {
		t.Errorf("BondTerm() = %v, want the two-spin Hamiltonian %v", got, want)
	}
	for _, c := range []struct {
		L    int
		want float64
	}{{2, -0.75}, {4, -0.75 - math.Sqrt(3)/2}} {
		got, err := GroundEnergy(c.L)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-c.want) > 1e-14 {
			t.Errorf("L = %d: E0 = %.17g, want %.17g", c.L, got, c.want)
		}
	}
}
