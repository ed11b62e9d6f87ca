package mpi_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goferro/goferro/mpi"
	"github.com/goferro/goferro/tensor"
)

// TestComm runs the communicator tests on 2 processes, under each MPI
// implementation installed.
func TestComm(t *testing.T) {
	c := world(t, "comm")
	if c == nil {
		underMPI(t, 2, "TestComm", "comm", 2*time.Minute, mustPass)
		return
	}
	t.Logf("rank %d of %d, %s", c.Rank(), c.Size(), c.Library())
	t.Run("Allreduce", func(t *testing.T) { testAllreduce(t, c) })
	t.Run("Bcast", func(t *testing.T) { testBcast(t, c) })
	t.Run("SendRecv", func(t *testing.T) { testSendRecv(t, c) })
	t.Run("Chunks", func(t *testing.T) {
		defer mpi.SetMaxCount(3)()
		testAllreduce(t, c)
		testSendRecv(t, c)
	})
	t.Run("Lengths", func(t *testing.T) { testLengths(t, c) })
	t.Run("RecvTimeout", func(t *testing.T) { testRecvTimeout(t, c) })
	t.Run("BcastPlan", func(t *testing.T) { testBcastPlan(t, c) })
	t.Run("Contract", func(t *testing.T) { testContract(t, c) })
	t.Run("ContractFailure", func(t *testing.T) { testContractFailure(t, c) })
	if err := c.Finalize(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := c.Barrier(context.Background()); !errors.Is(err, mpi.ErrUnavailable) {
		t.Errorf("barrier after Finalize: %v, want ErrUnavailable", err)
	}
	if _, err := mpi.Init(context.Background()); !errors.Is(err, mpi.ErrUnavailable) {
		t.Errorf("Init after Finalize: %v, want ErrUnavailable", err)
	}
}

// gen returns process rank's test tensor of dtype dt: values that sum
// exactly (quarters, small integers, sparse trues), the same on every
// process that asks for the same rank.
func gen(t *testing.T, dt tensor.DType, rank int, shape ...int) *tensor.Tensor {
	t.Helper()
	r := rand.New(rand.NewPCG(uint64(rank)+1, uint64(dt)))
	x, err := tensor.Zeros(dt, shape...)
	if err != nil {
		t.Fatal(err)
	}
	for i := range x.Len() {
		v := complex(float64(r.IntN(17)-8)/4, 0)
		switch {
		case dt == tensor.Bool:
			v = 0
			if r.IntN(3) == 0 {
				v = 1
			}
		case dt.IsInt():
			v = complex(float64(r.IntN(2001)-1000), 0)
		case dt.IsComplex():
			v += complex(0, float64(r.IntN(17)-8)/4)
		}
		if err := x.SetComplex128(v, tensor.Unravel(i, shape)...); err != nil {
			t.Fatal(err)
		}
	}
	return x
}

// reduce is the single-process reference of Allreduce: element i of the
// reduction op of gen(dt, r, shape) over the ranks r of size.
func reduce(t *testing.T, dt tensor.DType, op mpi.Op, size int, shape ...int) []complex128 {
	var out []complex128
	for r := range size {
		v := gen(t, dt, r, shape...).Complex128Values()
		if out == nil {
			out = v
			continue
		}
		for i, x := range v {
			y := out[i]
			switch {
			case dt == tensor.Bool && op == mpi.Min:
				out[i] = boolC(y != 0 && x != 0)
			case dt == tensor.Bool:
				out[i] = boolC(y != 0 || x != 0)
			case op == mpi.Sum:
				out[i] = y + x
			case op == mpi.Max:
				out[i] = complex(max(real(y), real(x)), 0)
			case op == mpi.Min:
				out[i] = complex(min(real(y), real(x)), 0)
			}
		}
	}
	return out
}

func boolC(b bool) complex128 {
	if b {
		return 1
	}
	return 0
}

func equal(got *tensor.Tensor, want []complex128) bool {
	g := got.Complex128Values()
	if len(g) != len(want) {
		return false
	}
	for i := range g {
		if g[i] != want[i] {
			return false
		}
	}
	return true
}

// testAllreduce: every dtype and reduction, on contiguous tensors, on
// transposed views and on empty ones, equals the reference; max and min
// of complex tensors are ErrArgument errors on every process.
func testAllreduce(t *testing.T, c *mpi.Comm) {
	ctx := context.Background()
	for _, dt := range tensor.DTypes {
		for _, op := range []mpi.Op{mpi.Sum, mpi.Max, mpi.Min} {
			x := gen(t, dt, c.Rank(), 3, 5)
			err := c.Allreduce(ctx, x, op)
			if dt.IsComplex() && op != mpi.Sum {
				if !errors.Is(err, mpi.ErrArgument) {
					t.Errorf("%v of %v: %v, want ErrArgument", op, dt, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%v of %v: %v", op, dt, err)
			}
			if want := reduce(t, dt, op, c.Size(), 3, 5); !equal(x, want) {
				t.Errorf("%v of %v: got %v, want %v", op, dt, x.Complex128Values(), want)
			}
			// A transposed view: reduced in its logical order, written
			// back through its strides.
			v := gen(t, dt, c.Rank(), 5, 3).T()
			if err := c.Allreduce(ctx, v, op); err != nil {
				t.Fatalf("%v of a %v view: %v", op, dt, err)
			}
			w, _ := tensor.New(reduce(t, dt, op, c.Size(), 5, 3), 5, 3)
			if !equal(v, w.T().Complex128Values()) {
				t.Errorf("%v of a %v view: got %v", op, dt, v.Complex128Values())
			}
		}
		empty, _ := tensor.Zeros(dt, 0, 4)
		if err := c.Allreduce(ctx, empty, mpi.Sum); err != nil {
			t.Errorf("sum of an empty %v tensor: %v", dt, err)
		}
	}
}

// testBcast: every dtype from the last process, into contiguous tensors
// and into a transposed view elsewhere.
func testBcast(t *testing.T, c *mpi.Comm) {
	ctx := context.Background()
	root := c.Size() - 1
	for _, dt := range tensor.DTypes {
		want := gen(t, dt, root, 4, 6)
		x := gen(t, dt, c.Rank(), 4, 6)
		if err := c.Bcast(ctx, x, root); err != nil {
			t.Fatalf("%v: %v", dt, err)
		}
		if !equal(x, want.Complex128Values()) {
			t.Errorf("%v: got %v, want %v", dt, x.Complex128Values(), want.Complex128Values())
		}
		v := gen(t, dt, c.Rank(), 6, 4).T()
		if c.Rank() == root {
			v = gen(t, dt, root, 4, 6)
		}
		if err := c.Bcast(ctx, v, root); err != nil {
			t.Fatalf("%v into a view: %v", dt, err)
		}
		if !equal(v, want.Complex128Values()) {
			t.Errorf("%v into a view: got %v", dt, v.Complex128Values())
		}
	}
}

// testSendRecv: process 0 sends a permuted (non-contiguous) view to
// process 1, which receives it into a strided view; then both exchange
// tensors at once with Isend and Irecv.
func testSendRecv(t *testing.T, c *mpi.Comm) {
	ctx := context.Background()
	other := 1 - c.Rank()
	for _, dt := range tensor.DTypes {
		src, _ := gen(t, dt, 0, 2, 3, 4).Permute(2, 0, 1) // shape 4, 2, 3
		switch c.Rank() {
		case 0:
			if err := c.Send(ctx, src, 1, 5); err != nil {
				t.Fatalf("%v: %v", dt, err)
			}
		case 1:
			buf, _ := tensor.Zeros(dt, 4, 2, 6)
			dst, _ := buf.Slice(tensor.All, tensor.All, tensor.Range{Start: 0, Stop: 6, Step: 2})
			if err := c.Recv(ctx, dst, 0, 5); err != nil {
				t.Fatalf("%v: %v", dt, err)
			}
			if !equal(dst, src.Complex128Values()) {
				t.Errorf("%v: received %v, want %v", dt, dst.Complex128Values(), src.Complex128Values())
			}
		}
		mine := gen(t, dt, c.Rank(), 7).Clone()
		got, _ := tensor.Zeros(dt, 7)
		rr, err := c.Irecv(ctx, got, other, 6)
		if err != nil {
			t.Fatal(err)
		}
		sr, err := c.Isend(ctx, mine, other, 6)
		if err != nil {
			t.Fatal(err)
		}
		if err := sr.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		if err := rr.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		if want := gen(t, dt, other, 7).Complex128Values(); !equal(got, want) {
			t.Errorf("%v exchange: got %v, want %v", dt, got.Complex128Values(), want)
		}
	}
}

// testLengths: a message shorter than the receiving tensor is an
// ErrMismatch error, a longer one an ErrMPI error (truncation).
func testLengths(t *testing.T, c *mpi.Comm) {
	ctx := context.Background()
	four, _ := tensor.Zeros(tensor.Float64, 4)
	six, _ := tensor.Zeros(tensor.Float64, 6)
	switch c.Rank() {
	case 0:
		if err := c.Send(ctx, four, 1, 8); err != nil {
			t.Fatal(err)
		}
		if err := c.Send(ctx, six, 1, 9); err != nil {
			t.Fatal(err)
		}
	case 1:
		if err := c.Recv(ctx, six, 0, 8); !errors.Is(err, mpi.ErrMismatch) {
			t.Errorf("4 elements into 6: %v, want ErrMismatch", err)
		}
		if err := c.Recv(ctx, four, 0, 9); !errors.Is(err, mpi.ErrMPI) {
			t.Errorf("6 elements into 4: %v, want ErrMPI", err)
		}
	}
	if err := c.Barrier(ctx); err != nil {
		t.Fatal(err)
	}
}

// testRecvTimeout: a receive that process 1 never answers ends on
// process 0 with an ErrTimeout error soon after its deadline, the
// receive cancelled; the communicator stays usable.
func testRecvTimeout(t *testing.T, c *mpi.Comm) {
	if c.Rank() == 0 {
		x, _ := tensor.Zeros(tensor.Int64, 3)
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := c.Recv(ctx, x, 1, 77)
		took := time.Since(start)
		if !errors.Is(err, mpi.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("receive nobody sends: %v, want ErrTimeout and DeadlineExceeded", err)
		}
		if took > 3*time.Second {
			t.Errorf("the receive ended %v after it began, its deadline 300ms", took)
		}
	}
	if err := c.Barrier(context.Background()); err != nil {
		t.Fatalf("barrier after a timed-out receive: %v", err)
	}
}

// reportEnv names the file where process 0 of TestStalledCollective
// reports.
const reportEnv = "GOFERRO_MPI_REPORT"

// TestStalledCollective: when process 1 never joins an all-reduce,
// process 0 gets an ErrTimeout error at its deadline, not a hang, and the
// communicator is then ErrBroken; it aborts the job, which ends well
// before process 1 would have.
func TestStalledCollective(t *testing.T) {
	c := world(t, "stall")
	if c == nil {
		// Process 0 reports in a file: the launcher may drop what the
		// processes print when the job is aborted.
		report := filepath.Join(t.TempDir(), "report")
		t.Setenv(reportEnv, report)
		underMPI(t, 2, "TestStalledCollective", "stall", time.Minute, func(t *testing.T, out string, err error, took time.Duration) {
			b, _ := os.ReadFile(report)
			os.Remove(report)
			if !strings.Contains(string(b), "stalled collective: typed timeout") {
				t.Fatalf("process 0 did not report the timeout (%v): %q\n%s", err, b, out)
			}
			t.Logf("%s", b)
			if took > 20*time.Second {
				t.Errorf("the job took %v: it waited for the stalled process", took)
			}
		})
		return
	}
	if c.Rank() != 0 {
		time.Sleep(40 * time.Second) // stalled: never joins
		return
	}
	x := gen(t, tensor.Float64, 0, 8)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := c.Allreduce(ctx, x, mpi.Sum)
	took := time.Since(start)
	broken := c.Barrier(context.Background())
	if errors.Is(err, mpi.ErrTimeout) && took < 5*time.Second && errors.Is(broken, mpi.ErrBroken) {
		msg := fmt.Sprintf("stalled collective: typed timeout after %v: %v; then %v", took, err, broken)
		if err := os.WriteFile(os.Getenv(reportEnv), []byte(msg), 0o644); err != nil {
			t.Error(err)
		}
	} else {
		t.Errorf("all-reduce without process 1: %v after %v, then %v", err, took, broken)
	}
	c.Abort(0)
}
