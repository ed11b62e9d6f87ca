package linalg

import (
	"context"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/goferro/goferro/tensor"
)

// numpyPython returns /usr/bin/python3 when it has numpy, or skips.
func numpyPython(t testing.TB) string {
	t.Helper()
	const py = "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import numpy").Run(); err != nil {
		t.Skipf("no numpy at %s: %v", py, err)
	}
	return py
}

// numpyValues is run as `python3 -c numpyValues dir names...`: for each
// name it loads name.npy and writes name.s.npy (numpy.linalg.svd's
// singular values) and, for square inputs, name.w.npy
// (numpy.linalg.eigvalsh's eigenvalues of the lower triangle).
const numpyValues = `
import sys, numpy as np
d = sys.argv[1]
for name in sys.argv[2:]:
    a = np.load(f'{d}/{name}.npy')
    np.save(f'{d}/{name}.s.npy', np.linalg.svd(a, compute_uv=False))
    if a.shape[-1] == a.shape[-2]:
        np.save(f'{d}/{name}.w.npy', np.linalg.eigvalsh(a))
`

// TestValuesMatchNumpy compares singular values and eigenvalues with
// numpy.linalg's on the same seeded inputs, every dtype and kind.
func TestValuesMatchNumpy(t *testing.T) {
	py := numpyPython(t)
	dir := t.TempDir()
	type input struct {
		name string
		a    cm
		dt   tensor.DType
		herm bool
	}
	var ins []input
	for _, dt := range allDTypes {
		for _, kind := range kinds {
			for _, sh := range [][2]int{{0, 0}, {3, 0}, {1, 1}, {6, 6}, {40, 40}, {50, 21}, {21, 50}, {100, 100}} {
				m, n := sh[0], sh[1]
				a := roundTo(testMatrix(kind, m, n, dt, 11), dt)
				ins = append(ins, input{fmt.Sprintf("%v_%s_%dx%d", dt, kind, m, n), a, dt, false})
				if m == n {
					h := roundTo(hermitianMatrix(kind, n, dt, 12), dt)
					ins = append(ins, input{fmt.Sprintf("%v_%s_%d_herm", dt, kind, n), h, dt, true})
				}
			}
		}
	}
	args := []string{"-c", numpyValues, dir}
	for _, in := range ins {
		if err := tensor.SaveNpy(filepath.Join(dir, in.name+".npy"), toTensor(t, []cm{in.a}, in.dt)); err != nil {
			t.Fatal(err)
		}
		args = append(args, in.name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, py, args...).CombinedOutput(); err != nil {
		t.Fatalf("numpy: %v\n%s", err, out)
	}
	for _, in := range ins {
		x := toTensor(t, []cm{in.a}, in.dt)
		bound := tol(in.dt, in.a.r, in.a.c) * max(in.a.norm(), 1e-300)
		compare := func(what string, got *tensor.Tensor, file string) {
			want, err := tensor.LoadNpy(filepath.Join(dir, file))
			if err != nil {
				t.Fatal(err)
			}
			if got.DType() != want.DType() {
				t.Errorf("%s %s: dtype %v, numpy %v", in.name, what, got.DType(), want.DType())
			}
			g, w := vectorsOf(got)[0], vectorsOf(want)[0]
			if len(g) != len(w) {
				t.Fatalf("%s %s: %d values, numpy %d", in.name, what, len(g), len(w))
			}
			for i := range g {
				if math.Abs(g[i]-w[i]) > bound {
					t.Errorf("%s %s[%d] = %.17g, numpy %.17g (bound %.3g)", in.name, what, i, g[i], w[i], bound)
				}
			}
		}
		s, err := SVDVals(x)
		if err != nil {
			t.Fatal(err)
		}
		compare("singular value", s, in.name+".s.npy")
		if in.herm {
			w, err := EigvalsH(x)
			if err != nil {
				t.Fatal(err)
			}
			compare("eigenvalue", w, in.name+".w.npy")
		}
	}
}
