package graph

import (
	"encoding/json"
	"testing"

	"github.com/goferro/goferro/tensor"
)

func TestSmoke(t *testing.T) {
	b := NewBuilder()
	x := b.Input("x", tensor.Float64, Shape{Sym("n"), Size(3)})
	w := b.Input("w", tensor.Float64, Dims(3, 4))
	y := Exp(Einsum("ij,jk->ik", x, w))
	z := Add(y, b.Scalar(tensor.Float64, 1))
	p, err := Compile(z, y)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(p)
	js, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(string(js))
	var q Program
	if err := json.Unmarshal(js, &q); err != nil {
		t.Fatal(err)
	}
	if q.Fingerprint() != p.Fingerprint() {
		t.Fatal("fingerprint changed")
	}
}
