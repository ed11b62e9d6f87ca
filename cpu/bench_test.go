package cpu

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/tensor"
)

func benchTensors(b *testing.B, n int) (*tensor.Tensor, *tensor.Tensor) {
	x, err := tensor.Rand(tensor.NewRNG(1), tensor.Float64, n, n)
	if err != nil {
		b.Fatal(err)
	}
	y, _ := tensor.Rand(tensor.NewRNG(2), tensor.Float64, n, n)
	return x, y
}

func BenchmarkAdd(b *testing.B) {
	const n = 1024
	x, y := benchTensors(b, n)
	dst := tensor.ZerosLike(x)
	row, _ := y.Slice(tensor.R(0, 1))
	cases := []struct {
		name string
		a, b *tensor.Tensor
	}{
		{"contiguous", x, y},
		{"transposed", x, y.T()},
		{"broadcast_row", x, row},
		{"scalar", x, tensor.Scalar(1.5)},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(n * n * 8))
			for b.Loop() {
				if err := BinaryInto(OpAdd, dst, c.a, c.b); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("small8", func(b *testing.B) {
		s, _ := tensor.Rand(tensor.NewRNG(3), tensor.Float64, 8)
		d := tensor.ZerosLike(s)
		for b.Loop() {
			_ = BinaryInto(OpAdd, d, s, s)
		}
	})
}

// BenchmarkUnary times the cheap unary operations (negation, absolute
// value, conjugate) of 256×256 tensors, written into another tensor:
// contiguous rows and a transposed operand's.
func BenchmarkUnary(b *testing.B) {
	for _, c := range []struct {
		op UnaryOp
		dt tensor.DType
	}{
		{OpNeg, tensor.Float64}, {OpAbs, tensor.Float64}, {OpConj, tensor.Float64},
		{OpNeg, tensor.Complex128}, {OpConj, tensor.Complex128}, {OpConj, tensor.Complex64},
	} {
		x, _ := tensor.Rand(tensor.NewRNG(1), c.dt, 256, 256)
		dst := tensor.ZerosLike(x)
		for _, in := range []struct {
			name string
			a    *tensor.Tensor
		}{{"contiguous", x}, {"transposed", x.T()}} {
			b.Run(fmt.Sprintf("%v/%v/%s", c.op, c.dt, in.name), func(b *testing.B) {
				b.SetBytes(int64(x.Len() * c.dt.Size()))
				for b.Loop() {
					if err := UnaryInto(c.op, dst, in.a); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkSum(b *testing.B) {
	const n = 1024
	x, _ := benchTensors(b, n)
	for _, c := range []struct {
		name string
		axes []int
	}{{"all", nil}, {"axis0", []int{0}}, {"axis1", []int{1}}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(n * n * 8))
			for b.Loop() {
				if _, err := Reduce(ReduceSum, x, c.axes, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkPermute(b *testing.B) {
	x, _ := tensor.Rand(tensor.NewRNG(1), tensor.Float64, 32, 32, 32, 32, 8)
	b.Run("5d_40312", func(b *testing.B) {
		b.SetBytes(int64(x.Len() * 8))
		for b.Loop() {
			if _, err := Permute(x, 4, 0, 3, 1, 2); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkPermuteSmall(b *testing.B) {
	x, _ := tensor.Rand(tensor.NewRNG(1), tensor.Float64, 4, 5, 6)
	for b.Loop() {
		if _, err := Permute(x, 2, 0, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSumFloat32 measures the pairwise sums (issue 13) on 2^20
// float32 elements: the whole array, the outer axis of 2^18×4 (split
// pairwise across rows), and the dot product of einsum "i,i->" (a
// matrix-vector product).
func BenchmarkSumFloat32(b *testing.B) {
	const n = 1 << 20
	x, y := randFloat32(n), randFloat32(n)
	cols, _ := x.Reshape(n/4, 4)
	for _, c := range []struct {
		name string
		f    func() (*tensor.Tensor, error)
	}{
		{"all", func() (*tensor.Tensor, error) { return Sum(x) }},
		{"axis0", func() (*tensor.Tensor, error) { return Sum(cols, 0) }},
		{"dot", func() (*tensor.Tensor, error) { return Contract("i,i->", x, y) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(n * 4)
			for b.Loop() {
				if _, err := c.f(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDotFloat32TenMillion is the case: einsum "i,i->" of 10^7
// positive float32 numbers, reporting the relative error against the
// float64 dot in parts per billion (numpy's np.einsum: about 600; summed
// in order: about 10^6).
func BenchmarkDotFloat32TenMillion(b *testing.B) {
	const n = 10_000_000
	x, y := randFloat32(n), randFloat32(n)
	xs, _ := tensor.Buffer[float32](x)
	ys, _ := tensor.Buffer[float32](y)
	exact := 0.0
	for i := range xs {
		exact += float64(xs[i]) * float64(ys[i])
	}
	var got *tensor.Tensor
	b.SetBytes(n * 8)
	for b.Loop() {
		var err error
		if got, err = Contract("i,i->", x, y); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(1e9*math.Abs(real(got.Complex128Values()[0])-exact)/exact, "ppb-error")
}

// randFloat32 returns n uniform float32 values in [0, 1) as a vector.
func randFloat32(n int) *tensor.Tensor {
	r := rand.New(rand.NewPCG(uint64(n), 13))
	v := make([]float32, n)
	for i := range v {
		v[i] = r.Float32()
	}
	x, _ := tensor.New(v, n)
	return x
}

// BenchmarkSmallOutput times contractions whose output is small and whose
// contracted index is long, which GEMM runs as dot products (cpu/gemm's
// usesDots): complex128, and float64 ones whose operands are strided
// along the contracted index (gemv declines ijk,ijk->k; ij,ij->j is a
// batch of dot products along memory, see cpu/gemm's batchInner); run with
// GOFERRO_THREADS=1 to compare with numpy's einsum on one thread.
func BenchmarkSmallOutput(b *testing.B) {
	for _, c := range []struct {
		eq     string
		dt     tensor.DType
		sa, sb []int
	}{
		{"ik,kj->ij", tensor.Complex128, []int{4, 4096}, []int{4096, 4}},
		{"abk,k->ab", tensor.Complex128, []int{2, 2, 65536}, []int{65536}},
		{"xyk,xyk->", tensor.Complex128, []int{64, 64, 64}, []int{64, 64, 64}},
		{"ijk,ijk->k", tensor.Float64, []int{1024, 1024, 2}, []int{1024, 1024, 2}},
		{"ij,ij->j", tensor.Float64, []int{4096, 256}, []int{4096, 256}},
		{"ij,ij->j", tensor.Complex128, []int{4096, 256}, []int{4096, 256}},
	} {
		x, _ := tensor.Rand(tensor.NewRNG(1), c.dt, c.sa...)
		y, _ := tensor.Rand(tensor.NewRNG(2), c.dt, c.sb...)
		b.Run(c.eq+"/"+c.dt.String(), func(b *testing.B) {
			for b.Loop() {
				if _, err := Contract(c.eq, x, y); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkShortIndex times float64 contractions of a tensor with a vector
// over a short index (a physical leg): the last index, whose lines GEMM
// sums four at a time (cpu/gemm's shortLines), and the first.
func BenchmarkShortIndex(b *testing.B) {
	for _, c := range []struct {
		eq     string
		sa, sb []int
	}{
		{"ijk,k->ij", []int{512, 512, 4}, []int{4}},
		{"ijk,k->ij", []int{512, 512, 12}, []int{12}},
		{"kij,k->ij", []int{4, 512, 512}, []int{4}},
	} {
		x, _ := tensor.Rand(tensor.NewRNG(1), tensor.Float64, c.sa...)
		y, _ := tensor.Rand(tensor.NewRNG(2), tensor.Float64, c.sb...)
		b.Run(fmt.Sprintf("%s/%d", c.eq, c.sb[0]), func(b *testing.B) {
			for b.Loop() {
				if _, err := Contract(c.eq, x, y); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLines times matrix-vector products ij,j->i over 2¹⁸ elements
// in lines of 16 to 2048, in every dtype, planned once and each call
// writing the result of the one before: the lines that GEMM's
// matrix-vector path sums all in one call of level1.DotLines (cpu/gemm's
// shortLine) and the longer ones it sums a line at a time.
func BenchmarkLines(b *testing.B) {
	for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32, tensor.Complex128, tensor.Complex64} {
		for _, k := range []int{16, 32, 64, 128, 512, 2048} {
			x, _ := tensor.Rand(tensor.NewRNG(1), dt, 1<<18/k, k)
			y, _ := tensor.Rand(tensor.NewRNG(2), dt, k)
			b.Run(fmt.Sprintf("%v/%d", dt, k), func(b *testing.B) {
				p, err := einsum.NewPlan("ij,j->i", [][]int{x.Shape(), y.Shape()})
				if err != nil {
					b.Fatal(err)
				}
				c, err := NewContraction(p)
				if err != nil {
					b.Fatal(err)
				}
				out, err := c.Execute(context.Background(), x, y)
				if err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					if out, err = c.ExecuteInto(context.Background(), out, x, y); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkTransposedProduct times an elementwise product whose output is
// transposed against its operands, which the product walks tile by tile
// (einsumexec's mul2D).
func BenchmarkTransposedProduct(b *testing.B) {
	for _, dt := range []tensor.DType{tensor.Float64, tensor.Complex128} {
		x, _ := tensor.Rand(tensor.NewRNG(1), dt, 2048, 2048)
		y, _ := tensor.Rand(tensor.NewRNG(2), dt, 2048, 2048)
		b.Run("ab,ab->ba/"+dt.String(), func(b *testing.B) {
			for b.Loop() {
				if _, err := Contract("ab,ab->ba", x, y); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLayouts times the two-operand contractions of
// bench/einsum-layouts.json (index layouts that take different paths:
// batches along memory, short indices, transposed outputs, matrix-vector
// products) in float64 and complex128, one-shot Contract calls;
// bench/einsum-layouts.py times numpy on the same list.
func BenchmarkLayouts(b *testing.B) {
	forLayouts(b, func(b *testing.B, eq string, x, y *tensor.Tensor) {
		for b.Loop() {
			if _, err := Contract(eq, x, y); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkLayoutsInto times BenchmarkLayouts's contractions planned once,
// each call writing the result of the one before (ExecuteInto), the first
// result made before the clock starts: the contraction alone, where a
// one-shot call also pays for its result's fresh memory (page faults cost
// microseconds each on a virtual machine).
func BenchmarkLayoutsInto(b *testing.B) {
	forLayouts(b, func(b *testing.B, eq string, x, y *tensor.Tensor) {
		p, err := einsum.NewPlan(eq, [][]int{x.Shape(), y.Shape()})
		if err != nil {
			b.Fatal(err)
		}
		c, err := NewContraction(p)
		if err != nil {
			b.Fatal(err)
		}
		out, err := c.Execute(context.Background(), x, y) // untimed: b.Loop starts the clock
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if out, err = c.ExecuteInto(context.Background(), out, x, y); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// forLayouts runs f as a sub-benchmark for each case of
// bench/einsum-layouts.json in float64 and complex128, on seeded random
// operands.
func forLayouts(b *testing.B, f func(b *testing.B, eq string, x, y *tensor.Tensor)) {
	raw, err := os.ReadFile("../bench/einsum-layouts.json")
	if err != nil {
		b.Fatal(err)
	}
	var rows [][3]json.RawMessage // [equation, shape of A, shape of B]
	if err := json.Unmarshal(raw, &rows); err != nil {
		b.Fatal(err)
	}
	type layoutCase struct {
		eq     string
		sa, sb []int
	}
	var cases []layoutCase
	for _, r := range rows {
		var c layoutCase
		if json.Unmarshal(r[0], &c.eq) != nil || json.Unmarshal(r[1], &c.sa) != nil || json.Unmarshal(r[2], &c.sb) != nil {
			b.Fatalf("bad case %s", r)
		}
		cases = append(cases, c)
	}
	for _, dt := range []tensor.DType{tensor.Float64, tensor.Complex128} {
		for _, c := range cases {
			b.Run(fmt.Sprintf("%v/%s/%v", dt, c.eq, c.sa), func(b *testing.B) {
				x, _ := tensor.Rand(tensor.NewRNG(1), dt, c.sa...)
				y, _ := tensor.Rand(tensor.NewRNG(2), dt, c.sb...)
				f(b, c.eq, x, y)
			})
		}
	}
}

// BenchmarkContractSmall times one-shot Contract calls on the small
// float64 operands of bench/einsum-small.json (contractions of a tensor
// network's sweep), which after the first call run the Contraction kept
// for the equation and shapes (ContractContext); "planned" plans and
// lowers on every call, as a call with planning options does.
// bench/einsum-small.py times numpy on the same list.
func BenchmarkContractSmall(b *testing.B) {
	raw, err := os.ReadFile("../bench/einsum-small.json")
	if err != nil {
		b.Fatal(err)
	}
	type smallCase struct {
		eq     string
		shapes [][]int
	}
	var rows [][2]json.RawMessage // [equation, operand shapes]
	if err := json.Unmarshal(raw, &rows); err != nil {
		b.Fatal(err)
	}
	var cases []smallCase
	for _, r := range rows {
		var c smallCase
		if json.Unmarshal(r[0], &c.eq) != nil || json.Unmarshal(r[1], &c.shapes) != nil {
			b.Fatalf("bad case %s", r)
		}
		cases = append(cases, c)
	}
	for _, c := range cases {
		var ops []*tensor.Tensor
		for i, s := range c.shapes {
			x, _ := tensor.Rand(tensor.NewRNG(uint64(i)), tensor.Float64, s...)
			ops = append(ops, x)
		}
		b.Run("cached/"+c.eq, func(b *testing.B) {
			for b.Loop() {
				if _, err := Contract(c.eq, ops...); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("planned/"+c.eq, func(b *testing.B) {
			opt := einsum.WithOptimizer(einsum.OptimizeAuto)
			for b.Loop() {
				if _, err := ContractContext(context.Background(), c.eq, ops, opt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
