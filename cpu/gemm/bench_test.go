package gemm

import (
	"fmt"
	"os"
	"testing"
)

// Heavy sizes live here, not in the tests. GOFERRO_GEMM_BLOCK=mc,kc,nc
// overrides the block sizes for tuning runs; GOFERRO_NODIRECT=1 packs A
// always, GOFERRO_NODIRECTB=1 packs B always, GOFERRO_NOSHAREB=1 has each
// goroutine pack its own B panels.
func benchGemm[T Scalar](b *testing.B, n, batch, threads int) {
	if s := os.Getenv("GOFERRO_GEMM_BLOCK"); s != "" {
		var blk blocking
		if _, err := fmt.Sscanf(s, "%d,%d,%d", &blk.mc, &blk.kc, &blk.nc); err == nil {
			testBlocking.Store(&blk)
			defer testBlocking.Store(nil)
		}
	}
	if os.Getenv("GOFERRO_NODIRECT") != "" {
		testNoDirect.Store(true)
		defer testNoDirect.Store(false)
	}
	if os.Getenv("GOFERRO_NOSHAREB") != "" {
		testNoShareB.Store(true)
		defer testNoShareB.Store(false)
	}
	if os.Getenv("GOFERRO_NODIRECTB") != "" {
		testNoDirectB.Store(true)
		defer testNoDirectB.Store(false)
	}
	mk := func() Matrix[T] {
		d := make([]T, batch*n*n)
		for i := range d {
			d[i] = fromFloat[T](float64(i%7) - 3)
		}
		m := Matrix[T]{Data: d, RowStride: n, ColStride: 1}
		if batch > 1 {
			m.BatchStrides = []int{n * n}
		}
		return m
	}
	x, y, z := mk(), mk(), mk()
	var bs []int
	if batch > 1 {
		bs = []int{batch}
	}
	flops := 2 * float64(n*n*n*batch)
	var zero T
	switch any(zero).(type) {
	case complex64, complex128:
		flops *= 4
	}
	cpu0 := cpuSeconds()
	b.ResetTimer()
	for b.Loop() {
		if err := GemmThreads(threads, bs, n, n, n, 1, x, y, 0, z); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	if cpu := cpuSeconds() - cpu0; cpu > 0 {
		// GFLOP/s per CPU-second-per-thread: robust to time-sharing.
		b.ReportMetric(flops*float64(b.N)*float64(threads)/cpu/1e9, "cpuGFLOP/s")
	}
}

// BenchmarkGemmShapes times one-thread float64 products of rectangular
// row-major operands, m×n×k, where reading B in place or packing it is
// close, and thin ones whose large A (1000×32×1000) or B (32×1000×1000)
// run reads in place (see run).
func BenchmarkGemmShapes(b *testing.B) {
	for _, sh := range [][3]int{{64, 64, 64}, {192, 128, 128}, {512, 256, 64}, {64, 512, 32}, {1024, 520, 32}, {1000, 32, 1000}, {32, 1000, 1000}} {
		m, n, k := sh[0], sh[1], sh[2]
		b.Run(fmt.Sprintf("m%d_n%d_k%d", m, n, k), func(b *testing.B) { benchShape(b, m, n, k) })
	}
}

func benchShape(b *testing.B, m, n, k int) {
	if os.Getenv("GOFERRO_NODIRECTB") != "" {
		testNoDirectB.Store(true)
		defer testNoDirectB.Store(false)
	}
	x := Matrix[float64]{Data: make([]float64, m*k), RowStride: k, ColStride: 1}
	y := Matrix[float64]{Data: make([]float64, k*n), RowStride: n, ColStride: 1}
	z := Matrix[float64]{Data: make([]float64, m*n), RowStride: n, ColStride: 1}
	cpu0 := cpuSeconds()
	for b.Loop() {
		if err := GemmThreads(1, nil, m, n, k, 1, x, y, 0, z); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(2*float64(m*n*k*b.N)/(cpuSeconds()-cpu0)/1e9, "cpuGFLOP/s")
}

func BenchmarkGemm(b *testing.B) {
	for _, th := range []int{1, 2} {
		for _, n := range []int{64, 256, 512, 1024, 2048} {
			b.Run(fmt.Sprintf("f64/n%d/t%d", n, th), func(b *testing.B) { benchGemm[float64](b, n, 1, th) })
			b.Run(fmt.Sprintf("f32/n%d/t%d", n, th), func(b *testing.B) { benchGemm[float32](b, n, 1, th) })
			b.Run(fmt.Sprintf("c128/n%d/t%d", n, th), func(b *testing.B) { benchGemm[complex128](b, n, 1, th) })
			b.Run(fmt.Sprintf("c64/n%d/t%d", n, th), func(b *testing.B) { benchGemm[complex64](b, n, 1, th) })
		}
		for _, n := range []int{64, 128} {
			b.Run(fmt.Sprintf("f64/batch32/n%d/t%d", n, th), func(b *testing.B) { benchGemm[float64](b, n, 32, th) })
			b.Run(fmt.Sprintf("f32/batch32/n%d/t%d", n, th), func(b *testing.B) { benchGemm[float32](b, n, 32, th) })
			b.Run(fmt.Sprintf("c128/batch32/n%d/t%d", n, th), func(b *testing.B) { benchGemm[complex128](b, n, 32, th) })
		}
	}
}

func fromFloat[T Scalar](x float64) T {
	var v T
	switch p := any(&v).(type) {
	case *float64:
		*p = x
	case *float32:
		*p = float32(x)
	case *complex128:
		*p = complex(x, 0)
	case *complex64:
		*p = complex(float32(x), 0)
	}
	return v
}
