package path_test

import (
	"context"
	"fmt"
	"time"

	"github.com/goferro/goferro/einsum/path"
)

// matrixChain is the product of matrices with the given dimensions:
// matrix i is dims[i] × dims[i+1], label i is dimension i.
func matrixChain(dims ...int) path.Network {
	n := path.Network{Sizes: dims, Output: []int{0, len(dims) - 1}}
	for i := 0; i+1 < len(dims); i++ {
		n.Inputs = append(n.Inputs, []int{i, i + 1})
	}
	return n
}

func ExampleReconfigure() {
	n := matrixChain(40, 2, 30, 3, 50, 4, 60, 5)
	left := path.Path{{0, 1}, {0, 1}, {0, 1}, {0, 1}, {0, 1}, {0, 1}} // ((((AB)C)D)E)F)G
	better, err := path.Reconfigure(context.Background(), n, left, path.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	before, _ := path.Evaluate(n, left)
	after, _ := path.Evaluate(n, better)
	best, _ := path.Evaluate(n, must(path.Optimal(context.Background(), n, path.Options{})))
	fmt.Printf("left to right %.0f FLOPs, reconfigured %.0f, optimal %.0f\n", before.Flops, after.Flops, best.Flops)
	// Output: left to right 1297800 FLOPs, reconfigured 4568, optimal 4568
}

func ExampleSearch() {
	// A ring of 40 tensors with alternating bond sizes 2 and 16: the
	// cheapest order first contracts across the large bonds.
	var n path.Network
	for i := 0; i < 40; i++ {
		n.Sizes = append(n.Sizes, 2+14*(i%2))
		n.Inputs = append(n.Inputs, []int{i, (i + 1) % 40})
	}
	p, err := path.Search(context.Background(), n, path.Options{Trials: 16, Seed: 1, Time: time.Minute})
	if err != nil {
		fmt.Println(err)
		return
	}
	c, _ := path.Evaluate(n, p)
	fmt.Printf("%d steps, %.0f FLOPs, largest intermediate %.0f elements\n", len(p), c.Flops, c.LargestIntermediate)
	// Output: 39 steps, 2856 FLOPs, largest intermediate 4 elements
}

func must(p path.Path, err error) path.Path {
	if err != nil {
		panic(err)
	}
	return p
}
