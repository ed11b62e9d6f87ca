package cpu_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/tensor"
)

// TestFloat32SumAccuracy checks that float32 sums and dot products of 10^6
// positive numbers are as accurate as numpy's pairwise sums, against the
// float64 sum of the same values (exact to about 1e-10 here): summed in
// order, as they were, they were off by 3e-6 (Sum), 1.4e-5 (the dot of
// "i,i->", which runs as a matrix-vector product), 1.1e-5 (einsum "i->")
// and 2.3e-5 (a sum over the outer axis of a 262144×4 array, each column
// summed row after row).
func TestFloat32SumAccuracy(t *testing.T) {
	const n = 1 << 20
	r := rand.New(rand.NewPCG(12, 13))
	xs, ys := make([]float32, n), make([]float32, n)
	for i := range xs {
		xs[i], ys[i] = r.Float32(), r.Float32()
	}
	x, _ := tensor.New(xs, n)
	y, _ := tensor.New(ys, n)
	cols, _ := x.Reshape(n/4, 4)
	colsT, _ := tensor.New(xs, 4, n/4) // the same columns, transposed
	colsT = colsT.T()
	cplx, _ := cpu.Convert(x, tensor.Complex64)

	exact := func(f func(i int) float64, out, k int) []float64 {
		s := make([]float64, out)
		for i := range n {
			s[i/k%out] += f(i) // element i goes to output i/k mod out
		}
		return s
	}
	sum := exact(func(i int) float64 { return float64(xs[i]) }, 1, 1)
	dot := exact(func(i int) float64 { return float64(xs[i]) * float64(ys[i]) }, 1, 1)
	colSums := exact(func(i int) float64 { return float64(xs[i]) }, 4, 1)
	rowSumsT := exact(func(i int) float64 { return float64(xs[i]) }, 4, n/4)

	cases := []struct {
		name string
		got  func() (*tensor.Tensor, error)
		want []float64
	}{
		{"Sum", func() (*tensor.Tensor, error) { return cpu.Sum(x) }, sum},
		{"Sum complex64", func() (*tensor.Tensor, error) { return cpu.Sum(cplx) }, sum},
		{"Sum axis 0", func() (*tensor.Tensor, error) { return cpu.Sum(cols, 0) }, colSums},
		{"Sum axis 0, transposed", func() (*tensor.Tensor, error) { return cpu.Sum(colsT, 0) }, rowSumsT},
		{"Mean", func() (*tensor.Tensor, error) {
			m, err := cpu.Mean(x)
			if err != nil {
				return nil, err
			}
			return cpu.Mul(m, must(tensor.Full(tensor.Float32, n)))
		}, sum},
		{"ReduceInto a strided keepDims destination", func() (*tensor.Tensor, error) {
			buf, _ := tensor.Zeros(tensor.Float32, 1, 8)
			dst, _ := buf.Slice(tensor.All, tensor.Range{Start: 7, Stop: -9, Step: -2}) // (1,4), reversed
			return dst, cpu.ReduceInto(cpu.ReduceSum, dst, cols, []int{0})
		}, colSums},
		{"Sum axis 0, complex64", func() (*tensor.Tensor, error) {
			c, _ := cplx.Reshape(n/4, 4)
			return cpu.Sum(c, 0)
		}, colSums},
		{"einsum i,i->", func() (*tensor.Tensor, error) { return cpu.Contract("i,i->", x, y) }, dot},
		{"einsum i->", func() (*tensor.Tensor, error) { return cpu.Contract("i->", x) }, sum},
		{"einsum ij->j", func() (*tensor.Tensor, error) { return cpu.Contract("ij->j", cols) }, colSums},
		{"einsum ij->", func() (*tensor.Tensor, error) { return cpu.Contract("ij->", cols) }, sum},
	}
	for _, c := range cases {
		got, err := c.got()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		vals := got.Complex128Values()
		for i, w := range c.want {
			// About numpy's accuracy: a few float32 epsilons (6e-8).
			if rel := math.Abs(real(vals[i])-w) / w; rel > 2e-7 {
				t.Errorf("%s: element %d = %v, want %v (relative error %.2g)", c.name, i, real(vals[i]), w, rel)
			}
		}
	}
}
