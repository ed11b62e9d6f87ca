package einsumexec

import (
	"testing"

	"github.com/goferro/goferro/einsum"
)

func BenchmarkTranspose361x121(b *testing.B) {
	src := make([]float64, 361*121)
	dst := make([]float64, 361*121)
	for i := 0; i < b.N; i++ {
		copyStrided(dst, 0, src, 0, []int{361, 121}, []int{121, 1}, []int{1, 361}, false)
	}
}

func BenchmarkTranspose361x121Plain(b *testing.B) {
	src := make([]float64, 361*121)
	dst := make([]float64, 361*121)
	for i := 0; i < b.N; i++ {
		for r := 0; r < 361; r++ {
			for c := 0; c < 121; c++ {
				dst[r*121+c] = src[c*361+r]
			}
		}
	}
}

func BenchmarkBatchedTinyGemm(b *testing.B) {
	o := &op{kind: opGemm, batch: []int{1996}, m: 1, n: 16, k: 7,
		ma: mat{rs: 7, cs: 1, bs: []int{7}}, mb: mat{rs: 16, cs: 1, bs: []int{112}}, mc: mat{rs: 16, cs: 1, bs: []int{16}}}
	a := make([]float64, 1996*7)
	bb := make([]float64, 1996*112)
	c := make([]float64, 1996*16)
	for i := 0; i < b.N; i++ {
		runGemm(1, o, a, 0, bb, 0, c, 0)
	}
}

// BenchmarkMulOuter runs the product of the two batched outer-product
// instances (compact: tkj,to->tokj; noncompact: tjk,to->tokj) on one
// goroutine into a reused 8 MiB result.
func BenchmarkMulOuter(b *testing.B) {
	for _, c := range []struct{ name, eq string }{{"compact", "tkj,to->tokj"}, {"noncompact", "tjk,to->tokj"}} {
		b.Run(c.name, func(b *testing.B) {
			p, err := einsum.NewPlan(c.eq, [][]int{{64, 16, 16}, {64, 64}})
			if err != nil {
				b.Fatal(err)
			}
			pr, err := Lower(p, true)
			if err != nil {
				b.Fatal(err)
			}
			o := &pr.prog.ops[0]
			dst := make([]float64, 1<<20)
			x := make([]float64, 64*256)
			y := make([]float64, 64*64)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				runOp(o, dst, 0, x, 0, y, 0)
			}
		})
	}
}

func BenchmarkTranspose2048(b *testing.B) {
	src := make([]float64, 2048*2048)
	dst := make([]float64, 2048*2048)
	for i := 0; i < b.N; i++ {
		copyStrided(dst, 0, src, 0, []int{2048, 2048}, []int{2048, 1}, []int{1, 2048}, false)
	}
}
