package tensor

import (
	"encoding/binary"
	"io"
	"unsafe"
)

// elemOps are the operations on the buffer of one dtype whose code is the
// same for every element type. elems holds one for each dtype, so that code
// with a dtype known only at run time calls the instantiation for its Go
// element type through elems[dt] rather than a type switch of its own.
// Every method expects data (or a tensor's) of that element type.
type elemOps interface {
	// get returns element p of data.
	get(data any, p int) any
	// set stores v at element p of data if v has the element type, and
	// reports whether it did.
	set(data any, p int, v any) bool
	// bytes returns the memory of data's elements.
	bytes(data any) []byte
	// read reads n elements in the given byte order (see readElems).
	read(r io.Reader, n, unit int, order binary.ByteOrder, sized bool) (any, error)
}

// elemsOf[T] implements elemOps for element type T.
type elemsOf[T Elem] struct{}

// elems maps every valid dtype to its elemOps; Invalid has none.
var elems = [...]elemOps{
	Float32:    elemsOf[float32]{},
	Float64:    elemsOf[float64]{},
	Complex64:  elemsOf[complex64]{},
	Complex128: elemsOf[complex128]{},
	Int32:      elemsOf[int32]{},
	Int64:      elemsOf[int64]{},
	Bool:       elemsOf[bool]{},
}

func (elemsOf[T]) get(data any, p int) any { return data.([]T)[p] }

func (elemsOf[T]) set(data any, p int, v any) bool {
	x, ok := v.(T)
	if ok {
		data.([]T)[p] = x
	}
	return ok
}

func (elemsOf[T]) bytes(data any) []byte { return bytesOf(data.([]T)) }

func (elemsOf[T]) read(r io.Reader, n, unit int, order binary.ByteOrder, sized bool) (any, error) {
	return readElems[T](r, n, unit, order, sized)
}

// bytesOf returns the memory of a slice of pointer-free elements as bytes.
func bytesOf[T npyElem](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(z)))
}
