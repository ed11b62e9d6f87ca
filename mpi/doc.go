// Package mpi runs goferro across processes with MPI, the message-passing
// library every cluster has, loaded at run time: no cgo, so a binary built
// with CGO_ENABLED=0 uses MPI where the library is installed and reports
// ErrUnavailable where it is not.
//
// Two families of MPI libraries are known: Open MPI (libmpi.so.40), whose
// handles are the addresses of global symbols, and the MPICH ABI
// (libmpi.so.12 or libmpich.so.12: MPICH, Intel MPI, MVAPICH), whose
// handles are fixed integers. GOFERRO_MPI_LIBRARY names one library (a
// path or a soname) to use instead.
//
// Init starts MPI and returns the communicator of all the processes (MPI's
// COMM_WORLD). Its methods send and receive tensors between two processes
// (Send, Recv, and Isend and Irecv with a Request to Wait on), broadcast
// them (Bcast) and reduce them across all the processes (Allreduce), for
// every dtype of package tensor. All MPI calls are made from one goroutine
// locked to its OS thread, so a Comm may be used from any goroutine.
//
// No wait blocks forever: every operation polls its MPI request until it
// completes, its context is done, or the communicator's timeout (WithTimeout)
// passes. A process that fails or stalls thus gives the others an error of
// kind ErrTimeout instead of a hang; after a collective operation times out
// the communicator is broken (ErrBroken), as MPI cannot cancel one.
//
// NewRemote makes another process an engine of this one's runtime (a
// driver.Engine with its own storage class, and transfer providers to and
// from host memory), whose instructions that process runs in Serve with
// its own engine: a program placed across processes moves tensors between
// them only in the runtime's transfer nodes.
//
// Contract shares the slices of a sliced einsum contraction (einsum.Slicing)
// among the processes: each contracts its share on the CPU, and the parts are
// all-reduced into the result on every process.
//
// Run a program under MPI with, for example,
//
//	mpirun -np 2 ./program
//
// (as root, Open MPI also wants --allow-run-as-root).
package mpi
