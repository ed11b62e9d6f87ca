package clengine_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/opencl"
	"github.com/goferro/goferro/opencl/clengine"
	"github.com/goferro/goferro/tensor"
)

// Helpers of the runtime tests with real OpenCL engines: a runtime with
// the CPU engine and one (or two) OpenCL engines on PoCL, whose transfer
// providers, executors and materializers are wrapped so that the tests
// can count what moved, what ran and what was given back.

var bg = context.Background()

const cpuID = cpu.EngineID

// clRig is a runtime with cpu.NewEngine() and OpenCL engines.
type clRig struct {
	rt  *goferro.Runtime
	cl  *clengine.Engine   // the first OpenCL engine
	cls []*clengine.Engine // every OpenCL engine
	id  driver.EngineID    // cl's engine id
	// tap wraps every provider: it counts the calls and the copies handed
	// out and given back.
	tap goferrotest.Tap
	mu  sync.Mutex
	req []driver.TransferRequest // every transfer request, in order
	mat atomic.Int64             // materializations by OpenCL engines
	// cpuRuns and clRuns count executor calls of the CPU engine and of
	// the first OpenCL engine.
	cpuRuns, clRuns atomic.Int64
	// base are the OpenCL contexts' buffer counters when the rig was made.
	base []opencl.BufferStats
}

type rigConfig struct {
	cpuFamilies []string // nil: all core families
	clFamilies  []string // nil: all of clengine.Families
	clFamilies2 []string // the second OpenCL engine's; nil: clFamilies
	second      bool     // a second OpenCL engine (its own context) on the same device
	root        driver.EngineID
	// exec decorates the CPU engine's and the first OpenCL engine's
	// executors (a barrier).
	exec func(driver.Executor) driver.Executor
}

// counted wraps an executor with a call counter.
func counted(n *atomic.Int64, inner driver.Executor) driver.Executor {
	return driver.ExecutorFunc(func(ctx context.Context, c *driver.Call) ([]*driver.Buffer, error) {
		n.Add(1)
		return inner.Execute(ctx, c)
	})
}

// openDevice returns the first OpenCL device or skips the test.
func openDevice(t testing.TB) *opencl.Device {
	t.Helper()
	devs, err := opencl.Devices()
	if err != nil || len(devs) == 0 {
		t.Skipf("no OpenCL device: %v", err)
	}
	return devs[0]
}

// openAs opens an OpenCL engine with the given id, closed at cleanup.
func openAs(t testing.TB, id driver.EngineID) *clengine.Engine {
	t.Helper()
	e, err := clengine.OpenAs(bg, openDevice(t), id)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// decorate applies the rig's executor decorators.
func (r *clRig) decorate(n *atomic.Int64, ex driver.Executor, c rigConfig) driver.Executor {
	ex = counted(n, ex)
	if c.exec != nil {
		ex = c.exec(ex)
	}
	return ex
}

func newCLRig(t testing.TB, c rigConfig) *clRig {
	t.Helper()
	r := &clRig{cl: openAs(t, "opencl.a.v1")}
	r.cls = []*clengine.Engine{r.cl}
	if c.second {
		r.cls = append(r.cls, openAs(t, "opencl.b.v1"))
	}
	r.id = r.cl.Registration().ID
	creg := cpu.NewEngine()
	if c.cpuFamilies != nil {
		creg.Families = slices.Clone(c.cpuFamilies)
	}
	creg.Executor = r.decorate(&r.cpuRuns, creg.Executor, c)
	opts := []goferro.Option{goferro.WithEngine(creg)}
	for i, e := range r.cls {
		reg := e.Registration()
		if fams := c.clFamilies; i == 1 && c.clFamilies2 != nil {
			reg.Families = slices.Clone(c.clFamilies2)
		} else if fams != nil {
			reg.Families = slices.Clone(fams)
		}
		if i == 0 {
			reg.Executor = r.decorate(&r.clRuns, reg.Executor, c)
		}
		inner := reg.Materializer
		reg.Materializer = driver.MaterializerFunc(func(ctx context.Context, b *driver.Buffer) (*tensor.Tensor, error) {
			r.mat.Add(1)
			return inner.Materialize(ctx, b)
		})
		opts = append(opts, goferro.WithEngine(reg))
	}
	for _, p := range clengine.Providers(r.cls...) {
		opts = append(opts, goferro.WithTransfer(p.Src, p.Dst, r.record(r.tap.Provider(p.Provider))))
	}
	if c.root != "" {
		opts = append(opts, goferro.WithRoot(c.root))
	}
	rt, err := goferro.NewRuntime(opts...)
	if err != nil {
		t.Fatal(err)
	}
	r.rt = rt
	for _, e := range r.cls {
		r.base = append(r.base, e.Context().Stats())
	}
	return r
}

// record wraps p to record every request; the wrapper orders the
// transfers p orders (driver.OrderedProvider).
func (r *clRig) record(p driver.TransferProvider) driver.TransferProvider {
	return &recorded{r, p}
}

type recorded struct {
	r     *clRig
	inner driver.TransferProvider
}

func (w *recorded) Transfer(ctx context.Context, req *driver.TransferRequest) (*driver.Buffer, error) {
	w.r.mu.Lock()
	w.r.req = append(w.r.req, *req)
	w.r.mu.Unlock()
	return w.inner.Transfer(ctx, req)
}

func (w *recorded) Orders(from, to driver.EngineID) bool {
	return driver.ProviderOrders(w.inner, from, to)
}

// reqs returns the transfer requests made so far.
func (r *clRig) reqs() []driver.TransferRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.req)
}

// count returns the number of transfers from engine src to engine dst.
func (r *clRig) count(src, dst driver.EngineID) int {
	n := 0
	for _, q := range r.reqs() {
		if q.From.Engine == src && q.To.Engine == dst {
			n++
		}
	}
	return n
}

// checkNoLeaks asserts that every OpenCL context holds exactly keep[i] more
// live buffers than when the rig was made (the caller's device inputs),
// and that every copy the providers handed out was released.
func (r *clRig) checkNoLeaks(t testing.TB, keep ...int64) {
	t.Helper()
	for i, e := range r.cls {
		var k int64
		if i < len(keep) {
			k = keep[i]
		}
		st := e.Context().Stats()
		if d := st.Live - r.base[i].Live; d != k {
			t.Errorf("%s: %d device buffers live, want %d (allocated %d, released %d since the rig was made)",
				e.ID(), d, k, st.Allocated-r.base[i].Allocated, st.Released-r.base[i].Released)
		}
	}
	if st := r.tap.Stats(); st.Live != 0 {
		t.Errorf("%d of the %d copies the providers made were not released", st.Live, st.Buffers)
	}
}

// upload copies h into OpenCL engine e as a caller-owned input buffer.
func upload(t testing.TB, e *clengine.Engine, h *tensor.Tensor) *driver.Buffer {
	t.Helper()
	d, err := e.Upload(bg, h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Release() })
	return e.Buffer(d)
}

// transferSteps returns the transfer steps of a prepared schedule,
// checking that every step depends only on earlier ones and that no
// transfer goes to its own location.
func transferSteps(t testing.TB, prep *goferro.Prepared) []goferro.Step {
	t.Helper()
	var out []goferro.Step
	for i, s := range prep.Schedule() {
		for _, d := range s.Deps {
			if d >= i {
				t.Errorf("step %d depends on later step %d", i, d)
			}
		}
		if s.Kind == goferro.StepTransfer {
			if s.From == s.At {
				t.Errorf("step %d transfers to its own location %v", i, s.At)
			}
			out = append(out, s)
		}
	}
	return out
}

// isKind asserts errors.Is(err, kind).
func isKind(t testing.TB, err, kind error) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %v", kind)
	}
	if !errors.Is(err, kind) {
		t.Fatalf("error %v is not %v", err, kind)
	}
}

// randT is a seeded uniform tensor.
func randT(t testing.TB, dt tensor.DType, seed uint64, shape ...int) *tensor.Tensor {
	t.Helper()
	x, err := tensor.Rand(tensor.NewRNG(seed), dt, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func host(ts ...*tensor.Tensor) []*driver.Buffer {
	out := make([]*driver.Buffer, len(ts))
	for i, x := range ts {
		out[i] = driver.HostBuffer(x, nil)
	}
	return out
}

// complexValues returns a float or complex tensor's elements as complex128.
func complexValues(x *tensor.Tensor) ([]complex128, error) {
	conv := func(n int, at func(int) complex128) []complex128 {
		out := make([]complex128, n)
		for i := range out {
			out[i] = at(i)
		}
		return out
	}
	switch x.DType() {
	case tensor.Float32:
		v, err := tensor.Values[float32](x)
		return conv(len(v), func(i int) complex128 { return complex(float64(v[i]), 0) }), err
	case tensor.Float64:
		v, err := tensor.Values[float64](x)
		return conv(len(v), func(i int) complex128 { return complex(v[i], 0) }), err
	case tensor.Complex64:
		v, err := tensor.Values[complex64](x)
		return conv(len(v), func(i int) complex128 { return complex128(v[i]) }), err
	case tensor.Complex128:
		return tensor.Values[complex128](x)
	}
	return nil, fmt.Errorf("dtype %v", x.DType())
}

// relErr is max|got-want| / max|want| (the max-norm relative error), and
// also reports non-finite values in got.
func relErr(got, want *tensor.Tensor) (float64, error) {
	if got.DType() != want.DType() || !got.Shape().Equal(want.Shape()) {
		return 0, fmt.Errorf("got %v%v, want %v%v", got.DType(), got.Shape(), want.DType(), want.Shape())
	}
	g, err := complexValues(got)
	if err != nil {
		return 0, err
	}
	w, err := complexValues(want)
	if err != nil {
		return 0, err
	}
	var num, den float64
	for i := range g {
		if cmplx.IsNaN(g[i]) || cmplx.IsInf(g[i]) {
			return math.Inf(1), fmt.Errorf("element %d is %v", i, g[i])
		}
		num = max(num, cmplx.Abs(g[i]-w[i]))
		den = max(den, cmplx.Abs(w[i]))
	}
	if den == 0 {
		return num, nil
	}
	return num / den, nil
}
