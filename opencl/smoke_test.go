package opencl

import (
	"context"
	"testing"

	"github.com/goferro/goferro/tensor"
)

func TestSmoke(t *testing.T) {
	q := testQueue(t)
	ctx := context.Background()
	a, _ := tensor.Arange(tensor.Float32, 6)
	a, _ = a.Reshape(2, 3)
	da, err := q.Upload(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	s, err := q.Binary(ctx, Add, da, da)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(download(t, q, s))
	p, err := q.Permute(ctx, da, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(download(t, q, p))
	r, err := q.Reduce(ctx, Sum, da, false, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(download(t, q, r))
	mm, err := q.MatMul(ctx, da, p)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(download(t, q, mm))
}
