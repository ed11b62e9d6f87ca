package goferro_test

import (
	"testing"

	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/graph"
)

// TestLeastCostPlacement: x lives on B. First-fit puts both instructions
// on A (first in id order) and moves x there; the least-cost policy under
// TransferBytes runs them on B and moves only the small y.
func TestLeastCostPlacement(t *testing.T) {
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
		// A chain has nothing to run at once: its makespan is its total.
		{"makespan bytes", goferro.Makespan{Model: goferro.TransferBytes{}}, idB},
		{"makespan throughput", goferro.Makespan{Model: goferro.Throughput{BytesPerSecond: map[[2]driver.EngineID]float64{{idB, idA}: 1}}}, idB},
		{"makespan fast A", goferro.Makespan{Model: goferro.Throughput{ElementsPerSecond: map[driver.EngineID]float64{idB: 1}}}, idA},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b := goferrotest.NewDevice(idA), goferrotest.NewDevice(idB)
			rt, cp := meshRuntime(t, []goferro.Option{goferro.WithCostModel(c.model)}, a, b)
			xb, _ := b.Upload(xv)
			defer xb.Release()
			in := []*driver.Buffer{xb, driver.HostBuffer(yv, nil)}
			prep, err := rt.Prepare(bg, negSum(t, 64), in)
			if err != nil {
				t.Fatal(err)
			}
			onlyOn(t, prep, c.want)
			out, err := rt.Execute(bg, prep, in)
			if err != nil {
				t.Fatal(err)
			}
			checkClose(t, out[0], negSumOf(t, xv, yv))
			checkNoLeaks(t, cp, []*goferrotest.Device{a, b}, 0, 1)
		})
	}
}

type panickyModel struct{ goferro.TransferBytes }

func (panickyModel) OpCost(driver.EngineID, *graph.Instruction, []driver.ResultType) float64 {
	panic("model bug")
}

// TestPanickingCostModel: a model that panics fails preparation with
// ErrPanic, as a total and as a makespan (whose list schedule asks the
// model too).
func TestPanickingCostModel(t *testing.T) {
	for _, m := range []goferro.CostModel{panickyModel{}, goferro.Makespan{Model: panickyModel{}}} {
		r := newRig(t, rigOpts{extra: []goferro.Option{goferro.WithCostModel(m)}})
		_, err := r.rt.Prepare(bg, negSum(t, 2), host(randT(t, 1, 2), randT(t, 2, 2)))
		isKind(t, err, goferro.ErrPanic)
	}
}
