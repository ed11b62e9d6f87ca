package main

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/tensor"
)

// TestEinsumMixedDTypes: goferro einsum and goferro run --einsum promote
// operands of different dtypes as numpy does, and accept integer and bool
// operands (run --einsum refused them): the result has the operands'
// tensor.ResultType and cpu.Contract's values (which TestAgainstNumpy
// holds to numpy.einsum).
func TestEinsumMixedDTypes(t *testing.T) {
	dir := t.TempDir()
	save := func(name string, dt tensor.DType, shape ...int) string {
		x, err := tensor.Rand(tensor.NewRNG(uint64(len(name))), tensor.Float64, shape...)
		if err != nil {
			t.Fatal(err)
		}
		// Values in -4..4 (for bool: which are nonzero).
		v, _ := tensor.Buffer[float64](x)
		for i := range v {
			v[i] = float64(int(v[i]*9) - 4)
		}
		if x, err = cpu.Convert(x, dt); err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, name+".npy")
		if err := tensor.SaveNpy(f, x); err != nil {
			t.Fatal(err)
		}
		return f
	}
	const eq = "ij,jk->ik"
	for _, c := range [][2]tensor.DType{
		{tensor.Int64, tensor.Float32}, {tensor.Float32, tensor.Float64}, {tensor.Bool, tensor.Int32},
		{tensor.Int64, tensor.Int64}, {tensor.Bool, tensor.Bool}, {tensor.Float64, tensor.Complex64},
	} {
		name := fmt.Sprintf("%v×%v", c[0], c[1])
		a, b := save("a"+name, c[0], 3, 4), save("b"+name, c[1], 4, 2)
		ta, _ := tensor.LoadNpy(a)
		tb, _ := tensor.LoadNpy(b)
		want, err := cpu.Contract(eq, ta, tb)
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "out"+name+".npy")
		mustRun(t, "einsum", eq, a, b, "-o", out)
		runDir := filepath.Join(dir, "run"+name)
		mustRun(t, "run", "--einsum", eq, "--input", a, "--input", b, "--out", runDir)
		for _, f := range []string{out, filepath.Join(runDir, "out0.npy")} {
			got, err := tensor.LoadNpy(f)
			if err != nil {
				t.Fatal(err)
			}
			if dt := tensor.ResultType(c[0], c[1]); got.DType() != dt {
				t.Errorf("%s: %s is %v, want %v", name, f, got.DType(), dt)
			}
			if err := tensor.CheckClose(got, want, 1e-6, 1e-6); err != nil {
				t.Errorf("%s: %s: %v", name, f, err)
			}
		}
	}
}
