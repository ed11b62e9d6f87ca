package tensor

import (
	"archive/zip"
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"testing"
)

// npzSample returns arrays of every dtype in several layouts.
func npzSample(t testing.TB) map[string]*Tensor {
	m := map[string]*Tensor{}
	for _, dt := range DTypes {
		x := sample(t, dt, uint64(dt), 3, 4)
		m[dt.String()] = x
		m[dt.String()+"_F"] = x.T()
		m[dt.String()+"_rev"] = Must(x.Slice(Range{Start: -1, Stop: -100, Step: -1}))
	}
	m["scalar"] = Scalar(int64(-7))
	m["empty"] = Must(Zeros(Complex64, 0, 5))
	return m
}

func sameArrays(t *testing.T, got, want map[string]*Tensor) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d arrays, want %d", len(got), len(want))
	}
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			t.Errorf("array %q missing", name)
			continue
		}
		if err := sameBits(g, w); err != nil {
			t.Errorf("array %q: %v", name, err)
		}
	}
}

func TestNpzRoundTrip(t *testing.T) {
	want := npzSample(t)
	for _, write := range []func(io.Writer, map[string]*Tensor) error{WriteNpz, WriteNpzCompressed} {
		var buf bytes.Buffer
		if err := write(&buf, want); err != nil {
			t.Fatal(err)
		}
		got, err := ReadNpz(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		sameArrays(t, got, want)
	}
	dir := t.TempDir()
	for _, save := range []func(string, map[string]*Tensor) error{SaveNpz, SaveNpzCompressed} {
		path := filepath.Join(dir, "a.npz")
		if err := save(path, want); err != nil {
			t.Fatal(err)
		}
		got, err := LoadNpz(path)
		if err != nil {
			t.Fatal(err)
		}
		sameArrays(t, got, want)
	}
}

// zipOf builds an archive of the given entries, in order.
func zipOf(t testing.TB, method uint16, entries ...[2]string) []byte {
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	for _, e := range entries {
		w, err := z.CreateHeader(&zip.FileHeader{Name: e[0], Method: method})
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(e[1]))
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func npyBytes(t testing.TB, x *Tensor) string {
	var buf bytes.Buffer
	if err := WriteNpy(&buf, x); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestNpzErrors(t *testing.T) {
	a := npyBytes(t, Must(Arange(Float64, 1000)))
	good := zipOf(t, zip.Deflate, [2]string{"a.npy", a})
	// Flip a byte in the middle of the compressed data.
	corrupt := bytes.Clone(good)
	corrupt[len(corrupt)/3] ^= 0xff
	// Flip a byte of the last element of a stored entry: only the CRC-32
	// tells.
	stored := zipOf(t, zip.Store, [2]string{"a.npy", a})
	badSum := bytes.Clone(stored)
	badSum[bytes.Index(stored, []byte(a))+len(a)-1] ^= 1
	for _, c := range []struct {
		name string
		in   []byte
		kind error
	}{
		{"not a zip", []byte("\x93NUMPY not a zip archive"), ErrFormat},
		{"empty", nil, ErrFormat},
		{"not npy entry", zipOf(t, zip.Store, [2]string{"a.txt", "hello"}), ErrFormat},
		{"duplicate", zipOf(t, zip.Store, [2]string{"a.npy", a}, [2]string{"a.npy", a}), ErrFormat},
		{"bad npy", zipOf(t, zip.Store, [2]string{"a.npy", a[:100]}), ErrFormat},
		{"bad dtype", zipOf(t, zip.Store, [2]string{"a.npy", string(npyFile(1, "<U3", false, "(1,)", nil))}), ErrDType},
		{"corrupt deflate", corrupt, ErrFormat},
		{"checksum", badSum, ErrFormat},
		{"truncated archive", good[:len(good)-10], ErrFormat},
	} {
		_, err := ReadNpz(bytes.NewReader(c.in), int64(len(c.in)))
		var e *Error
		if !errors.Is(err, c.kind) || !errors.As(err, &e) || e.Op != "ReadNpz" {
			t.Errorf("%s: %v, want a ReadNpz error of kind %v", c.name, err, c.kind)
		}
	}
	x := Scalar(1.0)
	for _, c := range []struct {
		name   string
		arrays map[string]*Tensor
		kind   error
	}{
		{"empty name", map[string]*Tensor{"": x}, ErrFormat},
		{"nil tensor", map[string]*Tensor{"x": nil}, ErrLayout},
		{"bad dtype", map[string]*Tensor{"x": {dtype: Invalid}}, ErrDType},
	} {
		if err := WriteNpz(io.Discard, c.arrays); !errors.Is(err, c.kind) {
			t.Errorf("%s: %v, want %v", c.name, err, c.kind)
		}
	}
	if err := WriteNpz(failWriter{}, map[string]*Tensor{"x": x}); !errors.Is(err, ErrIO) {
		t.Errorf("failing writer: %v, want ErrIO", err)
	}
	if _, err := LoadNpz(filepath.Join(t.TempDir(), "missing.npz")); !errors.Is(err, ErrIO) {
		t.Errorf("missing file: %v, want ErrIO", err)
	}
}

func FuzzReadNpz(f *testing.F) {
	a := npyBytes(f, Must(Arange(Int32, 10)))
	f.Add(zipOf(f, zip.Store, [2]string{"a.npy", a}, [2]string{"b.npy", npyBytes(f, Must(Zeros(Bool, 2, 2)))}))
	f.Add(zipOf(f, zip.Deflate, [2]string{"a.npy", a}))
	f.Add(zipOf(f, zip.Deflate, [2]string{"h.npy", string(npyFile(1, "<f2", false, "(3,)", []byte{0, 0x3c, 0, 0x7c, 1, 0x80}))}))
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := ReadNpz(bytes.NewReader(in), int64(len(in)))
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || (e.Kind != ErrFormat && e.Kind != ErrDType) {
				t.Fatalf("error %v (%T) is not a format or dtype *Error", err, err)
			}
			return
		}
		var buf bytes.Buffer
		if err := WriteNpzCompressed(&buf, m); err != nil {
			t.Fatal(err)
		}
		again, err := ReadNpz(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatalf("reading back what we wrote: %v", err)
		}
		sameArrays(t, again, m)
	})
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }
