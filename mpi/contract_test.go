package mpi_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/einsum/instance"
	"github.com/goferro/goferro/mpi"
	"github.com/goferro/goferro/tensor"
)

// contractCases are small contractions under memory limits that slice
// them: slices summed, written into output blocks, or both.
var contractCases = []struct {
	eq     string
	shapes [][]int
	limit  float64
}{
	{"ij,jk,kl->il", [][]int{{6, 8}, {8, 10}, {10, 4}}, 12},
	{"abc,cde,ea->bd", [][]int{{4, 5, 6}, {6, 3, 4}, {4, 4}}, 10},
	{"ab,bc,cd,da->", [][]int{{5, 6}, {6, 7}, {7, 8}, {8, 5}}, 20},
}

// testContract: Contract on 2 processes, each running its share of the
// slices, equals the single-process contraction, for every dtype; so does
// a benchmark instance when shared/einsum-instances is there.
func testContract(t *testing.T, c *mpi.Comm) {
	ctx := context.Background()
	for _, k := range contractCases {
		for _, dt := range tensor.DTypes {
			ops := make([]*tensor.Tensor, len(k.shapes))
			for i, s := range k.shapes {
				ops[i] = gen(t, dt, 100+i, s...) // the same on every process
			}
			got, err := mpi.Contract(ctx, c, k.eq, ops, mpi.WithPlanOptions(einsum.WithMemoryLimit(k.limit)), mpi.WithThreads(1))
			if err != nil {
				t.Fatalf("%s %v: %v", k.eq, dt, err)
			}
			want, err := cpu.ContractContext(ctx, k.eq, ops)
			if err != nil {
				t.Fatal(err)
			}
			if err := tensor.CheckClose(got, want, 1e-5, 1e-5); err != nil {
				t.Errorf("%s %v: %v", k.eq, dt, err)
			}
		}
		p, err := einsum.NewPlan(k.eq, k.shapes, einsum.WithMemoryLimit(k.limit))
		if err != nil || p.Slicing == nil || p.Slicing.Count < c.Size() {
			t.Errorf("%s under %v: plan %v, error %v: not sliced for %d processes", k.eq, k.limit, p.Slicing, err, c.Size())
		}
	}
	in, err := instance.Load(filepath.Join("..", "..", "shared", "einsum-instances", "lm_batch_likelihood_brackets_4_4d.json"))
	if err != nil {
		t.Logf("no instance: %v", err)
		return
	}
	ops, err := in.Inputs(1)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := einsum.NewPlan(in.Equation(), in.Shapes, einsum.WithPath(in.Paths["opt_flops"].Path))
	if err != nil {
		t.Fatal(err)
	}
	want, err := mustExecute(t, whole, ops)
	if err != nil {
		t.Fatal(err)
	}
	opts := []einsum.Option{einsum.WithPath(in.Paths["opt_flops"].Path), einsum.WithMemoryLimit(whole.LargestIntermediate / 8)}
	got, err := mpi.Contract(ctx, c, in.Equation(), ops, mpi.WithPlanOptions(opts...))
	if err != nil {
		t.Fatal(err)
	}
	if err := tensor.CheckClose(got, want, 1e-10, 1e-12); err != nil {
		t.Errorf("%s: %v", in.Name, err)
	}
}

func mustExecute(t *testing.T, p *einsum.Plan, ops []*tensor.Tensor) (*tensor.Tensor, error) {
	x, err := cpu.NewContraction(p)
	if err != nil {
		t.Fatal(err)
	}
	return x.Execute(context.Background(), ops...)
}

// testContractFailure: a process that fails (a nil operand) gives its own
// error there and ErrRemote naming it on the other; processes whose
// operands differ both get ErrMismatch; and the communicator still works.
func testContractFailure(t *testing.T, c *mpi.Comm) {
	ctx := context.Background()
	k := contractCases[0]
	ops := make([]*tensor.Tensor, len(k.shapes))
	for i, s := range k.shapes {
		ops[i] = gen(t, tensor.Float64, 100+i, s...)
	}
	opts := mpi.WithPlanOptions(einsum.WithMemoryLimit(k.limit))
	bad := append([]*tensor.Tensor(nil), ops...)
	if c.Rank() == 1 {
		bad[2] = nil
	}
	_, err := mpi.Contract(ctx, c, k.eq, bad, opts)
	var e *mpi.Error
	switch c.Rank() {
	case 1:
		if !errors.Is(err, einsum.ErrOperands) {
			t.Errorf("nil operand: %v, want einsum.ErrOperands", err)
		}
	default:
		if !errors.Is(err, mpi.ErrRemote) || !errors.As(err, &e) || e.Rank != 1 {
			t.Errorf("process 1 failed: %v, want ErrRemote of rank 1", err)
		}
	}
	other := append([]*tensor.Tensor(nil), ops...)
	other[0] = gen(t, tensor.Float64, 100+c.Rank(), k.shapes[0]...)
	if _, err := mpi.Contract(ctx, c, k.eq, other, opts); !errors.Is(err, mpi.ErrMismatch) {
		t.Errorf("different operands: %v, want ErrMismatch", err)
	}
	if _, err := mpi.Contract(ctx, c, k.eq, ops, opts); err != nil {
		t.Errorf("after the failures: %v", err)
	}
}

// testBcastPlan: every process gets process 0's sliced plan; a nil plan
// on process 0 is ErrArgument there and ErrRemote on the others.
func testBcastPlan(t *testing.T, c *mpi.Comm) {
	ctx := context.Background()
	k := contractCases[1]
	want, err := einsum.NewPlan(k.eq, k.shapes, einsum.WithMemoryLimit(k.limit))
	if err != nil {
		t.Fatal(err)
	}
	var mine *einsum.Plan
	if c.Rank() == 0 {
		mine = want
	}
	got, err := mpi.BcastPlan(ctx, c, mine, 0)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got plan %+v, %v; want %+v", got, err, want)
	}
	_, err = mpi.BcastPlan(ctx, c, nil, 0)
	if c.Rank() == 0 && !errors.Is(err, mpi.ErrArgument) || c.Rank() != 0 && !errors.Is(err, mpi.ErrRemote) {
		t.Errorf("nil plan on process 0: %v", err)
	}
}

// TestPlanTravels: a sliced plan survives the JSON that Contract sends
// from process 0 to the others.
func TestPlanTravels(t *testing.T) {
	for _, k := range contractCases {
		p, err := einsum.NewPlan(k.eq, k.shapes, einsum.WithMemoryLimit(k.limit))
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var q einsum.Plan
		if err := json.Unmarshal(b, &q); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(p, &q) {
			t.Errorf("%s: plan %+v came back as %+v", k.eq, p, &q)
		}
	}
}

// TestShare: the shares of the slices cover them once, in ranges whose
// lengths differ by at most one.
func TestShare(t *testing.T) {
	for count := range 20 {
		for size := 1; size <= 5; size++ {
			next := 0
			for rank := range size {
				lo, hi := mpi.Share(count, size, rank)
				if lo != next || hi-lo < count/size || hi-lo > count/size+1 {
					t.Fatalf("%d slices on %d: rank %d gets %d..%d", count, size, rank, lo, hi)
				}
				next = hi
			}
			if next != count {
				t.Fatalf("%d slices on %d: %d shared", count, size, next)
			}
		}
	}
}
