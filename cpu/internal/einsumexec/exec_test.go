package einsumexec

import (
	"context"
	"runtime"
	"slices"
	"testing"

	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/tensor"
)

// TestWorkspaceKeptThroughGC runs a chain of two n×n products at
// GOMAXPROCS=2 with a garbage collection before each run, as goferro einsum
// --instance does: every run must allocate what a run without collections
// does (the result), not a new workspace, small (n = 64) or large (n = 512:
// a 2 MiB intermediate). With a sync.Pool alone, a run that found itself on
// the other processor made one, and the two 64³ products took 25–40 µs
// instead of 12; large workspaces, pooled loosely until the collector
// dropped them, were faulted in afresh run after run (gm_queen5_5_3 at
// GOMAXPROCS=2: 1.4–5.5 s a run instead of 0.6).
func TestWorkspaceKeptThroughGC(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	for _, n := range []int{64, 512} {
		p, err := einsum.NewPlan("ij,jk,kl->il", [][]int{{n, n}, {n, n}, {n, n}})
		if err != nil {
			t.Fatal(err)
		}
		pr, err := Lower(p, false)
		if err != nil {
			t.Fatal(err)
		}
		rng := tensor.NewRNG(1)
		ops := make([]*tensor.Tensor, 3)
		for i := range ops {
			ops[i] = tensor.Must(tensor.Rand(rng, tensor.Float64, n, n))
		}
		var ms runtime.MemStats
		run := func() (bytes uint64) {
			runtime.ReadMemStats(&ms)
			b := ms.TotalAlloc
			if _, err := pr.Execute(context.Background(), 1, ops...); err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&ms)
			return ms.TotalAlloc - b
		}
		run()
		steady := run()
		// A new workspace holds at least the n×n intermediate, so a run
		// that made one allocated half of that more than a run without
		// collections. Smaller differences are the runtime's own (a
		// thread started under load allocates its m, about 1 KiB): CI's
		// parallel go test saw 12 such allocations in 20 runs.
		slack := uint64(n*n*8) / 2
		const runs = 20
		var over []uint64
		for range runs {
			runtime.GC()
			if b := run(); b > steady+slack {
				over = append(over, b)
			}
		}
		if len(over) > 0 {
			t.Errorf("n = %d: %d of %d runs after garbage collections allocated more than %d bytes (a run without them: %d): %v",
				n, len(over), runs, steady+slack, steady, over)
		}
	}
}

// TestExecuteInto: ExecuteInto over an earlier result of the program, row-major or
// in the axis order its last step writes (anyLayout), gives Execute's
// result in that same buffer; a tensor of another dtype, shape or layout,
// or nil, is left alone and a new result returned.
func TestExecuteInto(t *testing.T) {
	rng := tensor.NewRNG(3)
	for _, c := range []struct {
		eq     string
		shapes [][]int
	}{
		{"ij,jk,kl->il", [][]int{{5, 6}, {6, 7}, {7, 3}}},
		{"abc,cd->dba", [][]int{{2, 3, 4}, {4, 5}}},
		{"ij,jk->", [][]int{{3, 4}, {4, 2}}},
		{"ij,jk->ik", [][]int{{3, 0}, {0, 2}}},
	} {
		p, err := einsum.NewPlan(c.eq, c.shapes)
		if err != nil {
			t.Fatal(err)
		}
		for _, anyLayout := range []bool{false, true} {
			pr, err := Lower(p, anyLayout)
			if err != nil {
				t.Fatal(err)
			}
			for _, dt := range []tensor.DType{tensor.Float64, tensor.Complex64, tensor.Int32} {
				ops := func() []*tensor.Tensor {
					ops := make([]*tensor.Tensor, len(c.shapes))
					for i, sh := range c.shapes {
						ops[i] = tensor.Must(tensor.Rand(rng, dt, sh...))
					}
					return ops
				}
				dst, err := pr.Execute(context.Background(), 1, ops()...)
				if err != nil {
					t.Fatal(err)
				}
				second := ops()
				want, err := pr.Execute(context.Background(), 1, second...)
				if err != nil {
					t.Fatal(err)
				}
				got, err := pr.ExecuteInto(context.Background(), 1, dst, second...)
				if err != nil {
					t.Fatal(err)
				}
				if got != dst {
					t.Errorf("%s %v anyLayout %v: ExecuteInto made a new tensor", c.eq, dt, anyLayout)
				}
				if err := tensor.CheckClose(got, want, 0, 0); err != nil {
					t.Errorf("%s %v anyLayout %v: %v", c.eq, dt, anyLayout, err)
				}
				// Not a result of pr: a new tensor, the given one untouched.
				other := tensor.Must(tensor.Zeros(tensor.Float32, p.OutputShape...))
				for _, d := range []*tensor.Tensor{nil, other} {
					got, err := pr.ExecuteInto(context.Background(), 1, d, second...)
					if err != nil {
						t.Fatal(err)
					}
					if got == d {
						t.Errorf("%s %v: ExecuteInto returned the float32 tensor", c.eq, dt)
					}
					if err := tensor.CheckClose(got, want, 0, 0); err != nil {
						t.Errorf("%s %v into %v: %v", c.eq, dt, d, err)
					}
				}
				if s, _ := tensor.Values[float32](other); slices.ContainsFunc(s, func(x float32) bool { return x != 0 }) {
					t.Errorf("%s %v: ExecuteInto wrote into a float32 tensor", c.eq, dt)
				}
			}
		}
	}
}
