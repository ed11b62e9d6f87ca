package tensor

import (
	"errors"
	"math"
	"math/big"
	"testing"

	"pgregory.net/rapid"
)

// drawExtent draws an extent that is usually small but sometimes huge or
// negative, so that overflow and sign checks get exercised.
func drawExtent(t *rapid.T, label string) int {
	switch rapid.IntRange(0, 9).Draw(t, label+" kind") {
	case 0:
		return rapid.IntRange(math.MaxInt/4, math.MaxInt).Draw(t, label)
	case 1:
		return rapid.IntRange(1<<10, math.MaxInt>>20).Draw(t, label)
	case 2:
		return rapid.IntRange(-3, -1).Draw(t, label)
	}
	return rapid.IntRange(0, 5).Draw(t, label)
}

// TestNumElementsProperty compares NumElements with exact big-integer
// arithmetic: an error exactly when an extent is negative or the product of
// the non-zero extents exceeds MaxInt.
func TestNumElementsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		shape := make(Shape, rapid.IntRange(0, 5).Draw(t, "rank"))
		for i := range shape {
			shape[i] = drawExtent(t, "extent")
		}
		neg, zero := false, false
		nz := big.NewInt(1)
		for _, d := range shape {
			neg = neg || d < 0
			zero = zero || d == 0
			if d > 0 {
				nz.Mul(nz, big.NewInt(int64(d)))
			}
		}
		n, err := shape.NumElements()
		wantErr := neg || !nz.IsInt64() || nz.Int64() > math.MaxInt
		if wantErr {
			if !errors.Is(err, ErrShape) {
				t.Fatalf("%v: got %d, %v; want an ErrShape error", shape, n, err)
			}
			if _, err := Zeros(Int32, shape...); !errors.Is(err, ErrShape) {
				t.Fatalf("Zeros(%v): %v", shape, err)
			}
			return
		}
		want := nz.Int64()
		if zero {
			want = 0
		}
		if err != nil || int64(n) != want {
			t.Fatalf("%v: got %d, %v; want %d", shape, n, err, want)
		}
		// Strides of a valid shape never overflow: each is a product of
		// non-zero extents.
		for _, st := range [][]int{RowMajorStrides(shape), ColMajorStrides(shape)} {
			for _, s := range st {
				if s < 1 {
					t.Fatalf("%v: stride %d in %v", shape, s, st)
				}
			}
		}
	})
}

// TestBroadcastShapesProperty checks BroadcastShapes against the numpy rule
// axis by axis, and that every operand broadcasts to the result.
func TestBroadcastShapesProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		k := rapid.IntRange(1, 3).Draw(t, "operands")
		shapes := make([]Shape, k)
		rank := 0
		for i := range shapes {
			shapes[i] = make(Shape, rapid.IntRange(0, 4).Draw(t, "rank"))
			for j := range shapes[i] {
				shapes[i][j] = rapid.SampledFrom([]int{0, 1, 1, 2, 3}).Draw(t, "extent")
			}
			rank = max(rank, len(shapes[i]))
		}
		want := make(Shape, rank)
		ok := true
		for a := range rank {
			ext := 1
			for _, s := range shapes {
				j := a - (rank - len(s))
				if j < 0 {
					continue
				}
				switch d := s[j]; {
				case d == 1 || d == ext:
				case ext == 1:
					ext = d
				default:
					ok = false
				}
			}
			want[a] = ext
		}
		got, err := BroadcastShapes(shapes...)
		if !ok {
			if !errors.Is(err, ErrShape) {
				t.Fatalf("%v: got %v, %v; want ErrShape", shapes, got, err)
			}
			return
		}
		if err != nil || !got.Equal(want) {
			t.Fatalf("%v: got %v, %v; want %v", shapes, got, err, want)
		}
		for _, s := range shapes {
			x, _ := Zeros(Float32, s...)
			if _, err := x.BroadcastTo(got...); err != nil {
				t.Fatalf("%v does not broadcast to %v: %v", s, got, err)
			}
		}
	})
}
