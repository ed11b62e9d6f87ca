package einsum_test

import (
	"errors"
	"fmt"

	"github.com/goferro/goferro/einsum"
)

func ExampleNewPlan() {
	shapes := [][]int{{8, 16}, {16, 32}, {32, 4}}
	p, _ := einsum.NewPlan("ab,bc,cd->ad", shapes, einsum.WithOptimizer(einsum.OptimizeOptimal))
	fmt.Printf("path %v, %.0f FLOPs, largest intermediate %.0f\n", p.Path, p.Flops, p.LargestIntermediate)
	for _, s := range p.Steps {
		fmt.Printf("values %d,%d: contracted %d label(s)\n", s.Left, s.Right, len(s.Contracted))
	}
	// Output:
	// path [[1 2] [0 1]], 5120 FLOPs, largest intermediate 64
	// values 1,2: contracted 1 label(s)
	// values 0,3: contracted 1 label(s)
}

func ExampleStep_DotGeneral() {
	p, _ := einsum.NewPlan("bij,bjk->bki", [][]int{{2, 3, 4}, {2, 4, 5}})
	d, _ := p.Steps[0].DotGeneral()
	fmt.Printf("batch %v/%v, contract %v/%v, then permute %v\n", d.LhsBatch, d.RhsBatch, d.LhsContract, d.RhsContract, d.OutPerm)
	// Output:
	// batch [0]/[0], contract [2]/[1], then permute [0 2 1]
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
