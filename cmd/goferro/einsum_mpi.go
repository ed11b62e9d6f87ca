package main

import (
	"context"
	"fmt"
	"io"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/mpi"
	"github.com/goferro/goferro/tensor"
)

// mpiRun is the state of einsum --instance --mpi: the processes mpirun
// started share the slices of one plan, and process 0 prints the result.
type mpiRun struct {
	on   bool      // --mpi
	comm *mpi.Comm // the processes, once mpiPlan joined them
	info string    // " ranks=N slices=S", appended to the result line
}

// mpiPlan joins the MPI processes; process 0 plans eq (as plan does,
// within its memory budget) and sends the plan to the others, which plan
// nothing themselves.
func (f *einsumFlags) mpiPlan(ctx context.Context, eq string, shapes [][]int, dt tensor.DType, budget int64, opts []einsum.Option) (*einsum.Plan, error) {
	comm, err := mpi.Init(ctx)
	if err != nil {
		return nil, err
	}
	f.mpi.comm = comm
	var p *einsum.Plan
	if comm.Rank() == 0 {
		p, err = f.plan(ctx, eq, shapes, dt, budget, opts)
	}
	q, berr := mpi.BcastPlan(ctx, comm, p, 0)
	if err != nil {
		return nil, err // process 0's own planning error
	}
	return q, berr
}

// mpiExecute returns the contraction that runs this process's share of
// c's slices and all-reduces the result (mpi.Execute), and the output:
// stdout on process 0, which prints the result line with ranks=N
// slices=S; nothing on the others, which also skip --check. done ends MPI.
func (f *einsumFlags) mpiExecute(ctx context.Context, c *cpu.Contraction, stdout io.Writer) (
	execute func(context.Context, ...*tensor.Tensor) (*tensor.Tensor, error), out io.Writer, done func()) {
	comm := f.mpi.comm
	f.mpi.info = fmt.Sprintf(" ranks=%d slices=%d", comm.Size(), c.Slices())
	out = stdout
	if comm.Rank() != 0 {
		out, f.check = io.Discard, false
	}
	execute = func(ctx context.Context, ops ...*tensor.Tensor) (*tensor.Tensor, error) {
		return mpi.Execute(ctx, comm, c, ops...)
	}
	// By then the result is printed or the error returned: a process
	// that cannot finalize cleanly has nothing more to report.
	done = func() { _ = comm.Finalize(ctx) }
	return execute, out, done
}
