package gemm

import (
	"sync/atomic"
	"unsafe"

	"github.com/goferro/goferro/internal/isa"
)

// float is the set of real element types the packed driver runs on; complex
// operands are viewed as interleaved real data (see plan).
type float interface {
	float32 | float64
}

// kernel is a register-blocked micro-kernel pair. full computes the mr×nr
// tile C = alpha·Ã·B̃ + beta·C from a packed A micro-panel (k steps of mr
// values) and a packed B micro-panel (k steps of nr values) and stores its
// first mv rows; C rows are rsc elements apart and each row is contiguous.
// strided is the same with A unpacked: element (i, p) at a + i·ars + p·acs.
// Both read the rows of B ldb elements apart: nr for a packed micro-panel,
// B's row stride when the driver reads a row-major B in place.
// pf is a prefetch hint: kernels may touch the k/4 cache lines from pf on,
// the strided ones k/2 (the driver points it into the next B micro-panel,
// or where small batched products read B in place, at the next element's
// operands); it must be valid.
// beta == +0 means C is written, never read.
//
// l1B sizes the depth kc of the packed panels (see blockingFor): the
// percentage of L1 that a B micro-panel (kc×nr) fills. The AVX2 kernels
// keep theirs in L1 (50); the AVX-512 kernels, twice as fast per call, do
// better streaming a deeper one from L2 (150): each pass over C then
// carries more work. Measured on an AMD EPYC (48 KiB L1): float64 and
// float32 at n = 1024 ran about 9% faster with kc = 512 than with 192 or
// 256; the AVX2 kernels ran the same with kc = 384 and 512.
type kernel[R float] struct {
	name    string
	mr, nr  int
	l1B     int
	full    fullKernel[R]
	strided stridedKernel[R]
	// short[mm], where set, is full for a ragged micro-panel of mm < mr
	// rows: it computes fewer rows of the same packed panels.
	// shortStrided[mm], where set, is strided for exactly mm rows: it reads
	// A in place, so it reads no row past the mm-th.
	short        []fullKernel[R]
	shortStrided []stridedKernel[R]
	// narrow, where set, computes only the first nr/2 columns of the same
	// tiles (narrow.nr of them), for a ragged last B micro-panel of at
	// most that many columns: the panels are packed and read as for the
	// full kernel (ldb apart), with half the multiply-adds.
	narrow *kernel[R]
}

// fullKernel and stridedKernel are the signatures of kernel.full and
// kernel.strided.
type (
	fullKernel[R float]    func(k int, a, b, c *R, rsc int, alpha, beta R, mv int, pf *R, ldb int)
	stridedKernel[R float] func(k int, a, b, c *R, rsc int, alpha, beta R, mv int, pf *R, ldb, ars, acs int)
)

// shortKernels returns kernel.short for mr-row tiles from kernels
// computing the first 4 and 8 rows.
func shortKernels[R float](mr int, rows4, rows8 fullKernel[R]) []fullKernel[R] {
	s := make([]fullKernel[R], mr)
	for mm := 1; mm < mr; mm++ {
		switch {
		case mm <= 4:
			s[mm] = rows4
		case mm <= 8:
			s[mm] = rows8
		}
	}
	return s
}

// shortStridedKernels returns kernel.shortStrided for mr-row tiles from
// strided kernels computing the first 4 and 8 rows.
func shortStridedKernels[R float](mr int, rows4, rows8 stridedKernel[R]) []stridedKernel[R] {
	s := make([]stridedKernel[R], mr)
	s[4], s[8] = rows4, rows8
	return s
}

// isaKernels is the set of micro-kernels for one instruction set.
type isaKernels struct {
	name string // the kernel path's name (see internal/isa)
	k64  *kernel[float64]
	k32  *kernel[float32]
}

// genericISA is the portable Go kernels, on every architecture.
var genericISA = &isaKernels{
	name: "generic",
	k64:  &kernel[float64]{name: "go-4x4", mr: 4, nr: 4, l1B: 50, full: portableFull[float64], strided: portableKernel[float64]},
	k32:  &kernel[float32]{name: "go-4x4", mr: 4, nr: 4, l1B: 50, full: portableFull[float32], strided: portableKernel[float32]},
}

// active is the kernel set Gemm uses: that of the kernel path in use
// (isa.Active, which GOFERRO_GEMM_ISA can force).
var active = pathKernels(isa.Active)

// forcePortable makes every call use the portable Go kernels whatever the
// active set. It is a test hook (see setPortable).
var forcePortable atomic.Bool

// setPortable forces (true) or releases (false) the portable kernels and
// returns the previous setting.
func setPortable(on bool) bool { return forcePortable.Swap(on) }

// kernelSet returns the kernel set in use.
func kernelSet() *isaKernels {
	if forcePortable.Load() {
		return genericISA
	}
	return active
}

func kernelFor[R float]() *kernel[R] {
	s := kernelSet()
	var z R
	if _, ok := any(z).(float64); ok {
		return any(s.k64).(*kernel[R])
	}
	return any(s.k32).(*kernel[R])
}

// Kernel names the micro-kernel Gemm uses for float64 and float32 (complex
// types run on the real kernels), e.g. "avx512-fma-12x16", "avx2-fma-6x8"
// or "go-4x4". The environment variable GOFERRO_GEMM_ISA, read once at
// start-up, forces a path the CPU supports (see internal/isa): avx512,
// avx2, or sse2 and generic, which both run the portable kernel.
func Kernel() (f64, f32 string) {
	return kernelFor[float64]().name, kernelFor[float32]().name
}

func portableFull[R float](k int, a, b, c *R, rsc int, alpha, beta R, mv int, pf *R, ldb int) {
	portableKernel(k, a, b, c, rsc, alpha, beta, mv, pf, ldb, 1, 4)
}

// portableKernel is the pure-Go 4×4 micro-kernel (A strided, B rows of
// four values ldb apart: 4 when packed).
func portableKernel[R float](k int, a, b, c *R, rsc int, alpha, beta R, mv int, _ *R, ldb, ars, acs int) {
	var c00, c01, c02, c03, c10, c11, c12, c13 R
	var c20, c21, c22, c23, c30, c31, c32, c33 R
	var sz R
	es := int(unsafe.Sizeof(sz))
	pa, pb := unsafe.Pointer(a), unsafe.Pointer(b)
	ra, ca, cb := ars*es, acs*es, ldb*es
	for p := 0; p < k; p++ {
		bp := (*[4]R)(pb)
		b0, b1, b2, b3 := bp[0], bp[1], bp[2], bp[3]
		a0 := *(*R)(pa)
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		a1 := *(*R)(unsafe.Add(pa, ra))
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		a2 := *(*R)(unsafe.Add(pa, 2*ra))
		c20 += a2 * b0
		c21 += a2 * b1
		c22 += a2 * b2
		c23 += a2 * b3
		a3 := *(*R)(unsafe.Add(pa, 3*ra))
		c30 += a3 * b0
		c31 += a3 * b1
		c32 += a3 * b2
		c33 += a3 * b3
		if p+1 < k {
			pa = unsafe.Add(pa, ca)
			pb = unsafe.Add(pb, cb)
		}
	}
	rows := [4][4]R{
		{c00, c01, c02, c03},
		{c10, c11, c12, c13},
		{c20, c21, c22, c23},
		{c30, c31, c32, c33},
	}
	step := rsc * es
	p := unsafe.Pointer(c)
	for i := 0; i < mv; i++ {
		r := (*[4]R)(unsafe.Add(p, i*step))
		x := &rows[i]
		if beta == 0 {
			*r = [4]R{alpha * x[0], alpha * x[1], alpha * x[2], alpha * x[3]}
		} else {
			*r = [4]R{alpha*x[0] + beta*r[0], alpha*x[1] + beta*r[1], alpha*x[2] + beta*r[2], alpha*x[3] + beta*r[3]}
		}
	}
}
