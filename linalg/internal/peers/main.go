// Command peers times goferro's linalg side by side with numpy.linalg (in
// a /usr/bin/python3 subprocess) and gonum, and prints a markdown table of
// medians and ratios for bench/linalg-report.md. It is its own module so
// that gonum stays out of goferro's go.mod.
//
//	cd linalg/internal/peers && go run . -n 256,1024 -threads 1,2 -reps 3
//
// Each repetition runs goferro, numpy and gonum in turn, so that the load
// of a shared machine falls on all three alike, and times one call of each
// after an untimed one (numpy's runs in a fresh process, whose first call
// also starts OpenBLAS's threads: 6.6 against 3.4 ms for QR at n = 256,
// 225 against 118 ms at 1024, on the AMD EPYC of bench/linalg-report.md). Times are wall
// clock and process CPU time (user+system; numpy's own process for numpy,
// its BLAS threads included); numpy's BLAS threads are set with
// OPENBLAS_NUM_THREADS, goferro's with gemm.SetThreads and GOMAXPROCS,
// gonum's with GOMAXPROCS (gonum's Dgemm runs its 64×64 blocks on up to
// GOMAXPROCS goroutines; its other loops run on one). Each Go call starts
// after a runtime.GC, so that neither Go side pays for collecting the
// other's garbage.
//
// Every side computes the same factors from the same n×n input, its own
// copies and layout changes included: QR forms Q and R (numpy
// np.linalg.qr: geqrf + orgqr; gonum QR.Factorize, which also estimates
// the condition number, + QTo + RTo; goferro QR, Reduced), SVD the thin
// U, S and Vᴴ, eigh the eigenvalues and eigenvectors.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/goferro/goferro/cpu/gemm"
	"github.com/goferro/goferro/linalg"
	"github.com/goferro/goferro/tensor"
	"gonum.org/v1/gonum/mat"
)

// numpyScript times one call of op on a seeded n×n input, after one
// untimed call, and prints {"wall": s, "cpu": s}.
const numpyScript = `
import sys, time, json, numpy as np
op, dt, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = np.random.default_rng(1)
a = rng.standard_normal((n, n))
if dt == 'complex128':
    a = a + 1j * rng.standard_normal((n, n))
h = (a + a.conj().T) / 2
f = {'qr': lambda: np.linalg.qr(a), 'svd': lambda: np.linalg.svd(a, full_matrices=False),
     'eigh': lambda: np.linalg.eigh(h)}[op]
f()  # warm-up: the first call in a fresh process also starts OpenBLAS's threads and faults its buffers in
w, c = time.perf_counter(), time.process_time()
f()
print(json.dumps({'wall': time.perf_counter() - w, 'cpu': time.process_time() - c}))
`

type sample struct{ wall, cpu float64 }

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// timeIt times a call of f after an untimed one and a garbage collection.
func timeIt(f func() error) (sample, error) {
	if err := f(); err != nil {
		return sample{}, err
	}
	runtime.GC()
	w, c := time.Now(), cpuSeconds()
	err := f()
	return sample{time.Since(w).Seconds(), cpuSeconds() - c}, err
}

func ints(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(f)
		if err != nil {
			log.Fatalf("bad list %q: %v", s, err)
		}
		out = append(out, v)
	}
	return out
}

func main() {
	var (
		ops     = flag.String("ops", "qr,svd,eigh", "operations")
		dtypes  = flag.String("dtypes", "float64,complex128", "dtypes")
		sizes   = flag.String("n", "256,1024", "matrix sizes")
		threads = flag.String("threads", "1,2", "thread counts")
		reps    = flag.Int("reps", 3, "repetitions (medians are reported)")
		python  = flag.String("python", "/usr/bin/python3", "python with numpy")
	)
	flag.Parse()
	fmt.Println("| op | dtype | n | threads | goferro wall ms | numpy wall ms | gonum wall ms | goferro cpu ms | numpy cpu ms | gonum cpu ms | goferro/numpy wall | goferro/numpy cpu | gonum/goferro wall | gonum/goferro cpu |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, op := range strings.Split(*ops, ",") {
		for _, dts := range strings.Split(*dtypes, ",") {
			dt, err := tensor.ParseDType(dts)
			if err != nil {
				log.Fatal(err)
			}
			for _, n := range ints(*sizes) {
				for _, th := range ints(*threads) {
					row(op, dt, n, th, *reps, *python)
				}
			}
		}
	}
}

func row(op string, dt tensor.DType, n, threads, reps int, python string) {
	runtime.GOMAXPROCS(threads)
	gemm.SetThreads(threads)
	x, g := inputs(op, dt, n)
	var ours, np, gn []sample
	for range reps {
		s, err := timeIt(func() error { return goferro(op, x) })
		if err != nil {
			log.Fatal(err)
		}
		ours = append(ours, s)
		np = append(np, numpy(python, op, dt, n, threads))
		if g != nil {
			s, _ = timeIt(func() error { gonum(op, g); return nil })
			gn = append(gn, s)
		}
	}
	o, p, q := median(ours), median(np), median(gn)
	gonumCell := func(v float64) string {
		if g == nil {
			return "—"
		}
		return fmt.Sprintf("%.1f", v*1e3)
	}
	wallRatio, cpuRatio := "—", "—"
	if g != nil {
		wallRatio, cpuRatio = fmt.Sprintf("%.2f", q.wall/o.wall), fmt.Sprintf("%.2f", q.cpu/o.cpu)
	}
	fmt.Printf("| %s | %v | %d | %d | %.1f | %.1f | %s | %.1f | %.1f | %s | %.2f | %.2f | %s | %s |\n",
		op, dt, n, threads, o.wall*1e3, p.wall*1e3, gonumCell(q.wall), o.cpu*1e3, p.cpu*1e3, gonumCell(q.cpu),
		o.wall/p.wall, o.cpu/p.cpu, wallRatio, cpuRatio)
}

func median(s []sample) sample {
	if len(s) == 0 {
		return sample{}
	}
	w, c := make([]float64, len(s)), make([]float64, len(s))
	for i, x := range s {
		w[i], c[i] = x.wall, x.cpu
	}
	slices.Sort(w)
	slices.Sort(c)
	return sample{w[len(w)/2], c[len(c)/2]}
}

// inputs returns a seeded Gaussian n×n input (Hermitian for eigh) as a
// tensor, and for float64 the same as a gonum matrix.
func inputs(op string, dt tensor.DType, n int) (*tensor.Tensor, mat.Matrix) {
	rng := rand.New(rand.NewPCG(1, 2))
	re, im := make([]float64, n*n), make([]float64, n*n)
	for i := range re {
		re[i], im[i] = rng.NormFloat64(), rng.NormFloat64()
	}
	if op == "eigh" {
		for i := range n {
			for j := range i {
				re[i*n+j] = (re[i*n+j] + re[j*n+i]) / 2
				re[j*n+i] = re[i*n+j]
				im[i*n+j] = (im[i*n+j] - im[j*n+i]) / 2
				im[j*n+i] = -im[i*n+j]
			}
			im[i*n+i] = 0
		}
	}
	if dt == tensor.Complex128 {
		c := make([]complex128, n*n)
		for i := range c {
			c[i] = complex(re[i], im[i])
		}
		t, err := tensor.New(c, n, n)
		if err != nil {
			log.Fatal(err)
		}
		return t, nil
	}
	t, err := tensor.New(slices.Clone(re), n, n)
	if err != nil {
		log.Fatal(err)
	}
	if op == "eigh" {
		return t, mat.NewSymDense(n, re)
	}
	return t, mat.NewDense(n, n, re)
}

func goferro(op string, x *tensor.Tensor) error {
	var err error
	switch op {
	case "qr":
		_, _, err = linalg.QR(x, linalg.Reduced)
	case "svd":
		_, err = linalg.SVD(x, linalg.SVDOptions{})
	case "eigh":
		_, _, err = linalg.Eigh(x)
	default:
		err = fmt.Errorf("unknown op %q", op)
	}
	return err
}

// gonum runs the same factorisation, forming the same factors.
func gonum(op string, a mat.Matrix) {
	switch op {
	case "qr":
		var qr mat.QR
		var q, r mat.Dense
		qr.Factorize(a)
		qr.QTo(&q)
		qr.RTo(&r)
	case "svd":
		var svd mat.SVD
		var u, v mat.Dense
		if !svd.Factorize(a, mat.SVDThin) {
			log.Fatal("gonum SVD failed")
		}
		svd.UTo(&u)
		svd.VTo(&v)
	case "eigh":
		var es mat.EigenSym
		var v mat.Dense
		if !es.Factorize(a.(mat.Symmetric), true) {
			log.Fatal("gonum EigenSym failed")
		}
		es.VectorsTo(&v)
	}
}

func numpy(python, op string, dt tensor.DType, n, threads int) sample {
	cmd := exec.Command(python, "-c", numpyScript, op, dt.String(), strconv.Itoa(n))
	cmd.Env = append(os.Environ(), fmt.Sprintf("OPENBLAS_NUM_THREADS=%d", threads))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		log.Fatalf("numpy: %v", err)
	}
	var s struct{ Wall, CPU float64 }
	if err := json.Unmarshal(out.Bytes(), &s); err != nil {
		log.Fatalf("numpy output %q: %v", out.String(), err)
	}
	return sample{s.Wall, s.CPU}
}
