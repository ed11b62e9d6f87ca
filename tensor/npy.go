package tensor

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/goferro/goferro/internal/strided"
)

// The .npy format (numpy's NEP 1): the magic string, a major and minor
// version byte, the header length (2 bytes little-endian in version 1.0, 4 in
// 2.0 and 3.0), then a Python dict literal with the keys 'descr',
// 'fortran_order' and 'shape', padded with spaces and ended by a newline so
// that the data starts at a multiple of 64 bytes. The raw elements follow.
const (
	npyMagic = "\x93NUMPY"
	// npyAlign is the alignment numpy uses for the start of the data.
	npyAlign = 64
	// npyMaxHeader bounds the header we are willing to read. numpy itself
	// refuses headers over 10000 bytes by default; a header for the dtypes
	// we support is under 200 bytes plus 22 per axis, so 1 MiB is generous
	// while stopping a forged length from making us allocate gigabytes.
	npyMaxHeader = 1 << 20
	// npyChunk is the scratch buffer size for writing byte-swapped data
	// (big-endian hosts). It is a multiple of every word size, so chunks
	// never split a word.
	npyChunk = 1 << 16
	// npyInitialBytes caps the first allocation for data of unknown length
	// (a plain io.Reader): the buffer then grows only as data really
	// arrives, so a header that lies about the size costs at most about
	// twice the bytes actually supplied.
	npyInitialBytes = 1 << 20
)

// ReadNpy reads one array in numpy's .npy format (versions 1.0, 2.0 and 3.0)
// from r. It reads exactly the bytes of that array, so several arrays written
// one after another to a stream can be read back in turn.
//
// Supported descrs are '<f4' '<f8' '<c8' '<c16' '<i4' '<i8' and '|b1', in
// either byte order ('<', '>', '=' or '|'); big-endian data is converted.
// The numpy types goferro has no dtype for are read into the nearest one
// that holds every value exactly: float16 ('f2') into Float32; int8, int16,
// uint8 and uint16 ('i1' 'i2' 'u1' 'u2') into Int32; uint32 ('u4') into
// Int64; and uint64 ('u8') into Int64, where a value of 2⁶³ or more is an
// error of kind ErrDType rather than a silent wrap. Writing such a tensor
// back gives the wider type.
// A C-order file gives a row-major tensor; a Fortran-order file gives a tensor
// with column-major strides over the file's data (call Contiguous for a
// row-major one), so writing it back with WriteNpy keeps Fortran order.
//
// Malformed input gives an *Error of kind ErrFormat, and an unsupported
// element type one of kind ErrDType. A reader failure gives kind ErrIO. At a
// clean end of input (no bytes at all) the error also matches io.EOF.
//
// A header declaring a huge shape over a short input fails without a huge
// allocation: when r reports how much is left (a Len method, as
// *bytes.Reader, *bytes.Buffer and *strings.Reader have; LoadNpy uses the
// file size) the sizes are compared before anything is allocated, and
// otherwise the buffer starts at 1 MiB and grows only as data arrives.
func ReadNpy(r io.Reader) (*Tensor, error) {
	avail := int64(-1)
	if l, ok := r.(interface{ Len() int }); ok {
		avail = int64(l.Len())
	}
	return readNpy(r, avail)
}

// LoadNpy reads the .npy file at path. Bytes after the array are ignored, as
// numpy.load does. See ReadNpy for the formats accepted and the errors.
func LoadNpy(path string) (*Tensor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{Op: "LoadNpy", Kind: ErrIO, Msg: "cannot open file", Err: err}
	}
	defer f.Close()
	avail := int64(-1)
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		avail = fi.Size()
	}
	t, err := readNpy(f, avail)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Msg = path + ": " + e.Msg
		}
		return nil, err
	}
	return t, nil
}

// npyErr builds a format error for ReadNpy.
func npyErr(format string, args ...any) *Error {
	return newError("ReadNpy", ErrFormat, format, args...)
}

// readErr turns a failed io.ReadFull into a typed error: running out of
// input is a truncated (malformed) file, anything else is an I/O failure.
func readErr(what string, err error) *Error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &Error{Op: "ReadNpy", Kind: ErrFormat, Msg: what + " truncated", Err: io.ErrUnexpectedEOF}
	}
	return &Error{Op: "ReadNpy", Kind: ErrIO, Msg: "reading " + what, Err: err}
}

// readNpy reads one array; avail is the number of bytes left in r, or -1 if
// unknown.
func readNpy(r io.Reader, avail int64) (*Tensor, error) {
	var pre [8]byte
	if n, err := io.ReadFull(r, pre[:]); err != nil {
		if n == 0 && errors.Is(err, io.EOF) {
			return nil, &Error{Op: "ReadNpy", Kind: ErrFormat, Msg: "empty input", Err: io.EOF}
		}
		return nil, readErr("magic string", err)
	}
	if string(pre[:6]) != npyMagic {
		return nil, npyErr("bad magic string %q (not a .npy file)", pre[:6])
	}
	major, minor := pre[6], pre[7]
	lenBytes := 0
	switch {
	case major == 1 && minor == 0:
		lenBytes = 2
	case (major == 2 || major == 3) && minor == 0:
		lenBytes = 4
	default:
		return nil, npyErr("unsupported format version %d.%d", major, minor)
	}
	var lb [4]byte
	if _, err := io.ReadFull(r, lb[:lenBytes]); err != nil {
		return nil, readErr("header length", err)
	}
	// Compare before converting: on a 32-bit platform a length of 2^31 or
	// more would turn negative as an int.
	hlen32 := uint32(binary.LittleEndian.Uint16(lb[:]))
	if lenBytes == 4 {
		hlen32 = binary.LittleEndian.Uint32(lb[:])
	}
	if hlen32 > npyMaxHeader {
		return nil, npyErr("header length %d exceeds the limit of %d bytes", hlen32, npyMaxHeader)
	}
	hlen := int(hlen32)
	used := int64(len(pre) + lenBytes + hlen)
	if avail >= 0 && used > avail {
		return nil, &Error{Op: "ReadNpy", Kind: ErrFormat, Msg: fmt.Sprintf("header of %d bytes truncated", hlen), Err: io.ErrUnexpectedEOF}
	}
	header := make([]byte, hlen)
	if _, err := io.ReadFull(r, header); err != nil {
		return nil, readErr("header", err)
	}
	h, err := parseNpyHeader(header)
	if err != nil {
		return nil, err
	}
	ft, order, err := parseDescr(h.descr)
	if err != nil {
		return nil, err
	}
	dt := ft.dt
	shape := Shape(h.shape)
	n, err := shape.NumElements()
	if err != nil {
		return nil, &Error{Op: "ReadNpy", Kind: ErrFormat, Msg: fmt.Sprintf("bad shape %v", shape), Err: err}
	}
	nbytes, ok := strided.MulChecked(n, ft.size)
	if !ok {
		return nil, npyErr("shape %v of %s needs more bytes than fit in an int", shape, h.descr)
	}
	if avail >= 0 && int64(nbytes) > avail-used {
		return nil, &Error{Op: "ReadNpy", Kind: ErrFormat,
			Msg: fmt.Sprintf("header declares shape %v of %s (%d bytes) but only %d bytes of data follow", shape, h.descr, nbytes, avail-used),
			Err: io.ErrUnexpectedEOF}
	}
	data, err := ft.read(r, n, order, avail >= 0)
	if err != nil {
		return nil, err
	}
	strides := RowMajorStrides(shape)
	if h.fortran {
		strides = ColMajorStrides(shape)
	}
	return &Tensor{dtype: dt, shape: shape, strides: strides, data: data, size: n}, nil
}

// npyHeader is the content of a .npy header dict.
type npyHeader struct {
	descr   string
	fortran bool
	shape   []int
}

// npyType is an element type of a .npy file: the dtype it is read into,
// the size of one element in the file, and the reader that converts n of
// them to a buffer of dt.
type npyType struct {
	dt   DType
	size int
	read func(r io.Reader, n int, order binary.ByteOrder, sized bool) (any, error)
}

// parseDescr maps a numpy type string to the type it is read as and its
// byte order.
func parseDescr(d string) (npyType, binary.ByteOrder, error) {
	var order binary.ByteOrder = binary.NativeEndian
	code := d
	if len(d) > 0 {
		switch d[0] {
		case '<':
			order, code = binary.LittleEndian, d[1:]
		case '>':
			order, code = binary.BigEndian, d[1:]
		case '=', '|':
			// '=' is native order; '|' means byte order does not apply,
			// which numpy writes for one-byte types.
			code = d[1:]
		}
	}
	if code == "?" { // numpy's character code of bool
		code = dtypeCodes[Bool]
	}
	for _, dt := range DTypes {
		if code == dtypeCodes[dt] {
			return npyType{dt: dt, size: dt.Size(), read: func(r io.Reader, n int, order binary.ByteOrder, sized bool) (any, error) {
				return elems[dt].read(r, n, wordSize(dt), order, sized)
			}}, order, nil
		}
	}
	if t, ok := npyConverted[code]; ok {
		return t, order, nil
	}
	return npyType{}, nil, newError("ReadNpy", ErrDType, "unsupported dtype descr %q (supported: f2 f4 f8 c8 c16 i1 i2 i4 i8 u1 u2 u4 u8 b1)", d)
}

// npyDescrs are the little-endian numpy type strings of the dtypes ("|"
// for bool: byte order does not apply to one byte).
var npyDescrs = func() (d [len(dtypeCodes)]string) {
	for _, dt := range DTypes {
		order := "<"
		if dt == Bool {
			order = "|"
		}
		d[dt] = order + dtypeCodes[dt]
	}
	return d
}()

// descrOf returns the .npy type string of dt, or "" for an invalid dtype.
func descrOf(dt DType) string {
	if !dt.Valid() {
		return ""
	}
	return npyDescrs[dt]
}

// hdrParser reads the small subset of Python literal syntax a .npy header
// uses: a dict with string keys whose values are strings, True/False and
// tuples of non-negative integers. numpy parses the header with
// ast.literal_eval; anything outside this subset is not something numpy
// writes for the dtypes we support, so it is rejected rather than guessed at.
type hdrParser struct {
	s []byte
	i int
}

func (p *hdrParser) skipSpace() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			p.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (p *hdrParser) peek() byte {
	p.skipSpace()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *hdrParser) errf(format string, args ...any) *Error {
	return npyErr("bad header at byte %d: %s (header %q)", p.i, fmt.Sprintf(format, args...), clip(p.s, 200))
}

func clip(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

func (p *hdrParser) expect(c byte) error {
	if p.peek() != c {
		return p.errf("expected %q", c)
	}
	p.i++
	return nil
}

// str reads a quoted string without escapes (numpy's keys and descrs have
// none). An optional u prefix, as Python 2 era writers used, is allowed.
func (p *hdrParser) str() (string, error) {
	if p.peek() == 'u' {
		p.i++
	}
	if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
		return "", p.errf("expected a string")
	}
	q := p.s[p.i]
	start := p.i + 1
	for j := start; j < len(p.s); j++ {
		switch p.s[j] {
		case q:
			p.i = j + 1
			return string(p.s[start:j]), nil
		case '\\', '\n':
			p.i = j
			return "", p.errf("unsupported character in string")
		}
	}
	p.i = len(p.s)
	return "", p.errf("unterminated string")
}

// ident reads an identifier such as True or False.
func (p *hdrParser) ident() string {
	p.skipSpace()
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' && p.i > start {
			p.i++
			continue
		}
		break
	}
	return string(p.s[start:p.i])
}

// integer reads a non-negative decimal integer, allowing the L suffix that
// Python 2 era writers put on longs. Values that do not fit an int, and
// negative values, are errors.
func (p *hdrParser) integer() (int, error) {
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] == '-' {
		return 0, p.errf("negative extent")
	}
	start := p.i
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	if p.i == start {
		return 0, p.errf("expected an integer")
	}
	v, err := strconv.ParseInt(string(p.s[start:p.i]), 10, 0)
	if err != nil {
		return 0, p.errf("extent %s does not fit in an int", p.s[start:p.i])
	}
	if p.i < len(p.s) && (p.s[p.i] == 'L' || p.s[p.i] == 'l') {
		p.i++
	}
	return int(v), nil
}

// shapeTuple reads a tuple of integers: (), (3,), (3, 4) or (3, 4,). A single
// integer in parentheses is not a tuple in Python, so (3) is rejected.
func (p *hdrParser) shapeTuple() ([]int, error) {
	if err := p.expect('('); err != nil {
		return nil, err
	}
	shape := []int{}
	if p.peek() == ')' {
		p.i++
		return shape, nil
	}
	for {
		v, err := p.integer()
		if err != nil {
			return nil, err
		}
		shape = append(shape, v)
		switch p.peek() {
		case ',':
			p.i++
			if p.peek() == ')' {
				p.i++
				return shape, nil
			}
		case ')':
			if len(shape) == 1 {
				return nil, p.errf("shape (%d) is an int, not a tuple", v)
			}
			p.i++
			return shape, nil
		default:
			return nil, p.errf("expected ',' or ')' in shape")
		}
	}
}

// parseNpyHeader parses the header dict. It requires exactly the keys descr,
// fortran_order and shape, as numpy does.
func parseNpyHeader(b []byte) (npyHeader, error) {
	var h npyHeader
	p := &hdrParser{s: b}
	if err := p.expect('{'); err != nil {
		return h, err
	}
	seen := map[string]bool{}
	for p.peek() != '}' {
		key, err := p.str()
		if err != nil {
			return h, err
		}
		if seen[key] {
			return h, p.errf("key %q repeated", key)
		}
		seen[key] = true
		if err := p.expect(':'); err != nil {
			return h, err
		}
		switch key {
		case "descr":
			if c := p.peek(); c == '[' {
				return h, newError("ReadNpy", ErrDType, "structured dtypes are not supported")
			}
			if h.descr, err = p.str(); err != nil {
				return h, err
			}
		case "fortran_order":
			switch id := p.ident(); id {
			case "True":
				h.fortran = true
			case "False":
				h.fortran = false
			default:
				return h, p.errf("fortran_order must be True or False, not %q", id)
			}
		case "shape":
			if h.shape, err = p.shapeTuple(); err != nil {
				return h, err
			}
		default:
			return h, p.errf("unexpected key %q", key)
		}
		if p.peek() == ',' {
			p.i++
		} else if p.peek() != '}' {
			return h, p.errf("expected ',' or '}'")
		}
	}
	p.i++
	if p.peek() != 0 {
		return h, p.errf("unexpected text after the header dict")
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return h, npyErr("header has no %q key (header %q)", k, clip(b, 200))
		}
	}
	return h, nil
}

// wordSize is the size of the words of dt that byte order applies to: an
// element, or half of a complex one (a complex number is two floats, each
// in the file's byte order).
func wordSize(dt DType) int { return dt.Real().Size() }

// nativeIsLittle reports the host byte order.
var nativeIsLittle = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// sameOrder reports whether data in order needs no swapping on this host.
func sameOrder(order binary.ByteOrder) bool {
	return (order.Uint16([]byte{1, 0}) == 1) == nativeIsLittle
}

// swapWords reverses the byte order of every unit-byte word of b in place.
func swapWords(b []byte, unit int) {
	switch unit {
	case 2:
		for i := 0; i+2 <= len(b); i += 2 {
			binary.BigEndian.PutUint16(b[i:], binary.LittleEndian.Uint16(b[i:]))
		}
	case 4:
		for i := 0; i+4 <= len(b); i += 4 {
			binary.BigEndian.PutUint32(b[i:], binary.LittleEndian.Uint32(b[i:]))
		}
	case 8:
		for i := 0; i+8 <= len(b); i += 8 {
			binary.BigEndian.PutUint64(b[i:], binary.LittleEndian.Uint64(b[i:]))
		}
	}
}

// readElems reads n elements straight into the memory of the result, then
// fixes it up in place: words are byte-swapped when the file's order is not
// the host's (unit is the size of one word: a real, or half a complex), and
// bool bytes are normalised, since numpy reads any non-zero byte as True and
// a Go bool must hold 0 or 1. When sized is set the caller has checked that
// the input holds the data, so the buffer is allocated once; otherwise it
// grows with the data actually read, a chunk at a time.
func readElems[T npyElem](r io.Reader, n, unit int, order binary.ByteOrder, sized bool) ([]T, error) {
	var z T
	size := int(unsafe.Sizeof(z))
	var out []T
	step := n
	if sized {
		out = make([]T, 0, n)
	} else {
		out = make([]T, 0, min(n, npyInitialBytes/size))
		step = max(npyInitialBytes/size, 1)
	}
	swap := unit > 1 && !sameOrder(order)
	_, isBool := any(z).(bool)
	for len(out) < n {
		m := len(out)
		k := min(n-m, step)
		out = slices.Grow(out, k)[:m+k]
		b := bytesOf(out[m:])
		if _, err := io.ReadFull(r, b); err != nil {
			e := readErr("data", err)
			if e.Kind == ErrFormat {
				e.Msg = fmt.Sprintf("data truncated: fewer than %d of %d elements present", m+k, n)
			}
			return nil, e
		}
		if swap {
			swapWords(b, unit)
		}
		if isBool {
			for i, c := range b {
				if c > 1 {
					b[i] = 1
				}
			}
		}
	}
	return out, nil
}

// WriteNpy writes t to w in .npy format: version 1.0 unless the header needs
// the larger length field of 2.0, little-endian data. A row-major contiguous
// tensor is written in C order and a column-major contiguous one in Fortran
// order, both straight from the buffer; any other layout is written in C
// order from a contiguous copy. A write failure gives an *Error of kind ErrIO.
func WriteNpy(w io.Writer, t *Tensor) error {
	if t == nil {
		return newError("WriteNpy", ErrLayout, "nil tensor")
	}
	descr := descrOf(t.dtype)
	if descr == "" {
		return newError("WriteNpy", ErrDType, "unsupported dtype %v", t.dtype)
	}
	src, fortran := t, false
	switch {
	case t.IsContiguous():
	case t.T().IsContiguous():
		fortran = true
	default:
		c, err := t.clone("WriteNpy")
		if err != nil {
			return err
		}
		src = c
	}
	header := npyHeaderBytes(descr, fortran, t.shape)
	if _, err := w.Write(header); err != nil {
		return &Error{Op: "WriteNpy", Kind: ErrIO, Msg: "writing header", Err: err}
	}
	if err := writeNpyData(w, src); err != nil {
		return &Error{Op: "WriteNpy", Kind: ErrIO, Msg: "writing data", Err: err}
	}
	return nil
}

// npyHeaderBytes returns magic, version, length and padded header dict.
func npyHeaderBytes(descr string, fortran bool, shape Shape) []byte {
	order := "False"
	if fortran {
		order = "True"
	}
	dict := "{'descr': '" + descr + "', 'fortran_order': " + order + ", 'shape': " + shape.String() + ", }"
	// numpy pads with spaces so that the data starts at a multiple of
	// npyAlign bytes, then ends the header with a newline.
	pad := func(pre int) string {
		total := pre + len(dict) + 1
		return dict + strings.Repeat(" ", (npyAlign-total%npyAlign)%npyAlign) + "\n"
	}
	if h := pad(10); len(h) <= math.MaxUint16 {
		out := make([]byte, 0, 10+len(h))
		out = append(out, npyMagic...)
		out = append(out, 1, 0)
		out = binary.LittleEndian.AppendUint16(out, uint16(len(h)))
		return append(out, h...)
	}
	h := pad(12)
	out := make([]byte, 0, 12+len(h))
	out = append(out, npyMagic...)
	out = append(out, 2, 0)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(h)))
	return append(out, h...)
}

// writeNpyData writes the elements of a tensor that is contiguous in memory
// (row- or column-major) in buffer order, little-endian.
func writeNpyData(w io.Writer, t *Tensor) error {
	lo, n := t.offset, t.size
	if n == 0 {
		// An empty view's offset is unchecked and may lie past the buffer.
		return nil
	}
	// The elements' memory as is: Go stores a bool as one byte holding 0
	// or 1, as numpy does.
	es := t.dtype.Size()
	return writeElems(w, elems[t.dtype].bytes(t.data)[lo*es:(lo+n)*es], wordSize(t.dtype))
}

// writeElems writes the memory of elements little-endian. On a
// little-endian host that is the memory as is; elsewhere words of unit bytes
// are swapped through a small scratch buffer, a chunk at a time.
func writeElems(w io.Writer, mem []byte, unit int) error {
	if nativeIsLittle || unit == 1 {
		_, err := w.Write(mem)
		return err
	}
	chunk := make([]byte, min(len(mem), npyChunk))
	for len(mem) > 0 {
		k := copy(chunk, mem)
		swapWords(chunk[:k], unit)
		if _, err := w.Write(chunk[:k]); err != nil {
			return err
		}
		mem = mem[k:]
	}
	return nil
}

// SaveNpy writes t to the file at path in .npy format (see WriteNpy). The
// file is created or truncated; on failure it is removed, so no partial file
// is left behind.
func SaveNpy(path string, t *Tensor) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return &Error{Op: "SaveNpy", Kind: ErrIO, Msg: "cannot create file", Err: err}
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = &Error{Op: "SaveNpy", Kind: ErrIO, Msg: "closing " + path, Err: cerr}
		}
		if err != nil {
			os.Remove(path)
		}
	}()
	return WriteNpy(f, t)
}
