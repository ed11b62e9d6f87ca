// Package isa chooses, once at start-up, the instruction-set path of
// every goferro package with assembly kernels (cpu/gemm, internal/level1,
// internal/strided, linalg), so that one setting forces them all onto the
// same path.
//
// The environment variable GOFERRO_GEMM_ISA (Env), read when the program
// starts, names a path: avx512, avx2, sse2 or generic (the portable Go
// loops, as with the purego build tag). A path this build and CPU run is
// taken; any other value leaves the best one they run. A package without
// kernels for the path in use runs its best below it (GEMM has no SSE2
// kernels: it runs the portable ones there).
package isa

import (
	"errors"
	"fmt"
	"os"
)

// Path is a kernel path. Paths are ordered: each runs on every CPU the
// next one runs on.
type Path int

// The kernel paths, the weakest first.
const (
	// Generic is the portable Go loops: no assembly.
	Generic Path = iota
	// SSE2 is amd64's baseline instruction set.
	SSE2
	// AVX2 is AVX2 with FMA (the 256-bit kernels).
	AVX2
	// AVX512 is AVX-512F with AVX2 and FMA (the 512-bit kernels).
	AVX512
)

var names = [...]string{Generic: "generic", SSE2: "sse2", AVX2: "avx2", AVX512: "avx512"}

// String returns the path's name, its Env value.
func (p Path) String() string {
	if p < Generic || p > AVX512 {
		return fmt.Sprintf("Path(%d)", int(p))
	}
	return names[p]
}

// Env is the environment variable that forces a path.
const Env = "GOFERRO_GEMM_ISA"

// Best is the best path this build and CPU run.
var Best = best()

// Active is the path in use: the one Env names, where Best covers it, else
// Best.
var Active = Choose(os.Getenv(Env), Best)

// Choose returns the path named want when best covers it, else best.
func Choose(want string, best Path) Path {
	if p, ok := parse(want); ok && p <= best {
		return p
	}
	return best
}

func parse(name string) (Path, bool) {
	for p, n := range names {
		if n == name {
			return Path(p), true
		}
	}
	return 0, false
}

// ErrUnknownPath and ErrUnavailable are what CheckEnv's errors wrap.
var (
	// ErrUnknownPath: Env names no path.
	ErrUnknownPath = errors.New("names no kernel path (avx512, avx2, sse2, generic)")
	// ErrUnavailable: Env names a path this build and CPU do not run.
	ErrUnavailable = errors.New("names a kernel path this build and CPU do not run")
)

// CheckEnv reports whether Env, when set, names the path in use. Test
// programs that run once per forced path (see scripts/test.sh) call it
// first: a path the machine lacks is a reason to skip, a name that is no
// path a mistake in the script.
func CheckEnv() error {
	want := os.Getenv(Env)
	if want == "" || want == Active.String() {
		return nil
	}
	if _, ok := parse(want); !ok {
		return fmt.Errorf("%s=%q %w", Env, want, ErrUnknownPath)
	}
	return fmt.Errorf("%s=%s %w: the best is %s", Env, want, ErrUnavailable, Best)
}

// RunTests runs a test binary's tests (m is a *testing.M) on the path in
// use and returns the exit code, for a TestMain of a package with kernels:
// tests run once per forced path (scripts/test.sh), so where Env names a
// path this build and CPU do not run it says so and returns 0 (skipped),
// and where Env names no path it says so and returns 1.
func RunTests(m interface{ Run() int }) int {
	if err := CheckEnv(); err != nil {
		if errors.Is(err, ErrUnknownPath) {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Printf("%v; skipping\n", err)
		return 0
	}
	return m.Run()
}
