package linalg

import (
	"os"
	"reflect"
	"testing"

	"github.com/goferro/goferro/internal/isa"
	"github.com/goferro/goferro/internal/level1"
)

// TestMain runs the tests on the kernel path GOFERRO_GEMM_ISA forces, so
// that CI tests every path this machine runs (see isa.RunTests).
func TestMain(m *testing.M) { os.Exit(isa.RunTests(m)) }

// TestKernelPath checks that the rotation, QR leaf and level-1 kernels in use are
// those of the path in use, isa.Active (on amd64 without the purego tag;
// elsewhere the Go loops run).
func TestKernelPath(t *testing.T) {
	want := "generic"
	if len(rotKernels) > 0 && isa.Active >= isa.AVX2 {
		want = isa.Active.String()
	}
	if kernelPath != want {
		t.Errorf("kernelPath %s on the %s path", kernelPath, isa.Active)
	}
	got := "generic"
	switch {
	case rotPanelsAsm == nil:
	case len(rotKernels) > 1 && sameFunc(rotPanelsAsm, rotKernels[1]):
		got = "avx512"
	case len(rotKernels) > 0 && sameFunc(rotPanelsAsm, rotKernels[0]):
		got = "avx2"
	default:
		got = "unknown"
	}
	if got != kernelPath {
		t.Errorf("rotation kernel of the %s path in use, kernelPath %s", got, kernelPath)
	}
	got = "generic"
	switch {
	case leafAsm == nil:
	case len(leafKernels) > 1 && sameFunc(leafAsm, leafKernels[1]):
		got = "avx512"
	case len(leafKernels) > 0 && sameFunc(leafAsm, leafKernels[0]):
		got = "avx2"
	default:
		got = "unknown"
	}
	if got != kernelPath {
		t.Errorf("QR leaf kernel of the %s path in use, kernelPath %s", got, kernelPath)
	}
	if got := level1.Path(); got != kernelPath {
		t.Errorf("level-1 loops of the %s path in use, kernelPath %s", got, kernelPath)
	}
	t.Logf("%s=%q: path %s, linalg kernel path %s", isa.Env, os.Getenv(isa.Env), isa.Active, kernelPath)
}

func sameFunc[F any](f, g F) bool {
	return reflect.ValueOf(f).Pointer() == reflect.ValueOf(g).Pointer()
}
