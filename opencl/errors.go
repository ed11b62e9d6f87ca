package opencl

import (
	"errors"

	"github.com/goferro/goferro/internal/errs"
)

// Sentinel errors wrapped by every *Error, for errors.Is.
var (
	// ErrUnavailable reports that no OpenCL library, platform or device can
	// be used on this machine. Devices returns it with the reason.
	ErrUnavailable = errors.New("opencl: unavailable")
	// ErrCL reports that an OpenCL call returned an error status; the Code
	// is in the chain too.
	ErrCL = errors.New("opencl: call failed")
	// ErrBuild reports that kernel compilation failed; the message carries
	// the build log.
	ErrBuild = errors.New("opencl: kernel build failed")
	// ErrForeign reports a buffer or tensor that belongs to another context
	// (allocation domain) or is host memory, where this device's memory is
	// required.
	ErrForeign = errors.New("opencl: foreign buffer")
	// ErrReleased reports use of a released buffer, tensor, queue or context.
	ErrReleased = errors.New("opencl: released")
	// ErrUnsupported reports an operation or dtype the device declines (for
	// example float64 without cl_khr_fp64, or complex arithmetic).
	ErrUnsupported = errors.New("opencl: unsupported")
	// ErrShape reports shapes, strides or extents that do not fit together.
	ErrShape = errors.New("opencl: bad shape")
	// ErrArgument reports any other invalid argument.
	ErrArgument = errors.New("opencl: bad argument")
)

// Error is the error type of this package. Kind is one of the sentinels
// above; Code is the OpenCL status when an OpenCL call failed (CodeSuccess
// otherwise). errors.Is matches Kind, Code and Err.
type Error struct {
	Op   string // the operation, e.g. "Upload" or "clEnqueueNDRangeKernel"
	Kind error  // ErrCL, ErrForeign, ...
	Code Code   // OpenCL status, or CodeSuccess
	Msg  string // details
	Err  error  // underlying cause, if any
}

// Error formats the error as "opencl.Op: msg: CL_NAME (-n): cause".
func (e *Error) Error() string { return errs.Message("opencl."+e.Op, e.Msg, e.code(), e.Err) }

// Unwrap returns the kind, the status code (if any) and the cause.
func (e *Error) Unwrap() []error { return errs.Unwrap(e.Kind, e.code(), e.Err) }

// code is the status as an error, or nil for CodeSuccess.
func (e *Error) code() error {
	if e.Code == CodeSuccess {
		return nil
	}
	return e.Code
}

func clErr(op string, c Code, msg string) error {
	if c == CodeSuccess {
		return nil
	}
	return &Error{Op: op, Kind: ErrCL, Code: c, Msg: msg}
}

func newErr(op string, kind error, msg string) error {
	return &Error{Op: op, Kind: kind, Msg: msg}
}
