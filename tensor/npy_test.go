package tensor

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// sample returns a tensor of dt and shape with varied values, including the
// float specials whose bits a round trip must keep (NaN, ±Inf, -0).
func sample(t testing.TB, dt DType, seed uint64, shape ...int) *Tensor {
	t.Helper()
	x, err := Rand(NewRNG(seed), dt, shape...)
	if err != nil {
		t.Fatal(err)
	}
	specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), -1.5e300, 1e-310}
	switch b := x.data.(type) {
	case []float32:
		for i := 0; i < len(b) && i < len(specials); i++ {
			b[i] = float32(specials[i])
		}
	case []float64:
		for i := 0; i < len(b) && i < len(specials); i++ {
			b[i] = specials[i]
		}
	case []complex64:
		for i := 0; i < len(b) && i < len(specials); i++ {
			b[i] = complex(float32(specials[i]), -float32(specials[len(specials)-1-i]))
		}
	case []complex128:
		for i := 0; i < len(b) && i < len(specials); i++ {
			b[i] = complex(specials[i], -specials[len(specials)-1-i])
		}
	case []int32:
		if len(b) > 1 {
			b[0], b[1] = math.MinInt32, math.MaxInt32
		}
	case []int64:
		if len(b) > 1 {
			b[0], b[1] = math.MinInt64, math.MaxInt64
		}
	}
	return x
}

// sameBits reports how got differs from want: dtype, shape, or the bits of an
// element (so NaN equals NaN and -0 differs from 0).
func sameBits(got, want *Tensor) error {
	if got.DType() != want.DType() {
		return fmt.Errorf("dtype %v, want %v", got.DType(), want.DType())
	}
	if !got.Shape().Equal(want.Shape()) {
		return fmt.Errorf("shape %v, want %v", got.Shape(), want.Shape())
	}
	var g, w []uint64
	switch got.DType() {
	case Float32:
		g, w = bitsOf(got, func(v float32) []uint64 { return []uint64{uint64(math.Float32bits(v))} }), bitsOf(want, func(v float32) []uint64 { return []uint64{uint64(math.Float32bits(v))} })
	case Float64:
		f := func(v float64) []uint64 { return []uint64{math.Float64bits(v)} }
		g, w = bitsOf(got, f), bitsOf(want, f)
	case Complex64:
		f := func(v complex64) []uint64 {
			return []uint64{uint64(math.Float32bits(real(v))), uint64(math.Float32bits(imag(v)))}
		}
		g, w = bitsOf(got, f), bitsOf(want, f)
	case Complex128:
		f := func(v complex128) []uint64 { return []uint64{math.Float64bits(real(v)), math.Float64bits(imag(v))} }
		g, w = bitsOf(got, f), bitsOf(want, f)
	case Int32:
		f := func(v int32) []uint64 { return []uint64{uint64(v)} }
		g, w = bitsOf(got, f), bitsOf(want, f)
	case Int64:
		f := func(v int64) []uint64 { return []uint64{uint64(v)} }
		g, w = bitsOf(got, f), bitsOf(want, f)
	case Bool:
		f := func(v bool) []uint64 {
			if v {
				return []uint64{1}
			}
			return []uint64{0}
		}
		g, w = bitsOf(got, f), bitsOf(want, f)
	}
	if len(g) != len(w) {
		return fmt.Errorf("%d words, want %d", len(g), len(w))
	}
	for i := range g {
		if g[i] != w[i] {
			return fmt.Errorf("word %d is %#x, want %#x (got %v, want %v)", i, g[i], w[i], got, want)
		}
	}
	return nil
}

func bitsOf[T Elem](x *Tensor, f func(T) []uint64) []uint64 {
	vals, err := Values[T](x)
	if err != nil {
		panic(err)
	}
	var out []uint64
	for _, v := range vals {
		out = append(out, f(v)...)
	}
	return out
}

// plainReader hides Len and other methods, so ReadNpy cannot know the size.
type plainReader struct{ r io.Reader }

func (p plainReader) Read(b []byte) (int, error) { return p.r.Read(b) }

// layouts returns the tensor itself, its column-major twin and a strided
// view with the same values, to write each layout.
func layouts(t testing.TB, x *Tensor) map[string]*Tensor {
	t.Helper()
	out := map[string]*Tensor{"C": x}
	// Column-major copy: clone the reversed-axes view, then reverse back.
	out["F"] = x.T().Clone().T()
	// A non-contiguous view: a padded buffer sliced back to x's shape.
	if x.Rank() > 0 {
		shape := x.Shape()
		shape[0] *= 2
		big, err := Zeros(x.DType(), shape...)
		if err != nil {
			t.Fatal(err)
		}
		v, err := big.Slice(Range{Full: true, Step: 2})
		if err != nil {
			t.Fatal(err)
		}
		if err := CopyInto(v, x); err != nil {
			t.Fatal(err)
		}
		out["strided"] = v
	}
	return out
}

var roundTripShapes = [][]int{{}, {0}, {5}, {2, 3}, {2, 0, 3}, {3, 1, 4, 2}, {1, 1}}

func TestNpyRoundTrip(t *testing.T) {
	for _, dt := range DTypes {
		for si, shape := range roundTripShapes {
			x := sample(t, dt, uint64(si), shape...)
			for name, v := range layouts(t, x) {
				t.Run(fmt.Sprintf("%v/%v/%s", dt, Shape(shape), name), func(t *testing.T) {
					var buf bytes.Buffer
					if err := WriteNpy(&buf, v); err != nil {
						t.Fatal(err)
					}
					b := buf.Bytes()
					if !bytes.HasPrefix(b, []byte("\x93NUMPY\x01\x00")) {
						t.Fatalf("not a version 1.0 file: %q", b[:min(len(b), 10)])
					}
					hlen := int(binary.LittleEndian.Uint16(b[8:]))
					if (10+hlen)%64 != 0 || b[10+hlen-1] != '\n' {
						t.Fatalf("header of %d bytes is not padded to 64 and newline-terminated", hlen)
					}
					if want := len(shape) > 1 && name == "F" && !v.IsContiguous(); strings.Contains(string(b[10:10+hlen]), "True") != want {
						t.Fatalf("fortran_order should be %v: %q", want, b[10:10+hlen])
					}
					if want := 10 + hlen + x.Len()*dt.Size(); len(b) != want {
						t.Fatalf("file has %d bytes, want %d", len(b), want)
					}
					for _, r := range []io.Reader{bytes.NewReader(b), plainReader{bytes.NewReader(b)}} {
						got, err := ReadNpy(r)
						if err != nil {
							t.Fatal(err)
						}
						if err := sameBits(got, x); err != nil {
							t.Fatal(err)
						}
						// Fortran files come back column-major, so
						// writing them again keeps the order.
						var again bytes.Buffer
						if err := WriteNpy(&again, got); err != nil {
							t.Fatal(err)
						}
						if !bytes.Equal(again.Bytes(), b) {
							t.Fatalf("rewritten file differs:\n%q\n%q", again.Bytes(), b)
						}
					}
				})
			}
		}
	}
}

func TestNpyFortranStrides(t *testing.T) {
	x := sample(t, Int64, 1, 2, 3, 4)
	var buf bytes.Buffer
	if err := WriteNpy(&buf, x.T().Clone().T()); err != nil {
		t.Fatal(err)
	}
	got, err := ReadNpy(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if s := got.Strides(); fmt.Sprint(s) != "[1 2 6]" {
		t.Fatalf("fortran file read with strides %v, want column-major [1 2 6]", s)
	}
	if err := sameBits(got, x); err != nil {
		t.Fatal(err)
	}
}

func TestNpyFiles(t *testing.T) {
	dir := t.TempDir()
	for _, dt := range DTypes {
		x := sample(t, dt, 7, 3, 4)
		p := filepath.Join(dir, dt.String()+".npy")
		if err := SaveNpy(p, x); err != nil {
			t.Fatal(err)
		}
		got, err := LoadNpy(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := sameBits(got, x); err != nil {
			t.Fatal(err)
		}
	}
	_, err := LoadNpy(filepath.Join(dir, "missing.npy"))
	if !errors.Is(err, ErrIO) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
	if err := SaveNpy(filepath.Join(dir, "no", "such", "dir.npy"), Scalar(1.0)); !errors.Is(err, ErrIO) {
		t.Fatalf("bad path: %v", err)
	}
	// A file whose header lies about the size is caught from its length.
	p := filepath.Join(dir, "short.npy")
	b := npyFile(1, "<f8", false, "(1000000000000,)", make([]byte, 16))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadNpy(p); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "short.npy") {
		t.Fatalf("short file: %v", err)
	}
}

func TestNpyStream(t *testing.T) {
	var buf bytes.Buffer
	want := []*Tensor{sample(t, Float32, 1, 3), sample(t, Bool, 2, 2, 2), Scalar(int64(-7))}
	for _, x := range want {
		if err := WriteNpy(&buf, x); err != nil {
			t.Fatal(err)
		}
	}
	r := plainReader{&buf}
	for i, x := range want {
		got, err := ReadNpy(r)
		if err != nil {
			t.Fatalf("array %d: %v", i, err)
		}
		if err := sameBits(got, x); err != nil {
			t.Fatalf("array %d: %v", i, err)
		}
	}
	if _, err := ReadNpy(r); !errors.Is(err, io.EOF) || !errors.Is(err, ErrFormat) {
		t.Fatalf("after the last array: %v, want ErrFormat and io.EOF", err)
	}
}

// npyFile assembles a .npy file by hand, with the header dict given as its
// descr, order and shape text.
func npyFile(major byte, descr string, fortran bool, shape string, data []byte) []byte {
	order := "False"
	if fortran {
		order = "True"
	}
	return npyRaw(major, fmt.Sprintf("{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", descr, order, shape), data)
}

// npyRaw assembles a file from a literal header text.
func npyRaw(major byte, header string, data []byte) []byte {
	b := []byte("\x93NUMPY")
	b = append(b, major, 0)
	header += "\n"
	if major == 1 {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(header)))
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(header)))
	}
	b = append(b, header...)
	return append(b, data...)
}

func TestNpyVersionsAndByteOrder(t *testing.T) {
	le := make([]byte, 0, 48)
	be := make([]byte, 0, 48)
	for i := range 6 {
		le = binary.LittleEndian.AppendUint64(le, math.Float64bits(float64(i)+0.5))
		be = binary.BigEndian.AppendUint64(be, math.Float64bits(float64(i)+0.5))
	}
	want, _ := New([]float64{0.5, 1.5, 2.5, 3.5, 4.5, 5.5}, 2, 3)
	wantF, _ := New([]float64{0.5, 2.5, 4.5, 1.5, 3.5, 5.5}, 2, 3)
	cases := map[string][]byte{
		"v1":               npyFile(1, "<f8", false, "(2, 3)", le),
		"v2":               npyFile(2, "<f8", false, "(2, 3)", le),
		"v3":               npyFile(3, "<f8", false, "(2, 3)", le),
		"big-endian":       npyFile(1, ">f8", false, "(2, 3)", be),
		"native":           npyFile(1, "=f8", false, "(2,3)", le),
		"double quotes":    npyRaw(1, `{"descr":"<f8","fortran_order":False,"shape":(2,3)}`, le),
		"key order":        npyRaw(1, "{'shape': (2, 3), 'fortran_order': False, 'descr': '<f8'}", le),
		"python2 longs":    npyRaw(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2L, 3L), }", le),
		"newlines":         npyRaw(1, "{\n 'descr' : '<f8' ,\n 'fortran_order' : False ,\n 'shape' : ( 2 , 3 , ) ,\n}", le),
		"trailing data":    append(npyFile(1, "<f8", false, "(2, 3)", le), "junk"...),
		"fortran":          npyFile(1, "<f8", true, "(2, 3)", le),
		"fortran big-end.": npyFile(3, ">f8", true, "(2, 3)", be),
	}
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		delete(cases, "native")
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ReadNpy(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			w := want
			if strings.HasPrefix(name, "fortran") {
				w = wantF
			}
			if err := sameBits(got, w); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestNpyWriteVersion2(t *testing.T) {
	// numpy switches to version 2.0 when the header outgrows 65535 bytes;
	// only a very high rank gets there with our dtypes.
	shape := make([]int, 25000)
	for i := range shape {
		shape[i] = 1
	}
	x, err := Full(Int32, 42, shape...)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteNpy(&buf, x); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if !bytes.HasPrefix(b, []byte("\x93NUMPY\x02\x00")) {
		t.Fatalf("want a version 2.0 file, got %q", b[:8])
	}
	if hlen := int(binary.LittleEndian.Uint32(b[8:])); (12+hlen)%64 != 0 {
		t.Fatalf("header of %d bytes not padded", hlen)
	}
	got, err := ReadNpy(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := sameBits(got, x); err != nil {
		t.Fatal(err)
	}
}

// failingWriter accepts n bytes, then fails with errBoom.
type failingWriter struct{ n int }

var errBoom = errors.New("boom")

func (f *failingWriter) Write(b []byte) (int, error) {
	if f.n < len(b) {
		k := f.n
		f.n = 0
		return k, errBoom
	}
	f.n -= len(b)
	return len(b), nil
}

// failingReader fails every read with errBoom.
type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errBoom }

func TestNpyIOErrors(t *testing.T) {
	x := sample(t, Float64, 1, 100)
	for _, n := range []int{0, 5, 200} {
		if err := WriteNpy(&failingWriter{n: n}, x); !errors.Is(err, ErrIO) || !errors.Is(err, errBoom) {
			t.Fatalf("write failing after %d bytes: %v", n, err)
		}
	}
	var buf bytes.Buffer
	if err := WriteNpy(&buf, x); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	for _, n := range []int{0, 4, 9, 30, 100, len(b) - 1} {
		_, err := ReadNpy(io.MultiReader(bytes.NewReader(b[:n]), failingReader{}))
		if !errors.Is(err, ErrIO) || !errors.Is(err, errBoom) {
			t.Fatalf("read failing after %d bytes: %v", n, err)
		}
	}
	if err := WriteNpy(io.Discard, nil); !errors.Is(err, ErrLayout) {
		t.Fatalf("nil tensor: %v", err)
	}
	if err := WriteNpy(io.Discard, &Tensor{}); !errors.Is(err, ErrDType) {
		t.Fatalf("zero tensor: %v", err)
	}
}

func TestNpyMalformed(t *testing.T) {
	f8 := func(n int) []byte { return make([]byte, 8*n) }
	good := npyFile(1, "<f8", false, "(2, 3)", f8(6))
	withLen := func(major byte, hlen uint32) []byte {
		b := []byte("\x93NUMPY")
		b = append(b, major, 0)
		b = binary.LittleEndian.AppendUint32(b, hlen)
		return append(b, "{'descr': '<f8'"...)
	}
	cases := []struct {
		name string
		in   []byte
		kind error
	}{
		{"empty", nil, ErrFormat},
		{"short magic", []byte("\x93NUM"), ErrFormat},
		{"bad magic", append([]byte("\x93NUMPX"), good[6:]...), ErrFormat},
		{"text file", []byte("hello, world, this is not numpy"), ErrFormat},
		{"version 4.0", append([]byte("\x93NUMPY\x04\x00"), good[8:]...), ErrFormat},
		{"version 1.1", append([]byte("\x93NUMPY\x01\x01"), good[8:]...), ErrFormat},
		{"no header length", []byte("\x93NUMPY\x01\x00\x10"), ErrFormat},
		{"header truncated", good[:40], ErrFormat},
		{"header length lies", withLen(2, 5000), ErrFormat},
		{"header length 4 GiB", withLen(2, math.MaxUint32), ErrFormat},
		{"data truncated", good[:len(good)-1], ErrFormat},
		{"no data", good[:len(good)-48], ErrFormat},
		{"not a dict", npyRaw(1, "[1, 2]", nil), ErrFormat},
		{"empty header", npyRaw(1, "", nil), ErrFormat},
		{"empty dict", npyRaw(1, "{}", nil), ErrFormat},
		{"missing shape", npyRaw(1, "{'descr': '<f8', 'fortran_order': False}", nil), ErrFormat},
		{"missing descr", npyRaw(1, "{'shape': (), 'fortran_order': False}", nil), ErrFormat},
		{"extra key", npyRaw(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), 'x': 1}", f8(1)), ErrFormat},
		{"repeated key", npyRaw(1, "{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': ()}", f8(1)), ErrFormat},
		{"unterminated dict", npyRaw(1, "{'descr': '<f8', 'fortran_order': False, 'shape': ()", f8(1)), ErrFormat},
		{"missing comma", npyRaw(1, "{'descr': '<f8' 'fortran_order': False, 'shape': ()}", f8(1)), ErrFormat},
		{"missing colon", npyRaw(1, "{'descr' '<f8', 'fortran_order': False, 'shape': ()}", f8(1)), ErrFormat},
		{"unterminated string", npyRaw(1, "{'descr: '<f8', 'fortran_order': False, 'shape': ()}", f8(1)), ErrFormat},
		{"escape in string", npyRaw(1, `{'descr': '<f\8', 'fortran_order': False, 'shape': ()}`, f8(1)), ErrFormat},
		{"text after dict", npyRaw(1, "{'descr': '<f8', 'fortran_order': False, 'shape': ()} x", f8(1)), ErrFormat},
		{"descr not a string", npyRaw(1, "{'descr': 8, 'fortran_order': False, 'shape': ()}", f8(1)), ErrFormat},
		{"fortran_order not bool", npyRaw(1, "{'descr': '<f8', 'fortran_order': 0, 'shape': ()}", f8(1)), ErrFormat},
		{"fortran_order lowercase", npyRaw(1, "{'descr': '<f8', 'fortran_order': false, 'shape': ()}", f8(1)), ErrFormat},
		{"shape not a tuple", npyRaw(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (6)}", f8(6)), ErrFormat},
		{"shape a list", npyRaw(1, "{'descr': '<f8', 'fortran_order': False, 'shape': [6]}", f8(6)), ErrFormat},
		{"shape unterminated", npyRaw(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (6,", f8(6)), ErrFormat},
		{"negative extent", npyFile(1, "<f8", false, "(-1,)", f8(1)), ErrFormat},
		{"float extent", npyFile(1, "<f8", false, "(1.5,)", f8(1)), ErrFormat},
		{"extent overflows int", npyFile(1, "<f8", false, "(99999999999999999999,)", f8(1)), ErrFormat},
		{"size overflows int", npyFile(1, "<f8", false, "(4294967296, 4294967296)", f8(1)), ErrFormat},
		{"bytes overflow int", npyFile(1, "<c16", false, "(1152921504606846976,)", f8(1)), ErrFormat},
		{"zero hides overflow", npyFile(1, "<f8", false, "(0, 4294967296, 4294967296)", nil), ErrFormat},
		{"huge declared size", npyFile(1, "<f8", false, "(1000000000000,)", f8(2)), ErrFormat},
		{"huge declared size 3-D", npyFile(1, "<i4", false, "(100000, 100000, 100000)", f8(2)), ErrFormat},
		{"uint64 beyond int64", npyFile(1, "<u8", false, "(2,)", append(f8(1), 0, 0, 0, 0, 0, 0, 0, 0x80)), ErrDType},
		{"unicode", npyFile(1, "<U3", false, "(2,)", f8(1)), ErrDType},
		{"datetime", npyFile(1, "<M8[ns]", false, "(2,)", f8(1)), ErrDType},
		{"long double", npyFile(1, "<f16", false, "(2,)", f8(4)), ErrDType},
		{"object", npyFile(1, "|O", false, "(2,)", f8(2)), ErrDType},
		{"unicode", npyFile(1, "<U3", false, "(2,)", f8(3)), ErrDType},
		{"garbage descr", npyFile(1, "zork", false, "(2,)", f8(2)), ErrDType},
		{"empty descr", npyFile(1, "", false, "(2,)", f8(2)), ErrDType},
		{"structured", npyRaw(1, "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (2,)}", f8(2)), ErrDType},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, sized := range []bool{true, false} {
				var r io.Reader = bytes.NewReader(c.in)
				if !sized {
					r = plainReader{r}
				}
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				got, err := ReadNpy(r)
				runtime.ReadMemStats(&after)
				if err == nil {
					t.Fatalf("sized=%v: no error, read %v", sized, got)
				}
				var e *Error
				if !errors.As(err, &e) || e.Kind != c.kind || !errors.Is(err, c.kind) {
					t.Fatalf("sized=%v: error %v (%T), want kind %v", sized, err, err, c.kind)
				}
				if e.Op != "ReadNpy" {
					t.Fatalf("sized=%v: op %q", sized, e.Op)
				}
				// A lying header may cost a bounded buffer, never
				// what it declares.
				if d := after.TotalAlloc - before.TotalAlloc; d > 8<<20 {
					t.Fatalf("sized=%v: reading %d bytes allocated %d bytes", sized, len(c.in), d)
				}
			}
		})
	}
}

// npySeeds are valid files for the fuzzer to start from: every dtype, both
// orders, all versions, both byte orders.
func npySeeds(t testing.TB) [][]byte {
	var seeds [][]byte
	for i, dt := range DTypes {
		for _, shape := range [][]int{{}, {3}, {2, 3}, {0, 2}} {
			x := sample(t, dt, uint64(i), shape...)
			for _, v := range layouts(t, x) {
				var buf bytes.Buffer
				if err := WriteNpy(&buf, v); err != nil {
					t.Fatal(err)
				}
				seeds = append(seeds, buf.Bytes())
			}
		}
	}
	be := make([]byte, 0, 24)
	for i := range 6 {
		be = binary.BigEndian.AppendUint32(be, uint32(i*1000))
	}
	seeds = append(seeds,
		npyFile(2, "<f4", true, "(2, 3)", be),
		npyFile(3, ">i4", false, "(3, 2)", be),
		npyFile(1, ">c8", false, "(3,)", be),
		npyFile(1, "|b1", false, "(24,)", be),
		npyRaw(1, "{'shape': (2L, 3L), 'fortran_order': True, 'descr': u'>i4'}", be),
		npyFile(1, "<f2", false, "(12,)", be),
		npyFile(1, ">f2", true, "(3, 4)", be),
		npyFile(1, "|i1", false, "(24,)", be),
		npyFile(1, "|u1", false, "(4, 6)", be),
		npyFile(1, ">i2", false, "(12,)", be),
		npyFile(1, "<u2", true, "(2, 6)", be),
		npyFile(1, ">u4", false, "(6,)", be),
		npyFile(1, "<u8", false, "(3,)", be),
		npyFile(1, ">u8", false, "(3,)", be),
	)
	return seeds
}

func FuzzReadNpy(f *testing.F) {
	for _, s := range npySeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		sized, errS := ReadNpy(bytes.NewReader(in))
		plain, errP := ReadNpy(plainReader{bytes.NewReader(in)})
		for _, err := range []error{errS, errP} {
			if err == nil {
				continue
			}
			var e *Error
			if !errors.As(err, &e) || (e.Kind != ErrFormat && e.Kind != ErrDType) {
				t.Fatalf("error %v (%T) is not a format or dtype *Error", err, err)
			}
		}
		if (errS == nil) != (errP == nil) {
			t.Fatalf("sized reader: %v; plain reader: %v", errS, errP)
		}
		if errS != nil {
			return
		}
		if err := sameBits(plain, sized); err != nil {
			t.Fatalf("plain and sized readers disagree: %v", err)
		}
		n, err := sized.Shape().NumElements()
		if err != nil || n != sized.Len() {
			t.Fatalf("shape %v, Len %d, err %v", sized.Shape(), sized.Len(), err)
		}
		var buf bytes.Buffer
		if err := WriteNpy(&buf, sized); err != nil {
			t.Fatal(err)
		}
		again, err := ReadNpy(&buf)
		if err != nil {
			t.Fatalf("reading back what we wrote: %v", err)
		}
		if err := sameBits(again, sized); err != nil {
			t.Fatalf("round trip: %v", err)
		}
	})
}

// TestNpyForeignHostOrder runs the byte-order paths of the other kind of
// host, by pretending this host has the opposite byte order: the writer must
// then emit every word byte-reversed from what it normally writes, and the
// reader must leave every word byte-reversed from what it normally reads.
func TestNpyForeignHostOrder(t *testing.T) {
	for _, dt := range DTypes {
		x := sample(t, dt, 3, 4, 5)
		var normal bytes.Buffer
		if err := WriteNpy(&normal, x); err != nil {
			t.Fatal(err)
		}
		nativeIsLittle = !nativeIsLittle
		var swapped bytes.Buffer
		err := WriteNpy(&swapped, x)
		var back *Tensor
		if err == nil {
			back, err = ReadNpy(bytes.NewReader(normal.Bytes()))
		}
		nativeIsLittle = !nativeIsLittle
		if err != nil {
			t.Fatal(err)
		}
		unit := dt.Real().Size()
		data := normal.Bytes()[normal.Len()-x.Len()*dt.Size():]
		want := append([]byte(nil), data...)
		swapWords(want, unit)
		if got := swapped.Bytes()[swapped.Len()-len(want):]; !bytes.Equal(got, want) {
			t.Fatalf("%v: writer did not swap words of %d bytes", dt, unit)
		}
		normalBack, err := ReadNpy(bytes.NewReader(normal.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		mem := append([]byte(nil), elems[back.dtype].bytes(back.data)...)
		swapWords(mem, unit)
		if !bytes.Equal(mem, elems[normalBack.dtype].bytes(normalBack.data)) {
			t.Fatalf("%v: reader did not swap words of %d bytes", dt, unit)
		}
	}
}
