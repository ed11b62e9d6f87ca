package gemm

import "testing"

// BenchmarkKernel times the micro-kernels alone on cache-resident panels.
func BenchmarkKernel(b *testing.B) {
	b.Run("f64", benchKernel[float64])
	b.Run("f32", benchKernel[float32])
}

func benchKernel[R float](b *testing.B) {
	const kc = 256
	k := kernelFor[R]()
	a := make([]R, kc*k.mr)
	p := make([]R, kc*k.nr)
	c := make([]R, k.mr*k.nr)
	cpu0 := cpuSeconds()
	for b.Loop() {
		k.full(kc, &a[0], &p[0], &c[0], k.nr, 1, 1, k.mr, &p[0])
	}
	fl := 2 * float64(kc*k.mr*k.nr*b.N)
	b.ReportMetric(fl/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	b.ReportMetric(fl/(cpuSeconds()-cpu0)/1e9, "cpuGFLOP/s")
}
