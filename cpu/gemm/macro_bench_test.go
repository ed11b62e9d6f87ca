package gemm

import (
	"fmt"
	"testing"
)

// BenchmarkMacro times the micro-kernel over a packed A block and B panel
// (no packing), the in-cache rate the blocked driver can reach.
func BenchmarkMacro(b *testing.B) {
	for _, mc := range []int{72, 126, 240} {
		for _, nc := range []int{256, 1024} {
			b.Run(fmt.Sprintf("f64/mc%d/nc%d", mc, nc), func(b *testing.B) {
				const kc = 256
				k := kernelFor[float64]()
				a := make([]float64, mc*kc)
				p := make([]float64, kc*nc)
				ldc := 1024
				c := make([]float64, mc*ldc)
				cpu0 := cpuSeconds()
				for b.Loop() {
					for jr := 0; jr < nc; jr += k.nr {
						for ir := 0; ir < mc; ir += k.mr {
							k.full(kc, &a[ir*kc], &p[jr*kc], &c[ir*ldc+jr], ldc, 1, 1, k.mr, &p[min((jr+k.nr)*kc+ir/k.mr*kc/4*8, len(p)-1)])
						}
					}
				}
				fl := 2 * float64(kc*mc*nc*b.N)
				b.ReportMetric(fl/(cpuSeconds()-cpu0)/1e9, "cpuGFLOP/s")
			})
		}
	}
}
