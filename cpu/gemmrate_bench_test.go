package cpu_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/tensor"
)

// BenchmarkGEMMRate measures the engine's batched GEMM, bmk,bkn->bmn in
// float64 on one thread, over a grid of shapes with about 2^24
// multiply-adds each, and reports GFLOP/s (two per multiply-add). The
// path package's DefaultTimeModel is fitted to these rates:
//
//	go test ./cpu -run '^$' -bench GEMMRate -benchtime 20x
func BenchmarkGEMMRate(b *testing.B) {
	dims := []int{1, 3, 9, 27, 81, 243}
	for _, m := range dims {
		for _, n := range dims {
			for _, k := range dims {
				batch := max(1, (1<<24)/(m*n*k))
				b.Run(fmt.Sprintf("b%d_m%d_n%d_k%d", batch, m, n, k), func(b *testing.B) {
					gemmRate(b, batch, m, n, k)
				})
			}
		}
	}
}

func gemmRate(b *testing.B, batch, m, n, k int) {
	shapes := [][]int{{batch, m, k}, {batch, k, n}}
	p, err := einsum.NewPlan("bmk,bkn->bmn", shapes)
	if err != nil {
		b.Fatal(err)
	}
	c, err := cpu.NewContraction(p, cpu.WithThreads(1))
	if err != nil {
		b.Fatal(err)
	}
	rng := tensor.NewRNG(1)
	x, _ := tensor.Rand(rng, tensor.Float64, shapes[0]...)
	y, _ := tensor.Rand(rng, tensor.Float64, shapes[1]...)
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		if _, err := c.Execute(ctx, x, y); err != nil {
			b.Fatal(err)
		}
	}
	flops := 2 * float64(batch*m*n*k) * float64(b.N)
	b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
