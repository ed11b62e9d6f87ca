package einsumexec

import (
	"context"
	"runtime"
	"testing"

	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/tensor"
)

// TestWorkspaceKeptThroughGC runs a chain of two 64×64 products at
// GOMAXPROCS=2 with a garbage collection before each run, as goferro einsum
// --instance does: every run must allocate what a run without collections
// does (the result), not a new workspace. With a sync.Pool alone, a run
// that found itself on the other processor made one, and the two products
// took 25–40 µs instead of 12.
func TestWorkspaceKeptThroughGC(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	p, err := einsum.NewPlan("ij,jk,kl->il", [][]int{{64, 64}, {64, 64}, {64, 64}})
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
		ops[i] = tensor.Must(tensor.Rand(rng, tensor.Float64, 64, 64))
	}
	var ms runtime.MemStats
	run := func() uint64 {
		runtime.ReadMemStats(&ms)
		before := ms.Mallocs
		if _, err := pr.Execute(context.Background(), 1, ops...); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&ms)
		return ms.Mallocs - before
	}
	run()
	steady := run()
	var total uint64
	const runs = 40
	for range runs {
		runtime.GC()
		total += run()
	}
	if total > runs*steady+runs/2 { // slack for the runtime's own allocations; a new workspace is 4 or more
		t.Fatalf("%d runs after garbage collections allocated %d times, %d a run without them", runs, total, steady)
	}
}
