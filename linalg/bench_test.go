package linalg

import (
	"fmt"
	"testing"

	"github.com/goferro/goferro/tensor"
)

// The benchmarks factor a Gaussian n×n matrix (Hermitian for Eigh), as the
// issue's peers (numpy.linalg on OpenBLAS, gonum) do in
// bench/linalg-report.md. Threads follow cpu/gemm's (GOFERRO_THREADS or
// gemm.SetThreads), in GEMM and in parallelFor's loops alike.

var benchSizes = []int{256, 1024}

func benchInput(b *testing.B, n int, dt tensor.DType, herm bool) *tensor.Tensor {
	var a cm
	if herm {
		a = hermitianMatrix("random", n, dt, 1)
	} else {
		a = testMatrix("random", n, n, dt, 1)
	}
	x := toTensor(b, []cm{a}, dt)
	return x
}

// benchOps runs f on n×n inputs of each size and dtype, reporting CPU
// time per call next to wall time.
func benchOps(b *testing.B, name string, herm bool, f func(*tensor.Tensor) error) {
	for _, dt := range benchDTypes {
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

// BenchmarkMPSBond truncates a 4096×4096 bond matrix (singular values
// decaying as 0.9^i) to rank 64, randomized against the full SVD; the
// issue asks for at least 5× between them. The full SVD takes minutes:
// select the randomized one alone with -bench 'MPSBond//randomized'.
func BenchmarkMPSBond(b *testing.B) {
	const n, rank = 4096, 64
	rng := newRand(61)
	// A = G1·diag(s)·G2 with Gaussian factors of inner size 2·rank: a cheap
	// stand-in for a bond matrix with a decaying spectrum.
	k := 2 * rank
	g1, g2 := randCM(rng, n, k, false), randCM(rng, k, n, false)
	for j := range k {
		s := complex(pow(0.9, j), 0)
		for i := range n {
			g1.set(i, j, g1.at(i, j)*s)
		}
	}
	x := toTensor(b, []cm{cmMul(g1, g2)}, tensor.Float64)
	b.Run("n=4096/randomized", func(b *testing.B) {
		start := cpuSeconds()
		for b.Loop() {
			if _, err := RandomizedSVD(x, rank, RandomizedOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, start)
	})
	b.Run("n=4096/full", func(b *testing.B) {
		start := cpuSeconds()
		for b.Loop() {
			if _, err := SVD(x, SVDOptions{MaxRank: rank}); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, start)
	})
}

func pow(x float64, n int) float64 {
	p := 1.0
	for range n {
		p *= x
	}
	return p
}

// benchDTypes are the dtypes of the size benchmarks (the float64
// and complex128, and the single-precision ones).
var benchDTypes = []tensor.DType{tensor.Float64, tensor.Complex128, tensor.Float32, tensor.Complex64}

// smallShapes are matrices of the sizes a tensor-network sweep at small
// bond dimension factors many times over (a two-site tensor of bond χ and
// physical dimension 2 is 2χ×2χ; its QR for the canonical form 2χ×χ),
// and tall ones with few columns.
var smallShapes = [][2]int{{8, 4}, {8, 8}, {16, 8}, {16, 16}, {32, 16}, {32, 32}, {64, 32}, {64, 64}, {128, 64}, {256, 8}, {1024, 8}}

// BenchmarkSmall times QR and thin SVD of smallShapes, in float64 (named
// QR/m×n) and the other dtypes (QR/complex128/m×n), and Eigh of Hermitian
// matrices of 8 to 128 rows (Eigh/dtype/n), where fixed costs and the
// choice between blocked and unblocked reflectors show.
// bench/linalg-small.py times numpy on the same list.
func BenchmarkSmall(b *testing.B) {
	for _, dt := range []tensor.DType{tensor.Float64, tensor.Complex128, tensor.Float32, tensor.Complex64} {
		prefix := ""
		if dt != tensor.Float64 {
			prefix = dt.String() + "/"
		}
		for _, sh := range smallShapes {
			x := toTensor(b, []cm{testMatrix("random", sh[0], sh[1], dt, 1)}, dt)
			b.Run(fmt.Sprintf("QR/%s%dx%d", prefix, sh[0], sh[1]), func(b *testing.B) {
				for b.Loop() {
					if _, _, err := QR(x, Reduced); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(fmt.Sprintf("SVD/%s%dx%d", prefix, sh[0], sh[1]), func(b *testing.B) {
				for b.Loop() {
					if _, err := SVD(x, SVDOptions{}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		for _, n := range []int{8, 16, 32, 64, 128} {
			h := toTensor(b, []cm{hermitianMatrix("random", n, dt, 1)}, dt)
			b.Run(fmt.Sprintf("Eigh/%v/%d", dt, n), func(b *testing.B) {
				for b.Loop() {
					if _, _, err := Eigh(h); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
