package tensor

import (
	"encoding/binary"
	"io"
	"math"
)

// npyElem is the set of Go types whose memory a .npy reader fills straight
// from a file: the element types, and the narrower ones of numpy types that
// are then converted (see npyConverted).
type npyElem interface {
	Elem | int8 | int16 | uint8 | uint16 | uint32 | uint64
}

// npyConverted are the numpy types without a goferro dtype, each read into
// the narrowest dtype that holds all its values exactly (uint64 into Int64,
// checked). The key is the descr without its byte order.
var npyConverted = map[string]npyType{
	"f2": {Float32, 2, func(r io.Reader, n int, order binary.ByteOrder, sized bool) (any, error) {
		h, err := readElems[uint16](r, n, 2, order, sized)
		if err != nil {
			return nil, err
		}
		out := make([]float32, len(h))
		for i, v := range h {
			out[i] = float16to32(v)
		}
		return out, nil
	}},
	"i1": widening[int8, int32](Int32),
	"i2": widening[int16, int32](Int32),
	"u1": widening[uint8, int32](Int32),
	"u2": widening[uint16, int32](Int32),
	"u4": widening[uint32, int64](Int64),
	"u8": {Int64, 8, func(r io.Reader, n int, order binary.ByteOrder, sized bool) (any, error) {
		u, err := readElems[uint64](r, n, 8, order, sized)
		if err != nil {
			return nil, err
		}
		out := make([]int64, len(u))
		for i, v := range u {
			if v > math.MaxInt64 {
				return nil, newError("ReadNpy", ErrDType, "uint64 element %d is %d, beyond int64, the widest integer dtype", i, v)
			}
			out[i] = int64(v)
		}
		return out, nil
	}},
}

// widening returns the npyType of an integer type S read into the wider
// dtype dt with Go type D, which holds every value of S.
func widening[S int8 | int16 | uint8 | uint16 | uint32, D int32 | int64](dt DType) npyType {
	var z S
	size := int(binary.Size(z))
	return npyType{dt, size, func(r io.Reader, n int, order binary.ByteOrder, sized bool) (any, error) {
		s, err := readElems[S](r, n, size, order, sized)
		if err != nil {
			return nil, err
		}
		out := make([]D, len(s))
		for i, v := range s {
			out[i] = D(v)
		}
		return out, nil
	}}
}

// float16to32 converts an IEEE 754 binary16 value to float32, exactly:
// every half-precision value, subnormals, infinities and NaNs (whose
// payload moves to the top of the float32 fraction, as a hardware
// conversion does) included, has a float32 equal to it.
func float16to32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // infinity or NaN
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	case exp != 0: // normal: rebias the exponent from 15 to 127
		return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
	}
	// Zero or subnormal: frac·2⁻²⁴, exact in float32.
	v := float32(frac) / (1 << 24)
	if sign != 0 {
		v = -v
	}
	return v
}
