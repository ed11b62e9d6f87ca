package opencl

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goferro/goferro/tensor"
)

// secondQueue opens a queue on a second context of the shared device: its
// own allocation domain (its kernels load from the cached binary).
func secondQueue(t *testing.T) *Queue {
	t.Helper()
	return openQueue(t, testQueue(t).Context().Device())
}

// openQueue opens a context on dev and a queue on it, closed at cleanup.
func openQueue(t *testing.T, dev *Device) *Queue {
	t.Helper()
	c, err := NewContext(context.Background(), dev)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	q, err := c.NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func TestReleaseCounting(t *testing.T) {
	q := testQueue(t)
	ctx := context.Background()
	c := q.Context()
	var hooked atomic.Int64
	c.OnRelease(func(*Buffer) { hooked.Add(1) })
	defer c.OnRelease(nil)
	before := c.Stats()
	h, _ := tensor.Rand(tensor.NewRNG(1), tensor.Float32, 4, 5)
	d, err := q.Upload(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	v, err := d.Permute(1, 0) // a view retains the buffer
	if err != nil {
		t.Fatal(err)
	}
	s, err := q.Unary(ctx, Neg, v)
	if err != nil {
		t.Fatal(err)
	}
	mid := c.Stats()
	if mid.Allocated-before.Allocated != 2 || mid.Live-before.Live != 2 {
		t.Fatalf("after 2 allocations: %+v then %+v", before, mid)
	}
	if mid.LiveBytes-before.LiveBytes != 2*20*4 {
		t.Fatalf("live bytes grew by %d", mid.LiveBytes-before.LiveBytes)
	}
	if err := d.Release(); err != nil {
		t.Fatal(err)
	}
	if d.Buffer().Released() || hooked.Load() != 0 {
		t.Fatal("buffer freed while a view holds it")
	}
	if err := v.Release(); err != nil {
		t.Fatal(err)
	}
	if !d.Buffer().Released() || hooked.Load() != 1 {
		t.Fatalf("buffer not freed after its last reference (hook %d)", hooked.Load())
	}
	if err := v.Release(); !errors.Is(err, ErrReleased) {
		t.Fatalf("double release: %v", err)
	}
	if _, err := q.Unary(ctx, Neg, d); !errors.Is(err, ErrReleased) {
		t.Fatalf("use after release: %v", err)
	}
	if err := q.Owns(d); !errors.Is(err, ErrReleased) {
		t.Fatalf("released tensor owned: %v", err)
	}
	if _, err := d.Permute(1, 0); !errors.Is(err, ErrReleased) {
		t.Fatalf("view of a released tensor: %v", err)
	}
	s.Release()
	after := c.Stats()
	if after.Live != before.Live || after.Released-before.Released != 2 || hooked.Load() != 2 || after.LiveBytes != before.LiveBytes {
		t.Fatalf("stats %+v → %+v, hook %d", before, after, hooked.Load())
	}
}

func TestForeignContext(t *testing.T) {
	q := testQueue(t)
	ctx := context.Background()
	q2 := secondQueue(t)
	if q.Context().Domain() == q2.Context().Domain() || q.Domain() == q2.Domain() {
		t.Fatal("contexts share a domain")
	}
	h, _ := tensor.Rand(tensor.NewRNG(2), tensor.Float32, 3, 4)
	d1, _ := q.Upload(ctx, h)
	d2, err := q2.Upload(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	defer d1.Release()
	defer d2.Release()
	// ownership, which the engine's ingress checks build on
	if err := q.Owns(d1); err != nil {
		t.Fatal(err)
	}
	if err := q2.Owns(d2); err != nil {
		t.Fatal(err)
	}
	if err := q.Owns(d2); !errors.Is(err, ErrForeign) {
		t.Fatalf("foreign tensor owned: %v", err)
	}
	if err := q.Owns(nil); !errors.Is(err, ErrArgument) {
		t.Fatalf("nil tensor owned: %v", err)
	}
	// ops refuse foreign operands
	if _, err := q.Binary(ctx, Add, d1, d2); !errors.Is(err, ErrForeign) {
		t.Fatalf("mixed-context add: %v", err)
	}
	if _, err := q.Download(ctx, d2); !errors.Is(err, ErrForeign) {
		t.Fatalf("foreign download: %v", err)
	}
	if _, err := q.CopyBuffer(ctx, d1.Buffer(), 0, d2.Buffer(), 0, 4); !errors.Is(err, ErrForeign) {
		t.Fatalf("foreign copy: %v", err)
	}
	// device → device through the host, then directly within a context
	x, err := DeviceToDevice(ctx, q2, d1)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Release()
	if q2.Owns(x) != nil || !errors.Is(q.Owns(x), ErrForeign) {
		t.Fatal("transfer result in the wrong domain")
	}
	p, _ := d1.Permute(1, 0)
	defer p.Release()
	for _, src := range []*Tensor{d1, p} {
		y, err := DeviceToDevice(ctx, q, src)
		if err != nil {
			t.Fatal(err)
		}
		want := download(t, q, src)
		got, err := DeviceToHost(ctx, y)
		if err != nil {
			t.Fatal(err)
		}
		if err := tensor.CheckClose(got, want, 0, 0); err != nil {
			t.Fatal(err)
		}
		y.Release()
	}
	got, err := DeviceToHost(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	if err := tensor.CheckClose(got, h, 0, 0); err != nil {
		t.Fatal(err)
	}
	up, err := HostToDevice(ctx, q2, h)
	if err != nil {
		t.Fatal(err)
	}
	up.Release()
}

func TestCapabilities(t *testing.T) {
	q := testQueue(t)
	fp64 := q.Context().Device().FP64
	for _, c := range q.Capabilities() {
		t.Logf("%s: %v", c.Family, c.DTypes)
		has := map[tensor.DType]bool{}
		for _, dt := range c.DTypes {
			has[dt] = true
		}
		if has[tensor.Complex128] != fp64 {
			t.Fatalf("%s lists complex128 = %v on a device with fp64 = %v", c.Family, has[tensor.Complex128], fp64)
		}
		if c.Family == FamilyComplexArith {
			if !has[tensor.Complex64] || has[tensor.Float32] {
				t.Fatalf("complex family lists %v", c.DTypes)
			}
			continue
		}
		if has[tensor.Float64] != fp64 {
			t.Fatalf("%s lists float64 = %v on a device with fp64 = %v", c.Family, has[tensor.Float64], fp64)
		}
		if !has[tensor.Float32] || !has[tensor.Complex64] {
			t.Fatalf("%s lacks float32 or complex64", c.Family)
		}
		arith := c.Family != FamilyTransfer && c.Family != FamilyPermute
		if arith && has[tensor.Bool] {
			t.Fatalf("%s claims bool arithmetic", c.Family)
		}
	}
}

func TestCrossQueueOrdering(t *testing.T) {
	q1 := testQueue(t)
	ctx := context.Background()
	q2, err := q1.Context().NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q2.Close() }) // after the tensors' releases
	h, _ := tensor.Rand(tensor.NewRNG(3), tensor.Float32, 256, 256)
	a := keep(t)(q1.Upload(ctx, h))
	// a long command on q1, read at once on q2: q2 must wait for it.
	c := keep(t)(q1.MatMul(ctx, a, a))
	s := keep(t)(q2.Reduce(ctx, Sum, c, false))
	if got := s.Ready().Queue(); got != q2 {
		t.Fatal("result's last write not on q2")
	}
	ref := keep(t)(q1.Reduce(ctx, Sum, c, false))
	if err := tensor.CheckClose(download(t, q2, s), download(t, q1, ref), 1e-5, 0); err != nil {
		t.Fatal(err)
	}
	// events: Done, Status, Wait with a deadline
	ev := c.Ready()
	<-ev.Done()
	if st, err := ev.Status(); err != nil || st != Complete {
		t.Fatalf("status %v %v", st, err)
	}
	dctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := q1.Finish(dctx); err != nil {
		t.Fatal(err)
	}
	if err := (*Event)(nil).Wait(ctx); err != nil {
		t.Fatal(err)
	}
	cctx, cancel2 := context.WithCancel(ctx)
	cancel2()
	if _, err := q1.Unary(cctx, Neg, a); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled context: %v", err)
	}
}

func TestErrorCodes(t *testing.T) {
	q := testQueue(t)
	if CodeOutOfResources.String() != "CL_OUT_OF_RESOURCES" || Code(-9999).String() != "CL_ERROR(-9999)" {
		t.Fatal("code names")
	}
	_, err := q.Context().Alloc(int(min(q.Context().Device().MaxAlloc+1, 1<<62)))
	if !errors.Is(err, CodeInvalidBufferSize) || !errors.Is(err, ErrCL) {
		t.Fatalf("oversized allocation: %v", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeInvalidBufferSize || !strings.Contains(err.Error(), "CL_INVALID_BUFFER_SIZE") {
		t.Fatalf("error %v", err)
	}
	if _, err := q.Context().Alloc(-1); !errors.Is(err, ErrArgument) {
		t.Fatal(err)
	}
	if _, err := q.Upload(context.Background(), nil); !errors.Is(err, ErrArgument) {
		t.Fatal(err)
	}
	if _, err := NewContext(context.Background(), nil); !errors.Is(err, ErrArgument) {
		t.Fatal(err)
	}
	if _, err := NewContext(context.Background(), &Device{}); !errors.Is(err, ErrArgument) {
		t.Fatal(err)
	}
}

// TestNoLibrary runs this test binary with the OpenCL library pointed at a
// file that does not exist: Devices must report why, without panicking.
func TestNoLibrary(t *testing.T) {
	if os.Getenv("GOFERRO_OPENCL_CHILD") == "1" {
		devs, err := Devices()
		if len(devs) != 0 || !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "no-such-libOpenCL") {
			t.Fatalf("Devices() = %v, %v", devs, err)
		}
		if _, err := NewContext(context.Background(), &Device{}); err == nil {
			t.Fatal("NewContext without a library succeeded")
		}
		return
	}
	if testing.Short() {
		t.Skip("spawns a process")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestNoLibrary$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GOFERRO_OPENCL_CHILD=1", libraryEnv+"=/no-such-libOpenCL.so")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// TestBuildWithoutCgo checks that the package builds with CGO_ENABLED=0 (and
// for a platform without run-time loading).
func TestBuildWithoutCgo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		if gobin, err = exec.LookPath("go"); err != nil {
			t.Skip("go command not found")
		}
	}
	for _, env := range [][]string{{"CGO_ENABLED=0"}, {"CGO_ENABLED=0", "GOOS=windows", "GOARCH=amd64"}} {
		cmd := exec.Command(gobin, "build", ".")
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v go build: %v\n%s", env, err, out)
		}
	}
}

// TestScratchNotCounted checks that GEMM scratch memory does not show up as
// a live buffer, so "everything released" checks stay exact.
func TestScratchNotCounted(t *testing.T) {
	ctx := context.Background()
	e := secondQueue(t)
	h, _ := tensor.Rand(tensor.NewRNG(1), tensor.Float32, 40, 40)
	a, _ := e.Upload(ctx, h)
	before := e.Context().Stats()
	c, err := e.MatMul(ctx, a, a)
	if err != nil {
		t.Fatal(err)
	}
	if d := e.Context().Stats().Live - before.Live; d != 1 {
		t.Fatalf("%d live buffers after one MatMul", d)
	}
	c.Release()
	a.Release()
	if s := e.Context().Stats(); s.Live != 0 || s.LiveBytes != 0 {
		t.Fatalf("stats %+v", s)
	}
}

// TestDeviceWithoutFP64 builds a queue as a device without cl_khr_fp64
// would have it (the program without double kernels) and checks that every
// float64 and complex128 operation is declined, not attempted.
func TestDeviceWithoutFP64(t *testing.T) {
	q := testQueue(t)
	ctx := context.Background()
	dev := *q.Context().Device()
	dev.FP64 = false
	e := openQueue(t, &dev)
	for _, f := range []Family{FamilyTransfer, FamilyPermute, FamilyElementwise, FamilyReduce, FamilyGEMM, FamilyComplexArith} {
		if e.Supports(f, tensor.Float64) || e.Supports(f, tensor.Complex128) {
			t.Fatalf("%s claims 64-bit floats", f)
		}
	}
	if !e.Supports(FamilyGEMM, tensor.Float32) || !e.Supports(FamilyComplexArith, tensor.Complex64) {
		t.Fatal("32-bit support lost")
	}
	h, _ := tensor.Rand(tensor.NewRNG(1), tensor.Float64, 4, 4)
	d, err := e.Upload(ctx, h) // bytes can still be stored
	if err != nil {
		t.Fatal(err)
	}
	defer d.Release()
	if _, err := e.Binary(ctx, Add, d, d); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("float64 add: %v", err)
	}
	if _, err := e.MatMul(ctx, d, d); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("float64 matmul: %v", err)
	}
	if _, err := e.Reduce(ctx, Sum, d, false); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("float64 sum: %v", err)
	}
	if _, err := e.Convert(ctx, d, tensor.Float32); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("float64 convert: %v", err)
	}
	// float32 still works on it
	h32, _ := tensor.Rand(tensor.NewRNG(1), tensor.Float32, 20, 20)
	d32 := keep(t)(e.Upload(ctx, h32))
	keep(t)(e.MatMul(ctx, d32, d32))
}

func TestBufferPool(t *testing.T) {
	ctx := context.Background()
	e := secondQueue(t)
	c := e.Context()
	h, _ := tensor.Rand(tensor.NewRNG(1), tensor.Float32, 1<<16)
	var released atomic.Int64
	c.OnRelease(func(*Buffer) { released.Add(1) })
	a, err := e.Upload(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	mem := a.Buffer().h
	// a pending command reads a when it is released
	s, err := e.Unary(ctx, Neg, a)
	if err != nil {
		t.Fatal(err)
	}
	a.Release()
	if st := c.Stats(); st.PooledBytes != 1<<18 || released.Load() != 1 || st.Live != 1 {
		t.Fatalf("after release: %+v (hook %d)", st, released.Load())
	}
	if err := e.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	b, err := c.Empty(tensor.Float32, 1<<16)
	if err != nil {
		t.Fatal(err)
	}
	if b.Buffer().h != mem || c.Stats().PooledBytes != 0 {
		t.Fatalf("memory not reused from the pool: %+v", c.Stats())
	}
	// the reused memory is fully usable
	if err := e.UploadInto(ctx, b, h); err != nil {
		t.Fatal(err)
	}
	if err := tensor.CheckClose(download(t, e, b), h, 0, 0); err != nil {
		t.Fatal(err)
	}
	b.Release()
	s.Release()
	c.SetPoolLimit(0)
	if st := c.Stats(); st.PooledBytes != 0 || st.Live != 0 {
		t.Fatalf("after disabling the pool: %+v", st)
	}
	x, _ := c.Empty(tensor.Float32, 16)
	x.Release()
	if c.Stats().PooledBytes != 0 {
		t.Fatal("pooled with the pool disabled")
	}
}
