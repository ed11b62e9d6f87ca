//go:build !((linux || darwin || freebsd || netbsd) && !android && (amd64 || arm64 || riscv64 || loong64 || s390x))

package opencl

import (
	"errors"
	"runtime"
)

const libraryEnv = "GOFERRO_OPENCL_LIBRARY"

func libraryNames() []string { return nil }

func openLibrary(libs, names []string) (string, map[string]uintptr, error) {
	return "", nil, errors.New("run-time loading of OpenCL is not supported on " + runtime.GOOS + "/" + runtime.GOARCH)
}

func call(fn uintptr, args ...uintptr) uintptr { return ^uintptr(1) } // CL_DEVICE_NOT_AVAILABLE
