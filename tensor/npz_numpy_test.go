package tensor

import (
	"fmt"
	"path/filepath"
	"testing"
)

// numpyNarrow writes, for each numpy type goferro reads by conversion, an
// array of it (C and Fortran order, little- and big-endian) and the same
// values converted by numpy to the dtype goferro reads it into, plus every
// one of the 65536 float16 bit patterns. It also writes two .npz archives
// with numpy.savez and numpy.savez_compressed.
const numpyNarrow = `
import sys, numpy as np
d = sys.argv[1]
base = np.arange(24).reshape(2, 3, 4)
cases = {
    'f2': ((base - 12) * 0.3).astype(np.float16),
    'i1': (base * 11 - 128).astype(np.int8),
    'i2': (base * 2731 - 32768).astype(np.int16),
    'u1': (base * 11).astype(np.uint8),
    'u2': (base * 2849).astype(np.uint16),
    'u4': (base.astype(np.uint64) * 186737708).astype(np.uint32),
    'u8': base.astype(np.uint64) * (1 << 58),
}
target = {'f2': np.float32, 'i1': np.int32, 'i2': np.int32, 'u1': np.int32, 'u2': np.int32, 'u4': np.int64, 'u8': np.int64}
for code, a in cases.items():
    np.save(f'{d}/{code}_C.npy', a)
    np.save(f'{d}/{code}_F.npy', np.asfortranarray(a))
    np.save(f'{d}/{code}_BE.npy', a.astype(a.dtype.newbyteorder('>')))
    np.save(f'{d}/{code}_want.npy', a.astype(target[code]))
h = np.arange(65536, dtype=np.uint16).view(np.float16)
np.save(f'{d}/half_all.npy', h)
np.save(f'{d}/half_all_want.npy', h.astype(np.float32))
arrays = {'x': base * 0.5, 'y': (base % 3 == 0), 'z': np.asfortranarray(base.astype(np.complex64)), 'h': cases['f2'], 'u': cases['u2']}
np.savez(f'{d}/plain.npz', **arrays)
np.savez_compressed(f'{d}/compressed.npz', **arrays)
for k, v in arrays.items():
    np.save(f'{d}/npz_{k}.npy', v)
`

func TestNpyNarrowNumpyFiles(t *testing.T) {
	py := numpyPython(t)
	dir := t.TempDir()
	runPython(t, py, numpyNarrow, dir)
	load := func(name string) *Tensor {
		t.Helper()
		x, err := LoadNpy(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	for _, code := range []string{"f2", "i1", "i2", "u1", "u2", "u4", "u8"} {
		want := load(code + "_want.npy")
		for _, v := range []string{"C", "F", "BE"} {
			if err := sameBits(load(code+"_"+v+".npy"), want); err != nil {
				t.Errorf("%s %s: %v", code, v, err)
			}
		}
	}
	if err := sameBits(load("half_all.npy"), load("half_all_want.npy")); err != nil {
		t.Errorf("all float16 values: %v", err)
	}
	for _, archive := range []string{"plain.npz", "compressed.npz"} {
		m, err := LoadNpz(filepath.Join(dir, archive))
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]*Tensor{}
		for _, k := range []string{"x", "y", "z", "h", "u"} {
			want[k] = load("npz_" + k + ".npy")
		}
		t.Run(archive, func(t *testing.T) { sameArrays(t, m, want) })
	}
}

// numpyCheckNpz checks the archives Go wrote against the values both sides
// compute (numpyValues).
const numpyCheckNpz = numpyCommon + `
bad = []
for name in ('go_plain.npz', 'go_compressed.npz'):
    with np.load(f'{d}/{name}') as z:
        if sorted(z.files) != sorted(dts + ['F_float64']):
            bad.append(f'{name}: arrays {z.files}')
        for dt in dts:
            a = z[dt]
            if a.dtype != make(dt).dtype or not np.array_equal(a, make(dt)):
                bad.append(f'{name} {dt}: {a!r}')
        f = z['F_float64']
        if not (np.array_equal(f, make('float64').T) and f.flags.f_contiguous):
            bad.append(f'{name} F_float64: {f!r}')
if bad:
    print('\n'.join(bad))
    sys.exit(1)
print('checked')
`

func TestNpzNumpyReadsOurFiles(t *testing.T) {
	py := numpyPython(t)
	dir := t.TempDir()
	m := map[string]*Tensor{}
	for _, dt := range DTypes {
		m[dt.String()] = numpyValues(t, dt)
	}
	m["F_float64"] = numpyValues(t, Float64).T()
	for _, save := range []struct {
		name string
		f    func(string, map[string]*Tensor) error
	}{{"go_plain.npz", SaveNpz}, {"go_compressed.npz", SaveNpzCompressed}} {
		if err := save.f(filepath.Join(dir, save.name), m); err != nil {
			t.Fatal(fmt.Errorf("%s: %w", save.name, err))
		}
	}
	runPython(t, py, numpyCheckNpz, dir)
}
