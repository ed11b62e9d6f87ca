package linalg

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/goferro/goferro/cpu/gemm"
)

// TestRotSeq checks rotMat.seq, with each assembly kernel this CPU has and
// with the Go loop, against rotations applied one at a time to a plain
// row-major matrix, for row counts around the panel height and offsets.
func TestRotSeq(t *testing.T) {
	defer func(k func(*float64, int, int, int, *float64, *float64)) { rotPanelsAsm = k }(rotPanelsAsm)
	rng := newRand(9)
	for ki, kernel := range append([]func(*float64, int, int, int, *float64, *float64){nil}, rotKernels...) {
		rotPanelsAsm = kernel
		for _, rows := range []int{1, 3, 7, 8, 9, 16, 17, 29} {
			for _, cols := range []int{2, 7} {
				for p := 0; p < cols-1; p++ {
					z := rotMat{rows: rows, cols: cols, data: make([]float64, (rows+panelRows-1)/panelRows*panelRows*cols)}
					ref := make([]float64, rows*cols)
					for i := range rows {
						for k := range cols {
							v := rng.NormFloat64()
							z.data[z.index(i, k)], ref[i*cols+k] = v, v
						}
					}
					n := cols - 1 - p
					c, s := make([]float64, n), make([]float64, n)
					for k := range c {
						th := rng.Float64() * 2 * math.Pi
						c[k], s[k] = math.Cos(th), math.Sin(th)
					}
					z.seq(p, c, s)
					for k := range n {
						for i := range rows {
							x, y := ref[i*cols+p+k], ref[i*cols+p+k+1]
							ref[i*cols+p+k], ref[i*cols+p+k+1] = c[k]*x+s[k]*y, c[k]*y-s[k]*x
						}
					}
					for i := range rows {
						for k := range cols {
							if got, want := z.data[z.index(i, k)], ref[i*cols+k]; math.Abs(got-want) > 1e-14*float64(cols) {
								t.Fatalf("kernel %d, rows %d cols %d p %d: Z[%d, %d] = %v, want %v", ki, rows, cols, p, i, k, got, want)
							}
						}
					}
				}
			}
		}
	}
}

// BenchmarkRotSeq applies 1023 rotations to a 1024×1024 rotMat on one
// goroutine with each kernel: kernel=0 is the Go loop, then the assembly
// kernels of rotKernels (AVX2, AVX-512).
func BenchmarkRotSeq(b *testing.B) {
	defer func(k func(*float64, int, int, int, *float64, *float64)) { rotPanelsAsm = k }(rotPanelsAsm)
	defer gemm.SetThreads(gemm.Threads())
	gemm.SetThreads(1)
	const n = 1024
	z := rotEye(n)
	c, s := make([]float64, n-1), make([]float64, n-1)
	for i := range c {
		c[i], s[i] = 0.6, 0.8
	}
	for ki, kernel := range append([]func(*float64, int, int, int, *float64, *float64){nil}, rotKernels...) {
		b.Run(fmt.Sprintf("kernel=%d", ki), func(b *testing.B) {
			rotPanelsAsm = kernel
			start := cpuSeconds()
			for b.Loop() {
				z.seq(0, c, s)
			}
			reportCPU(b, start)
		})
	}
}

func cmplxAbs(z complex128) float64 { return math.Hypot(real(z), imag(z)) }

func BenchmarkHypot(b *testing.B) {
	xs := make([]float64, 1024)
	for i := range xs {
		xs[i] = float64(i+1) * 0.37
	}
	for _, c := range []struct {
		name string
		f    func(x, y float64) float64
	}{{"fast", hypot}, {"math", math.Hypot}} {
		b.Run(c.name, func(b *testing.B) {
			s := 0.0
			start := cpuSeconds()
			for b.Loop() {
				for i := 1; i < len(xs); i++ {
					s += c.f(xs[i-1], xs[i])
				}
			}
			reportCPU(b, start)
			sink = s
		})
	}
}

var sink float64

func TestHypot(t *testing.T) {
	for _, c := range [][2]float64{{3, 4}, {1e300, 1e300}, {1e-300, 3e-300}, {0, 0}, {0, -2}, {5e-170, 1e-170}} {
		got, want := hypot(c[0], c[1]), math.Hypot(c[0], c[1])
		if math.Abs(got-want) > 2e-16*want {
			t.Errorf("hypot(%g, %g) = %g, want %g", c[0], c[1], got, want)
		}
	}
}

// TestRotBatch checks that a rotBatch gives, to the bit, what seq gives
// for each of its sequences in turn: sequences of every length (empty
// ones too) at every offset, more than one batch's worth so that push
// applies full batches, with the panels split over three goroutines.
func TestRotBatch(t *testing.T) {
	defer func(m int) { parallelMin = m }(parallelMin)
	defer gemm.SetThreads(gemm.Threads())
	parallelMin = 1
	gemm.SetThreads(3)
	rng := newRand(11)
	for _, rows := range []int{1, 5, 8, 17, 70} {
		const cols = 9
		want := rotMat{rows: rows, cols: cols, data: make([]float64, (rows+panelRows-1)/panelRows*panelRows*cols)}
		for i := range rows {
			for k := range cols {
				want.data[want.index(i, k)] = rng.NormFloat64()
			}
		}
		got := rotMat{rows: rows, cols: cols, data: append([]float64(nil), want.data...)}
		b := newRotBatch(got, cols-1)
		for range 5 * rotBatchLen {
			p := rng.IntN(cols)
			n := rng.IntN(cols - p)
			c, s := b.push(p, n)
			for k := range n {
				th := rng.Float64() * 2 * math.Pi
				c[k], s[k] = math.Cos(th), math.Sin(th)
			}
			want.seq(p, c, s)
		}
		b.flush()
		for i, x := range want.data {
			if got.data[i] != x {
				t.Fatalf("rows %d: element %d is %v, want %v", rows, i, got.data[i], x)
			}
		}
	}
}

// TestRotBatchSkipsZeros runs the rotations, pairs and permutations of a
// QR iteration on an identity whose batches skip the rotations that only
// touch zeros (rotEye keeps bottom) and on a dense copy that applies them
// all (bottom nil): every element must agree, and every element at or
// below a column's bottom must be zero.
func TestRotBatchSkipsZeros(t *testing.T) {
	defer func(m int) { parallelMin = m }(parallelMin)
	defer gemm.SetThreads(gemm.Threads())
	parallelMin = 1
	gemm.SetThreads(3)
	rng := newRand(12)
	for trial := range 60 {
		n := []int{1, 2, 9, 40, 70}[trial%5]
		got := rotEye(n)
		want := rotMat{rows: n, cols: n, data: slices.Clone(got.data)}
		b := newRotBatch(got, n-1)
		for step := range 3 * rotBatchLen {
			switch {
			case step%5 == 4 && n > 1:
				b.flush()
				j, k := rng.IntN(n), rng.IntN(n)
				if j != k {
					th := rng.Float64() * 2 * math.Pi
					got.pair(j, k, math.Cos(th), math.Sin(th))
					want.pair(j, k, math.Cos(th), math.Sin(th))
				}
			case step%7 == 6:
				b.flush()
				idx := rng.Perm(n)
				got.permute(idx)
				want.permute(idx)
			default:
				// Sweeps start near the top and shrink from the bottom, as
				// a QR iteration's do.
				p := rng.IntN(max(n/4, 1))
				m := rng.IntN(n - p)
				c, s := b.push(p, m)
				for k := range m {
					th := rng.Float64() * 2 * math.Pi
					c[k], s[k] = math.Cos(th), math.Sin(th)
				}
				want.seq(p, c, s)
			}
		}
		b.flush()
		for i := range n {
			for k := range n {
				g, w := got.data[got.index(i, k)], want.data[want.index(i, k)]
				if g != w {
					t.Fatalf("trial %d, n %d: element (%d, %d) is %v, want %v", trial, n, i, k, g, w)
				}
				if i >= got.bottom[k] && w != 0 {
					t.Fatalf("trial %d, n %d: element (%d, %d) is %v, below bottom %d", trial, n, i, k, w, got.bottom[k])
				}
			}
		}
	}
}
