package linalg

import (
	"fmt"
	"testing"

	"github.com/goferro/goferro/tensor"
)

// The benchmarks factor a Gaussian n×n matrix (Hermitian for Eigh), as the
// issue's peers (numpy.linalg on OpenBLAS, gonum) do in
// bench/linalg-report.md. Threads follow cpu/gemm's (GOFERRO_THREADS or
// gemm.SetThreads); the reductions outside GEMM run on one goroutine.

var benchSizes = []int{256, 1024}

func benchInput(b *testing.B, n int, dt tensor.DType, herm bool) *tensor.Tensor {
	var a cm
	if herm {
		a = hermitianMatrix("random", n, dt, 1)
	} else {
		a = testMatrix("random", n, n, dt, 1)
	}
	x := toTensorTB(b, []cm{a}, dt)
	return x
}

// benchOps runs f on n×n inputs of each size and dtype, reporting CPU
// time per call next to wall time.
func benchOps(b *testing.B, name string, herm bool, f func(*tensor.Tensor) error) {
	for _, dt := range []tensor.DType{tensor.Float64, tensor.Complex128} {
		for _, n := range benchSizes {
			b.Run(fmt.Sprintf("%v/n=%d", dt, n), func(b *testing.B) {
				x := benchInput(b, n, dt, herm)
				start := cpuSeconds()
				for b.Loop() {
					if err := f(x); err != nil {
						b.Fatal(err)
					}
				}
				reportCPU(b, start)
			})
		}
	}
}

func BenchmarkQR(b *testing.B) {
	benchOps(b, "QR", false, func(x *tensor.Tensor) error { _, _, err := QR(x, Reduced); return err })
}

func BenchmarkSVD(b *testing.B) {
	benchOps(b, "SVD", false, func(x *tensor.Tensor) error { _, err := SVD(x, SVDOptions{}); return err })
}

func BenchmarkSVDVals(b *testing.B) {
	benchOps(b, "SVDVals", false, func(x *tensor.Tensor) error { _, err := SVDVals(x); return err })
}

func BenchmarkEigh(b *testing.B) {
	benchOps(b, "Eigh", true, func(x *tensor.Tensor) error { _, _, err := Eigh(x); return err })
}

func BenchmarkEigvalsH(b *testing.B) {
	benchOps(b, "EigvalsH", true, func(x *tensor.Tensor) error { _, err := EigvalsH(x); return err })
}
