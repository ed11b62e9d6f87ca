package opencl

import (
	"bytes"
	"context"
	"testing"

	"github.com/goferro/goferro/tensor"
)

// TestDownloadEveryDType downloads a contiguous view with an offset of
// every dtype (on a CPU device, through the mapped copy) and compares its
// bytes with the host tensor's; then, with a copy into the tensor pending
// on another queue, that Download waits for it and that a copy enqueued
// on the other queue after it lands.
func TestDownloadEveryDType(t *testing.T) {
	q := testQueue(t)
	ctx := context.Background()
	const n, lo = 37, 5
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64, tensor.Complex64, tensor.Complex128,
		tensor.Int32, tensor.Int64, tensor.Bool} {
		if dt == tensor.Float64 || dt == tensor.Complex128 {
			if !q.Context().Device().FP64 {
				continue
			}
		}
		h := patterned(t, dt, n, 0)
		d, err := q.Upload(ctx, h)
		if err != nil {
			t.Fatal(err)
		}
		v, err := d.Slice(tensor.Range{Start: lo, Stop: n, Step: 1})
		if err != nil {
			t.Fatal(err)
		}
		got, err := q.Download(ctx, v)
		if err != nil {
			t.Fatalf("%v: %v", dt, err)
		}
		hv, _ := h.Slice(tensor.Range{Start: lo, Stop: n, Step: 1})
		if got.DType() != dt || !got.ShapeView().Equal(hv.ShapeView()) || !bytes.Equal(got.Bytes(), hv.Contiguous().Bytes()) {
			t.Errorf("%v: Download of [%d:%d] differs from the host tensor", dt, lo, n)
		}
		d.Release()
	}

	q2, err := q.Context().NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	defer q2.Close()
	d, err := q.Upload(ctx, patterned(t, tensor.Float32, 1<<16, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Release()
	for round := 1; round <= 2; round++ {
		want := patterned(t, tensor.Float32, 1<<16, round)
		src, err := q2.Upload(ctx, want)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := q2.CopyInto(ctx, d, src); err != nil { // not waited for
			t.Fatal(err)
		}
		got, err := q.Download(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("round %d: Download did not wait for the pending copy on another queue", round)
		}
		src.Release()
	}
}

// patterned returns a 1-D host tensor of n elements of dt whose bytes
// depend on seed (for Bool, valid booleans).
func patterned(t *testing.T, dt tensor.DType, n, seed int) *tensor.Tensor {
	t.Helper()
	h, err := tensor.Zeros(dt, n)
	if err != nil {
		t.Fatal(err)
	}
	b := h.Bytes()
	for i := range b {
		if dt == tensor.Bool {
			b[i] = byte((i + seed) % 2)
		} else {
			b[i] = byte(i*7 + 3 + seed*11)
		}
	}
	return h
}
