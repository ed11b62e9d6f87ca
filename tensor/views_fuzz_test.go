package tensor

import (
	"errors"
	"testing"
)

// FuzzViews feeds arbitrary extents, strides, offsets and slice bounds to
// FromStrided and the view operations. Nothing may panic; every error must be
// a typed *Error; every tensor that is returned must address only elements of
// its buffer (reading them all through Values proves it).
func FuzzViews(f *testing.F) {
	f.Add(uint8(12), int8(3), int8(4), int8(1), int64(4), int64(1), int64(0), int64(0), int64(1), int64(-1), int64(-1), uint8(1), int8(-1))
	f.Add(uint8(5), int8(2), int8(2), int8(2), int64(-2), int64(0), int64(1), int64(3), int64(-5), int64(5), int64(2), uint8(5), int8(4))
	f.Add(uint8(1), int8(0), int8(-1), int8(9), int64(1<<62), int64(-1<<62), int64(7), int64(0), int64(0), int64(0), int64(0), uint8(0), int8(0))
	f.Fuzz(func(t *testing.T, n uint8, d0, d1, d2 int8, s0, s1, s2, off, start, stop, step int64, perm uint8, rs int8) {
		buf := make([]int32, n)
		for i := range buf {
			buf[i] = int32(i)
		}
		// Extents stay small (or negative, to be rejected) so that a
		// stride-0 view cannot make Values allocate without bound.
		ext := func(d int8) int { return int(d) % 6 }
		shape := Shape{ext(d0), ext(d1), ext(d2)}
		x, err := FromStrided(buf, shape, []int{int(s0), int(s1), int(s2)}, int(off))
		if err != nil {
			typed(t, err)
			return
		}
		valid(t, x, "FromStrided")
		views := []*Tensor{x}
		if v, err := x.Slice(Range{Start: int(start), Stop: int(stop), Step: int(step)}, Range{Full: true, Step: int(step)}); err == nil {
			valid(t, v, "Slice")
			views = append(views, v)
		} else {
			typed(t, err)
		}
		perms := [][]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}
		for _, v := range views {
			p, err := v.Permute(perms[int(perm)%len(perms)]...)
			if err != nil {
				t.Fatalf("Permute: %v", err)
			}
			valid(t, p, "Permute")
			for _, shape := range [][]int{{-1}, {int(rs), -1}, {-1, int(rs)}, {int(rs)}} {
				if r, err := p.Reshape(shape...); err == nil {
					valid(t, r, "Reshape")
				} else {
					typed(t, err)
				}
			}
			if d, err := p.Diagonal(0, int(rs)%3); err == nil {
				valid(t, d, "Diagonal")
			} else {
				typed(t, err)
			}
			if s, err := p.Squeeze(); err == nil {
				valid(t, s, "Squeeze")
			} else {
				typed(t, err)
			}
			if u, err := p.Unsqueeze(int(rs)); err == nil {
				valid(t, u, "Unsqueeze")
			} else {
				typed(t, err)
			}
			if b, err := p.BroadcastTo(2, p.Dim(0), p.Dim(1), p.Dim(2)); err == nil {
				valid(t, b, "BroadcastTo")
			} else {
				typed(t, err)
			}
		}
	})
}

func typed(t *testing.T, err error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || !(errors.Is(err, ErrShape) || errors.Is(err, ErrIndex) || errors.Is(err, ErrLayout)) {
		t.Fatalf("untyped error %v (%T)", err, err)
	}
}

func valid(t *testing.T, x *Tensor, op string) {
	t.Helper()
	vals, err := Values[int32](x)
	if err != nil {
		t.Fatalf("%s: Values: %v", op, err)
	}
	if len(vals) != x.Len() {
		t.Fatalf("%s: %d values for Len %d", op, len(vals), x.Len())
	}
	if x.Len() > 0 {
		idx := make([]int, x.Rank())
		if _, err := x.At(idx...); err != nil {
			t.Fatalf("%s: At: %v", op, err)
		}
	}
}
