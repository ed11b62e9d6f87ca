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
		k.full(kc, &a[0], &p[0], &c[0], k.nr, 1, 1, k.mr, &p[0], k.nr)
	}
	fl := 2 * float64(kc*k.mr*k.nr*b.N)
	b.ReportMetric(fl/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	b.ReportMetric(fl/(cpuSeconds()-cpu0)/1e9, "cpuGFLOP/s")
}

// BenchmarkPackA times packing one micro-panel of a row-major A (six rows
// for the AVX2 kernels, twelve for the AVX-512 ones, kc deep) with the
// assembly loop and the Go one, for rows a power of two apart (where
// element-wise reads of many rows fall in one L1 set) and not.
func BenchmarkPackA(b *testing.B) {
	for _, rows := range []int{6, 12} {
		for _, rs := range []int{1024, 1031} {
			b.Run(fmt.Sprintf("f64/rows%d/rs%d", rows, rs), func(b *testing.B) { benchPackA(b, []float64(nil), rows, rs) })
			b.Run(fmt.Sprintf("f32/rows%d/rs%d", rows, rs), func(b *testing.B) { benchPackA(b, []float32(nil), rows, rs) })
		}
	}
}

func benchPackA[R float](b *testing.B, _ []R, rows, rs int) {
	kb := 384 // the AVX2 kernels' kc here
	if rows == 12 {
		kb = 192
	}
	src := make([]R, rows*rs)
	d := make([]R, rows*kb)
	var z R
	_, f64 := any(z).(float64)
	asm := map[[2]bool]*func(dst, src unsafe.Pointer, rs, k4 int){
		{false, true}: &packA6x64Asm, {false, false}: &packA6x32Asm,
		{true, true}: &packA12x64Asm, {true, false}: &packA12x32Asm,
	}[[2]bool{rows == 12, f64}]
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
				packARows(d, src, 0, rs, rows, rows, kb)
			}
		})
	}
}
