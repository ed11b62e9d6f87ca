package mpi

import (
	"os"

	"github.com/goferro/goferro/tensor"
)

// libraryEnv names an environment variable that, when set, is the only MPI
// library tried (a path or a soname).
const libraryEnv = "GOFERRO_MPI_LIBRARY"

// libraryNames lists the MPI libraries tried, in order: Open MPI's, then
// the MPICH ABI's under both its names.
func libraryNames() []string {
	if p := os.Getenv(libraryEnv); p != "" {
		return []string{p}
	}
	return []string{"libmpi.so.40", "libmpi.so.12", "libmpich.so.12"}
}

// lib is a loaded MPI library: its functions and the handles of its ABI.
type lib struct {
	name string // the library opened
	fn   funcs
	h    handles
}

// funcs are the addresses of the MPI functions this package calls.
type funcs struct {
	initThread, finalize, abort, errorString   uintptr
	commRank, commSize, commSetErrhandler      uintptr
	isend, irecv, ibarrier, ibcast, iallreduce uintptr
	test, cancel, getCount, iprobe             uintptr
}

// symbols pairs each function of f with its C name.
func (f *funcs) symbols() map[string]*uintptr {
	return map[string]*uintptr{
		"MPI_Init_thread": &f.initThread, "MPI_Finalize": &f.finalize,
		"MPI_Abort": &f.abort, "MPI_Error_string": &f.errorString,
		"MPI_Comm_rank": &f.commRank, "MPI_Comm_size": &f.commSize,
		"MPI_Comm_set_errhandler": &f.commSetErrhandler,
		"MPI_Isend":               &f.isend, "MPI_Irecv": &f.irecv, "MPI_Ibarrier": &f.ibarrier,
		"MPI_Ibcast": &f.ibcast, "MPI_Iallreduce": &f.iallreduce,
		"MPI_Test": &f.test, "MPI_Cancel": &f.cancel, "MPI_Get_count": &f.getCount,
		"MPI_Iprobe": &f.iprobe,
	}
}

// handles are the values of the MPI handles and constants this package
// uses, as they are passed to the functions: they differ between the
// implementations' ABIs.
type handles struct {
	abi          string // "Open MPI" or "MPICH"
	commWorld    uintptr
	errorsReturn uintptr
	dtypes       [tensor.Bool + 1]uintptr // by tensor.DType; 0 for Invalid
	ops          [opCount]uintptr         // by Op; [opLOr] and [opLAnd] for Bool
	inPlace      uintptr                  // MPI_IN_PLACE
	statusIgnore uintptr                  // MPI_STATUS_IGNORE
}

// threadFunneled is MPI_THREAD_FUNNELED in both ABIs: only the thread
// that initialised MPI calls it.
const threadFunneled = 1

// statusSize is room for an MPI_Status in both ABIs (24 bytes in Open
// MPI, 20 in MPICH), with a margin.
const statusSize = 64

// errorStringMax bounds MPI_Error_string's text in both ABIs
// (MPI_MAX_ERROR_STRING is 256 in Open MPI, 512 in MPICH).
const errorStringMax = 1024

// ompiSymbols names the global symbols whose addresses are Open MPI's
// handles (mpi.h: MPI_COMM_WORLD is &ompi_mpi_comm_world, ...).
func ompiSymbols(h *handles) map[string]*uintptr {
	return map[string]*uintptr{
		"ompi_mpi_comm_world":       &h.commWorld,
		"ompi_mpi_errors_return":    &h.errorsReturn,
		"ompi_mpi_float":            &h.dtypes[tensor.Float32],
		"ompi_mpi_double":           &h.dtypes[tensor.Float64],
		"ompi_mpi_c_float_complex":  &h.dtypes[tensor.Complex64],
		"ompi_mpi_c_double_complex": &h.dtypes[tensor.Complex128],
		"ompi_mpi_int32_t":          &h.dtypes[tensor.Int32],
		"ompi_mpi_int64_t":          &h.dtypes[tensor.Int64],
		"ompi_mpi_c_bool":           &h.dtypes[tensor.Bool],
		"ompi_mpi_op_sum":           &h.ops[Sum],
		"ompi_mpi_op_max":           &h.ops[Max],
		"ompi_mpi_op_min":           &h.ops[Min],
		"ompi_mpi_op_lor":           &h.ops[opLOr],
		"ompi_mpi_op_land":          &h.ops[opLAnd],
	}
}

// ompiConstants completes Open MPI's handles with its constants.
func ompiConstants(h *handles) {
	h.abi = "Open MPI"
	h.inPlace = 1      // ((void *) 1)
	h.statusIgnore = 0 // ((MPI_Status *) 0)
}

// mpichHandles are the MPICH ABI's handles, fixed integers from its mpi.h.
var mpichHandles = handles{
	abi:          "MPICH",
	commWorld:    0x44000000,
	errorsReturn: 0x54000001,
	dtypes: [tensor.Bool + 1]uintptr{
		tensor.Float32:    0x4c00040a, // MPI_FLOAT
		tensor.Float64:    0x4c00080b, // MPI_DOUBLE
		tensor.Complex64:  0x4c000840, // MPI_C_FLOAT_COMPLEX
		tensor.Complex128: 0x4c001041, // MPI_C_DOUBLE_COMPLEX
		tensor.Int32:      0x4c000439, // MPI_INT32_T
		tensor.Int64:      0x4c00083a, // MPI_INT64_T
		tensor.Bool:       0x4c00013f, // MPI_C_BOOL
	},
	ops: [opCount]uintptr{
		Sum:    0x58000003,
		Max:    0x58000001,
		Min:    0x58000002,
		opLOr:  0x58000007,
		opLAnd: 0x58000005,
	},
	inPlace:      ^uintptr(0), // (void *) -1
	statusIgnore: 1,           // (MPI_Status *) 1
}
