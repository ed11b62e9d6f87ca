package gemm

import "testing"

// BenchmarkKernel times the micro-kernels alone on cache-resident panels.
func BenchmarkKernel(b *testing.B) {
	const kc = 256
	b.Run("f64", func(b *testing.B) {
		k := kernelFor[float64]()
		a := make([]float64, kc*k.mr)
		p := make([]float64, kc*k.nr)
		c := make([]float64, k.mr*k.nr)
		cpu0 := cpuSeconds()
		for b.Loop() {
			k.full(kc, &a[0], &p[0], &c[0], k.nr, 1, 1, k.mr, &p[0])
		}
		fl := 2 * float64(kc*k.mr*k.nr*b.N)
		b.ReportMetric(fl/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		b.ReportMetric(fl/(cpuSeconds()-cpu0)/1e9, "cpuGFLOP/s")
	})
	b.Run("f32", func(b *testing.B) {
		k := kernelFor[float32]()
		a := make([]float32, kc*k.mr)
		p := make([]float32, kc*k.nr)
		c := make([]float32, k.mr*k.nr)
		cpu0 := cpuSeconds()
		for b.Loop() {
			k.full(kc, &a[0], &p[0], &c[0], k.nr, 1, 1, k.mr, &p[0])
		}
		fl := 2 * float64(kc*k.mr*k.nr*b.N)
		b.ReportMetric(fl/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		b.ReportMetric(fl/(cpuSeconds()-cpu0)/1e9, "cpuGFLOP/s")
	})
}
