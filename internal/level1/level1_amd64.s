//go:build amd64 && !purego && !goferro_noasm

#include "textflag.h"

// AVX2/FMA kernels for the level-1 loops (dot products and axpy). The real
// ones, whose loops of four registers (16 float64, 32 float32) end with
// steps of one, take n a multiple of a register's width (4 float64, 8
// float32); the complex ones a multiple of their loop's (4 complex128, 4
// complex64, the latter in steps of one register). The Go callers finish
// the tail.

// func ddot(n int, x, y *float64) float64
TEXT ·ddot(SB), NOSPLIT, $0-32
	MOVQ n+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	MOVQ CX, DX
	SHRQ $4, CX
	JZ   ddottail

ddotloop:
	VMOVUPD (SI), Y4
	VMOVUPD 32(SI), Y5
	VMOVUPD 64(SI), Y6
	VMOVUPD 96(SI), Y7
	VFMADD231PD (DI), Y4, Y0
	VFMADD231PD 32(DI), Y5, Y1
	VFMADD231PD 64(DI), Y6, Y2
	VFMADD231PD 96(DI), Y7, Y3
	ADDQ $128, SI
	ADDQ $128, DI
	DECQ CX
	JNZ  ddotloop

ddottail:
	ANDQ $15, DX
	SHRQ $2, DX
	JZ   ddotsum

ddottailloop:
	VMOVUPD (SI), Y4
	VFMADD231PD (DI), Y4, Y0
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ DX
	JNZ  ddottailloop

ddotsum:
	VADDPD Y1, Y0, Y0
	VADDPD Y3, Y2, Y2
	VADDPD Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD X1, X0, X0
	VHADDPD X0, X0, X0
	VZEROUPPER
	MOVSD X0, ret+24(FP)
	RET

// func daxpy(n int, a float64, x, y *float64)
TEXT ·daxpy(SB), NOSPLIT, $0-32
	MOVQ n+0(FP), CX
	VBROADCASTSD a+8(FP), Y0
	MOVQ x+16(FP), SI
	MOVQ y+24(FP), DI
	MOVQ CX, DX
	SHRQ $4, CX
	JZ   daxpytail

daxpyloop:
	VMOVUPD (DI), Y1
	VMOVUPD 32(DI), Y2
	VMOVUPD 64(DI), Y3
	VMOVUPD 96(DI), Y4
	VFMADD231PD (SI), Y0, Y1
	VFMADD231PD 32(SI), Y0, Y2
	VFMADD231PD 64(SI), Y0, Y3
	VFMADD231PD 96(SI), Y0, Y4
	VMOVUPD Y1, (DI)
	VMOVUPD Y2, 32(DI)
	VMOVUPD Y3, 64(DI)
	VMOVUPD Y4, 96(DI)
	ADDQ $128, SI
	ADDQ $128, DI
	DECQ CX
	JNZ  daxpyloop

daxpytail:
	ANDQ $15, DX
	SHRQ $2, DX
	JZ   daxpydone

daxpytailloop:
	VMOVUPD (DI), Y1
	VFMADD231PD (SI), Y0, Y1
	VMOVUPD Y1, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ DX
	JNZ  daxpytailloop

daxpydone:
	VZEROUPPER
	RET

// func zdotu(n int, x, y *complex128) complex128
//
// Σ x·y: one accumulator pair gathers (xr·yr, xi·yi), the other, with y's
// halves swapped, (xr·yi, xi·yr).
TEXT ·zdotu(SB), NOSPLIT, $0-40
	MOVQ n+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	SHRQ $2, CX
	JZ   zdotsum

zdotloop:
	VMOVUPD (SI), Y4
	VMOVUPD 32(SI), Y5
	VMOVUPD (DI), Y6
	VMOVUPD 32(DI), Y7
	VFMADD231PD Y6, Y4, Y0
	VFMADD231PD Y7, Y5, Y1
	VPERMILPD $5, Y6, Y6
	VPERMILPD $5, Y7, Y7
	VFMADD231PD Y6, Y4, Y2
	VFMADD231PD Y7, Y5, Y3
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  zdotloop

zdotsum:
	VADDPD Y1, Y0, Y0
	VADDPD Y3, Y2, Y2
	VEXTRACTF128 $1, Y0, X1
	VADDPD X1, X0, X0
	VEXTRACTF128 $1, Y2, X3
	VADDPD X3, X2, X2
	VHSUBPD X0, X0, X0
	VHADDPD X2, X2, X2
	VZEROUPPER
	MOVSD X0, ret_real+24(FP)
	MOVSD X2, ret_imag+32(FP)
	RET

// func zaxpy(n int, a complex128, x, y *complex128)
//
// y += a·x as y += ar·x ∓ ai·swap(x) (subtract in the real lanes, add in
// the imaginary ones).
TEXT ·zaxpy(SB), NOSPLIT, $0-40
	MOVQ n+0(FP), CX
	VBROADCASTSD a_real+8(FP), Y0
	VBROADCASTSD a_imag+16(FP), Y1
	MOVQ x+24(FP), SI
	MOVQ y+32(FP), DI
	SHRQ $2, CX
	JZ   zaxpydone

zaxpyloop:
	VMOVUPD (SI), Y4
	VMOVUPD 32(SI), Y5
	VPERMILPD $5, Y4, Y6
	VPERMILPD $5, Y5, Y7
	VMULPD Y1, Y6, Y6
	VMULPD Y1, Y7, Y7
	VFMADDSUB231PD Y4, Y0, Y6
	VFMADDSUB231PD Y5, Y0, Y7
	VADDPD (DI), Y6, Y6
	VADDPD 32(DI), Y7, Y7
	VMOVUPD Y6, (DI)
	VMOVUPD Y7, 32(DI)
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  zaxpyloop

zaxpydone:
	VZEROUPPER
	RET

// func sdot(n int, x, y *float32) float32
TEXT ·sdot(SB), NOSPLIT, $0-28
	MOVQ n+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	MOVQ CX, DX
	SHRQ $5, CX
	JZ   sdottail

sdotloop:
	VMOVUPS (SI), Y4
	VMOVUPS 32(SI), Y5
	VMOVUPS 64(SI), Y6
	VMOVUPS 96(SI), Y7
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ $128, SI
	ADDQ $128, DI
	DECQ CX
	JNZ  sdotloop

sdottail:
	ANDQ $31, DX
	SHRQ $3, DX
	JZ   sdotsum

sdottailloop:
	VMOVUPS (SI), Y4
	VFMADD231PS (DI), Y4, Y0
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ DX
	JNZ  sdottailloop

sdotsum:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func saxpy(n int, a float32, x, y *float32)
TEXT ·saxpy(SB), NOSPLIT, $0-32
	MOVQ n+0(FP), CX
	VBROADCASTSS a+8(FP), Y0
	MOVQ x+16(FP), SI
	MOVQ y+24(FP), DI
	MOVQ CX, DX
	SHRQ $5, CX
	JZ   saxpytail

saxpyloop:
	VMOVUPS (DI), Y1
	VMOVUPS 32(DI), Y2
	VMOVUPS 64(DI), Y3
	VMOVUPS 96(DI), Y4
	VFMADD231PS (SI), Y0, Y1
	VFMADD231PS 32(SI), Y0, Y2
	VFMADD231PS 64(SI), Y0, Y3
	VFMADD231PS 96(SI), Y0, Y4
	VMOVUPS Y1, (DI)
	VMOVUPS Y2, 32(DI)
	VMOVUPS Y3, 64(DI)
	VMOVUPS Y4, 96(DI)
	ADDQ $128, SI
	ADDQ $128, DI
	DECQ CX
	JNZ  saxpyloop

saxpytail:
	ANDQ $31, DX
	SHRQ $3, DX
	JZ   saxpydone

saxpytailloop:
	VMOVUPS (DI), Y1
	VFMADD231PS (SI), Y0, Y1
	VMOVUPS Y1, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ DX
	JNZ  saxpytailloop

saxpydone:
	VZEROUPPER
	RET

// func cdotu(n int, x, y *complex64) complex64
//
// zdotu's scheme with four complex64 to a register: one accumulator pair
// gathers (xr·yr, xi·yi), the other, with the halves of each of y's
// elements swapped, (xr·yi, xi·yr).
TEXT ·cdotu(SB), NOSPLIT, $0-32
	MOVQ n+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	MOVQ CX, DX
	SHRQ $3, CX
	JZ   cdottail

cdotloop:
	VMOVUPS (SI), Y4
	VMOVUPS 32(SI), Y5
	VMOVUPS (DI), Y6
	VMOVUPS 32(DI), Y7
	VFMADD231PS Y6, Y4, Y0
	VFMADD231PS Y7, Y5, Y1
	VPERMILPS $0xB1, Y6, Y6
	VPERMILPS $0xB1, Y7, Y7
	VFMADD231PS Y6, Y4, Y2
	VFMADD231PS Y7, Y5, Y3
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  cdotloop

cdottail:
	TESTQ $4, DX
	JZ    cdotsum
	VMOVUPS (SI), Y4
	VMOVUPS (DI), Y6
	VFMADD231PS Y6, Y4, Y0
	VPERMILPS $0xB1, Y6, Y6
	VFMADD231PS Y6, Y4, Y2

cdotsum:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VEXTRACTF128 $1, Y2, X3
	VADDPS X3, X2, X2
	VHSUBPS X0, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X2, X2, X2
	VHADDPS X2, X2, X2
	VZEROUPPER
	MOVSS X0, ret_real+24(FP)
	MOVSS X2, ret_imag+28(FP)
	RET

// func caxpy(n int, a complex64, x, y *complex64)
//
// y += a·x as in zaxpy, four complex64 to a register.
TEXT ·caxpy(SB), NOSPLIT, $0-32
	MOVQ n+0(FP), CX
	VBROADCASTSS a_real+8(FP), Y0
	VBROADCASTSS a_imag+12(FP), Y1
	MOVQ x+16(FP), SI
	MOVQ y+24(FP), DI
	MOVQ CX, DX
	SHRQ $3, CX
	JZ   caxpytail

caxpyloop:
	VMOVUPS (SI), Y4
	VMOVUPS 32(SI), Y5
	VPERMILPS $0xB1, Y4, Y6
	VPERMILPS $0xB1, Y5, Y7
	VMULPS Y1, Y6, Y6
	VMULPS Y1, Y7, Y7
	VFMADDSUB231PS Y4, Y0, Y6
	VFMADDSUB231PS Y5, Y0, Y7
	VADDPS (DI), Y6, Y6
	VADDPS 32(DI), Y7, Y7
	VMOVUPS Y6, (DI)
	VMOVUPS Y7, 32(DI)
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  caxpyloop

caxpytail:
	TESTQ $4, DX
	JZ    caxpydone
	VMOVUPS (SI), Y4
	VPERMILPS $0xB1, Y4, Y6
	VMULPS Y1, Y6, Y6
	VFMADDSUB231PS Y4, Y0, Y6
	VADDPS (DI), Y6, Y6
	VMOVUPS Y6, (DI)

caxpydone:
	VZEROUPPER
	RET

// func dmuladd(n int, x, y, z *float64)
//
// z += x·y element by element; n a multiple of 4.
TEXT ·dmuladd(SB), NOSPLIT, $0-32
	MOVQ n+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	MOVQ z+24(FP), R8
	MOVQ CX, DX
	SHRQ $4, CX
	JZ   dmuladdtail

dmuladdloop:
	VMOVUPD (SI), Y0
	VMOVUPD 32(SI), Y1
	VMOVUPD 64(SI), Y2
	VMOVUPD 96(SI), Y3
	VMOVUPD (R8), Y4
	VMOVUPD 32(R8), Y5
	VMOVUPD 64(R8), Y6
	VMOVUPD 96(R8), Y7
	VFMADD231PD (DI), Y0, Y4
	VFMADD231PD 32(DI), Y1, Y5
	VFMADD231PD 64(DI), Y2, Y6
	VFMADD231PD 96(DI), Y3, Y7
	VMOVUPD Y4, (R8)
	VMOVUPD Y5, 32(R8)
	VMOVUPD Y6, 64(R8)
	VMOVUPD Y7, 96(R8)
	ADDQ $128, SI
	ADDQ $128, DI
	ADDQ $128, R8
	DECQ CX
	JNZ  dmuladdloop

dmuladdtail:
	ANDQ $15, DX
	SHRQ $2, DX
	JZ   dmuladddone

dmuladdtailloop:
	VMOVUPD (SI), Y0
	VMOVUPD (R8), Y4
	VFMADD231PD (DI), Y0, Y4
	VMOVUPD Y4, (R8)
	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $32, R8
	DECQ DX
	JNZ  dmuladdtailloop

dmuladddone:
	VZEROUPPER
	RET

// func smuladd(n int, x, y, z *float32)
//
// z += x·y element by element; n a multiple of 8.
TEXT ·smuladd(SB), NOSPLIT, $0-32
	MOVQ n+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	MOVQ z+24(FP), R8
	MOVQ CX, DX
	SHRQ $5, CX
	JZ   smuladdtail

smuladdloop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VMOVUPS (R8), Y4
	VMOVUPS 32(R8), Y5
	VMOVUPS 64(R8), Y6
	VMOVUPS 96(R8), Y7
	VFMADD231PS (DI), Y0, Y4
	VFMADD231PS 32(DI), Y1, Y5
	VFMADD231PS 64(DI), Y2, Y6
	VFMADD231PS 96(DI), Y3, Y7
	VMOVUPS Y4, (R8)
	VMOVUPS Y5, 32(R8)
	VMOVUPS Y6, 64(R8)
	VMOVUPS Y7, 96(R8)
	ADDQ $128, SI
	ADDQ $128, DI
	ADDQ $128, R8
	DECQ CX
	JNZ  smuladdloop

smuladdtail:
	ANDQ $31, DX
	SHRQ $3, DX
	JZ   smuladddone

smuladdtailloop:
	VMOVUPS (SI), Y0
	VMOVUPS (R8), Y4
	VFMADD231PS (DI), Y0, Y4
	VMOVUPS Y4, (R8)
	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $32, R8
	DECQ DX
	JNZ  smuladdtailloop

smuladddone:
	VZEROUPPER
	RET

// func zmuladd(n int, x, y, z *complex128)
//
// z += x·y element by element, two complex128 to a register, as zaxpy
// multiplies: x·y = x·yr ∓ swap(x)·yi (subtract in the real lanes, add in
// the imaginary ones), with y's parts duplicated across each element's
// lanes. n a multiple of 4.
TEXT ·zmuladd(SB), NOSPLIT, $0-32
	MOVQ n+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	MOVQ z+24(FP), R8
	SHRQ $2, CX
	JZ   zmuladddone

zmuladdloop:
	VMOVUPD (SI), Y0
	VMOVUPD 32(SI), Y1
	VMOVDDUP (DI), Y2
	VMOVDDUP 32(DI), Y3
	VPERMILPD $15, (DI), Y4
	VPERMILPD $15, 32(DI), Y5
	VPERMILPD $5, Y0, Y6
	VPERMILPD $5, Y1, Y7
	VMULPD Y4, Y6, Y6
	VMULPD Y5, Y7, Y7
	VFMADDSUB231PD Y2, Y0, Y6
	VFMADDSUB231PD Y3, Y1, Y7
	VADDPD (R8), Y6, Y6
	VADDPD 32(R8), Y7, Y7
	VMOVUPD Y6, (R8)
	VMOVUPD Y7, 32(R8)
	ADDQ $64, SI
	ADDQ $64, DI
	ADDQ $64, R8
	DECQ CX
	JNZ  zmuladdloop

zmuladddone:
	VZEROUPPER
	RET

// func cmuladd(n int, x, y, z *complex64)
//
// zmuladd's scheme with four complex64 to a register; n a multiple of 4.
TEXT ·cmuladd(SB), NOSPLIT, $0-32
	MOVQ n+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	MOVQ z+24(FP), R8
	SHRQ $2, CX
	JZ   cmuladddone

cmuladdloop:
	VMOVUPS (SI), Y0
	VMOVSLDUP (DI), Y2
	VMOVSHDUP (DI), Y4
	VPERMILPS $0xB1, Y0, Y6
	VMULPS Y4, Y6, Y6
	VFMADDSUB231PS Y2, Y0, Y6
	VADDPS (R8), Y6, Y6
	VMOVUPS Y6, (R8)
	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $32, R8
	DECQ CX
	JNZ  cmuladdloop

cmuladddone:
	VZEROUPPER
	RET

// func zdotlines(count, k int, lines *complex128, stride int, x, out *complex128, os int, add bool)
//
// out[i·os] = (or +=, when add is set) Σ_q lines[i·stride+q]·x[q] for
// i < count, k ≥ 1, strides in elements: zdotu's two accumulators, the
// second with the line's halves swapped, in two sets for four complex
// numbers a step (one set waits on its additions over long lines), then a
// step of two and one of one for the rest, reduced to one number a line.
TEXT ·zdotlines(SB), NOSPLIT, $0-57
	MOVQ count+0(FP), BX
	MOVQ k+8(FP), DX
	MOVQ lines+16(FP), SI
	MOVQ stride+24(FP), R8
	SHLQ $4, R8
	MOVQ x+32(FP), DI
	MOVQ out+40(FP), R12
	MOVQ os+48(FP), R13
	SHLQ $4, R13
	MOVBQZX add+56(FP), R14
	TESTQ BX, BX
	JZ    zdotlinesdone

zdotlinesrow:
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	MOVQ   SI, R9
	MOVQ   DI, R10
	MOVQ   DX, CX
	SHRQ   $2, CX
	JZ     zdotlinespair

	PCALIGN $64

zdotlinesquad:
	VMOVUPD     (R9), Y2
	VMOVUPD     32(R9), Y4
	VFMADD231PD (R10), Y2, Y0
	VFMADD231PD 32(R10), Y4, Y5
	VPERMILPD   $5, Y2, Y2
	VPERMILPD   $5, Y4, Y4
	VFMADD231PD (R10), Y2, Y1
	VFMADD231PD 32(R10), Y4, Y6
	ADDQ        $64, R9
	ADDQ        $64, R10
	DECQ        CX
	JNZ         zdotlinesquad
	VADDPD      Y5, Y0, Y0
	VADDPD      Y6, Y1, Y1

zdotlinespair:
	TESTQ       $2, DX
	JZ          zdotlinesfold
	VMOVUPD     (R9), Y2
	VFMADD231PD (R10), Y2, Y0
	VPERMILPD   $5, Y2, Y2
	VFMADD231PD (R10), Y2, Y1
	ADDQ        $32, R9
	ADDQ        $32, R10

zdotlinesfold:
	// Y0 gathers (lr·xr, li·xi), Y1 (li·xr, lr·xi) for each element.
	VEXTRACTF128 $1, Y0, X2
	VADDPD       X2, X0, X0
	VEXTRACTF128 $1, Y1, X3
	VADDPD       X3, X1, X1
	TESTQ        $1, DX
	JZ           zdotlinesreduce
	VMOVUPD      (R9), X2
	VFMADD231PD  (R10), X2, X0
	VPERMILPD    $1, X2, X2
	VFMADD231PD  (R10), X2, X1

zdotlinesreduce:
	VHSUBPD   X0, X0, X0
	VHADDPD   X1, X1, X1
	VUNPCKLPD X1, X0, X0
	TESTQ     R14, R14
	JZ        zdotlinesstore
	VADDPD    (R12), X0, X0

zdotlinesstore:
	VMOVUPD X0, (R12)
	ADDQ    R8, SI
	ADDQ    R13, R12
	DECQ    BX
	JNZ     zdotlinesrow

zdotlinesdone:
	VZEROUPPER
	RET

// func zaxpylines(count, k int, lines *complex128, stride int, a, x *complex128)
//
// lines[i·stride+q] += a[i]·x[q] for i < count, q < k, k ≥ 1, the stride in
// elements: zaxpy for each line, with a[i] broadcast, two complex numbers
// to a register and one more for an odd k.
TEXT ·zaxpylines(SB), NOSPLIT, $0-48
	MOVQ  count+0(FP), BX
	MOVQ  k+8(FP), DX
	MOVQ  lines+16(FP), SI
	MOVQ  stride+24(FP), R8
	SHLQ  $4, R8
	MOVQ  a+32(FP), R11
	MOVQ  x+40(FP), DI
	TESTQ BX, BX
	JZ    zaxpylinesdone

zaxpylinesrow:
	VBROADCASTSD (R11), Y0
	VBROADCASTSD 8(R11), Y1
	MOVQ         SI, R9
	MOVQ         DI, R10
	MOVQ         DX, CX
	SHRQ         $1, CX
	JZ           zaxpylinesodd

	PCALIGN $64

zaxpylinespair:
	VMOVUPD        (R10), Y4
	VPERMILPD      $5, Y4, Y6
	VMULPD         Y1, Y6, Y6
	VFMADDSUB231PD Y4, Y0, Y6
	VADDPD         (R9), Y6, Y6
	VMOVUPD        Y6, (R9)
	ADDQ           $32, R9
	ADDQ           $32, R10
	DECQ           CX
	JNZ            zaxpylinespair

zaxpylinesodd:
	TESTQ          $1, DX
	JZ             zaxpylinesnext
	VMOVUPD        (R10), X4
	VPERMILPD      $1, X4, X6
	VMULPD         X1, X6, X6
	VFMADDSUB231PD X4, X0, X6
	VADDPD         (R9), X6, X6
	VMOVUPD        X6, (R9)

zaxpylinesnext:
	ADDQ R8, SI
	ADDQ $16, R11
	DECQ BX
	JNZ  zaxpylinesrow

zaxpylinesdone:
	VZEROUPPER
	RET

// func ddotlines(count, k int, lines *float64, stride int, x, out *float64, os int, add bool)
//
// out[i·os] = (or +=, when add is set) Σ_q lines[i·stride+q]·x[q] for
// i < count, k ≥ 1, strides in elements: ddot's four accumulators a line
// (sixteen elements a step), then steps of four and of one.
TEXT ·ddotlines(SB), NOSPLIT, $0-57
	MOVQ    count+0(FP), BX
	MOVQ    k+8(FP), DX
	MOVQ    lines+16(FP), SI
	MOVQ    stride+24(FP), R8
	SHLQ    $3, R8
	MOVQ    x+32(FP), DI
	MOVQ    out+40(FP), R12
	MOVQ    os+48(FP), R13
	SHLQ    $3, R13
	MOVBQZX add+56(FP), R14
	TESTQ   BX, BX
	JZ      ddotlinesdone

ddotlinesrow:
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	MOVQ   SI, R9
	MOVQ   DI, R10
	MOVQ   DX, CX
	SHRQ   $4, CX
	JZ     ddotlinesfour

	PCALIGN $64

ddotlinessixteen:
	VMOVUPD     (R9), Y4
	VMOVUPD     32(R9), Y5
	VMOVUPD     64(R9), Y6
	VMOVUPD     96(R9), Y7
	VFMADD231PD (R10), Y4, Y0
	VFMADD231PD 32(R10), Y5, Y1
	VFMADD231PD 64(R10), Y6, Y2
	VFMADD231PD 96(R10), Y7, Y3
	ADDQ        $128, R9
	ADDQ        $128, R10
	DECQ        CX
	JNZ         ddotlinessixteen
	VADDPD      Y1, Y0, Y0
	VADDPD      Y3, Y2, Y2
	VADDPD      Y2, Y0, Y0

ddotlinesfour:
	MOVQ DX, CX
	ANDQ $15, CX
	SHRQ $2, CX
	JZ   ddotlinesfold

ddotlinesfourloop:
	VMOVUPD     (R9), Y4
	VFMADD231PD (R10), Y4, Y0
	ADDQ        $32, R9
	ADDQ        $32, R10
	DECQ        CX
	JNZ         ddotlinesfourloop

ddotlinesfold:
	VEXTRACTF128 $1, Y0, X1
	VADDPD       X1, X0, X0
	VHADDPD      X0, X0, X0
	MOVQ         DX, CX
	ANDQ         $3, CX
	JZ           ddotlinesput

ddotlinesone:
	VMOVSD      (R9), X4
	VFMADD231SD (R10), X4, X0
	ADDQ        $8, R9
	ADDQ        $8, R10
	DECQ        CX
	JNZ         ddotlinesone

ddotlinesput:
	TESTQ  R14, R14
	JZ     ddotlinesstore
	VADDSD (R12), X0, X0

ddotlinesstore:
	VMOVSD X0, (R12)
	ADDQ   R8, SI
	ADDQ   R13, R12
	DECQ   BX
	JNZ    ddotlinesrow

ddotlinesdone:
	VZEROUPPER
	RET

// func daxpylines(count, k int, lines *float64, stride int, a, x *float64)
//
// lines[i·stride+q] += a[i]·x[q] for i < count, q < k, k ≥ 1, the stride
// in elements: daxpy for each line with a[i] broadcast, sixteen elements
// a step, then steps of four and of one.
TEXT ·daxpylines(SB), NOSPLIT, $0-48
	MOVQ  count+0(FP), BX
	MOVQ  k+8(FP), DX
	MOVQ  lines+16(FP), SI
	MOVQ  stride+24(FP), R8
	SHLQ  $3, R8
	MOVQ  a+32(FP), R11
	MOVQ  x+40(FP), DI
	TESTQ BX, BX
	JZ    daxpylinesdone

daxpylinesrow:
	VBROADCASTSD (R11), Y0
	MOVQ         SI, R9
	MOVQ         DI, R10
	MOVQ         DX, CX
	SHRQ         $4, CX
	JZ           daxpylinesfour

	PCALIGN $64

daxpylinessixteen:
	VMOVUPD     (R9), Y4
	VMOVUPD     32(R9), Y5
	VMOVUPD     64(R9), Y6
	VMOVUPD     96(R9), Y7
	VFMADD231PD (R10), Y0, Y4
	VFMADD231PD 32(R10), Y0, Y5
	VFMADD231PD 64(R10), Y0, Y6
	VFMADD231PD 96(R10), Y0, Y7
	VMOVUPD     Y4, (R9)
	VMOVUPD     Y5, 32(R9)
	VMOVUPD     Y6, 64(R9)
	VMOVUPD     Y7, 96(R9)
	ADDQ        $128, R9
	ADDQ        $128, R10
	DECQ        CX
	JNZ         daxpylinessixteen

daxpylinesfour:
	MOVQ DX, CX
	ANDQ $15, CX
	SHRQ $2, CX
	JZ   daxpylinestail

daxpylinesfourloop:
	VMOVUPD     (R9), Y4
	VFMADD231PD (R10), Y0, Y4
	VMOVUPD     Y4, (R9)
	ADDQ        $32, R9
	ADDQ        $32, R10
	DECQ        CX
	JNZ         daxpylinesfourloop

daxpylinestail:
	MOVQ DX, CX
	ANDQ $3, CX
	JZ   daxpylinesnext

daxpylinesone:
	VMOVSD      (R9), X4
	VFMADD231SD (R10), X0, X4
	VMOVSD      X4, (R9)
	ADDQ        $8, R9
	ADDQ        $8, R10
	DECQ        CX
	JNZ         daxpylinesone

daxpylinesnext:
	ADDQ R8, SI
	ADDQ $8, R11
	DECQ BX
	JNZ  daxpylinesrow

daxpylinesdone:
	VZEROUPPER
	RET

// func sdotlines(count, k int, lines *float32, stride int, x, out *float32, os int, add bool)
//
// out[i·os] = (or +=, when add is set) Σ_q lines[i·stride+q]·x[q] for
// i < count, k ≥ 1, strides in elements: sdot's four accumulators a line
// (thirty-two elements a step), then steps of eight and of one.
TEXT ·sdotlines(SB), NOSPLIT, $0-57
	MOVQ    count+0(FP), BX
	MOVQ    k+8(FP), DX
	MOVQ    lines+16(FP), SI
	MOVQ    stride+24(FP), R8
	SHLQ    $2, R8
	MOVQ    x+32(FP), DI
	MOVQ    out+40(FP), R12
	MOVQ    os+48(FP), R13
	SHLQ    $2, R13
	MOVBQZX add+56(FP), R14
	TESTQ   BX, BX
	JZ      sdotlinesdone

sdotlinesrow:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	MOVQ   SI, R9
	MOVQ   DI, R10
	MOVQ   DX, CX
	SHRQ   $5, CX
	JZ     sdotlineseight

	PCALIGN $64

sdotlinesthirtytwo:
	VMOVUPS     (R9), Y4
	VMOVUPS     32(R9), Y5
	VMOVUPS     64(R9), Y6
	VMOVUPS     96(R9), Y7
	VFMADD231PS (R10), Y4, Y0
	VFMADD231PS 32(R10), Y5, Y1
	VFMADD231PS 64(R10), Y6, Y2
	VFMADD231PS 96(R10), Y7, Y3
	ADDQ        $128, R9
	ADDQ        $128, R10
	DECQ        CX
	JNZ         sdotlinesthirtytwo
	VADDPS      Y1, Y0, Y0
	VADDPS      Y3, Y2, Y2
	VADDPS      Y2, Y0, Y0

sdotlineseight:
	MOVQ DX, CX
	ANDQ $31, CX
	SHRQ $3, CX
	JZ   sdotlinesfold

sdotlineseightloop:
	VMOVUPS     (R9), Y4
	VFMADD231PS (R10), Y4, Y0
	ADDQ        $32, R9
	ADDQ        $32, R10
	DECQ        CX
	JNZ         sdotlineseightloop

sdotlinesfold:
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	MOVQ         DX, CX
	ANDQ         $7, CX
	JZ           sdotlinesput

sdotlinesone:
	VMOVSS      (R9), X4
	VFMADD231SS (R10), X4, X0
	ADDQ        $4, R9
	ADDQ        $4, R10
	DECQ        CX
	JNZ         sdotlinesone

sdotlinesput:
	TESTQ  R14, R14
	JZ     sdotlinesstore
	VADDSS (R12), X0, X0

sdotlinesstore:
	VMOVSS X0, (R12)
	ADDQ   R8, SI
	ADDQ   R13, R12
	DECQ   BX
	JNZ    sdotlinesrow

sdotlinesdone:
	VZEROUPPER
	RET

// func saxpylines(count, k int, lines *float32, stride int, a, x *float32)
//
// lines[i·stride+q] += a[i]·x[q] for i < count, q < k, k ≥ 1, the stride
// in elements: saxpy for each line with a[i] broadcast, thirty-two
// elements a step, then steps of eight and of one.
TEXT ·saxpylines(SB), NOSPLIT, $0-48
	MOVQ  count+0(FP), BX
	MOVQ  k+8(FP), DX
	MOVQ  lines+16(FP), SI
	MOVQ  stride+24(FP), R8
	SHLQ  $2, R8
	MOVQ  a+32(FP), R11
	MOVQ  x+40(FP), DI
	TESTQ BX, BX
	JZ    saxpylinesdone

saxpylinesrow:
	VBROADCASTSS (R11), Y0
	MOVQ         SI, R9
	MOVQ         DI, R10
	MOVQ         DX, CX
	SHRQ         $5, CX
	JZ           saxpylineseight

	PCALIGN $64

saxpylinesthirtytwo:
	VMOVUPS     (R9), Y4
	VMOVUPS     32(R9), Y5
	VMOVUPS     64(R9), Y6
	VMOVUPS     96(R9), Y7
	VFMADD231PS (R10), Y0, Y4
	VFMADD231PS 32(R10), Y0, Y5
	VFMADD231PS 64(R10), Y0, Y6
	VFMADD231PS 96(R10), Y0, Y7
	VMOVUPS     Y4, (R9)
	VMOVUPS     Y5, 32(R9)
	VMOVUPS     Y6, 64(R9)
	VMOVUPS     Y7, 96(R9)
	ADDQ        $128, R9
	ADDQ        $128, R10
	DECQ        CX
	JNZ         saxpylinesthirtytwo

saxpylineseight:
	MOVQ DX, CX
	ANDQ $31, CX
	SHRQ $3, CX
	JZ   saxpylinestail

saxpylineseightloop:
	VMOVUPS     (R9), Y4
	VFMADD231PS (R10), Y0, Y4
	VMOVUPS     Y4, (R9)
	ADDQ        $32, R9
	ADDQ        $32, R10
	DECQ        CX
	JNZ         saxpylineseightloop

saxpylinestail:
	MOVQ DX, CX
	ANDQ $7, CX
	JZ   saxpylinesnext

saxpylinesone:
	VMOVSS      (R9), X4
	VFMADD231SS (R10), X0, X4
	VMOVSS      X4, (R9)
	ADDQ        $4, R9
	ADDQ        $4, R10
	DECQ        CX
	JNZ         saxpylinesone

saxpylinesnext:
	ADDQ R8, SI
	ADDQ $4, R11
	DECQ BX
	JNZ  saxpylinesrow

saxpylinesdone:
	VZEROUPPER
	RET

// func cdotlines(count, k int, lines *complex64, stride int, x, out *complex64, os int, add bool)
//
// out[i·os] = (or +=, when add is set) Σ_q lines[i·stride+q]·x[q] for
// i < count, k ≥ 1, strides in elements: cdotu's two accumulators (the
// second with the line's halves swapped) in two sets, eight complex
// numbers a step, then steps of four, two and one, reduced to one number
// a line.
TEXT ·cdotlines(SB), NOSPLIT, $0-57
	MOVQ    count+0(FP), BX
	MOVQ    k+8(FP), DX
	MOVQ    lines+16(FP), SI
	MOVQ    stride+24(FP), R8
	SHLQ    $3, R8
	MOVQ    x+32(FP), DI
	MOVQ    out+40(FP), R12
	MOVQ    os+48(FP), R13
	SHLQ    $3, R13
	MOVBQZX add+56(FP), R14
	TESTQ   BX, BX
	JZ      cdotlinesdone

cdotlinesrow:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	MOVQ   SI, R9
	MOVQ   DI, R10
	MOVQ   DX, CX
	SHRQ   $3, CX
	JZ     cdotlinesfour

	PCALIGN $64

cdotlineseight:
	VMOVUPS     (R9), Y2
	VMOVUPS     32(R9), Y4
	VFMADD231PS (R10), Y2, Y0
	VFMADD231PS 32(R10), Y4, Y5
	VPERMILPS   $0xB1, Y2, Y2
	VPERMILPS   $0xB1, Y4, Y4
	VFMADD231PS (R10), Y2, Y1
	VFMADD231PS 32(R10), Y4, Y6
	ADDQ        $64, R9
	ADDQ        $64, R10
	DECQ        CX
	JNZ         cdotlineseight
	VADDPS      Y5, Y0, Y0
	VADDPS      Y6, Y1, Y1

cdotlinesfour:
	TESTQ       $4, DX
	JZ          cdotlinesfold
	VMOVUPS     (R9), Y2
	VFMADD231PS (R10), Y2, Y0
	VPERMILPS   $0xB1, Y2, Y2
	VFMADD231PS (R10), Y2, Y1
	ADDQ        $32, R9
	ADDQ        $32, R10

cdotlinesfold:
	// Y0 gathers (lr·xr, li·xi), Y1 (li·xr, lr·xi) for each element.
	VEXTRACTF128 $1, Y0, X2
	VADDPS       X2, X0, X0
	VEXTRACTF128 $1, Y1, X3
	VADDPS       X3, X1, X1
	TESTQ        $2, DX
	JZ           cdotlinesone
	VMOVUPS      (R9), X2
	VMOVUPS      (R10), X3
	VFMADD231PS  X3, X2, X0
	VPERMILPS    $0xB1, X2, X2
	VFMADD231PS  X3, X2, X1
	ADDQ         $16, R9
	ADDQ         $16, R10

cdotlinesone:
	TESTQ       $1, DX
	JZ          cdotlinesreduce
	VMOVSD      (R9), X2
	VMOVSD      (R10), X3
	VFMADD231PS X3, X2, X0
	VPERMILPS   $0xB1, X2, X2
	VFMADD231PS X3, X2, X1

cdotlinesreduce:
	VHSUBPS     X0, X0, X0
	VHADDPS     X0, X0, X0
	VHADDPS     X1, X1, X1
	VHADDPS     X1, X1, X1
	VUNPCKLPS   X1, X0, X0
	TESTQ       R14, R14
	JZ          cdotlinesstore
	VMOVSD      (R12), X2
	VADDPS      X2, X0, X0

cdotlinesstore:
	VMOVSD X0, (R12)
	ADDQ   R8, SI
	ADDQ   R13, R12
	DECQ   BX
	JNZ    cdotlinesrow

cdotlinesdone:
	VZEROUPPER
	RET

// func caxpylines(count, k int, lines *complex64, stride int, a, x *complex64)
//
// lines[i·stride+q] += a[i]·x[q] for i < count, q < k, k ≥ 1, the stride in
// elements: caxpy for each line, with a[i] broadcast, four complex numbers
// to a register, then two and one more.
TEXT ·caxpylines(SB), NOSPLIT, $0-48
	MOVQ  count+0(FP), BX
	MOVQ  k+8(FP), DX
	MOVQ  lines+16(FP), SI
	MOVQ  stride+24(FP), R8
	SHLQ  $3, R8
	MOVQ  a+32(FP), R11
	MOVQ  x+40(FP), DI
	TESTQ BX, BX
	JZ    caxpylinesdone

caxpylinesrow:
	VBROADCASTSS (R11), Y0
	VBROADCASTSS 4(R11), Y1
	MOVQ         SI, R9
	MOVQ         DI, R10
	MOVQ         DX, CX
	SHRQ         $2, CX
	JZ           caxpylinestwo

	PCALIGN $64

caxpylinesfour:
	VMOVUPS        (R10), Y4
	VPERMILPS      $0xB1, Y4, Y6
	VMULPS         Y1, Y6, Y6
	VFMADDSUB231PS Y4, Y0, Y6
	VADDPS         (R9), Y6, Y6
	VMOVUPS        Y6, (R9)
	ADDQ           $32, R9
	ADDQ           $32, R10
	DECQ           CX
	JNZ            caxpylinesfour

caxpylinestwo:
	TESTQ          $2, DX
	JZ             caxpylinesone
	VMOVUPS        (R10), X4
	VPERMILPS      $0xB1, X4, X6
	VMULPS         X1, X6, X6
	VFMADDSUB231PS X4, X0, X6
	VADDPS         (R9), X6, X6
	VMOVUPS        X6, (R9)
	ADDQ           $16, R9
	ADDQ           $16, R10

caxpylinesone:
	TESTQ          $1, DX
	JZ             caxpylinesnext
	VMOVSD         (R10), X4
	VPERMILPS      $0xB1, X4, X6
	VMULPS         X1, X6, X6
	VFMADDSUB231PS X4, X0, X6
	VMOVSD         (R9), X7
	VADDPS         X7, X6, X6
	VMOVSD         X6, (R9)

caxpylinesnext:
	ADDQ R8, SI
	ADDQ $8, R11
	DECQ BX
	JNZ  caxpylinesrow

caxpylinesdone:
	VZEROUPPER
	RET

// func zscal(n int, a complex128, x *complex128)
//
// x *= a, two complex numbers to a register (zaxpy's product without the
// addition); n a multiple of 2.
TEXT ·zscal(SB), NOSPLIT, $0-32
	MOVQ         n+0(FP), CX
	VBROADCASTSD a_real+8(FP), Y0
	VBROADCASTSD a_imag+16(FP), Y1
	MOVQ         x+24(FP), SI
	SHRQ         $1, CX
	JZ           zscaldone

zscalloop:
	VMOVUPD        (SI), Y4
	VPERMILPD      $5, Y4, Y6
	VMULPD         Y1, Y6, Y6
	VFMADDSUB231PD Y4, Y0, Y6
	VMOVUPD        Y6, (SI)
	ADDQ           $32, SI
	DECQ           CX
	JNZ            zscalloop

zscaldone:
	VZEROUPPER
	RET

// func cscal(n int, a complex64, x *complex64)
//
// x *= a, four complex numbers to a register; n a multiple of 4.
TEXT ·cscal(SB), NOSPLIT, $0-24
	MOVQ         n+0(FP), CX
	VBROADCASTSS a_real+8(FP), Y0
	VBROADCASTSS a_imag+12(FP), Y1
	MOVQ         x+16(FP), SI
	SHRQ         $2, CX
	JZ           cscaldone

cscalloop:
	VMOVUPS        (SI), Y4
	VPERMILPS      $0xB1, Y4, Y6
	VMULPS         Y1, Y6, Y6
	VFMADDSUB231PS Y4, Y0, Y6
	VMOVUPS        Y6, (SI)
	ADDQ           $32, SI
	DECQ           CX
	JNZ            cscalloop

cscaldone:
	VZEROUPPER
	RET

// func zconj(n int, dst, src *complex128)
//
// dst = conj(src), the imaginary parts' sign bits flipped, two complex
// numbers to a register; n a multiple of 2.
TEXT ·zconj(SB), NOSPLIT, $0-24
	MOVQ      n+0(FP), CX
	MOVQ      dst+8(FP), DI
	MOVQ      src+16(FP), SI
	VPCMPEQQ  Y1, Y1, Y1
	VPSLLQ    $63, Y1, Y1
	VXORPD    Y2, Y2, Y2
	VBLENDPD  $10, Y1, Y2, Y1 // (0, sign, 0, sign)
	SHRQ      $1, CX
	JZ        zconjdone

zconjloop:
	VXORPD  (SI), Y1, Y0
	VMOVUPD Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     zconjloop

zconjdone:
	VZEROUPPER
	RET

// func cconj(n int, dst, src *complex64)
//
// dst = conj(src), four complex numbers to a register; n a multiple of 4.
TEXT ·cconj(SB), NOSPLIT, $0-24
	MOVQ      n+0(FP), CX
	MOVQ      dst+8(FP), DI
	MOVQ      src+16(FP), SI
	VPCMPEQD  Y1, Y1, Y1
	VPSLLD    $31, Y1, Y1
	VXORPS    Y2, Y2, Y2
	VBLENDPS  $0xAA, Y1, Y2, Y1 // sign bits on the odd (imaginary) lanes
	SHRQ      $2, CX
	JZ        cconjdone

cconjloop:
	VXORPS  (SI), Y1, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     cconjloop

cconjdone:
	VZEROUPPER
	RET

// func dscal(n int, a float64, x *float64)
//
// x *= a, sixteen elements a step, then four; n a multiple of 4.
TEXT ·dscal(SB), NOSPLIT, $0-24
	MOVQ         n+0(FP), CX
	VBROADCASTSD a+8(FP), Y0
	MOVQ         x+16(FP), SI
	MOVQ         CX, DX
	SHRQ         $4, DX
	JZ           dscalfour

dscalloop:
	VMULPD  (SI), Y0, Y1
	VMULPD  32(SI), Y0, Y2
	VMULPD  64(SI), Y0, Y3
	VMULPD  96(SI), Y0, Y4
	VMOVUPD Y1, (SI)
	VMOVUPD Y2, 32(SI)
	VMOVUPD Y3, 64(SI)
	VMOVUPD Y4, 96(SI)
	ADDQ    $128, SI
	DECQ    DX
	JNZ     dscalloop

dscalfour:
	ANDQ $15, CX
	SHRQ $2, CX
	JZ   dscaldone

dscalloop4:
	VMULPD  (SI), Y0, Y1
	VMOVUPD Y1, (SI)
	ADDQ    $32, SI
	DECQ    CX
	JNZ     dscalloop4

dscaldone:
	VZEROUPPER
	RET

// func sscal(n int, a float32, x *float32)
//
// x *= a, thirty-two elements a step, then eight; n a multiple of 8.
TEXT ·sscal(SB), NOSPLIT, $0-24
	MOVQ         n+0(FP), CX
	VBROADCASTSS a+8(FP), Y0
	MOVQ         x+16(FP), SI
	MOVQ         CX, DX
	SHRQ         $5, DX
	JZ           sscaleight

sscalloop:
	VMULPS  (SI), Y0, Y1
	VMULPS  32(SI), Y0, Y2
	VMULPS  64(SI), Y0, Y3
	VMULPS  96(SI), Y0, Y4
	VMOVUPS Y1, (SI)
	VMOVUPS Y2, 32(SI)
	VMOVUPS Y3, 64(SI)
	VMOVUPS Y4, 96(SI)
	ADDQ    $128, SI
	DECQ    DX
	JNZ     sscalloop

sscaleight:
	ANDQ $31, CX
	SHRQ $3, CX
	JZ   sscaldone

sscalloop8:
	VMULPS  (SI), Y0, Y1
	VMOVUPS Y1, (SI)
	ADDQ    $32, SI
	DECQ    CX
	JNZ     sscalloop8

sscaldone:
	VZEROUPPER
	RET
