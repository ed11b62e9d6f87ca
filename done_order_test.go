package goferro_test

import (
	"context"
	"errors"
	"testing"

	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/tensor"
)

// Done 5 (order): a copy with several faults at once reports the first in
// the documented order: element count, dtype, shape, length, placement,
// residency.
func TestDoneProviderFaultOrder(t *testing.T) {
	type edit func(r *rig, s *driver.BufferSpec, req *driver.TransferRequest)
	count := func(_ *rig, s *driver.BufferSpec, _ *driver.TransferRequest) {
		s.Shape, s.Strides = tensor.Shape{s.Shape[0] + 1}, nil
	}
	dtype := func(_ *rig, s *driver.BufferSpec, _ *driver.TransferRequest) { s.DType = tensor.Float32 }
	shape := func(_ *rig, s *driver.BufferSpec, _ *driver.TransferRequest) {
		s.Shape, s.Strides = tensor.Shape{1, s.Shape[0]}, nil
	}
	short := func(_ *rig, s *driver.BufferSpec, _ *driver.TransferRequest) { s.Len-- }
	place := func(r *rig, s *driver.BufferSpec, _ *driver.TransferRequest) { s.Placement.Domain = r.a.Domain() }
	foreign := func(r *rig, s *driver.BufferSpec, req *driver.TransferRequest) {
		tt, _ := s.Payload.(*tensor.Tensor)
		ta, _ := r.a.Upload(tt)
		s.Release()
		pt, _ := ta.Tensor()
		s.Payload, s.Release = pt, ta.Release
	}
	cases := []struct {
		name  string
		edits []edit
		kind  error
	}{
		{"count+dtype", []edit{count, dtype}, driver.ErrTransferElementCount},
		{"dtype+shape", []edit{dtype, shape}, driver.ErrTransferDType},
		{"shape+length", []edit{shape, short}, driver.ErrTransferShape},
		{"length+placement", []edit{short, place}, driver.ErrTransferLength},
		{"placement+residency", []edit{foreign, place}, driver.ErrTransferPlacement},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, rigOpts{})
			faulty := driver.TransferFunc(func(ctx context.Context, req *driver.TransferRequest) (*driver.Buffer, error) {
				g, err := r.cp.Transfer(ctx, req)
				if err != nil || req.To.Engine != idB {
					return g, err
				}
				tt, _ := g.Tensor()
				s := driver.BufferSpec{DType: g.DType(), Shape: g.Shape(), Strides: g.Strides(), Offset: g.Offset(), Len: g.Len(),
					Placement: g.Placement(), Backend: g.Backend(), Payload: tt, Release: g.Release}
				for _, e := range c.edits {
					e(r, &s, req)
				}
				return driver.NewBuffer(s), nil
			})
			if err := r.rt.Reconfigure(func(cfg *goferro.Config) error {
				cfg.RemoveTransfer(classA, classB)
				return cfg.AddTransfer(classA, classB, faulty)
			}); err != nil {
				t.Fatal(err)
			}
			_, err := r.rt.Run(bg, negSum(t, 3), host(randT(t, 1, 3), randT(t, 2, 3)))
			var te *goferro.Error
			if !errors.As(err, &te) || te.Kind != c.kind {
				t.Fatalf("error %v, want kind %v", err, c.kind)
			}
			if n := r.b.Stats().Executions; n != 0 {
				t.Errorf("B ran %d times", n)
			}
			r.checkNoLeaks(t)
		})
	}
}
