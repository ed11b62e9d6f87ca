package gemm

import (
	"fmt"
	"testing"
	"unsafe"
)

// BenchmarkGemmLayouts times one-thread products whose operands are row-
// or column-major ("n" and "t" as in BLAS), at sizes where packing is a
// visible share of the work: float64, float32 under f32/, complex128
// under c128/ and complex64 under c64/ (GFLOP/s count a complex
// multiply-add as 8). The cold
// cases cycle through 64 MiB of distinct A matrices, so that A comes from
// memory, as when einsum contracts a chain of input matrices with a thin
// one.
func BenchmarkGemmLayouts(b *testing.B) {
	for _, sz := range [][3]int{{300, 300, 300}, {400, 40, 400}, {40, 400, 400}, {400, 21, 400}} {
		for _, lay := range []string{"nn", "tn", "nt", "tt", "cold-nn", "cold-tn"} {
			name := fmt.Sprintf("%s/m%d_n%d_k%d", lay, sz[0], sz[1], sz[2])
			b.Run(name, func(b *testing.B) { benchLayout[float64](b, sz, lay) })
			b.Run("f32/"+name, func(b *testing.B) { benchLayout[float32](b, sz, lay) })
			b.Run("c128/"+name, func(b *testing.B) { benchLayout[complex128](b, sz, lay) })
			b.Run("c64/"+name, func(b *testing.B) { benchLayout[complex64](b, sz, lay) })
		}
	}
}

func benchLayout[T Scalar](b *testing.B, sz [3]int, lay string) {
	m, n, k := sz[0], sz[1], sz[2]
	cold := len(lay) > 2
	lay = lay[len(lay)-2:]
	mat := func(r, c int, t bool) Matrix[T] {
		d := make([]T, r*c)
		for i := range d {
			v := float64(i%7) - 3
			switch p := any(&d[i]).(type) {
			case *float64:
				*p = v
			case *float32:
				*p = float32(v)
			case *complex128:
				*p = complex(v, v/2)
			case *complex64:
				*p = complex(float32(v), float32(v/2))
			}
		}
		if t {
			return Matrix[T]{Data: d, RowStride: 1, ColStride: r}
		}
		return Matrix[T]{Data: d, RowStride: c, ColStride: 1}
	}
	xs := []Matrix[T]{mat(m, k, lay[0] == 't')}
	for cold && len(xs)*m*k*int(unsafe.Sizeof(xs[0].Data[0])) < 64<<20 {
		xs = append(xs, mat(m, k, lay[0] == 't'))
	}
	y, z := mat(k, n, lay[1] == 't'), mat(m, n, false)
	i := 0
	for b.Loop() {
		x := xs[i%len(xs)]
		i++
		if err := GemmThreads(1, nil, m, n, k, 1, x, y, 0, z); err != nil {
			b.Fatal(err)
		}
	}
	flops := 2 * float64(m*n*k)
	switch any(z.Data[0]).(type) {
	case complex128, complex64:
		flops *= 4
	}
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
