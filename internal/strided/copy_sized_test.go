package strided

import "testing"

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
