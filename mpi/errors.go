package mpi

import (
	"errors"
	"fmt"

	"github.com/goferro/goferro/internal/errs"
)

// Error kinds: every *Error wraps one of these, so callers can branch with
// errors.Is(err, mpi.ErrTimeout) and so on.
var (
	// ErrUnavailable reports that no MPI library can be loaded, that MPI
	// was already finalized in this process, or that a Remote is closed.
	ErrUnavailable = errors.New("mpi: unavailable")
	// ErrMPI reports that an MPI call returned an error; Error.Code holds
	// MPI's error class.
	ErrMPI = errors.New("mpi: call failed")
	// ErrTimeout reports an operation that did not complete before its
	// context was done or the communicator's timeout passed: another
	// process failed, stalled or did not take part. The context's error is
	// in the chain too.
	ErrTimeout = errors.New("mpi: timed out")
	// ErrBroken reports an operation on a communicator on which a
	// collective operation timed out earlier: the processes no longer agree
	// on which collective comes next, so none can run. It also reports a
	// command to a Remote after a tensor was left half sent between the
	// two processes.
	ErrBroken = errors.New("mpi: communicator broken")
	// ErrRemote reports that another process failed; Error.Rank names it.
	ErrRemote = errors.New("mpi: another process failed")
	// ErrMismatch reports processes that disagree on what they compute
	// together (plan, shapes, dtype or operand values).
	ErrMismatch = errors.New("mpi: processes disagree")
	// ErrArgument reports an invalid argument: a nil tensor, a rank
	// outside the communicator, an operation the dtype lacks.
	ErrArgument = errors.New("mpi: bad argument")
)

// Error is the error type of package mpi.
type Error struct {
	Op   string // the operation, e.g. "Allreduce" or "MPI_Iallreduce"
	Kind error  // one of the Err* sentinels above
	Code int    // MPI's error code when Kind is ErrMPI, else 0
	Rank int    // the failing process when Kind is ErrRemote, else -1
	Msg  string // details
	Err  error  // an underlying cause, if any
}

// Error formats the error as "mpi.Op: msg: cause".
func (e *Error) Error() string { return errs.Message("mpi."+e.Op, e.Msg, e.Err) }

// Unwrap returns the kind and the cause, so errors.Is matches both.
func (e *Error) Unwrap() []error { return errs.Unwrap(e.Kind, e.Err) }

func newErr(op string, kind error, format string, args ...any) *Error {
	return &Error{Op: op, Kind: kind, Rank: -1, Msg: fmt.Sprintf(format, args...)}
}
