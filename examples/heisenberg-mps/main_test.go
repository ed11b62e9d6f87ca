package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"math"
	"regexp"
	"strconv"
	"testing"

	"github.com/goferro/goferro/examples/internal/cli"
	"github.com/goferro/goferro/examples/internal/spinchain"
	"github.com/goferro/goferro/opencl"
	"github.com/goferro/goferro/tensor"
)

// denseState contracts the MPS x with bond dimensions dims into its 2^L
// amplitudes, in the basis of spinchain.Hamiltonian.
func denseState(x []float64, dims []int) []float64 {
	L := len(dims) - 1
	psi := make([]float64, 1<<L)
	for s := range psi {
		v := []float64{1}
		off := 0
		for i := range L {
			spin := s >> (L - 1 - i) & 1
			next := make([]float64, dims[i+1])
			for a := range dims[i] {
				for c := range dims[i+1] {
					next[c] += v[a] * x[off+(a*2+spin)*dims[i+1]+c]
				}
			}
			v = next
			off += dims[i] * 2 * dims[i+1]
		}
		psi[s] = v[0]
	}
	return psi
}

// rayleigh returns ψᵀHψ / ψᵀψ for the MPS x, with the dense Hamiltonian.
func rayleigh(x []float64, dims []int) float64 {
	psi := denseState(x, dims)
	n := len(psi)
	h := spinchain.Hamiltonian(len(dims) - 1).Data().([]float64)
	var num, den float64
	for r := range n {
		den += psi[r] * psi[r]
		for s := range n {
			num += psi[r] * h[r*n+s] * psi[s]
		}
	}
	return num / den
}

// The energy program and its VJP, run on the CPU engine, agree with the
// dense Rayleigh quotient and its central differences for a random MPS,
// and give the exact energies ∓(L−1)/4 of the Néel and the ferromagnetic
// product states.
func TestEnergyAndGradient(t *testing.T) {
	ctx := context.Background()
	eng, err := newEngines(ctx, "cpu")
	if err != nil {
		t.Fatal(err)
	}
	dims := bondDims(5, 3)
	ev, err := newEvaluator(ctx, eng.rt, dims)
	if err != nil {
		t.Fatal(err)
	}
	x := randomMPS(tensor.NewRNG(7), dims)
	grad := make([]float64, len(x))
	e, err := ev.eval(ctx, x, grad)
	if err != nil {
		t.Fatal(err)
	}
	if want := rayleigh(x, dims); math.Abs(e-want) > 1e-13 {
		t.Errorf("energy %.17g, dense Rayleigh quotient %.17g", e, want)
	}
	const h = 1e-6
	for k := range x {
		xp, xm := append([]float64(nil), x...), append([]float64(nil), x...)
		xp[k] += h
		xm[k] -= h
		want := (rayleigh(xp, dims) - rayleigh(xm, dims)) / (2 * h)
		if math.Abs(grad[k]-want) > 1e-7*(1+math.Abs(want)) {
			t.Errorf("gradient %d: %.10g, central difference %.10g", k, grad[k], want)
		}
	}

	const L = 6
	ev1, err := newEvaluator(ctx, eng.rt, bondDims(L, 1))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		up   func(i int) bool
		want float64
	}{
		{"Néel", func(i int) bool { return i%2 == 0 }, -(L - 1) / 4.0},
		{"ferromagnet", func(int) bool { return true }, (L - 1) / 4.0},
	} {
		x := make([]float64, 2*L)
		for i := range L {
			if c.up(i) {
				x[2*i] = 1
			} else {
				x[2*i+1] = 1
			}
		}
		if e, err := ev1.eval(ctx, x, nil); err != nil || e != c.want {
			t.Errorf("%s state: energy %v, %v; want %v", c.name, e, err, c.want)
		}
	}
}

// setups are the -engines values this machine can run: cpu+opencl only
// where an OpenCL device exists.
func setups(t *testing.T) []string {
	if _, err := opencl.Devices(); err != nil {
		t.Logf("cpu+opencl not tested: %v", err)
		return []string{"cpu", "cpu+fake"}
	}
	return engineSetups
}

// One evaluation gives the same energy and gradient on every setup, and a
// small chain (L = 6, χ = 8, where the MPS is exact) converges to the exact
// ground-state energy on every setup; cpu+fake runs on the fake device.
func TestGroundStateOnEngines(t *testing.T) {
	ctx := context.Background()
	dims := bondDims(6, 8)
	x := randomMPS(tensor.NewRNG(3), dims)
	var wantE float64
	var wantGrad []float64
	for _, setup := range setups(t) {
		eng, err := newEngines(ctx, setup)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := newEvaluator(ctx, eng.rt, dims, eng.opts...)
		if err != nil {
			eng.close()
			t.Fatal(err)
		}
		grad := make([]float64, len(x))
		e, err := ev.eval(ctx, x, grad)
		eng.close()
		if err != nil {
			t.Fatal(err)
		}
		if eng.fake != nil && eng.fake.Stats().Executions == 0 {
			t.Errorf("%s: nothing ran on the fake device", setup)
		}
		if wantGrad == nil {
			wantE, wantGrad = e, grad
			continue
		}
		if math.Abs(e-wantE) > 1e-14 {
			t.Errorf("%s: energy %.17g, cpu %.17g", setup, e, wantE)
		}
		diff := 0.0
		for k := range grad {
			diff = max(diff, math.Abs(grad[k]-wantGrad[k]))
		}
		t.Logf("%s: energy %.3g and gradient %.3g from cpu's", setup, math.Abs(e-wantE), diff)
		if diff > 1e-13 {
			t.Errorf("%s: gradient %.3g from cpu's", setup, diff)
		}
	}

	var cpuEnergy float64
	for _, setup := range setups(t) {
		r, err := solve(ctx, config{sites: 6, chi: 8, engines: setup, seed: 1, maxIter: 2000}, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %+v", setup, *r)
		if r.relErr() > 1e-6 {
			t.Errorf("%s: energy %.15g, exact %.15g: relative error %.3g", setup, r.energy, r.exact, r.relErr())
		}
		if setup == "cpu" {
			cpuEnergy = r.energy
		} else if math.Abs(r.energy-cpuEnergy) > 1e-10*math.Abs(r.exact) {
			t.Errorf("%s: energy %.15g, cpu %.15g", setup, r.energy, cpuEnergy)
		}
	}
}

// The command prints the key=value line, and reports bad flags as usage
// errors and a bond dimension too small for the tolerance as
// errNotConverged.
func TestRun(t *testing.T) {
	ctx := context.Background()
	var out bytes.Buffer
	if err := run(ctx, []string{"-L", "4", "-chi", "4"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`energy=(\S+) exact=(\S+) rel_err=(\S+)\n$`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no energy=… exact=… rel_err=… line in\n%s", out.String())
	}
	exact, err := strconv.ParseFloat(m[2], 64)
	if err != nil || math.Abs(exact-(-0.75-math.Sqrt(3)/2)) > 1e-14 {
		t.Errorf("exact=%s", m[2])
	}
	for _, c := range []struct {
		args []string
		want error
	}{
		{[]string{"-L", "1"}, cli.ErrUsage},
		{[]string{"-L", "13"}, cli.ErrUsage},
		{[]string{"-chi", "0"}, cli.ErrUsage},
		{[]string{"-engines", "gpu"}, cli.ErrUsage},
		{[]string{"-tol", "NaN"}, cli.ErrUsage},
		{[]string{"-maxiter", "0"}, cli.ErrUsage},
		{[]string{"-L"}, cli.ErrUsage},
		{[]string{"extra"}, cli.ErrUsage},
		{[]string{"-h"}, flag.ErrHelp},
		{[]string{"-L", "6", "-chi", "2"}, errNotConverged},
	} {
		if err := run(ctx, c.args, io.Discard, io.Discard); !errors.Is(err, c.want) {
			t.Errorf("%q: error %v, want %v", c.args, err, c.want)
		}
	}
}

// cancelAfter is a context canceled once its evaluator has run n times.
type cancelAfter struct {
	context.Context
	ev *evaluator
	n  int
}

func (c *cancelAfter) Err() error {
	if c.ev.runs >= c.n {
		return context.Canceled
	}
	return nil
}

// A context canceled during the optimisation stops it with its error.
func TestMinimizeCanceled(t *testing.T) {
	eng, err := newEngines(context.Background(), "cpu")
	if err != nil {
		t.Fatal(err)
	}
	dims := bondDims(4, 2)
	ev, err := newEvaluator(context.Background(), eng.rt, dims)
	if err != nil {
		t.Fatal(err)
	}
	ctx := &cancelAfter{Context: context.Background(), ev: ev, n: 5}
	if _, _, err := minimize(ctx, ev, randomMPS(tensor.NewRNG(1), dims), 100); !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
	if ev.runs != 5 {
		t.Errorf("%d evaluations, want 5", ev.runs)
	}
}
