package tensor

import (
	"archive/zip"
	"compress/flate"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// ReadNpz reads every array of an .npz archive, as numpy.savez and
// numpy.savez_compressed write them, from r, which holds size bytes. The
// map is keyed by the names numpy.load gives: each archive entry's name
// without its ".npy" suffix. Entries are .npy data (see ReadNpy for the
// dtypes accepted); an entry that is not, or a name that occurs twice, is
// an ErrFormat error, as is an input that is not a zip archive.
func ReadNpz(r io.ReaderAt, size int64) (map[string]*Tensor, error) {
	z, err := zip.NewReader(r, size)
	// An entry name such as "../x.npy" is only a key here, never a path,
	// so an archive reported insecure for extraction is fine to read.
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, &Error{Op: "ReadNpz", Kind: ErrFormat, Msg: "not a zip archive", Err: err}
	}
	out := make(map[string]*Tensor, len(z.File))
	for _, f := range z.File {
		name, ok := strings.CutSuffix(f.Name, ".npy")
		if !ok {
			return nil, newError("ReadNpz", ErrFormat, "entry %q is not a .npy array", f.Name)
		}
		if _, dup := out[name]; dup {
			return nil, newError("ReadNpz", ErrFormat, "entry %q occurs twice", f.Name)
		}
		t, err := readNpzEntry(f)
		if err != nil {
			return nil, err
		}
		out[name] = t
	}
	return out, nil
}

// readNpzEntry reads one archive entry as a .npy array. The size the
// archive declares bounds what ReadNpy allocates (archive/zip fails a read
// past it), so a forged header cannot make it allocate more than the entry
// claims.
func readNpzEntry(f *zip.File) (*Tensor, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, &Error{Op: "ReadNpz", Kind: ErrFormat, Msg: fmt.Sprintf("entry %q", f.Name), Err: err}
	}
	defer rc.Close()
	avail := int64(-1)
	if f.UncompressedSize64 <= 1<<62 {
		avail = int64(f.UncompressedSize64)
	}
	t, err := readNpy(rc, avail)
	if err != nil {
		return nil, entryError("ReadNpz", f.Name, err)
	}
	// Read to the end, where archive/zip checks the entry's CRC-32:
	// ReadNpy stops after the array's last byte.
	if _, err := io.Copy(io.Discard, rc); err != nil {
		return nil, &Error{Op: "ReadNpz", Kind: ErrFormat, Msg: fmt.Sprintf("entry %q", f.Name), Err: err}
	}
	return t, nil
}

// entryError turns the error of reading or writing one archive entry into
// op's, naming the entry. A corrupt compressed stream or a bad checksum
// surfaces as a failure of the entry's reader, but it is the archive's
// content that is wrong, so it is ErrFormat.
func entryError(op, entry string, err error) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	var corrupt flate.CorruptInputError
	if errors.Is(err, zip.ErrChecksum) || errors.Is(err, zip.ErrFormat) || errors.Is(err, zip.ErrAlgorithm) || errors.As(err, &corrupt) {
		e.Kind = ErrFormat
	}
	e.Op, e.Msg = op, fmt.Sprintf("entry %q: %s", entry, e.Msg)
	return e
}

// LoadNpz reads the .npz file at path (see ReadNpz).
func LoadNpz(path string) (map[string]*Tensor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{Op: "LoadNpz", Kind: ErrIO, Msg: "cannot open file", Err: err}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, &Error{Op: "LoadNpz", Kind: ErrIO, Msg: "cannot stat " + path, Err: err}
	}
	m, err := ReadNpz(f, fi.Size())
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Msg = path + ": " + e.Msg
		}
		return nil, err
	}
	return m, nil
}

// WriteNpz writes arrays to w as an .npz archive of uncompressed .npy
// entries, as numpy.savez does: numpy.load(file)[name] reads each back. The
// entries are written in the order of their names. A name must be
// non-empty and is stored as name + ".npy".
func WriteNpz(w io.Writer, arrays map[string]*Tensor) error {
	return writeNpz("WriteNpz", w, arrays, zip.Store)
}

// WriteNpzCompressed is WriteNpz with deflate-compressed entries, as
// numpy.savez_compressed writes them.
func WriteNpzCompressed(w io.Writer, arrays map[string]*Tensor) error {
	return writeNpz("WriteNpzCompressed", w, arrays, zip.Deflate)
}

func writeNpz(op string, w io.Writer, arrays map[string]*Tensor, method uint16) error {
	names := make([]string, 0, len(arrays))
	for name, t := range arrays {
		if name == "" {
			return newError(op, ErrFormat, "empty array name")
		}
		if t == nil {
			return newError(op, ErrLayout, "array %q is nil", name)
		}
		if descrOf(t.dtype) == "" {
			return newError(op, ErrDType, "array %q: unsupported dtype %v", name, t.dtype)
		}
		names = append(names, name)
	}
	slices.Sort(names)
	z := zip.NewWriter(w)
	for _, name := range names {
		ew, err := z.CreateHeader(&zip.FileHeader{Name: name + ".npy", Method: method})
		if err != nil {
			return &Error{Op: op, Kind: ErrIO, Msg: fmt.Sprintf("array %q", name), Err: err}
		}
		if err := WriteNpy(ew, arrays[name]); err != nil {
			return entryError(op, name+".npy", err)
		}
	}
	if err := z.Close(); err != nil {
		return &Error{Op: op, Kind: ErrIO, Msg: "finishing the archive", Err: err}
	}
	return nil
}

// SaveNpz writes arrays to the file at path as WriteNpz does. The file is
// created or truncated; on failure it is removed.
func SaveNpz(path string, arrays map[string]*Tensor) error {
	return saveNpz("SaveNpz", path, arrays, WriteNpz)
}

// SaveNpzCompressed is SaveNpz with compressed entries (WriteNpzCompressed).
func SaveNpzCompressed(path string, arrays map[string]*Tensor) error {
	return saveNpz("SaveNpzCompressed", path, arrays, WriteNpzCompressed)
}

func saveNpz(op, path string, arrays map[string]*Tensor, write func(io.Writer, map[string]*Tensor) error) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return &Error{Op: op, Kind: ErrIO, Msg: "cannot create file", Err: err}
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = &Error{Op: op, Kind: ErrIO, Msg: "closing " + path, Err: cerr}
		}
		if err != nil {
			os.Remove(path)
		}
	}()
	return write(f, arrays)
}
