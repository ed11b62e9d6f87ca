//go:build !((linux || darwin || freebsd || netbsd) && !android && (amd64 || arm64 || riscv64 || loong64 || s390x))

package mpi

import (
	"errors"
	"runtime"
)

func load(names []string) (*lib, error) {
	return nil, errors.New("run-time loading of MPI is not supported on " + runtime.GOOS + "/" + runtime.GOARCH)
}

func call(fn uintptr, args ...uintptr) int32 { return -1 }
