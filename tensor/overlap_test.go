package tensor_test

import (
	"testing"

	"github.com/goferro/goferro/tensor"
)

// TestInPlaceAndMayOverlap checks the two overlap predicates on views of
// one buffer and of another.
func TestInPlaceAndMayOverlap(t *testing.T) {
	x, err := tensor.New(make([]float64, 24), 2, 3, 4)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := tensor.New(make([]float64, 24), 2, 3, 4)
	row, _ := x.Slice(tensor.All, tensor.R(0, 1)) // (2,1,4)
	inner, _ := x.Slice(tensor.R(1, 2))           // (1,3,4)
	innerRows, _ := inner.Reshape(3, 4)
	shifted, _ := x.Slice(tensor.All, tensor.All, tensor.R(1, 4))
	first, _ := x.Slice(tensor.All, tensor.All, tensor.R(0, 3))
	perm, _ := x.Permute(0, 2, 1)
	permBack, _ := perm.Permute(0, 2, 1)
	cases := []struct {
		name         string
		dst, src     *tensor.Tensor
		inPlace, may bool
	}{
		{"itself", x, x, true, true},
		{"same layout, another view", x, permBack, true, true},
		{"another buffer", x, other, false, false},
		{"broadcast row", x, row, false, true},
		{"leading axes dropped", inner, innerRows, true, true},
		{"rank-3 source into rank-2", innerRows, inner, false, true},
		{"shifted", first, shifted, false, true},
		{"sharing a row", row, inner, false, true},
		{"nil", x, nil, false, false},
	}
	for _, c := range cases {
		if got := tensor.InPlace(c.dst, c.src); got != c.inPlace {
			t.Errorf("%s: InPlace = %v, want %v", c.name, got, c.inPlace)
		}
		if got := tensor.MayOverlap(c.dst, c.src); got != c.may {
			t.Errorf("%s: MayOverlap = %v, want %v", c.name, got, c.may)
		}
	}
}
