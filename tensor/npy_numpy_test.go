package tensor

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The interop test checks our reader against files numpy writes and numpy's
// reader against files we write. Both sides compute the same values from the
// row-major flat index f of a (2, 3, 4) array, per dtype:
//
//	float32, float64: f*0.1 (float32 rounds the float64 product)
//	complex64:        f*0.5 + i(1 - f*0.25)
//	complex128:       f*0.1 - i f*0.3
//	int32:            f*1000 - 12000
//	int64:            f*2^40 - 2^45
//	bool:             f%3 == 0
const numpyCommon = `
import sys, numpy as np
d = sys.argv[1]
base = np.arange(24).reshape(2, 3, 4)
def make(dt):
    if dt == 'float32': return (base * 0.1).astype(np.float32)
    if dt == 'float64': return base * 0.1
    if dt == 'complex64': return (base * 0.5 + 1j * (1 - base * 0.25)).astype(np.complex64)
    if dt == 'complex128': return base * 0.1 - 1j * (base * 0.3)
    if dt == 'int32': return (base * 1000 - 12000).astype(np.int32)
    if dt == 'int64': return base.astype(np.int64) * (1 << 40) - (1 << 45)
    if dt == 'bool': return base % 3 == 0
    raise ValueError(dt)
dts = ['float32', 'float64', 'complex64', 'complex128', 'int32', 'int64', 'bool']
`

const numpyWrite = numpyCommon + `
for dt in dts:
    a = make(dt)
    np.save(f'{d}/{dt}_C.npy', a)
    np.save(f'{d}/{dt}_F.npy', np.asfortranarray(a))
    if dt != 'bool':
        np.save(f'{d}/{dt}_BE.npy', a.astype(a.dtype.newbyteorder('>')))
        np.save(f'{d}/{dt}_BEF.npy', np.asfortranarray(a.astype(a.dtype.newbyteorder('>'))))
    for v in (2, 3):
        with open(f'{d}/{dt}_V{v}.npy', 'wb') as fh:
            np.lib.format.write_array(fh, a, version=(v, 0))
    np.save(f'{d}/{dt}_SLICED.npy', a[:, ::2, ::-1])
    np.save(f'{d}/{dt}_SCALAR.npy', a[1, 2, 3])
    np.save(f'{d}/{dt}_EMPTY.npy', a[:, :0, :])
print('wrote')
`

const numpyCheck = numpyCommon + `
n = 0
bad = []
for dt in dts:
    want = make(dt)
    cases = {'C': want, 'F': want, 'REV': want[::-1, :, ::-1], 'SCALAR': want[1, 2, 3], 'EMPTY': want[:, :0, :]}
    for name, w in cases.items():
        a = np.load(f'{d}/go_{dt}_{name}.npy')
        n += 1
        if a.dtype != w.dtype or a.shape != np.shape(w) or not np.array_equal(a, w):
            bad.append(f'{dt} {name}: got {a.dtype} {a.shape} {a!r}, want {w!r}')
        if name == 'F' and not (a.flags.f_contiguous and not a.flags.c_contiguous):
            bad.append(f'{dt} F: numpy loaded it with flags {a.flags}')
    s = np.load(f'{d}/go_{dt}_STREAM.npy')
    n += 1
    if not np.array_equal(s, want):
        bad.append(f'{dt} STREAM: {s!r}')
if bad:
    print('\n'.join(bad))
    sys.exit(1)
print(f'checked {n} files')
`

// numpyPython returns a Python interpreter that has numpy, or skips the test.
func numpyPython(t *testing.T) string {
	t.Helper()
	var tried []string
	for _, c := range []string{"/usr/bin/python3", "python3"} {
		p, err := exec.LookPath(c)
		if err != nil {
			tried = append(tried, c+": not found")
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		out, err := exec.CommandContext(ctx, p, "-c", "import numpy").CombinedOutput()
		cancel()
		if err == nil {
			return p
		}
		tried = append(tried, fmt.Sprintf("%s: %v %s", p, err, strings.TrimSpace(string(out))))
	}
	t.Skipf("numpy interop test skipped: no python3 with numpy (%s)", strings.Join(tried, "; "))
	return ""
}

func runPython(t *testing.T, py, script, dir string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, py, "-c", script, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("python failed: %v\n%s", err, out)
	}
	t.Logf("python: %s", strings.TrimSpace(string(out)))
}

// numpyValues returns the (2, 3, 4) row-major tensor both sides agree on.
func numpyValues(t *testing.T, dt DType) *Tensor {
	t.Helper()
	x, err := Zeros(dt, 2, 3, 4)
	if err != nil {
		t.Fatal(err)
	}
	switch b := x.data.(type) {
	case []float32:
		for f := range b {
			b[f] = float32(float64(f) * 0.1)
		}
	case []float64:
		for f := range b {
			b[f] = float64(f) * 0.1
		}
	case []complex64:
		for f := range b {
			b[f] = complex64(complex(float64(f)*0.5, 1-float64(f)*0.25))
		}
	case []complex128:
		for f := range b {
			b[f] = complex(float64(f)*0.1, 0-float64(f)*0.3) // 0-x, not -x: numpy subtracts, so f=0 gives +0
		}
	case []int32:
		for f := range b {
			b[f] = int32(f*1000 - 12000)
		}
	case []int64:
		for f := range b {
			b[f] = int64(f)<<40 - 1<<45
		}
	case []bool:
		for f := range b {
			b[f] = f%3 == 0
		}
	}
	return x
}

func mustSlice(t *testing.T, x *Tensor, r ...Range) *Tensor {
	t.Helper()
	v, err := x.Slice(r...)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestNpyReadNumpyFiles(t *testing.T) {
	py := numpyPython(t)
	dir := t.TempDir()
	runPython(t, py, numpyWrite, dir)
	rev := Range{Full: true, Step: -1}
	for _, dt := range DTypes {
		want := numpyValues(t, dt)
		cases := map[string]*Tensor{
			"C":      want,
			"F":      want,
			"V2":     want,
			"V3":     want,
			"SLICED": mustSlice(t, want, All, Range{Full: true, Step: 2}, rev),
			"SCALAR": mustSlice(t, want, R(1, 2), R(2, 3), R(3, 4)),
			"EMPTY":  mustSlice(t, want, All, R(0, 0)),
		}
		if dt != Bool {
			cases["BE"], cases["BEF"] = want, want
		}
		for name, w := range cases {
			if name == "SCALAR" {
				w, _ = w.Reshape()
			}
			got, err := LoadNpy(filepath.Join(dir, dt.String()+"_"+name+".npy"))
			if err != nil {
				t.Errorf("%v %s: %v", dt, name, err)
				continue
			}
			if err := sameBits(got, w); err != nil {
				t.Errorf("%v %s: %v", dt, name, err)
			}
			if strings.HasPrefix(name, "F") || name == "BEF" {
				if fmt.Sprint(got.Strides()) != "[1 2 6]" {
					t.Errorf("%v %s: strides %v, want column-major", dt, name, got.Strides())
				}
			}
		}
	}
}

func TestNpyNumpyReadsOurFiles(t *testing.T) {
	py := numpyPython(t)
	dir := t.TempDir()
	rev := Range{Full: true, Step: -1}
	for _, dt := range DTypes {
		x := numpyValues(t, dt)
		scalar, _ := mustSlice(t, x, R(1, 2), R(2, 3), R(3, 4)).Reshape()
		files := map[string]*Tensor{
			"C":      x,
			"F":      x.T().Clone().T(),
			"REV":    mustSlice(t, x, rev, All, rev),
			"SCALAR": scalar,
			"EMPTY":  mustSlice(t, x, All, R(0, 0)),
		}
		for name, v := range files {
			if err := SaveNpy(filepath.Join(dir, "go_"+dt.String()+"_"+name+".npy"), v); err != nil {
				t.Fatal(err)
			}
		}
		// A tensor read back from a Fortran file is written as one.
		var sb strings.Builder
		if err := WriteNpy(&sb, files["F"]); err != nil {
			t.Fatal(err)
		}
		back, err := ReadNpy(strings.NewReader(sb.String()))
		if err != nil {
			t.Fatal(err)
		}
		if err := SaveNpy(filepath.Join(dir, "go_"+dt.String()+"_STREAM.npy"), back); err != nil {
			t.Fatal(err)
		}
	}
	runPython(t, py, numpyCheck, dir)
}

// TestSliceMatchesPython compares Slice with Python's own slicing of a list,
// for every small extent, bound and step.
func TestSliceMatchesPython(t *testing.T) {
	py := numpyPython(t)
	const script = `
for n in range(6):
    a = list(range(n))
    for step in (-3, -2, -1, 1, 2, 3):
        print('F', n, step, *a[::step])
        for start in range(-8, 9):
            for stop in range(-8, 9):
                print('R', n, step, start, stop, *a[start:stop:step])
`
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, py, "-c", script).Output()
	if err != nil {
		t.Fatalf("python: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for _, line := range lines {
		f := strings.Fields(line)
		num := func(i int) int {
			v, err := strconv.Atoi(f[i])
			if err != nil {
				t.Fatalf("line %q: %v", line, err)
			}
			return v
		}
		n, step := num(1), num(2)
		r, want := Range{Full: true, Step: step}, f[3:]
		if f[0] == "R" {
			r, want = Range{Start: num(3), Stop: num(4), Step: step}, f[5:]
		}
		x, _ := Arange(Int64, n)
		v, err := x.Slice(r)
		if err != nil {
			t.Fatalf("%+v of %d: %v", r, n, err)
		}
		got, _ := Values[int64](v)
		if fmt.Sprint(got) != "["+strings.Join(want, " ")+"]" {
			t.Fatalf("Slice(%+v) of arange(%d) = %v, Python gives %v", r, n, got, want)
		}
	}
	if len(lines) < 6000 {
		t.Fatalf("only %d cases", len(lines))
	}
}
