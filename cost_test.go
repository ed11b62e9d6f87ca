package goferro_test

import (
	"testing"

	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/graph"
)

// TestLeastCostPlacement: x lives on B. First-fit puts both instructions
// on A (first in id order) and moves x there; the least-cost policy under
// TransferBytes runs them on B and moves only the small y.
func TestLeastCostPlacement(t *testing.T) {
	mk := func(model goferro.CostModel) (*goferro.Runtime, *goferrotest.Device, *goferrotest.Device) {
		a := goferrotest.NewDevice(idA)
		b := goferrotest.NewDevice(idB)
		cp := goferrotest.NewCopier(a, b)
		opts := []goferro.Option{goferro.WithEngine(cpu.NewEngine()), goferro.WithEngine(a.Engine()), goferro.WithEngine(b.Engine()), goferro.WithCostModel(model)}
		classes := []driver.StorageClass{driver.StorageHost, a.DefaultStorage(), b.DefaultStorage()}
		for _, s := range classes {
			for _, d := range classes {
				if s != d {
					opts = append(opts, goferro.WithTransfer(s, d, cp))
				}
			}
		}
		rt, err := goferro.NewRuntime(opts...)
		if err != nil {
			t.Fatal(err)
		}
		return rt, a, b
	}
	xv, yv := randT(t, 1, 64), randT(t, 2, 64)
	for _, c := range []struct {
		name  string
		model goferro.CostModel
		want  driver.EngineID
	}{
		{"first-fit", nil, idA},
		{"bytes", goferro.TransferBytes{}, idB},
		{"throughput", goferro.Throughput{BytesPerSecond: map[[2]driver.EngineID]float64{{idB, idA}: 1}}, idB},
		{"fast A", goferro.Throughput{ElementsPerSecond: map[driver.EngineID]float64{idB: 1}}, idA},
	} {
		t.Run(c.name, func(t *testing.T) {
			rt, a, b := mk(c.model)
			xb, _ := b.Upload(xv)
			defer xb.Release()
			in := []*driver.Buffer{xb, driver.HostBuffer(yv, nil)}
			prep, err := rt.Prepare(bg, negSum(t, 64), in)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range prep.Locations() {
				if l.Engine != c.want {
					t.Fatalf("placement %v, want all on %s\n%v", prep.Locations(), c.want, prep)
				}
			}
			out, err := rt.Execute(bg, prep, in)
			if err != nil {
				t.Fatal(err)
			}
			checkClose(t, out[0], want(t, func(v ...float64) float64 { return -(v[0] + v[1]) }, xv, yv))
			if a.Stats().Live != 0 || b.Stats().Live != 1 {
				t.Errorf("leaks: A %+v B %+v", a.Stats(), b.Stats())
			}
		})
	}
}

type panickyModel struct{ goferro.TransferBytes }

func (panickyModel) OpCost(driver.EngineID, *graph.Instruction, []driver.ResultType) float64 {
	panic("model bug")
}

// TestPanickingCostModel: a model that panics fails preparation with
// ErrPanic.
func TestPanickingCostModel(t *testing.T) {
	r := newRig(t, rigOpts{extra: []goferro.Option{goferro.WithCostModel(panickyModel{})}})
	_, err := r.rt.Prepare(bg, negSum(t, 2), host(randT(t, 1, 2), randT(t, 2, 2)))
	isKind(t, err, goferro.ErrPanic)
}
