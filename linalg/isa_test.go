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
	if got := pathOf(rotPanelsAsm, rotKernels); got != kernelPath {
		t.Errorf("rotation kernel of the %s path in use, kernelPath %s", got, kernelPath)
	}
	if got := pathOf(leafAsm, leafKernels); got != kernelPath {
		t.Errorf("QR leaf kernel of the %s path in use, kernelPath %s", got, kernelPath)
	}
	if got := pathOf(leafTAsm, leafTKernels); got != kernelPath {
		t.Errorf("QR leaf factor kernel of the %s path in use, kernelPath %s", got, kernelPath)
	}
	if got := pathOf(mulVecs16Asm, mulVecs16Kernels); got != kernelPath {
		t.Errorf("triangular factor product kernel of the %s path in use, kernelPath %s", got, kernelPath)
	}
	if got := level1.Path(); got != kernelPath {
		t.Errorf("level-1 loops of the %s path in use, kernelPath %s", got, kernelPath)
	}
	t.Logf("%s=%q: path %s, linalg kernel path %s", isa.Env, os.Getenv(isa.Env), isa.Active, kernelPath)
}

// pathOf names the path whose kernel inUse is, among the kernels this
// CPU can run (AVX2 then AVX-512): "generic" when inUse is nil (the Go
// loops run).
func pathOf[F any](inUse F, kernels []F) string {
	same := func(g F) bool { return reflect.ValueOf(inUse).Pointer() == reflect.ValueOf(g).Pointer() }
	switch {
	case reflect.ValueOf(inUse).IsNil():
		return "generic"
	case len(kernels) > 1 && same(kernels[1]):
		return "avx512"
	case len(kernels) > 0 && same(kernels[0]):
		return "avx2"
	}
	return "unknown"
}
