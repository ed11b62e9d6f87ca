package linalg

import (
	"fmt"
	"testing"

	"github.com/goferro/goferro/cpu/gemm"
	"github.com/goferro/goferro/tensor"
)

// TestParallelPaths runs the factorisations with every level-2 loop and
// rotation sequence split over three goroutines, and checks them as the
// single-threaded tests do.
func TestParallelPaths(t *testing.T) {
	defer func(m int) { parallelMin = m }(parallelMin)
	defer gemm.SetThreads(gemm.Threads())
	parallelMin = 1
	gemm.SetThreads(3)
	for _, dt := range []tensor.DType{tensor.Float64, tensor.Complex128, tensor.Float32} {
		for _, n := range []int{5, 100} {
			t.Run(fmt.Sprintf("%v/%d", dt, n), func(t *testing.T) {
				h := roundTo(hermitianMatrix("random", n, dt, 31), dt)
				wt, vt, err := Eigh(toTensor(t, []cm{h}, dt))
				if err != nil {
					t.Fatal(err)
				}
				checkEigh(t, h, vectorsOf(wt)[0], matricesOf(t, vt)[0], dt)
				a := roundTo(testMatrix("random", n, n-1, dt, 32), dt)
				res, err := SVD(toTensor(t, []cm{a}, dt), SVDOptions{})
				if err != nil {
					t.Fatal(err)
				}
				checkSVD(t, a, res, Reduced, dt)
			})
		}
	}
}
