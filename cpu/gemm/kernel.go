package gemm

import (
	"sync/atomic"
	"unsafe"
)

// float is the set of real element types the packed driver runs on; complex
// operands are viewed as interleaved real data (see plan).
type float interface {
	float32 | float64
}

// kernel is a register-blocked micro-kernel: full computes the mr×nr tile
// C = alpha·Ã·B̃ + beta·C from a packed A micro-panel (k steps of mr values)
// and a packed B micro-panel (k steps of nr values). C rows are rsc elements
// apart and each row is contiguous. beta == +0 means C is written, never read.
type kernel[R float] struct {
	name   string
	mr, nr int
	full   func(k int, a, b, c *R, rsc int, alpha, beta R)
}

// forcePortable makes every call use the portable Go kernels even where an
// assembly kernel exists. It is a test hook (see setPortable).
var forcePortable atomic.Bool

// setPortable forces (true) or releases (false) the portable kernels and
// returns the previous setting.
func setPortable(on bool) bool { return forcePortable.Swap(on) }

var (
	portable64 = &kernel[float64]{name: "go-4x4", mr: 4, nr: 4, full: portableKernel[float64]}
	portable32 = &kernel[float32]{name: "go-4x4", mr: 4, nr: 4, full: portableKernel[float32]}
	// asm64 and asm32 are set by the architecture files when the CPU has
	// the needed instructions.
	asm64 *kernel[float64]
	asm32 *kernel[float32]
)

func kernelFor[R float]() *kernel[R] {
	var z R
	switch any(z).(type) {
	case float64:
		k := asm64
		if k == nil || forcePortable.Load() {
			k = portable64
		}
		return any(k).(*kernel[R])
	default:
		k := asm32
		if k == nil || forcePortable.Load() {
			k = portable32
		}
		return any(k).(*kernel[R])
	}
}

// Kernel names the micro-kernel Gemm uses for float64 and float32 (complex
// types run on the real kernels), e.g. "avx2-fma-6x8" or "go-4x4".
func Kernel() (f64, f32 string) {
	return kernelFor[float64]().name, kernelFor[float32]().name
}

// portableKernel is the pure-Go 4×4 micro-kernel.
func portableKernel[R float](k int, a, b, c *R, rsc int, alpha, beta R) {
	var c00, c01, c02, c03, c10, c11, c12, c13 R
	var c20, c21, c22, c23, c30, c31, c32, c33 R
	as := unsafe.Slice(a, 4*k)
	bs := unsafe.Slice(b, 4*k)
	for p := 0; p < k; p++ {
		ap := as[4*p : 4*p+4 : 4*p+4]
		bp := bs[4*p : 4*p+4 : 4*p+4]
		b0, b1, b2, b3 := bp[0], bp[1], bp[2], bp[3]
		a0 := ap[0]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		a1 := ap[1]
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		a2 := ap[2]
		c20 += a2 * b0
		c21 += a2 * b1
		c22 += a2 * b2
		c23 += a2 * b3
		a3 := ap[3]
		c30 += a3 * b0
		c31 += a3 * b1
		c32 += a3 * b2
		c33 += a3 * b3
	}
	var sz R
	step := rsc * int(unsafe.Sizeof(sz))
	p := unsafe.Pointer(c)
	r0 := (*[4]R)(p)
	r1 := (*[4]R)(unsafe.Add(p, step))
	r2 := (*[4]R)(unsafe.Add(p, 2*step))
	r3 := (*[4]R)(unsafe.Add(p, 3*step))
	if beta == 0 {
		*r0 = [4]R{alpha * c00, alpha * c01, alpha * c02, alpha * c03}
		*r1 = [4]R{alpha * c10, alpha * c11, alpha * c12, alpha * c13}
		*r2 = [4]R{alpha * c20, alpha * c21, alpha * c22, alpha * c23}
		*r3 = [4]R{alpha * c30, alpha * c31, alpha * c32, alpha * c33}
		return
	}
	*r0 = [4]R{alpha*c00 + beta*r0[0], alpha*c01 + beta*r0[1], alpha*c02 + beta*r0[2], alpha*c03 + beta*r0[3]}
	*r1 = [4]R{alpha*c10 + beta*r1[0], alpha*c11 + beta*r1[1], alpha*c12 + beta*r1[2], alpha*c13 + beta*r1[3]}
	*r2 = [4]R{alpha*c20 + beta*r2[0], alpha*c21 + beta*r2[1], alpha*c22 + beta*r2[2], alpha*c23 + beta*r2[3]}
	*r3 = [4]R{alpha*c30 + beta*r3[0], alpha*c31 + beta*r3[1], alpha*c32 + beta*r3[2], alpha*c33 + beta*r3[3]}
}
