package gemm

import (
	"fmt"
	"testing"
	"unsafe"
)

// BenchmarkMacro times the micro-kernel over a packed A block and B panel
// (no packing) with the block sizes Gemm uses on this CPU, as the driver
// calls it (next-panel prefetch included), into a C whose rows are 1024
// elements apart: the in-cache rate the blocked driver can reach.
func BenchmarkMacro(b *testing.B) {
	for _, nc := range []int{256, 1024} {
		b.Run(fmt.Sprintf("f64/nc%d", nc), func(b *testing.B) { benchMacro[float64](b, nc) })
		b.Run(fmt.Sprintf("f32/nc%d", nc), func(b *testing.B) { benchMacro[float32](b, nc) })
	}
}

func benchMacro[R float](b *testing.B, nc int) {
	k := kernelFor[R]()
	var z R
	es := int(unsafe.Sizeof(z))
	blk := blockingFor(k, es)
	kc, mc := blk.kc, blk.mc
	const ldc = 1024
	a := make([]R, mc*kc)
	p := make([]R, kc*nc)
	c := make([]R, mc*ldc)
	pfStep := kc / 4 * 64 / es
	cpu0 := cpuSeconds()
	for b.Loop() {
		for jr := 0; jr < nc; jr += k.nr {
			pfo := (jr + k.nr) * kc
			for ir := 0; ir < mc; ir += k.mr {
				k.full(kc, &a[ir*kc], &p[jr*kc], &c[ir*ldc+jr], ldc, 1, 1, k.mr, &p[min(pfo, len(p)-1)], k.nr)
				pfo += pfStep
			}
		}
	}
	fl := 2 * float64(kc*mc*nc*b.N)
	b.ReportMetric(fl/(cpuSeconds()-cpu0)/1e9, "cpuGFLOP/s")
}
