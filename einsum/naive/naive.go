// Package naive is an independent reference for einsum: it loops over every
// assignment of every label and accumulates products in complex128. It is
// slow (work = product of all label extents) and meant for checks.
package naive

import (
	"fmt"

	"github.com/goferro/goferro/tensor"
)

// Contract evaluates out[output] = Σ Π_i ops[i][inputs[i]] over integer
// labels with extents sizes. An operand axis of extent 1 broadcasts against
// a larger label extent; a label repeated within an operand walks its
// diagonal. The result is a row-major Complex128 tensor, or, when every
// operand is Bool, a Bool tensor holding the OR of ANDs (numpy's Bool
// einsum: true where some assignment makes every factor true).
func Contract(inputs [][]int, output []int, sizes []int, ops []*tensor.Tensor) (*tensor.Tensor, error) {
	out, err := contract(inputs, output, sizes, ops)
	if err != nil || !allBool(ops) {
		return out, err
	}
	// The sum counts the true assignments: exact in float64 for any work
	// the naive loops can finish, so nonzero exactly where one exists.
	counts, _ := tensor.Buffer[complex128](out)
	truth := make([]bool, len(counts))
	for i, c := range counts {
		truth[i] = c != 0
	}
	return tensor.New(truth, out.Shape()...)
}

// allBool reports whether there are operands and all are Bool.
func allBool(ops []*tensor.Tensor) bool {
	for _, o := range ops {
		if o.DType() != tensor.Bool {
			return false
		}
	}
	return len(ops) > 0
}

// contract is Contract in complex128.
func contract(inputs [][]int, output []int, sizes []int, ops []*tensor.Tensor) (*tensor.Tensor, error) {
	if len(inputs) != len(ops) {
		return nil, fmt.Errorf("naive: %d label lists for %d operands", len(inputs), len(ops))
	}
	for i, o := range ops {
		if o.Rank() != len(inputs[i]) {
			return nil, fmt.Errorf("naive: operand %d has rank %d, %d labels", i, o.Rank(), len(inputs[i]))
		}
		for ax, l := range inputs[i] {
			if l < 0 || l >= len(sizes) {
				return nil, fmt.Errorf("naive: label %d out of range", l)
			}
			if d := o.Dim(ax); d != sizes[l] && d != 1 {
				return nil, fmt.Errorf("naive: operand %d axis %d has extent %d, label size %d", i, ax, d, sizes[l])
			}
		}
	}
	outShape := make([]int, len(output))
	for i, l := range output {
		if l < 0 || l >= len(sizes) {
			return nil, fmt.Errorf("naive: output label %d out of range", l)
		}
		outShape[i] = sizes[l]
	}
	out, err := tensor.Zeros(tensor.Complex128, outShape...)
	if err != nil {
		return nil, err
	}
	ob, _ := tensor.Buffer[complex128](out)
	// Only labels that occur somewhere are looped over.
	var used []int
	seen := make([]bool, len(sizes))
	for _, ls := range append(append([][]int(nil), inputs...), output) {
		for _, l := range ls {
			if !seen[l] {
				seen[l] = true
				used = append(used, l)
			}
		}
	}
	for _, l := range used {
		if sizes[l] == 0 {
			return out, nil
		}
	}
	vals := make([][]complex128, len(ops))
	strides := make([][]int, len(ops))
	for i, o := range ops {
		vals[i] = o.Complex128Values()
		st := make([]int, len(sizes))
		acc := 1
		for ax := o.Rank() - 1; ax >= 0; ax-- {
			if o.Dim(ax) != 1 {
				st[inputs[i][ax]] += acc
			}
			acc *= o.Dim(ax)
		}
		strides[i] = st
	}
	ost := make([]int, len(sizes))
	acc := 1
	for ax := len(output) - 1; ax >= 0; ax-- {
		ost[output[ax]] += acc
		acc *= outShape[ax]
	}
	idx := make([]int, len(used))
	for {
		prod := complex(1, 0)
		for i := range ops {
			f := 0
			for k, l := range used {
				f += idx[k] * strides[i][l]
			}
			prod *= vals[i][f]
		}
		f := 0
		for k, l := range used {
			f += idx[k] * ost[l]
		}
		ob[f] += prod
		k := len(used) - 1
		for ; k >= 0; k-- {
			idx[k]++
			if idx[k] < sizes[used[k]] {
				break
			}
			idx[k] = 0
		}
		if k < 0 {
			return out, nil
		}
	}
}
