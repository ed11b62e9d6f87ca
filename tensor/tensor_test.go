package tensor

import (
	"errors"
	"testing"
)

func TestBasicViews(t *testing.T) {
	a, err := Arange(Float64, 24)
	if err != nil {
		t.Fatal(err)
	}
	b, err := a.Reshape(2, 3, 4)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := b.Permute(2, 0, 1)
	if got := p.Shape(); !got.Equal(Shape{4, 2, 3}) {
		t.Fatalf("shape %v", got)
	}
	v, _ := p.Complex128At(3, 1, 2)
	if v != complex(float64(1*12+2*4+3), 0) {
		t.Fatalf("permute value %v", v)
	}
	r, err := p.Reshape(8, 3) // needs a copy
	if err != nil {
		t.Fatal(err)
	}
	v, _ = r.Complex128At(7, 2)
	if v != 23 {
		t.Fatalf("reshape copy value %v", v)
	}
	if _, err := a.Reshape(5, 5); !errors.Is(err, ErrShape) {
		t.Fatalf("want ErrShape, got %v", err)
	}
	m, _ := Arange(Float64, 9)
	m, _ = m.Reshape(3, 3)
	d, _ := m.Diagonal(0, 1)
	if got, _ := Values[float64](d); got[0] != 0 || got[1] != 4 || got[2] != 8 {
		t.Fatalf("diagonal %v", got)
	}
	s, _ := a.Slice(Range{Full: true, Step: -5})
	if got, _ := Values[float64](s); len(got) != 5 || got[0] != 23 || got[4] != 3 {
		t.Fatalf("reverse slice %v", got)
	}
}

// TestBytes: Bytes is the memory of a contiguous tensor's elements from its
// offset, shared with the tensor; nil for a non-contiguous or empty one.
func TestBytes(t *testing.T) {
	a := Must(New([]int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 3, 4))
	row := Must(a.Slice(R(1, 3))) // rows 1 and 2: contiguous, offset 4
	b := row.Bytes()
	if len(b) != 8*4 || b[0] != 4 || b[4] != 5 || b[28] != 11 {
		t.Fatalf("rows 1–2: %v", b)
	}
	b[0] = 40 // shared, not a copy
	if v, _ := a.Complex128At(1, 0); v != 40 {
		t.Errorf("a[1,0] = %v after writing through Bytes, want 40", v)
	}
	col := Must(a.Slice(All, R(1, 2)))
	if col.Bytes() != nil {
		t.Error("a column view (not contiguous) has Bytes")
	}
	if tr := Must(a.Permute(1, 0)); tr.Bytes() != nil {
		t.Error("a transposed view has Bytes")
	}
	if e := Must(Zeros(Float64, 0, 3)); e.Bytes() != nil {
		t.Error("an empty tensor has Bytes")
	}
}
