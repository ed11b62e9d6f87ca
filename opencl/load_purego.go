//go:build (linux || darwin || freebsd || netbsd) && !android && (amd64 || arm64 || riscv64 || loong64 || s390x)

package opencl

import (
	"errors"
	"os"
	"runtime"

	"github.com/ebitengine/purego"
)

// libraryEnv names an environment variable that, when set, is the only
// OpenCL library tried (a path or a soname).
const libraryEnv = "GOFERRO_OPENCL_LIBRARY"

// libraryNames lists the ICD loader names tried, in order.
func libraryNames() []string {
	if p := os.Getenv(libraryEnv); p != "" {
		return []string{p}
	}
	if runtime.GOOS == "darwin" {
		return []string{"/System/Library/Frameworks/OpenCL.framework/OpenCL"}
	}
	return []string{"libOpenCL.so.1", "libOpenCL.so"}
}

// openLibrary loads the first OpenCL library that opens and resolves every
// symbol in names.
func openLibrary(libs, names []string) (lib string, syms map[string]uintptr, err error) {
	var errs []error
	for _, name := range libs {
		h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		syms = make(map[string]uintptr, len(names))
		for _, s := range names {
			p, err := purego.Dlsym(h, s)
			if err != nil || p == 0 {
				return "", nil, errors.New(name + ": missing symbol " + s)
			}
			syms[s] = p
		}
		return name, syms, nil
	}
	return "", nil, errors.Join(errs...)
}

// call invokes the C function fn with integer and pointer arguments. Pointers
// converted to uintptr in a call to it stay alive and unmoved until it returns.
//
//go:uintptrescapes
func call(fn uintptr, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}
