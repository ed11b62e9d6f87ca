package einsum_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/tensor"
)

func ExampleContract() {
	a, _ := tensor.New([]float64{1, 2, 3, 4}, 2, 2)
	b, _ := tensor.New([]float64{5, 6, 7, 8}, 2, 2)
	c, _ := einsum.Contract("ij,jk->ik", a, b)
	fmt.Println(c)
	tr, _ := einsum.Contract("ii", a)
	fmt.Println(tr)
	// Output:
	// [[19 22]
	//  [43 50]]
	// 5
}

func ExampleNewPlan() {
	shapes := [][]int{{8, 16}, {16, 32}, {32, 4}}
	p, _ := einsum.NewPlan("ab,bc,cd->ad", shapes, einsum.WithOptimizer(einsum.OptimizeOptimal))
	fmt.Printf("path %v, %.0f FLOPs, largest intermediate %.0f\n", p.Path, p.Flops, p.LargestIntermediate)
	for _, s := range p.Steps {
		fmt.Printf("values %d,%d: contracted %d label(s), %d copies\n", s.Left, s.Right, len(s.Contracted), s.Copies)
	}
	ops := []*tensor.Tensor{}
	for i, s := range shapes {
		t, _ := tensor.Rand(tensor.Float64, uint64(i), s...)
		ops = append(ops, t)
	}
	out, _ := p.Execute(context.Background(), ops...)
	fmt.Println(out.Shape())
	// Output:
	// path [[1 2] [0 1]], 5120 FLOPs, largest intermediate 64
	// values 1,2: contracted 1 label(s), 0 copies
	// values 0,3: contracted 1 label(s), 0 copies
	// (8, 4)
}

func ExampleWithPath() {
	a, _ := tensor.Ones(tensor.Complex128, 2, 3)
	b, _ := tensor.Ones(tensor.Complex128, 3, 4)
	c, _ := tensor.Ones(tensor.Complex128, 4)
	out, _ := einsum.ContractWith("ij,jk,k->i", []*tensor.Tensor{a, b, c}, einsum.WithPath([][]int{{1, 2}, {0, 1}}))
	fmt.Println(out)
	// Output:
	// [(12+0i) (12+0i)]
}

func ExampleError() {
	_, err := einsum.NewPlan("ij,jk->ik", [][]int{{2, 3}, {4, 5}})
	var e *einsum.Error
	if errors.As(err, &e) && errors.Is(err, einsum.ErrShape) {
		fmt.Println("operand", e.Operand, ":", err)
	}
	_, err = einsum.Parse("ij,jk-ik")
	if errors.As(err, &e) && errors.Is(err, einsum.ErrSyntax) {
		fmt.Println("position", e.Pos, ":", err)
	}
	// Output:
	// operand 1 : einsum: operand 1 axis 0: label "j" has extent 4, but 3 elsewhere
	// position 5 : einsum: '-' not followed by '>' (at position 5)
}
