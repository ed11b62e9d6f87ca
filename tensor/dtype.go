// Package tensor provides goferro's dense, strided tensors: element types,
// shapes, views that share storage, contiguous copies and .npy I/O.
//
// A Tensor is a view (dtype, shape, strides in elements, offset) over a typed
// Go slice. Views such as Permute, Slice, BroadcastTo and Diagonal never copy;
// Contiguous and Clone do. The default layout is row-major.
//
// Bad input never panics: errors are *Error values whose Kind is one of
// ErrShape, ErrDType, ErrIndex, ErrLayout, ErrFormat or ErrIO, so callers can
// branch with errors.Is.
//
// ReadNpy and WriteNpy (LoadNpy and SaveNpy for files) read and write numpy's
// .npy format, and ReadNpz and WriteNpz its .npz archives, so tensors move
// to and from numpy without conversion; package interop/gonum moves them to
// and from gonum's matrices. Printing (fmt's %v, %.3f, ...) is numpy style.
//
// This package holds data; arithmetic on tensors is in package cpu
// (cpu.Add, cpu.Sum, cpu.Contract, ...), which computes eagerly.
package tensor

import "fmt"

// DType is the element type of a tensor.
type DType uint8

// The element types goferro supports. The zero value is Invalid so that an
// unset DType is never mistaken for a real one.
const (
	Invalid DType = iota
	Float32
	Float64
	Complex64
	Complex128
	Int32
	Int64
	Bool
)

// DTypes lists every valid element type, in declaration order.
var DTypes = []DType{Float32, Float64, Complex64, Complex128, Int32, Int64, Bool}

var dtypeNames = [...]string{
	Invalid:    "invalid",
	Float32:    "float32",
	Float64:    "float64",
	Complex64:  "complex64",
	Complex128: "complex128",
	Int32:      "int32",
	Int64:      "int64",
	Bool:       "bool",
}

// dtypeCodes are numpy's type codes of the dtypes: the descr of a .npy
// header without its byte order.
var dtypeCodes = [...]string{
	Float32:    "f4",
	Float64:    "f8",
	Complex64:  "c8",
	Complex128: "c16",
	Int32:      "i4",
	Int64:      "i8",
	Bool:       "b1",
}

var dtypeSizes = [...]int{
	Float32:    4,
	Float64:    8,
	Complex64:  8,
	Complex128: 16,
	Int32:      4,
	Int64:      8,
	Bool:       1,
}

// String returns the numpy-style name of the type ("float64", "complex64", ...).
func (d DType) String() string {
	if int(d) < len(dtypeNames) {
		return dtypeNames[d]
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// Size returns the size of one element in bytes, or 0 for an invalid type.
func (d DType) Size() int {
	if d.Valid() {
		return dtypeSizes[d]
	}
	return 0
}

// Valid reports whether d is one of the supported element types.
func (d DType) Valid() bool { return d > Invalid && d <= Bool }

// IsFloat reports whether d is a real floating-point type.
func (d DType) IsFloat() bool { return d == Float32 || d == Float64 }

// IsComplex reports whether d is a complex type.
func (d DType) IsComplex() bool { return d == Complex64 || d == Complex128 }

// IsInt reports whether d is a signed integer type.
func (d DType) IsInt() bool { return d == Int32 || d == Int64 }

// IsNumeric reports whether arithmetic is defined on d (every type but Bool).
func (d DType) IsNumeric() bool { return d.Valid() && d != Bool }

// Real returns the real counterpart of a complex type (Complex64 → Float32,
// Complex128 → Float64) and d itself otherwise.
func (d DType) Real() DType {
	switch d {
	case Complex64:
		return Float32
	case Complex128:
		return Float64
	}
	return d
}

// ResultType returns the dtype numpy's np.result_type gives the dtypes:
// the smallest type that holds every value of each of them, bool < integer
// < real < complex. Integers with a float or complex type promote to
// 64-bit precision (int32 × float32 → float64), as in numpy. It returns
// Invalid when dts is empty or holds an invalid dtype.
func ResultType(dts ...DType) DType {
	if len(dts) == 0 {
		return Invalid
	}
	// kind: 0 bool, 1 integer, 2 real, 3 complex. bits: the precision of a
	// real component the result needs (64 for any integer).
	kind, bits, intBits := 0, 0, 0
	for _, d := range dts {
		switch d {
		case Bool:
		case Int32, Int64:
			kind, bits, intBits = max(kind, 1), 64, max(intBits, d.Size()*8)
		case Float32, Float64:
			kind, bits = max(kind, 2), max(bits, d.Size()*8)
		case Complex64, Complex128:
			kind, bits = 3, max(bits, d.Size()*4)
		default:
			return Invalid
		}
	}
	switch {
	case kind == 0:
		return Bool
	case kind == 1 && intBits == 32:
		return Int32
	case kind == 1:
		return Int64
	case kind == 2 && bits == 32:
		return Float32
	case kind == 2:
		return Float64
	case bits == 32:
		return Complex64
	}
	return Complex128
}

// ParseDType returns the DType named s ("float32", "f8", "complex128", ...).
func ParseDType(s string) (DType, error) {
	// A switch, not a search of dtypeNames and dtypeCodes: it is six times
	// faster.
	switch s {
	case "float32", "f4":
		return Float32, nil
	case "float64", "f8":
		return Float64, nil
	case "complex64", "c8":
		return Complex64, nil
	case "complex128", "c16":
		return Complex128, nil
	case "int32", "i4":
		return Int32, nil
	case "int64", "i8":
		return Int64, nil
	case "bool", "b1":
		return Bool, nil
	}
	return Invalid, newError("ParseDType", ErrDType, "unknown dtype %q", s)
}

// Elem is the set of Go element types a Tensor can hold.
type Elem interface {
	float32 | float64 | complex64 | complex128 | int32 | int64 | bool
}

// Number is the set of element types with arithmetic.
type Number interface {
	float32 | float64 | complex64 | complex128 | int32 | int64
}

// DTypeOf returns the DType of the Go type T.
func DTypeOf[T Elem]() DType {
	var z T
	switch any(z).(type) {
	case float32:
		return Float32
	case float64:
		return Float64
	case complex64:
		return Complex64
	case complex128:
		return Complex128
	case int32:
		return Int32
	case int64:
		return Int64
	case bool:
		return Bool
	}
	return Invalid
}
