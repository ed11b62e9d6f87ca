package clengine_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/opencl"
	"github.com/goferro/goferro/opencl/clengine"
	"github.com/goferro/goferro/tensor"
)

// Helpers of the multi-engine tests: a runtime with the CPU engine and one
// (or two) real OpenCL engines on PoCL, whose transfer providers and
// materializers are wrapped so that the tests can count what moved and
// inject faults into real device buffers.

var bg = context.Background()

const cpuID = cpu.EngineID

// clRig is a runtime with cpu.NewEngine() and OpenCL engines, all transfers
// going through counting (and fault-injecting) wrappers of clengine's own
// providers.
type clRig struct {
	rt   *goferro.Runtime
	cl   *clengine.Engine   // the first OpenCL engine
	cls  []*clengine.Engine // every OpenCL engine
	id   driver.EngineID    // cl's engine id
	prov *countingProvider
	mat  atomic.Int64 // materializations by OpenCL engines
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
	noProviders bool
	extra       []goferro.Option
	// cpuExec and clExec decorate the CPU engine's and the first OpenCL
	// engine's executors (hooks, fault injection).
	cpuExec, clExec func(driver.Executor) driver.Executor
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

func newCLRig(t testing.TB, c rigConfig) *clRig {
	t.Helper()
	r := &clRig{}
	r.cl = openAs(t, "opencl.a.v1")
	r.cls = []*clengine.Engine{r.cl}
	if c.second {
		r.cls = append(r.cls, openAs(t, "opencl.b.v1"))
	}
	r.id = driver.EngineID(r.cl.ID())
	creg := cpu.NewEngine()
	if c.cpuFamilies != nil {
		creg.Families = append([]string(nil), c.cpuFamilies...)
	}
	creg.Executor = counted(&r.cpuRuns, creg.Executor)
	if c.cpuExec != nil {
		creg.Executor = c.cpuExec(creg.Executor)
	}
	opts := []goferro.Option{goferro.WithEngine(creg)}
	for i, e := range r.cls {
		reg := e.Registration()
		fams := c.clFamilies
		if i == 1 && c.clFamilies2 != nil {
			fams = c.clFamilies2
		}
		if fams != nil {
			reg.Families = append([]string(nil), fams...)
		}
		if i == 0 {
			reg.Executor = counted(&r.clRuns, reg.Executor)
			if c.clExec != nil {
				reg.Executor = c.clExec(reg.Executor)
			}
		}
		inner := reg.Materializer
		reg.Materializer = driver.MaterializerFunc(func(ctx context.Context, b *driver.Buffer) (*tensor.Tensor, error) {
			r.mat.Add(1)
			return inner.Materialize(ctx, b)
		})
		opts = append(opts, goferro.WithEngine(reg))
	}
	r.prov = &countingProvider{cls: r.cls}
	if !c.noProviders {
		for _, p := range clengine.Providers(r.cls...) {
			opts = append(opts, goferro.WithTransfer(p.Src, p.Dst, r.prov.wrap(p.Provider)))
		}
	}
	if c.root != "" {
		opts = append(opts, goferro.WithRoot(c.root))
	}
	opts = append(opts, c.extra...)
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

// checkNoLeaks asserts that every OpenCL context holds exactly keep[i] more
// live buffers than when the rig was made (the caller's device inputs),
// and that every buffer the providers returned was released exactly once.
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
	for i, n := range r.prov.releases() {
		if n != 1 {
			t.Errorf("provider buffer %d released %d times, want 1", i, n)
		}
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

// fault edits what a provider returned (good) for req; it owns good.
type fault func(good *driver.Buffer, req *driver.TransferRequest) (*driver.Buffer, error)

// countingProvider wraps clengine's providers: it records every request,
// counts the calls per (source engine, destination engine), puts a release
// counter on every buffer it hands to the runtime, and applies a fault to
// the transfers selected by faultIf.
type countingProvider struct {
	cls []*clengine.Engine

	mu       sync.Mutex
	requests []driver.TransferRequest
	made     []*atomic.Int64
	faultIf  func(req *driver.TransferRequest) bool
	fault    fault
	hook     func(ctx context.Context, req *driver.TransferRequest) error
}

func (p *countingProvider) setFault(when func(*driver.TransferRequest) bool, f fault) {
	p.mu.Lock()
	p.faultIf, p.fault = when, f
	p.mu.Unlock()
}

func (p *countingProvider) setHook(h func(ctx context.Context, req *driver.TransferRequest) error) {
	p.mu.Lock()
	p.hook = h
	p.mu.Unlock()
}

func (p *countingProvider) wrap(inner driver.TransferProvider) driver.TransferProvider {
	return driver.TransferFunc(func(ctx context.Context, req *driver.TransferRequest) (*driver.Buffer, error) {
		p.mu.Lock()
		p.requests = append(p.requests, *req)
		when, f, hook := p.faultIf, p.fault, p.hook
		p.mu.Unlock()
		if hook != nil {
			if err := hook(ctx, req); err != nil {
				return nil, err
			}
		}
		b, err := inner.Transfer(ctx, req)
		if err != nil || b == nil {
			return b, err
		}
		if f != nil && (when == nil || when(req)) {
			if b, err = f(b, req); err != nil || b == nil {
				return b, err
			}
		}
		n := new(atomic.Int64)
		p.mu.Lock()
		p.made = append(p.made, n)
		p.mu.Unlock()
		return driver.NewBuffer(driver.BufferSpec{
			DType: b.DType(), Shape: b.Shape(), Strides: b.Strides(), Offset: b.Offset(), Len: b.Len(),
			Placement: b.Placement(), Backend: b.Backend(), Payload: b.Payload(),
			Release: func() { n.Add(1); b.Release() },
		}), nil
	})
}

func (p *countingProvider) reqs() []driver.TransferRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]driver.TransferRequest(nil), p.requests...)
}

func (p *countingProvider) releases() []int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]int64, len(p.made))
	for i, n := range p.made {
		out[i] = n.Load()
	}
	return out
}

// count returns the number of provider calls from engine src to engine dst.
func (p *countingProvider) count(src, dst driver.EngineID) int {
	n := 0
	for _, q := range p.reqs() {
		if q.From.Engine == src && q.To.Engine == dst {
			n++
		}
	}
	return n
}

// respec returns b's description with every field copied, payload and
// release included (so a modified buffer still frees b's memory).
func respec(b *driver.Buffer) driver.BufferSpec {
	return driver.BufferSpec{DType: b.DType(), Shape: b.Shape(), Strides: b.Strides(), Offset: b.Offset(), Len: b.Len(),
		Placement: b.Placement(), Backend: b.Backend(), Payload: b.Payload(), Release: b.Release}
}

// transfers returns the transfer steps of prep as "from->to#slot" strings
// of engine ids, and checks the step invariants.
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
	x, err := tensor.Rand(dt, seed, shape...)
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

// cpuEngineFull is the CPU engine with every core family.
func cpuEngineFull() driver.Engine { return cpu.NewEngine() }
