package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/goferro/goferro/cpu/gemm"
	"github.com/goferro/goferro/linalg"
	"github.com/goferro/goferro/tensor"
)

func init() { benchTargets["linalg"] = runBenchLinalg }

const benchLinalgUsage = `usage: goferro bench linalg [-op qr|svd|eigh] [-n N] [-dtype D] [-threads T] [-runs R]
Times one factorisation of a seeded random n×n matrix with goferro's linalg
package (the reduced QR, the full SVD with vectors, or eigh of the Hermitian
matrix whose lower triangle is the random one) and ends with one line
"linalg op=O dtype=D n=N threads=T runs=R median_ms=X min_ms=Y".`

func runBenchLinalg(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlagSet("bench linalg", benchLinalgUsage)
	op := fs.String("op", "svd", "factorisation: qr, svd or eigh")
	n := fs.Int("n", 256, "matrix size (n×n)")
	dtype := fs.String("dtype", "float64", "element type: float64, float32, complex128 or complex64")
	threads := fs.Int("threads", 0, "goroutines (0: GOMAXPROCS)")
	runs := fs.Int("runs", 0, "timed runs after one warm-up (0: enough for about a second, at least 3)")
	seed := fs.Uint64("seed", 1, "seed of the random matrix")
	var budget budgetFlag
	fs.Var(&budget, "memory-limit", "memory budget of the matrix, its factors and workspace (512MiB, 8GB, none; default: 3/4 of what the machine still has)")
	pos, err := parseArgs(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q (see goferro bench linalg -h)", pos[0])
	}
	if *n < 1 || *threads < 0 || *runs < 0 {
		return usagef("-n must be positive, -threads and -runs not negative")
	}
	dt, err := tensor.ParseDType(*dtype)
	if err != nil || !dt.IsFloat() && !dt.IsComplex() {
		return usagef("unknown -dtype %q (float64, float32, complex128, complex64)", *dtype)
	}
	var factorise func(*tensor.Tensor) error
	switch *op {
	case "qr":
		factorise = func(a *tensor.Tensor) error { _, _, err := linalg.QR(a, linalg.Reduced); return err }
	case "svd":
		factorise = func(a *tensor.Tensor) error { _, err := linalg.SVD(a, linalg.SVDOptions{}); return err }
	case "eigh":
		factorise = func(a *tensor.Tensor) error { _, _, err := linalg.Eigh(a); return err }
	default:
		return usagef("unknown -op %q (want qr, svd or eigh)", *op)
	}
	// The matrix, its column-major copy, two square factors and the
	// solver's workspace: about six n×n matrices.
	if err := fitsBudget("bench linalg", 6*float64(*n)*float64(*n)*float64(dt.Size()), budget.get()); err != nil {
		return err
	}
	if *threads > 0 {
		gemm.SetThreads(*threads)
	}
	a, err := tensor.Rand(tensor.NewRNG(*seed), dt, *n, *n)
	if err != nil {
		return err
	}
	// Warm up (workspaces, worker goroutines, caches) and size the runs.
	start := time.Now()
	if err := factorise(a); err != nil {
		return err
	}
	nruns := *runs
	if nruns == 0 {
		nruns = min(max(int(1/max(time.Since(start).Seconds(), 1e-6)), 3), 1000)
	}
	times := make([]float64, 0, nruns)
	for range nruns {
		if err := ctx.Err(); err != nil {
			return err
		}
		t := time.Now()
		if err := factorise(a); err != nil {
			return err
		}
		times = append(times, time.Since(t).Seconds())
	}
	med := median(times) // sorts times
	_, err = fmt.Fprintf(stdout, "linalg op=%s dtype=%s n=%d threads=%d runs=%d median_ms=%.4f min_ms=%.4f\n",
		*op, dt, *n, gemm.Threads(), nruns, med*1e3, times[0]*1e3)
	return err
}
