package linalg_test

import (
	"fmt"

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
