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
