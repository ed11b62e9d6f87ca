package goferro_test

import (
	"testing"

	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/graph/ref"
	"github.com/goferro/goferro/tensor"
)

// TestCoreOpsAcrossDevices runs an einsum network whose instructions are
// confined to two fake devices — contractions on one, elementwise and
// layout on the other — while the inputs enter at the CPU engine and the
// synthesized instructions run at the root (the CPU engine). The results
// must equal the reference interpreter's, concurrent or serial.
func TestCoreOpsAcrossDevices(t *testing.T) {
	a := goferrotest.NewDevice("fake.gemm.v1", goferrotest.WithFamilies(graph.FamilyDotGeneral))
	b := goferrotest.NewDevice("fake.vec.v1", goferrotest.WithFamilies(graph.FamilyElementwise, graph.FamilyLayout, graph.FamilyConstant, graph.FamilyReduce))
	cp := goferrotest.NewCopier(a, b)
	opts := []goferro.Option{goferro.WithEngine(cpu.NewEngine()), goferro.WithEngine(a.Engine()), goferro.WithEngine(b.Engine())}
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
	bl := graph.NewBuilder()
	x := bl.Input("x", tensor.Float64, graph.Shape{graph.Sym("n"), graph.Size(3)})
	w := bl.Input("w", tensor.Float64, graph.Dims(3, 4))
	v := bl.Input("v", tensor.Float64, graph.Dims(4))
	h := graph.Exp(graph.Einsum("ij,jk->ik", x, w))
	y := graph.Add(graph.Einsum("ik,k->i", h, v), bl.Scalar(tensor.Float64, 1))
	z := graph.ReduceSum(graph.Einsum("ij,ik->jk", x, h))
	p, err := graph.Compile(y, z)
	if err != nil {
		t.Fatal(err)
	}
	xt, wt, vt := randT(t, 1, 5, 3), randT(t, 2, 3, 4), randT(t, 3, 4)
	want, err := ref.Run(p, xt, wt, vt)
	if err != nil {
		t.Fatal(err)
	}
	prep, err := rt.Prepare(bg, p, host(xt, wt, vt), goferro.OnEngines(a.ID(), b.ID()))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range prep.Placement() {
		ins := p.Instructions[i]
		switch {
		case ins.Synthesized:
			if l.Engine != cpu.EngineID {
				t.Errorf("synthesized #%d %s on %s, want the root", i, ins.Op, l.Engine)
			}
		case ins.Family == graph.FamilyDotGeneral && l.Engine != a.ID(), ins.Family != graph.FamilyDotGeneral && l.Engine != b.ID():
			t.Errorf("#%d %s (%s) on %s", i, ins.Op, ins.Family, l.Engine)
		}
	}
	if prep.Transfers() == 0 {
		t.Fatal("no transfers")
	}
	for _, opt := range [][]goferro.RunOption{nil, {goferro.Serial()}} {
		out, err := rt.Execute(bg, prep, host(xt, wt, vt), opt...)
		if err != nil {
			t.Fatal(err)
		}
		for i := range out {
			if err := tensor.CheckClose(out[i], want[i], 1e-12, 1e-12); err != nil {
				t.Errorf("output %d: %v", i, err)
			}
		}
	}
	if a.Stats().Executions == 0 || b.Stats().Executions == 0 {
		t.Errorf("a device did nothing: %+v %+v", a.Stats(), b.Stats())
	}
	for _, d := range []*goferrotest.Device{a, b} {
		if st := d.Stats(); st.Live != 0 {
			t.Errorf("%s leaked %d", d.ID(), st.Live)
		}
	}
	if st := cp.Stats(); st.LiveHostCopies != 0 {
		t.Errorf("copier leaked %d host copies", st.LiveHostCopies)
	}
	// The CPU engine alone gives the same results.
	cpuOnly, err := goferro.NewRuntime(goferro.WithEngine(cpu.NewEngine()))
	if err != nil {
		t.Fatal(err)
	}
	out, err := cpuOnly.Run(bg, p, host(xt, wt, vt))
	if err != nil {
		t.Fatal(err)
	}
	for i := range out {
		if err := tensor.CheckClose(out[i], want[i], 1e-12, 1e-12); err != nil {
			t.Errorf("cpu output %d: %v", i, err)
		}
	}
}
