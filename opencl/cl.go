package opencl

import (
	"fmt"
	"strconv"
)

// Code is an OpenCL status code (CL_SUCCESS, CL_OUT_OF_RESOURCES, ...). It
// implements error, so errors.Is(err, opencl.CodeOutOfResources) finds the
// code inside any error this package returns.
type Code int32

// Frequently tested OpenCL status codes.
const (
	CodeSuccess               Code = 0
	CodeDeviceNotFound        Code = -1
	CodeDeviceNotAvailable    Code = -2
	CodeCompilerNotAvailable  Code = -3
	CodeMemAllocationFailure  Code = -4
	CodeOutOfResources        Code = -5
	CodeOutOfHostMemory       Code = -6
	CodeBuildProgramFailure   Code = -11
	CodeExecStatusErrorInWait Code = -14
	CodeInvalidValue          Code = -30
	CodeInvalidDevice         Code = -33
	CodeInvalidContext        Code = -34
	CodeInvalidCommandQueue   Code = -36
	CodeInvalidMemObject      Code = -38
	CodeInvalidBinary         Code = -42
	CodeInvalidProgramExe     Code = -45
	CodeInvalidKernelName     Code = -46
	CodeInvalidKernelArgs     Code = -52
	CodeInvalidWorkGroupSize  Code = -54
	CodeInvalidEventWaitList  Code = -57
	CodeInvalidBufferSize     Code = -61
	CodeInvalidGlobalWorkSize Code = -63
	CodePlatformNotFoundKHR   Code = -1001
)

var codeNames = map[Code]string{
	0: "CL_SUCCESS", -1: "CL_DEVICE_NOT_FOUND", -2: "CL_DEVICE_NOT_AVAILABLE",
	-3: "CL_COMPILER_NOT_AVAILABLE", -4: "CL_MEM_OBJECT_ALLOCATION_FAILURE",
	-5: "CL_OUT_OF_RESOURCES", -6: "CL_OUT_OF_HOST_MEMORY",
	-7: "CL_PROFILING_INFO_NOT_AVAILABLE", -8: "CL_MEM_COPY_OVERLAP",
	-9: "CL_IMAGE_FORMAT_MISMATCH", -10: "CL_IMAGE_FORMAT_NOT_SUPPORTED",
	-11: "CL_BUILD_PROGRAM_FAILURE", -12: "CL_MAP_FAILURE",
	-13: "CL_MISALIGNED_SUB_BUFFER_OFFSET", -14: "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST",
	-15: "CL_COMPILE_PROGRAM_FAILURE", -16: "CL_LINKER_NOT_AVAILABLE",
	-17: "CL_LINK_PROGRAM_FAILURE", -18: "CL_DEVICE_PARTITION_FAILED",
	-19: "CL_KERNEL_ARG_INFO_NOT_AVAILABLE",
	-30: "CL_INVALID_VALUE", -31: "CL_INVALID_DEVICE_TYPE", -32: "CL_INVALID_PLATFORM",
	-33: "CL_INVALID_DEVICE", -34: "CL_INVALID_CONTEXT", -35: "CL_INVALID_QUEUE_PROPERTIES",
	-36: "CL_INVALID_COMMAND_QUEUE", -37: "CL_INVALID_HOST_PTR", -38: "CL_INVALID_MEM_OBJECT",
	-39: "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR", -40: "CL_INVALID_IMAGE_SIZE",
	-41: "CL_INVALID_SAMPLER", -42: "CL_INVALID_BINARY", -43: "CL_INVALID_BUILD_OPTIONS",
	-44: "CL_INVALID_PROGRAM", -45: "CL_INVALID_PROGRAM_EXECUTABLE",
	-46: "CL_INVALID_KERNEL_NAME", -47: "CL_INVALID_KERNEL_DEFINITION",
	-48: "CL_INVALID_KERNEL", -49: "CL_INVALID_ARG_INDEX", -50: "CL_INVALID_ARG_VALUE",
	-51: "CL_INVALID_ARG_SIZE", -52: "CL_INVALID_KERNEL_ARGS",
	-53: "CL_INVALID_WORK_DIMENSION", -54: "CL_INVALID_WORK_GROUP_SIZE",
	-55: "CL_INVALID_WORK_ITEM_SIZE", -56: "CL_INVALID_GLOBAL_OFFSET",
	-57: "CL_INVALID_EVENT_WAIT_LIST", -58: "CL_INVALID_EVENT", -59: "CL_INVALID_OPERATION",
	-60: "CL_INVALID_GL_OBJECT", -61: "CL_INVALID_BUFFER_SIZE", -62: "CL_INVALID_MIP_LEVEL",
	-63: "CL_INVALID_GLOBAL_WORK_SIZE", -64: "CL_INVALID_PROPERTY",
	-65: "CL_INVALID_IMAGE_DESCRIPTOR", -66: "CL_INVALID_COMPILER_OPTIONS",
	-67: "CL_INVALID_LINKER_OPTIONS", -68: "CL_INVALID_DEVICE_PARTITION_COUNT",
	-69: "CL_INVALID_PIPE_SIZE", -70: "CL_INVALID_DEVICE_QUEUE",
	-1001: "CL_PLATFORM_NOT_FOUND_KHR",
}

// String returns the C name of the code, e.g. "CL_OUT_OF_RESOURCES".
func (c Code) String() string {
	if s, ok := codeNames[c]; ok {
		return s
	}
	return "CL_ERROR(" + strconv.Itoa(int(c)) + ")"
}

// Error formats the code with its number, e.g. "CL_OUT_OF_RESOURCES (-5)".
func (c Code) Error() string { return fmt.Sprintf("%s (%d)", c.String(), int32(c)) }

// OpenCL C API constants used by this package.
const (
	clPlatformVersion = 0x0901
	clPlatformName    = 0x0902
	clPlatformVendor  = 0x0903

	clDeviceTypeAll = 0xFFFFFFFF

	clDeviceType             = 0x1000
	clDeviceMaxComputeUnits  = 0x1002
	clDeviceMaxWorkGroupSize = 0x1004
	clDeviceMaxClock         = 0x100C
	clDeviceMaxMemAlloc      = 0x1010
	clDeviceGlobalMemSize    = 0x101F
	clDeviceLocalMemSize     = 0x1023
	clDeviceAvailable        = 0x1027
	clDeviceCompilerAvail    = 0x1028
	clDeviceName             = 0x102B
	clDeviceVendor           = 0x102C
	clDriverVersion          = 0x102D
	clDeviceVersion          = 0x102F
	clDeviceExtensions       = 0x1030

	clMemReadWrite = 1
	clMapRead      = 1

	clProgramBinarySizes = 0x1165
	clProgramBinaries    = 0x1166
	clProgramBuildLog    = 0x1183

	clEventExecStatus = 0x11D3

	clQueueProfilingEnable = 1 << 1

	// Profiling information of an event: device clock readings in
	// nanoseconds.
	clProfilingQueued = 0x1280
	clProfilingStart  = 0x1282
	clProfilingEnd    = 0x1283
)
