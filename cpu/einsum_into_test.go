package cpu_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/tensor"
)

// TestContractionExecuteInto: ExecuteInto reuses a result of its own
// contraction (the same tensor comes back, holding the new result, equal
// to a naive evaluation), returns a new tensor where dst cannot hold the
// result, and a loop of it allocates far less than one result per run.
func TestContractionExecuteInto(t *testing.T) {
	ctx := context.Background()
	rng := tensor.NewRNG(11)
	const eq = "bj,bk->bjk" // an outer product per batch: all memory traffic
	shapes := [][]int{{64, 128}, {64, 128}}
	ops := func() []*tensor.Tensor {
		return []*tensor.Tensor{tensor.Must(tensor.Rand(rng, tensor.Float64, shapes[0]...)), tensor.Must(tensor.Rand(rng, tensor.Float64, shapes[1]...))}
	}
	p, err := einsum.NewPlan(eq, shapes)
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range [][]cpu.ContractionOption{{cpu.WithThreads(1)}, {cpu.WithThreads(2), cpu.WithAnyOutputLayout()}} {
		c := mustContraction(t, p, opts...)
		out, err := c.ExecuteInto(ctx, nil, ops()...)
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			next := ops()
			got, err := c.ExecuteInto(ctx, out, next...)
			if err != nil {
				t.Fatal(err)
			}
			if got != out {
				t.Fatal("ExecuteInto did not reuse a result of its own contraction")
			}
			if err := tensor.CheckClose(got, naiveEinsum(t, eq, next), 1e-12, 1e-12); err != nil {
				t.Fatal(err)
			}
		}
		// dst of another shape: a new, correct tensor, dst untouched.
		other := tensor.Must(tensor.Zeros(tensor.Float64, 3))
		next := ops()
		got, err := c.ExecuteInto(ctx, other, next...)
		if err != nil {
			t.Fatal(err)
		}
		if got == other || real(other.Complex128Values()[0]) != 0 {
			t.Fatal("ExecuteInto wrote into a tensor that cannot hold its result")
		}
		if err := tensor.CheckClose(got, naiveEinsum(t, eq, next), 1e-12, 1e-12); err != nil {
			t.Fatal(err)
		}
		// Allocations: a loop reusing its result allocates well under one
		// result (64·128·128 float64, 8 MiB) per run.
		next = ops()
		const runs = 8
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range runs {
			if out, err = c.ExecuteInto(ctx, out, next...); err != nil {
				t.Fatal(err)
			}
		}
		runtime.ReadMemStats(&after)
		if perRun := (after.TotalAlloc - before.TotalAlloc) / runs; perRun > 64<<10 {
			t.Errorf("ExecuteInto allocated %d bytes a run, reusing an 8 MiB result", perRun)
		}
	}
}

// TestContractionExecuteIntoSliced: a sliced plan accumulates aside, so
// ExecuteInto returns a new tensor with the right result.
func TestContractionExecuteIntoSliced(t *testing.T) {
	rng := tensor.NewRNG(12)
	const eq = "ij,jk,kl->il"
	shapes := [][]int{{16, 32}, {32, 32}, {32, 16}}
	ops := make([]*tensor.Tensor, len(shapes))
	for i, sh := range shapes {
		ops[i] = tensor.Must(tensor.Rand(rng, tensor.Float64, sh...))
	}
	p, err := einsum.NewPlan(eq, shapes, einsum.WithMemoryLimit(256))
	if err != nil {
		t.Fatal(err)
	}
	if p.Slicing == nil && p.Segments == nil {
		t.Fatal("plan not sliced under 256 elements")
	}
	c := mustContraction(t, p)
	dst := tensor.Must(tensor.Zeros(tensor.Float64, 16, 16))
	got, err := c.ExecuteInto(context.Background(), dst, ops...)
	if err != nil {
		t.Fatal(err)
	}
	if err := tensor.CheckClose(got, naiveEinsum(t, eq, ops), 1e-12, 1e-12); err != nil {
		t.Fatal(err)
	}
}
