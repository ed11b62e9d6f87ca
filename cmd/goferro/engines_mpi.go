package main

import (
	"context"
	"errors"
	"slices"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/mpi"
)

// errServed ends a command on an MPI process other than process 0 of
// --engines mpi:R: it served process 0's runtime (mpi.Serve) and has
// nothing to print.
var errServed = errors.New("served the runtime of MPI process 0")

// mpiRanks returns the ranks of the mpi:R entries of specs.
func mpiRanks(specs []engineSpec) []int {
	var ranks []int
	for _, sp := range specs {
		if sp.kind == "mpi" {
			ranks = append(ranks, sp.n)
		}
	}
	return ranks
}

// serveRanks joins the MPI processes when specs list an mpi:R engine. On
// every process but 0 it then runs the instructions process 0 sends with
// a CPU engine of the given memory budget until process 0 is done, and
// returns errServed (or what went wrong); on process 0, and without mpi:R
// entries, it returns nil at once.
func serveRanks(ctx context.Context, specs []engineSpec, memory int64) error {
	if len(mpiRanks(specs)) == 0 {
		return nil
	}
	comm, err := mpi.Init(ctx)
	if err != nil || comm.Rank() == 0 {
		return err
	}
	err = mpi.Serve(ctx, comm, 0, cpu.NewEngine(cpu.WithMemory(memory)))
	if ferr := comm.Finalize(ctx); err == nil {
		err = ferr
	}
	if err != nil {
		return err
	}
	return errServed
}

// remoteSet is process 0's side of --engines mpi:R: a Remote for every
// other process, those listed by rank.
type remoteSet struct {
	comm  *mpi.Comm
	all   []*mpi.Remote
	ranks map[int]*mpi.Remote
}

// openRemotes connects process 0 to every other MPI process when specs
// list an mpi:R engine, and returns nil when they list none. The processes
// not listed are let go at once; a listed rank with no process is a usage
// error.
func openRemotes(ctx context.Context, specs []engineSpec) (*remoteSet, error) {
	want := mpiRanks(specs)
	if len(want) == 0 {
		return nil, nil
	}
	comm, err := mpi.Init(ctx) // the communicator serveRanks joined
	if err != nil {
		return nil, err
	}
	set := &remoteSet{comm: comm, ranks: map[int]*mpi.Remote{}}
	for rank := 1; rank < comm.Size(); rank++ {
		r, err := mpi.NewRemote(ctx, comm, rank)
		if err != nil {
			_ = set.close()
			return nil, err
		}
		set.all = append(set.all, r)
		if slices.Contains(want, rank) {
			set.ranks[rank] = r
		}
	}
	for _, n := range want {
		if set.ranks[n] == nil {
			_ = set.close()
			return nil, usagef("--engines mpi:%d: %d MPI process(es); run under mpirun -np %d or more", n, comm.Size(), n+1)
		}
	}
	return set, nil
}

// close ends every other process's Serve and then MPI; it returns the
// first error.
func (s *remoteSet) close() error {
	ctx := context.Background()
	var errs []error
	for _, r := range s.all {
		errs = append(errs, r.Close(ctx))
	}
	errs = append(errs, s.comm.Finalize(ctx))
	return errors.Join(errs...)
}
