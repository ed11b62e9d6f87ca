package goferro_test

import (
	"sync"
	"testing"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

// TestPreparedCache: Prepare and Run of a program already prepared for the
// same physical input signature hit the cache: the same Prepared, the same
// results. The key covers every input's shape, allocation domain and
// strides, and the entries of different signatures live side by side
// (inputs alternating between them are each prepared once).
func TestPreparedCache(t *testing.T) {
	r := newRig(t, rigOpts{})
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Shape{graph.Sym("n")})
	y := b.Input("y", tensor.Float64, graph.Shape{graph.Sym("n")})
	p := compile(t, goferrotest.UnaryNeg(goferrotest.ArithAdd(x, y)))
	x3, y3, x4, y4 := randT(t, 1, 3), randT(t, 2, 3), randT(t, 1, 4), randT(t, 2, 4)
	xa, _ := r.a.Upload(x3)
	defer xa.Release()
	col, _ := randT(t, 3, 3, 2).Slice(tensor.All, tensor.R(0, 1))
	col, _ = col.Reshape(3)
	if col.IsContiguous() {
		t.Fatal("test view is contiguous")
	}
	variants := []struct {
		name   string
		in     []*driver.Buffer
		x, y   *tensor.Tensor
		enters driver.EngineID
	}{
		{"host", host(x3, y3), x3, y3, cpu.EngineID},
		{"shape", host(x4, y4), x4, y4, cpu.EngineID},
		{"domain", []*driver.Buffer{xa, driver.HostBuffer(y3, nil)}, x3, y3, idA},
		{"strides", host(col, y3), col, y3, cpu.EngineID},
	}
	preps := make([]*goferro.Prepared, len(variants))
	outs := make([][]*tensor.Tensor, len(variants))
	for round := range 3 {
		for i, v := range variants {
			prep, err := r.rt.Prepare(bg, p, v.in)
			if err != nil {
				t.Fatal(err)
			}
			out, err := r.rt.Run(bg, p, v.in)
			if err != nil {
				t.Fatal(err)
			}
			if round > 0 {
				if prep != preps[i] {
					t.Errorf("round %d: %s prepared again", round, v.name)
				}
				checkSame(t, out, outs[i])
				continue
			}
			preps[i], outs[i] = prep, out
			checkClose(t, out[0], negSumOf(t, v.x, v.y))
			if l := prep.Ingress()[0]; l.Engine != v.enters {
				t.Errorf("%s: x enters at %v, want %s", v.name, l, v.enters)
			}
			for _, q := range preps[:i] {
				if q == prep {
					t.Errorf("%s: a cached Prepared of another signature", v.name)
				}
			}
		}
	}
	// Per variant: one miss, then 2 Prepare and 3 Run hits.
	if st := goferro.CacheStats(r.rt); st.Misses != 4 || st.Hits != 20 || st.Entries != 4 {
		t.Errorf("stats %+v, want 4 misses, 20 hits, 4 entries", st)
	}
	if xa.Released() {
		t.Error("caller input released")
	}
	r.checkNoLeaks(t, 1, 0)
}

// TestReconfigureEmptiesCache: a new epoch empties the cache; the same
// inputs miss and are prepared for the new configuration, here on a new
// arith device that sorts before A, with the right result.
func TestReconfigureEmptiesCache(t *testing.T) {
	r := newRig(t, rigOpts{})
	xv, yv := randT(t, 1, 3), randT(t, 2, 3)
	w := negSumOf(t, xv, yv)
	p := negSum(t, 3)
	out, err := r.rt.Run(bg, p, host(xv, yv))
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], w)
	p1, err := r.rt.Prepare(bg, p, host(xv, yv))
	if err != nil {
		t.Fatal(err)
	}
	c := goferrotest.NewDevice("fake.0c.v1", goferrotest.WithFamilies(goferrotest.ArithFamily))
	cp := goferrotest.NewCopier(c, r.b)
	if err := r.rt.Reconfigure(func(cfg *goferro.Config) error {
		if err := cfg.AddEngine(c.Engine()); err != nil {
			return err
		}
		if err := cfg.AddTransfer(driver.StorageHost, c.DefaultStorage(), cp); err != nil {
			return err
		}
		return cfg.AddTransfer(c.DefaultStorage(), classB, cp)
	}); err != nil {
		t.Fatal(err)
	}
	before := goferro.CacheStats(r.rt)
	if before.Entries != 0 {
		t.Errorf("%d entries after Reconfigure", before.Entries)
	}
	out, err = r.rt.Run(bg, p, host(xv, yv))
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], w)
	if st := goferro.CacheStats(r.rt); st.Misses != before.Misses+1 || st.Hits != before.Hits || st.Entries != 1 {
		t.Errorf("stats %+v after %+v: want one more miss, one entry", st, before)
	}
	p3, err := r.rt.Prepare(bg, p, host(xv, yv))
	if err != nil {
		t.Fatal(err)
	}
	if p3 == p1 || p3.Epoch() != 2 || p3.Locations()[0].Engine != c.ID() {
		t.Errorf("prepared at epoch %d with the add on %v after Reconfigure", p3.Epoch(), p3.Locations()[0])
	}
	if n := c.Stats().Executions; n != 1 {
		t.Errorf("the new device ran %d times, want the add placed on it", n)
	}
	if n := r.a.Stats().Executions; n != 1 {
		t.Errorf("A ran %d times, want only the first run's add", n)
	}
	r.checkNoLeaks(t)
	checkNoLeaks(t, cp, []*goferrotest.Device{c})
}

// TestCachePrepareStraddlingReconfigure: a preparation that straddles a
// Reconfigure (admitted under epoch 1, finished after epoch 2 is
// published) gives a Prepared of epoch 1, which Execute rejects as stale,
// and leaves no epoch-1 entry in the cache: Entries counts only the
// current epoch's.
func TestCachePrepareStraddlingReconfigure(t *testing.T) {
	d := goferrotest.NewDevice(idA)
	e := d.Engine()
	elig := e.Ingress.Eligible
	var once sync.Once
	entered, gate := make(chan struct{}), make(chan struct{})
	e.Ingress.Eligible = func(p driver.Placement, c driver.StorageClass) bool {
		once.Do(func() { close(entered); <-gate })
		return elig(p, c)
	}
	rt := newRuntime(t, goferro.WithEngine(e))
	p := compile(t, goferrotest.UnaryNeg(graph.NewBuilder().Input("x", tensor.Float64, graph.Dims(2))))
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
	_, err := rt.Execute(bg, got.p, in)
	isKind(t, err, goferro.ErrStalePrepared)
	if _, err := rt.Run(bg, p, in); err != nil {
		t.Fatal(err)
	}
	if st := goferro.CacheStats(rt); st.Entries != 1 {
		t.Errorf("%d cache entries, want 1: the current epoch's (%+v)", st.Entries, st)
	}
}
