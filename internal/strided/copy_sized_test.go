package strided

import (
	"slices"
	"testing"
	"unsafe"
)

func TestPlainSize(t *testing.T) {
	type pair struct{ a, b float32 }
	type named float64
	type withPtr struct {
		p *int
		x int64
	}
	for _, c := range []struct {
		got, want int
	}{
		{plainSize[float32](), 4}, {plainSize[int32](), 4}, {plainSize[[4]byte](), 4},
		{plainSize[float64](), 8}, {plainSize[complex64](), 8}, {plainSize[named](), 8}, {plainSize[pair](), 8},
		{plainSize[complex128](), 16}, {plainSize[[2]int64](), 16},
		{plainSize[bool](), 0}, {plainSize[int16](), 0}, {plainSize[*int](), 0},
		{plainSize[string](), 0}, {plainSize[withPtr](), 0}, {plainSize[[]int](), 0}, {plainSize[any](), 0},
	} {
		if c.got != c.want {
			t.Errorf("plainSize = %d, want %d", c.got, c.want)
		}
	}
}

// TestCopyMisaligned copies 8-byte elements whose data start 4 bytes off
// an 8-byte boundary (complex64 carved out of a float32 buffer), which
// Copy must not reinterpret as uint64 (on strict-alignment platforms the
// loads would fault; amd64 tolerates them, so there this checks only the
// result against naiveCopy).
func TestCopyMisaligned(t *testing.T) {
	buf := make([]float32, 2*40*33+2)
	for i := range buf {
		buf[i] = float32(i)
	}
	// buf[1:] starts 4 bytes past an 8-byte aligned address.
	src := unsafe.Slice((*complex64)(unsafe.Pointer(&buf[1])), 40*33)
	if aligned(src, src, 8) {
		t.Fatal("test setup: source is 8-byte aligned")
	}
	out := make([]float32, len(buf))
	got := unsafe.Slice((*complex64)(unsafe.Pointer(&out[1])), 40*33)
	want := make([]complex64, 40*33)
	shape, ds, ss := []int{33, 40}, []int{40, 1}, []int{1, 33}
	Copy(got, 0, ds, src, 0, ss, shape)
	naiveCopy(want, 0, ds, src, 0, ss, shape)
	if !slices.Equal(got, want) {
		t.Fatal("misaligned complex64 transpose mismatch")
	}
}
