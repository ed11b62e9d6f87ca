package graph

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"sort"

	"github.com/goferro/goferro/tensor"
)

// fingerprintVersion is mixed into every fingerprint; bump it when the
// canonical encoding changes.
const fingerprintVersion = "goferro.program.v1"

// fingerprint hashes the canonical encoding of p.
func fingerprint(p *Program) string {
	buf := make([]byte, 0, 64+64*len(p.Instructions))
	buf = appendString(buf, fingerprintVersion)
	buf = binary.AppendUvarint(buf, uint64(len(p.Inputs)))
	for _, in := range p.Inputs {
		buf = appendString(buf, in.Name)
		buf = append(buf, byte(in.DType))
		buf = appendShape(buf, in.Shape)
	}
	buf = binary.AppendUvarint(buf, uint64(len(p.Instructions)))
	for i := range p.Instructions {
		ins := &p.Instructions[i]
		buf = appendString(buf, ins.Op)
		buf = appendString(buf, ins.Family)
		buf = appendAttrs(buf, &ins.Attrs)
		buf = binary.AppendUvarint(buf, uint64(len(ins.Inputs)))
		for _, s := range ins.Inputs {
			buf = binary.AppendUvarint(buf, uint64(s))
		}
		buf = binary.AppendUvarint(buf, uint64(len(ins.Outputs)))
		for _, o := range ins.Outputs {
			buf = binary.AppendUvarint(buf, uint64(o.Slot))
			buf = append(buf, byte(o.DType))
			buf = appendShape(buf, o.Shape)
		}
		if ins.Synthesized {
			buf = append(buf, 1)
		} else {
			buf = append(buf, 0)
		}
	}
	buf = binary.AppendUvarint(buf, uint64(len(p.Outputs)))
	for _, s := range p.Outputs {
		buf = binary.AppendUvarint(buf, uint64(s))
	}
	sum := sha256.Sum256(buf)
	return hex.EncodeToString(sum[:])
}

func appendString(buf []byte, s string) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}

func appendInts(buf []byte, tag byte, xs []int) []byte {
	if xs == nil {
		return buf
	}
	buf = append(buf, tag)
	buf = binary.AppendUvarint(buf, uint64(len(xs)))
	for _, x := range xs {
		buf = binary.AppendVarint(buf, int64(x))
	}
	return buf
}

func appendShape(buf []byte, s Shape) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	for _, d := range s {
		if d.Sym != "" {
			buf = append(buf, 's')
			buf = appendString(buf, d.Sym)
		} else {
			buf = append(buf, 'c')
			buf = binary.AppendUvarint(buf, uint64(d.Size))
		}
	}
	return buf
}

// appendAttrs appends a canonical encoding of the set attribute fields, each
// behind its own tag byte, so distinct attributes never encode alike.
func appendAttrs(buf []byte, a *Attrs) []byte {
	buf = appendInts(buf, 'a', a.Axes)
	buf = appendInts(buf, 'p', a.Perm)
	if a.Shape != nil {
		buf = append(buf, 'S')
		buf = appendShape(buf, a.Shape)
	}
	if a.Axis != 0 {
		buf = append(buf, 'x')
		buf = binary.AppendVarint(buf, int64(a.Axis))
	}
	buf = appendInts(buf, 'b', a.Start)
	buf = appendInts(buf, 'l', a.Limit)
	buf = appendInts(buf, 't', a.Stride)
	if a.DType != tensor.Invalid {
		buf = append(buf, 'd', byte(a.DType))
	}
	buf = appendInts(buf, '1', a.LhsBatch)
	buf = appendInts(buf, '2', a.RhsBatch)
	buf = appendInts(buf, '3', a.LhsContract)
	buf = appendInts(buf, '4', a.RhsContract)
	if a.Equation != "" {
		buf = append(buf, 'e')
		buf = appendString(buf, a.Equation)
	}
	if a.Value != nil {
		buf = append(buf, 'v', byte(a.Value.DType()))
		buf = appendShape(buf, FromTensorShape(a.Value.Shape()))
		buf = appendTensorBytes(buf, a.Value)
	}
	if len(a.Ext) > 0 {
		keys := make([]string, 0, len(a.Ext))
		for k := range a.Ext {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		buf = append(buf, 'X')
		buf = binary.AppendUvarint(buf, uint64(len(keys)))
		for _, k := range keys {
			buf = appendString(buf, k)
			buf = appendString(buf, a.Ext[k])
		}
	}
	return append(buf, 0)
}

// appendTensorBytes appends t's elements in row-major order, little endian
// (complex as real then imaginary part, bool as one byte).
func appendTensorBytes(buf []byte, t *tensor.Tensor) []byte {
	c := t.Contiguous()
	off, n := c.Offset(), c.Len()
	switch d := c.Data().(type) {
	case []float32:
		for _, v := range d[off : off+n] {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		}
	case []float64:
		for _, v := range d[off : off+n] {
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
		}
	case []complex64:
		for _, v := range d[off : off+n] {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(real(v)))
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(imag(v)))
		}
	case []complex128:
		for _, v := range d[off : off+n] {
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(real(v)))
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(imag(v)))
		}
	case []int32:
		for _, v := range d[off : off+n] {
			buf = binary.LittleEndian.AppendUint32(buf, uint32(v))
		}
	case []int64:
		for _, v := range d[off : off+n] {
			buf = binary.LittleEndian.AppendUint64(buf, uint64(v))
		}
	case []bool:
		for _, v := range d[off : off+n] {
			if v {
				buf = append(buf, 1)
			} else {
				buf = append(buf, 0)
			}
		}
	}
	return buf
}

// tensorFromBytes decodes appendTensorBytes' encoding into a new row-major
// tensor of the given dtype and shape.
func tensorFromBytes(dt tensor.DType, shape tensor.Shape, b []byte) (*tensor.Tensor, error) {
	n, err := shape.NumElements()
	if err != nil {
		return nil, err
	}
	if dt.Size() == 0 || len(b) != n*dt.Size() {
		return nil, errorf("constant", ErrFormat, "%d bytes for %v%v", len(b), dt, shape)
	}
	t, err := tensor.Zeros(dt, shape...)
	if err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	switch d := t.Data().(type) {
	case []float32:
		for i := range d {
			d[i] = math.Float32frombits(le.Uint32(b[4*i:]))
		}
	case []float64:
		for i := range d {
			d[i] = math.Float64frombits(le.Uint64(b[8*i:]))
		}
	case []complex64:
		for i := range d {
			d[i] = complex(math.Float32frombits(le.Uint32(b[8*i:])), math.Float32frombits(le.Uint32(b[8*i+4:])))
		}
	case []complex128:
		for i := range d {
			d[i] = complex(math.Float64frombits(le.Uint64(b[16*i:])), math.Float64frombits(le.Uint64(b[16*i+8:])))
		}
	case []int32:
		for i := range d {
			d[i] = int32(le.Uint32(b[4*i:]))
		}
	case []int64:
		for i := range d {
			d[i] = int64(le.Uint64(b[8*i:]))
		}
	case []bool:
		for i := range d {
			if b[i] > 1 {
				return nil, errorf("constant", ErrFormat, "bool byte %d is not 0 or 1", b[i])
			}
			d[i] = b[i] == 1
		}
	}
	return t, nil
}

func appendUvarint(buf []byte, x uint64) []byte { return binary.AppendUvarint(buf, x) }
