package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/goferro/goferro/cpu/gemm"
)

func init() { benchTargets["gemm"] = runBenchGemm }

const benchGemmUsage = `usage: goferro bench gemm [-n N] [-dtype D] [-threads T] [-batch B] [-runs R]
Times square GEMMs with goferro's kernels and ends with one line
"gemm dtype=D n=N batch=B threads=T median_ms=X gflops=Y".`

// runBenchGemm times square GEMMs: goferro bench gemm -n N -dtype D
// -threads T [-batch B] [-runs R]. It ends with one line
// "gemm dtype=D n=N batch=B threads=T median_ms=X gflops=Y".
func runBenchGemm(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlagSet("bench gemm", benchGemmUsage)
	n := fs.Int("n", 512, "matrix size (n×n times n×n)")
	dtype := fs.String("dtype", "float64", "element type: float64, float32, complex128 or complex64")
	threads := fs.Int("threads", 0, "goroutines (0: GOMAXPROCS)")
	batch := fs.Int("batch", 1, "independent products in one batched call")
	runs := fs.Int("runs", 0, "timed runs (0: enough for about a second, at least 3)")
	var budget budgetFlag
	fs.Var(&budget, "memory-limit", "memory budget of the three matrices (512MiB, 8GB, none; default: 3/4 of what the machine still has)")
	pos, err := parseArgs(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q (see goferro bench gemm -h)", pos[0])
	}
	if *n < 1 || *batch < 1 || *threads < 0 || *runs < 0 {
		return usagef("-n and -batch must be positive, -threads and -runs not negative")
	}
	th := *threads
	if th == 0 {
		th = gemm.Threads()
	}
	var run func() error
	flops := 2 * float64(*n) * float64(*n) * float64(*n) * float64(*batch)
	size := map[string]float64{"float64": 8, "float32": 4, "complex128": 16, "complex64": 8}[*dtype]
	if err := fitsBudget("bench gemm", 3*float64(*batch)*float64(*n)*float64(*n)*size, budget.get()); err != nil {
		return err
	}
	switch *dtype {
	case "float64":
		run = gemmRunner[float64](*n, *batch, th, func(r *rand.Rand) float64 { return r.Float64() })
	case "float32":
		run = gemmRunner[float32](*n, *batch, th, func(r *rand.Rand) float32 { return r.Float32() })
	case "complex128":
		run = gemmRunner[complex128](*n, *batch, th, func(r *rand.Rand) complex128 { return complex(r.Float64(), r.Float64()) })
		flops *= 4
	case "complex64":
		run = gemmRunner[complex64](*n, *batch, th, func(r *rand.Rand) complex64 { return complex(r.Float32(), r.Float32()) })
		flops *= 4
	default:
		return usagef("unknown -dtype %q (float64, float32, complex128, complex64)", *dtype)
	}
	// Warm up (packing buffers, worker goroutines, caches) and size the runs.
	start := time.Now()
	if err := run(); err != nil {
		return err
	}
	nruns := *runs
	if nruns == 0 {
		one := time.Since(start).Seconds()
		nruns = min(max(int(1/max(one, 1e-6)), 3), 1000)
	} else if err := run(); err != nil {
		return err
	}
	times := make([]float64, 0, nruns)
	for range nruns {
		if err := ctx.Err(); err != nil {
			return err
		}
		t := time.Now()
		if err := run(); err != nil {
			return err
		}
		times = append(times, time.Since(t).Seconds())
	}
	sort.Float64s(times)
	med := times[len(times)/2]
	if len(times)%2 == 0 {
		med = (times[len(times)/2-1] + times[len(times)/2]) / 2
	}
	k64, k32 := gemm.Kernel()
	fmt.Fprintf(stdout, "kernel float64=%s float32=%s runs=%d min_ms=%.4f\n", k64, k32, nruns, times[0]*1e3)
	fmt.Fprintf(stdout, "gemm dtype=%s n=%d batch=%d threads=%d median_ms=%.4f gflops=%.2f\n",
		*dtype, *n, *batch, th, med*1e3, flops/med/1e9)
	return nil
}

// gemmRunner allocates batch random row-major n×n operands and returns a
// function that multiplies them once.
func gemmRunner[T gemm.Scalar](n, batch, threads int, gen func(*rand.Rand) T) func() error {
	r := rand.New(rand.NewPCG(1, 2))
	mk := func(fill bool) gemm.Matrix[T] {
		d := make([]T, batch*n*n)
		if fill {
			for i := range d {
				d[i] = gen(r)
			}
		}
		m := gemm.Matrix[T]{Data: d, RowStride: n, ColStride: 1}
		if batch > 1 {
			m.BatchStrides = []int{n * n}
		}
		return m
	}
	a, b, c := mk(true), mk(true), mk(false)
	var bs []int
	if batch > 1 {
		bs = []int{batch}
	}
	var one, zero T
	one++
	return func() error {
		return gemm.GemmThreads(threads, bs, n, n, n, one, a, b, zero, c)
	}
}
