package ref_test

import (
	"fmt"

	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/graph/ref"
	"github.com/goferro/goferro/tensor"
)

func ExampleRun() {
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Shape{graph.Sym("n"), graph.Size(2)})
	w := b.Input("w", tensor.Float64, graph.Dims(2, 2))
	y := graph.Add(graph.Einsum("ij,jk->ik", x, w), b.Scalar(tensor.Float64, 10))
	p, err := graph.Compile(y)
	if err != nil {
		fmt.Println(err)
		return
	}
	xt, _ := tensor.New([]float64{1, 2, 3, 4, 5, 6}, 3, 2)
	wt, _ := tensor.New([]float64{1, 0, 0, -1}, 2, 2)
	out, err := ref.Run(p, xt, wt)
	fmt.Println(err, out[0].Complex128Values())
	// Output: <nil> [(11+0i) (8+0i) (13+0i) (6+0i) (15+0i) (4+0i)]
}
