//go:build amd64 && !purego && !goferro_noasm

#include "textflag.h"

// AVX-512 in-register transposes: the destination rows of a panel one
// cache line wide, dst row i receiving element i of each of the 64/size
// source rows at src+j*sb. A 16×16 (4-byte) or 8×8 (8-byte) block is
// loaded as whole source lines, transposed in the 32 ZMM registers and
// stored as whole destination lines, one instruction a line:
// non-temporal (VMOVNTPS; dst 64-byte aligned) when nt is not 0, through
// the cache (any alignment) otherwise. Destination rows come in groups of
// 8: row 8g+e lies at dst+g*gs+e*db (gs = 8*db for a plain plane). n, the
// number of destination rows, is a multiple of 16 (4-byte) or 8 (8-byte).


// func transpose16x16AVX512(dst unsafe.Pointer, db, gs int, src unsafe.Pointer, sb, n, nt int)
TEXT ·transpose16x16AVX512(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ db+8(FP), DX
	MOVQ gs+16(FP), R9
	MOVQ src+24(FP), SI
	MOVQ sb+32(FP), BX
	MOVQ n+40(FP), CX
	SHRQ $4, CX
	JZ   transpose16x16AVX512_done
	LEAQ (BX)(BX*2), R10  // 3*sb
	LEAQ (BX)(BX*4), R11  // 5*sb
	LEAQ (R10)(BX*4), R12 // 7*sb
	LEAQ (DX)(DX*2), R13  // 3*db
transpose16x16AVX512_loop:
	MOVQ SI, AX
	VMOVUPS (AX), Z0
	VMOVUPS (AX)(BX*1), Z1
	VMOVUPS (AX)(BX*2), Z2
	VMOVUPS (AX)(R10*1), Z3
	VMOVUPS (AX)(BX*4), Z4
	VMOVUPS (AX)(R11*1), Z5
	VMOVUPS (AX)(R10*2), Z6
	VMOVUPS (AX)(R12*1), Z7
	LEAQ (AX)(BX*8), AX
	VMOVUPS (AX), Z8
	VMOVUPS (AX)(BX*1), Z9
	VMOVUPS (AX)(BX*2), Z10
	VMOVUPS (AX)(R10*1), Z11
	VMOVUPS (AX)(BX*4), Z12
	VMOVUPS (AX)(R11*1), Z13
	VMOVUPS (AX)(R10*2), Z14
	VMOVUPS (AX)(R12*1), Z15
	// Pairs of rows, interleaved: lane k of Z16+2p holds elements 4k, 4k+1 of rows 2p, 2p+1.
	VUNPCKLPS Z1, Z0, Z16
	VUNPCKHPS Z1, Z0, Z17
	VUNPCKLPS Z3, Z2, Z18
	VUNPCKHPS Z3, Z2, Z19
	VUNPCKLPS Z5, Z4, Z20
	VUNPCKHPS Z5, Z4, Z21
	VUNPCKLPS Z7, Z6, Z22
	VUNPCKHPS Z7, Z6, Z23
	VUNPCKLPS Z9, Z8, Z24
	VUNPCKHPS Z9, Z8, Z25
	VUNPCKLPS Z11, Z10, Z26
	VUNPCKHPS Z11, Z10, Z27
	VUNPCKLPS Z13, Z12, Z28
	VUNPCKHPS Z13, Z12, Z29
	VUNPCKLPS Z15, Z14, Z30
	VUNPCKHPS Z15, Z14, Z31
	// Quads of rows: lane k of Z4g+m holds element 4k+m of rows 4g..4g+3.
	VUNPCKLPD Z18, Z16, Z0
	VUNPCKHPD Z18, Z16, Z1
	VUNPCKLPD Z19, Z17, Z2
	VUNPCKHPD Z19, Z17, Z3
	VUNPCKLPD Z22, Z20, Z4
	VUNPCKHPD Z22, Z20, Z5
	VUNPCKLPD Z23, Z21, Z6
	VUNPCKHPD Z23, Z21, Z7
	VUNPCKLPD Z26, Z24, Z8
	VUNPCKHPD Z26, Z24, Z9
	VUNPCKLPD Z27, Z25, Z10
	VUNPCKHPD Z27, Z25, Z11
	VUNPCKLPD Z30, Z28, Z12
	VUNPCKHPD Z30, Z28, Z13
	VUNPCKLPD Z31, Z29, Z14
	VUNPCKHPD Z31, Z29, Z15
	// The 4×4 transposes of 128-bit lanes: row 4k+m is lane k of Z m, Z 4+m, Z 8+m, Z 12+m.
	VSHUFF32X4 $0x44, Z4, Z0, Z16
	VSHUFF32X4 $0xEE, Z4, Z0, Z17
	VSHUFF32X4 $0x44, Z12, Z8, Z18
	VSHUFF32X4 $0xEE, Z12, Z8, Z19
	VSHUFF32X4 $0x44, Z5, Z1, Z20
	VSHUFF32X4 $0xEE, Z5, Z1, Z21
	VSHUFF32X4 $0x44, Z13, Z9, Z22
	VSHUFF32X4 $0xEE, Z13, Z9, Z23
	VSHUFF32X4 $0x44, Z6, Z2, Z24
	VSHUFF32X4 $0xEE, Z6, Z2, Z25
	VSHUFF32X4 $0x44, Z14, Z10, Z26
	VSHUFF32X4 $0xEE, Z14, Z10, Z27
	VSHUFF32X4 $0x44, Z7, Z3, Z28
	VSHUFF32X4 $0xEE, Z7, Z3, Z29
	VSHUFF32X4 $0x44, Z15, Z11, Z30
	VSHUFF32X4 $0xEE, Z15, Z11, Z31
	VSHUFF32X4 $0x88, Z18, Z16, Z0
	VSHUFF32X4 $0xDD, Z18, Z16, Z4
	VSHUFF32X4 $0x88, Z19, Z17, Z8
	VSHUFF32X4 $0xDD, Z19, Z17, Z12
	VSHUFF32X4 $0x88, Z22, Z20, Z1
	VSHUFF32X4 $0xDD, Z22, Z20, Z5
	VSHUFF32X4 $0x88, Z23, Z21, Z9
	VSHUFF32X4 $0xDD, Z23, Z21, Z13
	VSHUFF32X4 $0x88, Z26, Z24, Z2
	VSHUFF32X4 $0xDD, Z26, Z24, Z6
	VSHUFF32X4 $0x88, Z27, Z25, Z10
	VSHUFF32X4 $0xDD, Z27, Z25, Z14
	VSHUFF32X4 $0x88, Z30, Z28, Z3
	VSHUFF32X4 $0xDD, Z30, Z28, Z7
	VSHUFF32X4 $0x88, Z31, Z29, Z11
	VSHUFF32X4 $0xDD, Z31, Z29, Z15
	CMPQ nt+48(FP), $0
	JEQ  transpose16x16AVX512_cached
	MOVQ DI, R8
	VMOVNTPS Z0, (R8)
	VMOVNTPS Z1, (R8)(DX*1)
	VMOVNTPS Z2, (R8)(DX*2)
	VMOVNTPS Z3, (R8)(R13*1)
	LEAQ (R8)(DX*4), R8
	VMOVNTPS Z4, (R8)
	VMOVNTPS Z5, (R8)(DX*1)
	VMOVNTPS Z6, (R8)(DX*2)
	VMOVNTPS Z7, (R8)(R13*1)
	LEAQ (DI)(R9*1), R8
	VMOVNTPS Z8, (R8)
	VMOVNTPS Z9, (R8)(DX*1)
	VMOVNTPS Z10, (R8)(DX*2)
	VMOVNTPS Z11, (R8)(R13*1)
	LEAQ (R8)(DX*4), R8
	VMOVNTPS Z12, (R8)
	VMOVNTPS Z13, (R8)(DX*1)
	VMOVNTPS Z14, (R8)(DX*2)
	VMOVNTPS Z15, (R8)(R13*1)
	JMP  transpose16x16AVX512_next
transpose16x16AVX512_cached:
	MOVQ DI, R8
	VMOVUPS Z0, (R8)
	VMOVUPS Z1, (R8)(DX*1)
	VMOVUPS Z2, (R8)(DX*2)
	VMOVUPS Z3, (R8)(R13*1)
	LEAQ (R8)(DX*4), R8
	VMOVUPS Z4, (R8)
	VMOVUPS Z5, (R8)(DX*1)
	VMOVUPS Z6, (R8)(DX*2)
	VMOVUPS Z7, (R8)(R13*1)
	LEAQ (DI)(R9*1), R8
	VMOVUPS Z8, (R8)
	VMOVUPS Z9, (R8)(DX*1)
	VMOVUPS Z10, (R8)(DX*2)
	VMOVUPS Z11, (R8)(R13*1)
	LEAQ (R8)(DX*4), R8
	VMOVUPS Z12, (R8)
	VMOVUPS Z13, (R8)(DX*1)
	VMOVUPS Z14, (R8)(DX*2)
	VMOVUPS Z15, (R8)(R13*1)
transpose16x16AVX512_next:
	ADDQ $64, SI
	ADDQ R9, DI
	ADDQ R9, DI
	DECQ CX
	JNZ  transpose16x16AVX512_loop
	VZEROUPPER
transpose16x16AVX512_done:
	RET

// func transpose8x8AVX512(dst unsafe.Pointer, db, gs int, src unsafe.Pointer, sb, n, nt int)
TEXT ·transpose8x8AVX512(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ db+8(FP), DX
	MOVQ gs+16(FP), R9
	MOVQ src+24(FP), SI
	MOVQ sb+32(FP), BX
	MOVQ n+40(FP), CX
	SHRQ $3, CX
	JZ   transpose8x8AVX512_done
	LEAQ (BX)(BX*2), R10  // 3*sb
	LEAQ (BX)(BX*4), R11  // 5*sb
	LEAQ (R10)(BX*4), R12 // 7*sb
	LEAQ (DX)(DX*2), R13  // 3*db
transpose8x8AVX512_loop:
	MOVQ SI, AX
	VMOVUPS (AX), Z0
	VMOVUPS (AX)(BX*1), Z1
	VMOVUPS (AX)(BX*2), Z2
	VMOVUPS (AX)(R10*1), Z3
	VMOVUPS (AX)(BX*4), Z4
	VMOVUPS (AX)(R11*1), Z5
	VMOVUPS (AX)(R10*2), Z6
	VMOVUPS (AX)(R12*1), Z7
	// Pairs of rows: lane k of Z8+2g+m holds element 2k+m of rows 2g, 2g+1.
	VUNPCKLPD Z1, Z0, Z8
	VUNPCKHPD Z1, Z0, Z9
	VUNPCKLPD Z3, Z2, Z10
	VUNPCKHPD Z3, Z2, Z11
	VUNPCKLPD Z5, Z4, Z12
	VUNPCKHPD Z5, Z4, Z13
	VUNPCKLPD Z7, Z6, Z14
	VUNPCKHPD Z7, Z6, Z15
	// The 4×4 transposes of 128-bit lanes: row 2k+m is lane k of Z8+m, Z10+m, Z12+m, Z14+m.
	VSHUFF64X2 $0x44, Z10, Z8, Z16
	VSHUFF64X2 $0xEE, Z10, Z8, Z17
	VSHUFF64X2 $0x44, Z14, Z12, Z18
	VSHUFF64X2 $0xEE, Z14, Z12, Z19
	VSHUFF64X2 $0x44, Z11, Z9, Z20
	VSHUFF64X2 $0xEE, Z11, Z9, Z21
	VSHUFF64X2 $0x44, Z15, Z13, Z22
	VSHUFF64X2 $0xEE, Z15, Z13, Z23
	VSHUFF64X2 $0x88, Z18, Z16, Z0
	VSHUFF64X2 $0xDD, Z18, Z16, Z2
	VSHUFF64X2 $0x88, Z19, Z17, Z4
	VSHUFF64X2 $0xDD, Z19, Z17, Z6
	VSHUFF64X2 $0x88, Z22, Z20, Z1
	VSHUFF64X2 $0xDD, Z22, Z20, Z3
	VSHUFF64X2 $0x88, Z23, Z21, Z5
	VSHUFF64X2 $0xDD, Z23, Z21, Z7
	CMPQ nt+48(FP), $0
	JEQ  transpose8x8AVX512_cached
	MOVQ DI, R8
	VMOVNTPS Z0, (R8)
	VMOVNTPS Z1, (R8)(DX*1)
	VMOVNTPS Z2, (R8)(DX*2)
	VMOVNTPS Z3, (R8)(R13*1)
	LEAQ (R8)(DX*4), R8
	VMOVNTPS Z4, (R8)
	VMOVNTPS Z5, (R8)(DX*1)
	VMOVNTPS Z6, (R8)(DX*2)
	VMOVNTPS Z7, (R8)(R13*1)
	JMP  transpose8x8AVX512_next
transpose8x8AVX512_cached:
	MOVQ DI, R8
	VMOVUPS Z0, (R8)
	VMOVUPS Z1, (R8)(DX*1)
	VMOVUPS Z2, (R8)(DX*2)
	VMOVUPS Z3, (R8)(R13*1)
	LEAQ (R8)(DX*4), R8
	VMOVUPS Z4, (R8)
	VMOVUPS Z5, (R8)(DX*1)
	VMOVUPS Z6, (R8)(DX*2)
	VMOVUPS Z7, (R8)(R13*1)
transpose8x8AVX512_next:
	ADDQ $64, SI
	ADDQ R9, DI
	DECQ CX
	JNZ  transpose8x8AVX512_loop
	VZEROUPPER
transpose8x8AVX512_done:
	RET

// func transpose4x4AVX512(dst unsafe.Pointer, db int, src unsafe.Pointer, sb, n, nt int)
//
// transpose4x4AVX512 is the 16-byte kernel: 4 source lines, 4 elements each, become 4
// destination lines; destination rows are db apart, n is a multiple of 4.
TEXT ·transpose4x4AVX512(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ db+8(FP), DX
	MOVQ src+16(FP), SI
	MOVQ sb+24(FP), BX
	MOVQ n+32(FP), CX
	SHRQ $2, CX
	JZ   transpose4x4AVX512_done
	LEAQ (BX)(BX*2), R10  // 3*sb
	LEAQ (DX)(DX*2), R13  // 3*db
transpose4x4AVX512_loop:
	VMOVUPS (SI), Z0
	VMOVUPS (SI)(BX*1), Z1
	VMOVUPS (SI)(BX*2), Z2
	VMOVUPS (SI)(R10*1), Z3
	VSHUFF64X2 $0x44, Z1, Z0, Z4
	VSHUFF64X2 $0xEE, Z1, Z0, Z5
	VSHUFF64X2 $0x44, Z3, Z2, Z6
	VSHUFF64X2 $0xEE, Z3, Z2, Z7
	VSHUFF64X2 $0x88, Z6, Z4, Z0
	VSHUFF64X2 $0xDD, Z6, Z4, Z1
	VSHUFF64X2 $0x88, Z7, Z5, Z2
	VSHUFF64X2 $0xDD, Z7, Z5, Z3
	CMPQ nt+40(FP), $0
	JEQ  transpose4x4AVX512_cached
	VMOVNTPS Z0, (DI)
	VMOVNTPS Z1, (DI)(DX*1)
	VMOVNTPS Z2, (DI)(DX*2)
	VMOVNTPS Z3, (DI)(R13*1)
	JMP  transpose4x4AVX512_next
transpose4x4AVX512_cached:
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, (DI)(DX*1)
	VMOVUPS Z2, (DI)(DX*2)
	VMOVUPS Z3, (DI)(R13*1)
transpose4x4AVX512_next:
	ADDQ $64, SI
	LEAQ (DI)(DX*4), DI
	DECQ CX
	JNZ  transpose4x4AVX512_loop
	VZEROUPPER
transpose4x4AVX512_done:
	RET

// func transposeRuns32AVX512(dst unsafe.Pointer, db int, src unsafe.Pointer, sb, n, nt int)
//
// transposeRuns32AVX512 transposes 32-byte runs in 2×2 blocks: the source lines at src
// and src+sb hold runs i, i+1 of two columns; destination row i (db
// apart, n rows, n even) receives in its line run i of both columns.
// It prefetches the lines 8·sb further on, the ones the fourth call on
// along the destination's lines (4 pairs of columns on) reads: on an AMD
// EPYC (Zen 5), bench permute's float32 32,32,32,32,8 perm 3,1,0,2,4
// (1 KiB columns) took 2.01 ms (1.88–2.74) against 2.26 (2.20–2.53) with
// the next call's lines, 2.15 and 2.06 with the second and third's.
TEXT ·transposeRuns32AVX512(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ db+8(FP), DX
	MOVQ src+16(FP), SI
	MOVQ sb+24(FP), BX
	MOVQ n+32(FP), CX
	SHRQ $1, CX
	JZ   transposeRuns32AVX512_done
	MOVQ nt+40(FP), R8
	LEAQ (SI)(BX*8), R9 // the lines 4 calls on
transposeRuns32AVX512_loop:
	PREFETCHT0 (R9)
	PREFETCHT0 (R9)(BX*1)
	ADDQ $64, R9
	VMOVUPS (SI), Z0
	VMOVUPS (SI)(BX*1), Z1
	VSHUFF64X2 $0x44, Z1, Z0, Z2
	VSHUFF64X2 $0xEE, Z1, Z0, Z3
	TESTQ R8, R8
	JZ   transposeRuns32AVX512_cached
	VMOVNTPS Z2, (DI)
	VMOVNTPS Z3, (DI)(DX*1)
	JMP  transposeRuns32AVX512_next
transposeRuns32AVX512_cached:
	VMOVUPS Z2, (DI)
	VMOVUPS Z3, (DI)(DX*1)
transposeRuns32AVX512_next:
	ADDQ $64, SI
	LEAQ (DI)(DX*2), DI
	DECQ CX
	JNZ  transposeRuns32AVX512_loop
	VZEROUPPER
transposeRuns32AVX512_done:
	RET

// func transposeGroup4x4AVX512(dst unsafe.Pointer, db int, src unsafe.Pointer, sb, n, pf, nt int)
//
// transposeGroup4x4AVX512 is the 16-byte kernel for one group of 8
// destination rows (db apart) across n columns (a multiple of 4): column
// j is the 8 elements, two lines, at src+j*sb, and destination row e
// receives element e of each column. It walks the columns 4 at a time,
// so that each destination row is written as one sequential run of
// lines, and prefetches the two lines pf bytes on in each column read.
TEXT ·transposeGroup4x4AVX512(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ db+8(FP), DX
	MOVQ src+16(FP), SI
	MOVQ sb+24(FP), BX
	MOVQ n+32(FP), CX
	SHRQ $2, CX
	JZ   transposeGroup4x4AVX512_done
	MOVQ SI, R11
	ADDQ pf+40(FP), R11   // the lines to prefetch
	LEAQ (BX)(BX*2), R10  // 3*sb
	LEAQ (DX)(DX*2), R13  // 3*db
	LEAQ (DI)(DX*4), R12  // rows 4–7
	MOVQ nt+48(FP), R8
transposeGroup4x4AVX512_loop:
	PREFETCHT0 (R11)
	PREFETCHT0 64(R11)
	PREFETCHT0 (R11)(BX*1)
	PREFETCHT0 64(R11)(BX*1)
	PREFETCHT0 (R11)(BX*2)
	PREFETCHT0 64(R11)(BX*2)
	PREFETCHT0 (R11)(R10*1)
	PREFETCHT0 64(R11)(R10*1)
	// Rows 0–3 from the first line of each column, 4–7 from the second.
	VMOVUPS (SI), Z0
	VMOVUPS (SI)(BX*1), Z1
	VMOVUPS (SI)(BX*2), Z2
	VMOVUPS (SI)(R10*1), Z3
	VMOVUPS 64(SI), Z8
	VMOVUPS 64(SI)(BX*1), Z9
	VMOVUPS 64(SI)(BX*2), Z10
	VMOVUPS 64(SI)(R10*1), Z11
	VSHUFF64X2 $0x44, Z1, Z0, Z4
	VSHUFF64X2 $0xEE, Z1, Z0, Z5
	VSHUFF64X2 $0x44, Z3, Z2, Z6
	VSHUFF64X2 $0xEE, Z3, Z2, Z7
	VSHUFF64X2 $0x88, Z6, Z4, Z0
	VSHUFF64X2 $0xDD, Z6, Z4, Z1
	VSHUFF64X2 $0x88, Z7, Z5, Z2
	VSHUFF64X2 $0xDD, Z7, Z5, Z3
	VSHUFF64X2 $0x44, Z9, Z8, Z12
	VSHUFF64X2 $0xEE, Z9, Z8, Z13
	VSHUFF64X2 $0x44, Z11, Z10, Z14
	VSHUFF64X2 $0xEE, Z11, Z10, Z15
	VSHUFF64X2 $0x88, Z14, Z12, Z8
	VSHUFF64X2 $0xDD, Z14, Z12, Z9
	VSHUFF64X2 $0x88, Z15, Z13, Z10
	VSHUFF64X2 $0xDD, Z15, Z13, Z11
	TESTQ R8, R8
	JZ   transposeGroup4x4AVX512_cached
	VMOVNTPS Z0, (DI)
	VMOVNTPS Z1, (DI)(DX*1)
	VMOVNTPS Z2, (DI)(DX*2)
	VMOVNTPS Z3, (DI)(R13*1)
	VMOVNTPS Z8, (R12)
	VMOVNTPS Z9, (R12)(DX*1)
	VMOVNTPS Z10, (R12)(DX*2)
	VMOVNTPS Z11, (R12)(R13*1)
	JMP  transposeGroup4x4AVX512_next
transposeGroup4x4AVX512_cached:
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, (DI)(DX*1)
	VMOVUPS Z2, (DI)(DX*2)
	VMOVUPS Z3, (DI)(R13*1)
	VMOVUPS Z8, (R12)
	VMOVUPS Z9, (R12)(DX*1)
	VMOVUPS Z10, (R12)(DX*2)
	VMOVUPS Z11, (R12)(R13*1)
transposeGroup4x4AVX512_next:
	LEAQ (SI)(BX*4), SI
	LEAQ (R11)(BX*4), R11
	ADDQ $64, DI
	ADDQ $64, R12
	DECQ CX
	JNZ  transposeGroup4x4AVX512_loop
	VZEROUPPER
transposeGroup4x4AVX512_done:
	RET
