package cpu_test

import (
	"errors"
	"fmt"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/tensor"
)

func ExampleAdd() {
	a, _ := tensor.New([]float64{1, 2, 3, 4, 5, 6}, 2, 3)
	row, _ := tensor.New([]float64{10, 20, 30}, 3)
	sum, _ := cpu.Add(a, row) // the row broadcasts over both rows of a
	fmt.Println(sum)
	// Output:
	// [[11 22 33]
	//  [14 25 36]]
}

func ExampleBinary_strided() {
	a, _ := tensor.Arange(tensor.Int64, 6)
	m, _ := a.Reshape(2, 3)
	// The transpose is a strided view; no copy is made before the kernel.
	p, _ := cpu.Binary(cpu.OpMul, m.T(), m.T())
	fmt.Println(p)
	// Output:
	// [[0 9]
	//  [1 16]
	//  [4 25]]
}

func ExampleCompare() {
	a, _ := tensor.New([]int32{1, 5, 3}, 3)
	b, _ := tensor.New([]int32{2, 2, 3}, 3)
	lt, _ := cpu.Compare(cpu.OpLt, a, b)
	fmt.Println(lt)
	// Output:
	// [true false false]
}

func ExampleSelect() {
	x, _ := tensor.New([]float64{-2, 3, -1, 4}, 4)
	zero := tensor.Scalar(0.0)
	pos, _ := cpu.Gt(x, zero)
	relu, _ := cpu.Select(pos, x, zero)
	fmt.Println(relu)
	// Output:
	// [0 3 0 4]
}

func ExampleReduce() {
	a, _ := tensor.Arange(tensor.Float64, 6)
	m, _ := a.Reshape(2, 3)
	cols, _ := cpu.Reduce(cpu.ReduceSum, m, []int{0}, false)
	rows, _ := cpu.Reduce(cpu.ReduceMax, m, []int{-1}, true)
	all, _ := cpu.Mean(m)
	fmt.Println(cols, rows.Shape(), rows, all)
	// Output:
	// [3 5 7] (2, 1) [[2]
	//  [5]] 2.5
}

func ExampleMean_int() {
	a, _ := tensor.New([]int32{1, 2, 3, 5}, 4)
	m, _ := cpu.Mean(a) // integer means are float64
	fmt.Println(m.DType(), m)
	// Output:
	// float64 2.75
}

func ExamplePermute() {
	a, _ := tensor.Arange(tensor.Float32, 6)
	m, _ := a.Reshape(2, 3)
	t, _ := cpu.Permute(m, 1, 0)
	fmt.Println(t, t.IsContiguous())
	// Output:
	// [[0 3]
	//  [1 4]
	//  [2 5]] true
}

func ExampleConvert() {
	a, _ := tensor.New([]float64{1.7, -1.7, 0}, 3)
	i, _ := cpu.Convert(a, tensor.Int32)
	b, _ := cpu.Convert(a, tensor.Bool)
	fmt.Println(i, b)
	// Output:
	// [1 -1 0] [true true false]
}

func ExampleExp_error() {
	a, _ := tensor.New([]int64{1, 2}, 2)
	_, err := cpu.Exp(a)
	fmt.Println(errors.Is(err, tensor.ErrDType))
	fmt.Println(err)
	// Output:
	// true
	// cpu.Unary(exp): exp is not defined on int64
}

func ExampleCopyInto() {
	// Materialise a permutation into a preallocated buffer (reused across
	// calls) instead of allocating with Permute.
	a, _ := tensor.Arange(tensor.Float64, 6)
	m, _ := a.Reshape(2, 3)
	dst, _ := tensor.Zeros(tensor.Float64, 3, 2)
	if err := cpu.CopyInto(dst, m.T()); err != nil {
		fmt.Println(err)
	}
	fmt.Println(dst)
	// Output:
	// [[0 3]
	//  [1 4]
	//  [2 5]]
}
