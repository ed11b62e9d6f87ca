package cpu_test

import (
	"context"
	"fmt"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/tensor"
)

func ExampleContract() {
	a, _ := tensor.New([]float64{1, 2, 3, 4}, 2, 2)
	b, _ := tensor.New([]float64{5, 6, 7, 8}, 2, 2)
	c, _ := cpu.Contract("ij,jk->ik", a, b)
	fmt.Println(c)
	tr, _ := cpu.Contract("ii", a)
	fmt.Println(tr)
	// Output:
	// [[19 22]
	//  [43 50]]
	// 5
}

func ExampleContractContext() {
	a, _ := tensor.Ones(tensor.Complex128, 2, 3)
	b, _ := tensor.Ones(tensor.Complex128, 3, 4)
	c, _ := tensor.Ones(tensor.Complex128, 4)
	out, _ := cpu.ContractContext(context.Background(), "ij,jk,k->i", []*tensor.Tensor{a, b, c}, einsum.WithPath([][]int{{1, 2}, {0, 1}}))
	fmt.Println(out)
	// Output:
	// [(12+0i) (12+0i)]
}

func ExampleNewContraction() {
	shapes := [][]int{{8, 16}, {16, 32}, {32, 4}}
	p, _ := einsum.NewPlan("ab,bc,cd->ad", shapes, einsum.WithOptimizer(einsum.OptimizeOptimal))
	c, _ := cpu.NewContraction(p, cpu.WithThreads(1))
	for i, l := range c.Layouts() {
		s := p.Steps[i]
		fmt.Printf("values %d,%d: contracted %d label(s), %d copies\n", s.Left, s.Right, len(l.Contracted), l.Copies)
	}
	ops := []*tensor.Tensor{}
	for i, s := range shapes {
		t, _ := tensor.Rand(tensor.NewRNG(uint64(i)), tensor.Float64, s...)
		ops = append(ops, t)
	}
	out, _ := c.Execute(context.Background(), ops...)
	fmt.Println(out.Shape())
	// Output:
	// values 1,2: contracted 1 label(s), 0 copies
	// values 0,3: contracted 1 label(s), 0 copies
	// (8, 4)
}

func ExampleContraction_ExecuteInto() {
	shapes := [][]int{{64, 128}, {64, 128}}
	p, _ := einsum.NewPlan("bj,bk->bjk", shapes)
	c, _ := cpu.NewContraction(p)
	var out *tensor.Tensor // nil: the first call allocates the result
	for step := range 3 {
		ops := []*tensor.Tensor{}
		for i, s := range shapes {
			t, _ := tensor.Rand(tensor.NewRNG(uint64(10*step+i)), tensor.Float64, s...)
			ops = append(ops, t)
		}
		prev := out
		out, _ = c.ExecuteInto(context.Background(), out, ops...)
		fmt.Println(out.Shape(), "reused:", prev != nil && out == prev)
	}
	// Output:
	// (64, 128, 128) reused: false
	// (64, 128, 128) reused: true
	// (64, 128, 128) reused: true
}
