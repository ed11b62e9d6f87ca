package gemm

import (
	"fmt"
	"testing"
	"unsafe"
)

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

// BenchmarkPackA12 times packing one 12-row micro-panel of a row-major A
// (the AVX-512 kernels' A panel) with the assembly loop and the Go one, for
// rows a power of two apart (where element-wise reads of twelve rows fall
// in one L1 set) and not.
func BenchmarkPackA12(b *testing.B) {
	for _, rs := range []int{1024, 1031} {
		b.Run(fmt.Sprintf("f64/rs%d", rs), func(b *testing.B) { benchPackA12(b, &packA12x64Asm, make([]float64, 12*rs), rs) })
		b.Run(fmt.Sprintf("f32/rs%d", rs), func(b *testing.B) { benchPackA12(b, &packA12x32Asm, make([]float32, 12*rs), rs) })
	}
}

func benchPackA12[R float](b *testing.B, asm *func(dst, src unsafe.Pointer, rs, k4 int), src []R, rs int) {
	const kb = 192
	d := make([]R, 12*kb)
	for _, name := range []string{"asm", "go"} {
		b.Run(name, func(b *testing.B) {
			save := *asm
			if name == "go" {
				*asm = nil
			} else if save == nil {
				b.Skip("no assembly loop on this architecture")
			}
			defer func() { *asm = save }()
			for b.Loop() {
				packARows12(d, src, 0, rs, kb)
			}
		})
	}
}
