//go:build (linux || darwin || freebsd || netbsd) && !android && (amd64 || arm64 || riscv64 || loong64 || s390x)

package mpi

import (
	"errors"

	"github.com/ebitengine/purego"
)

// load opens the first MPI library of names that resolves every function
// this package calls, and reads its handles: Open MPI's by symbol, the
// MPICH ABI's from the table.
func load(names []string) (*lib, error) {
	var errs []error
	for _, name := range names {
		dl, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		l := &lib{name: name}
		if err := resolve(dl, name, l.fn.symbols()); err != nil {
			errs = append(errs, err)
			continue
		}
		if p, err := purego.Dlsym(dl, "ompi_mpi_comm_world"); err == nil && p != 0 {
			if err := resolve(dl, name, ompiSymbols(&l.h)); err != nil {
				errs = append(errs, err)
				continue
			}
			ompiConstants(&l.h)
		} else {
			l.h = mpichHandles
		}
		return l, nil
	}
	return nil, errors.Join(errs...)
}

// resolve sets every address in syms to its symbol's in the library dl.
func resolve(dl uintptr, name string, syms map[string]*uintptr) error {
	for s, p := range syms {
		a, err := purego.Dlsym(dl, s)
		if err != nil || a == 0 {
			return errors.New(name + ": missing symbol " + s)
		}
		*p = a
	}
	return nil
}

// call invokes the C function fn with integer and pointer arguments and
// returns its int result. Pointers converted to uintptr in a call to it
// stay alive and unmoved until it returns.
//
//go:uintptrescapes
func call(fn uintptr, args ...uintptr) int32 {
	r, _, _ := purego.SyscallN(fn, args...)
	return int32(r)
}
