package gonum_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/interop/gonum"
	"github.com/goferro/goferro/tensor"
)

func Example() {
	// Data in gonum becomes a tensor without a copy...
	a := mat.NewDense(2, 3, []float64{1, 2, 3, 4, 5, 6})
	x := tensor.Must(gonum.FromDense(a))
	y := tensor.Must(cpu.Contract("ij,kj->ik", x, x)) // x·xᵀ
	// ...and a row-major tensor goes back the same way.
	p, err := gonum.ToDense(y)
	if err != nil {
		panic(err)
	}
	fmt.Println(mat.Formatted(p))
	// Output:
	// ⎡14  32⎤
	// ⎣32  77⎦
}
