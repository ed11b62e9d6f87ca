package linalg_test

import (
	"errors"
	"fmt"
	"math"

	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/graph/ref"
	"github.com/goferro/goferro/linalg"
	"github.com/goferro/goferro/tensor"
)

// A three-leg tensor is split between its first two legs and the last,
// dropping singular values while the discarded weight stays below 10⁻¹⁰
// of the norm. Across that cut the tensor has rank 2 (its rows are
// combinations of (1, 1, 1, 1) and (0, 1, 2, 3)), so the bond is 2, not 4.
func ExampleSplitSVD() {
	data := make([]float64, 2*3*4)
	for i := range 2 {
		for j := range 3 {
			for k := range 4 {
				data[(i*3+j)*4+k] = float64(i+1)*float64(j*k) + float64(1-i)*float64(j+k)
			}
		}
	}
	t, _ := tensor.New(data, 2, 3, 4)
	sp, err := linalg.SplitSVD(t, []int{0, 1}, linalg.SVDOptions{RelTol: 1e-10})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("left", sp.Left.Shape(), "S", sp.S.Shape(), "right", sp.Right.Shape())
	fmt.Printf("discarded < 1e-12: %v\n", sp.Discarded < 1e-12)
	// Output:
	// left (2, 3, 2) S (2,) right (2, 4)
	// discarded < 1e-12: true
}

// QR of a 4×2 matrix: Q has orthonormal columns and R is upper triangular.
func ExampleQR() {
	a, _ := tensor.New([]float64{3, 0, 4, 0, 0, 2, 0, 0}, 4, 2)
	q, r, err := linalg.QR(a, linalg.Reduced)
	if err != nil {
		fmt.Println(err)
		return
	}
	rv, _ := tensor.Values[float64](r)
	fmt.Println(q.Shape(), r.Shape())
	fmt.Printf("|R| diagonal: %.3g %.3g\n", abs(rv[0]), abs(rv[3]))
	// Output:
	// (4, 2) (2, 2)
	// |R| diagonal: 5 2
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// The gradient of the nuclear norm Σ sᵢ of a matrix with distinct nonzero
// singular values is U·Vh: here the signs of the diagonal.
func ExampleGraphSVD_gradient() {
	b := graph.NewBuilder()
	x := b.Input("a", tensor.Float64, graph.Dims(2, 2))
	_, s, _ := linalg.GraphSVD(x, linalg.Reduced, 0)
	p, err := graph.Compile(graph.ReduceSum(s))
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := graph.VJP(p, 0) // inputs a, cotangent0; outputs Σs, ∂Σs/∂a
	if err != nil {
		fmt.Println(err)
		return
	}
	a, _ := tensor.New([]float64{3, 0, 0, -2}, 2, 2)
	out, err := ref.Run(g, a, tensor.Scalar(1.0))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out[0].Data(), out[1].Data())
	// Output: [5] [1 0 0 -1]
}

// The Heisenberg coupling S₁·S₂ of two spins ½, in the basis ↑↑, ↑↓, ↓↑,
// ↓↓: the singlet ground state at −3/4 below the triplet at 1/4, and the
// ground state's weights on the basis.
func ExampleEigh() {
	h, _ := tensor.New([]float64{
		0.25, 0, 0, 0,
		0, -0.25, 0.5, 0,
		0, 0.5, -0.25, 0,
		0, 0, 0, 0.25,
	}, 4, 4)
	w, v, err := linalg.Eigh(h)
	if err != nil {
		fmt.Println(err)
		return
	}
	wv, _ := tensor.Values[float64](w)
	vv, _ := tensor.Values[float64](v)
	fmt.Printf("energies %.2f\n", wv)
	fmt.Printf("ground state weights %.2f %.2f %.2f %.2f\n", vv[0]*vv[0], vv[4]*vv[4], vv[8]*vv[8], vv[12]*vv[12])
	// Output:
	// energies [-0.75 0.25 0.25 0.25]
	// ground state weights 0.00 0.50 0.50 0.00
}

// A 300×200 matrix of rank 3 compressed by a randomized SVD to rank 3:
// nothing of it is discarded, to the accuracy of the discarded weight
// (computed from ‖A‖ and the kept values, about √ε of ‖A‖).
func ExampleRandomizedSVD() {
	rng := tensor.NewRNG(7)
	x, _ := tensor.Rand(rng, tensor.Float64, 300, 3)
	y, _ := tensor.Rand(rng, tensor.Float64, 3, 200)
	xv, _ := tensor.Values[float64](x)
	yv, _ := tensor.Values[float64](y)
	a := make([]float64, 300*200)
	norm := 0.0
	for i := range 300 {
		for j := range 200 {
			for k := range 3 {
				a[i*200+j] += xv[i*3+k] * yv[k*200+j]
			}
			norm += a[i*200+j] * a[i*200+j]
		}
	}
	at, _ := tensor.New(a, 300, 200)
	res, err := linalg.RandomizedSVD(at, 3, linalg.RandomizedOptions{Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	d, _ := tensor.Values[float64](res.Discarded)
	fmt.Println("U", res.U.Shape(), "S", res.S.Shape(), "Vh", res.Vh.Shape())
	fmt.Println("discarded below 1e-6 of ‖A‖:", d[0] < 1e-6*math.Sqrt(norm))
	// Output:
	// U (300, 3) S (3,) Vh (3, 200)
	// discarded below 1e-6 of ‖A‖: true
}

// A factorisation whose results would not fit in memory is refused before
// it allocates, with tensor.ErrMemory: the complete Q of a 2000000×1
// column alone would take 32 TB.
func ExampleQR_notEnoughMemory() {
	col, _ := tensor.Zeros(tensor.Float64, 2_000_000, 1)
	_, _, err := linalg.QR(col, linalg.Complete)
	fmt.Println("not enough memory:", errors.Is(err, tensor.ErrMemory))
	// Output:
	// not enough memory: true
}
