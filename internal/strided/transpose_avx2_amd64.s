//go:build amd64 && !purego && !goferro_noasm

#include "textflag.h"

// AVX2-path in-register transposes: the AVX-512 kernels of
// transpose_avx512_amd64.s (same arguments, same blocks, same line-wide
// panels) in 256-bit registers, for CPUs with AVX2 but not AVX-512. Each
// destination line is stored as its two 32-byte halves, one right after
// the other, so that a non-temporal line is complete before the next one
// starts (VMOVNTPS; dst 64-byte aligned when nt is not 0). The blocks
// are built from 16-byte pieces: VINSERTF128 loads the piece of a second
// source row (for 4-byte elements, of a copy of the block's source lines
// in the frame: see BLOCK16) into the upper 128-bit lane, so that the
// transposes need only in-lane shuffles (VUNPCK*), no lane-crossing
// ones. The
// instructions are AVX ones; the path is named after the CPUs it is
// chosen on (see chooseKernels).

// TILE8 copies 8 source rows, whole lines, at base+k*sb (BX = sb, R10 =
// 3*sb, R11 = 5*sb, R12 = 7*sb) into the tile in the frame at t(SP), row
// k at t+64k.
#define TILE8(base, t) \
	VMOVUPS (base), Y0; \
	VMOVUPS 32(base), Y1; \
	VMOVUPS (base)(BX*1), Y2; \
	VMOVUPS 32(base)(BX*1), Y3; \
	VMOVUPS (base)(BX*2), Y4; \
	VMOVUPS 32(base)(BX*2), Y5; \
	VMOVUPS (base)(R10*1), Y6; \
	VMOVUPS 32(base)(R10*1), Y7; \
	VMOVUPS (base)(BX*4), Y8; \
	VMOVUPS 32(base)(BX*4), Y9; \
	VMOVUPS (base)(R11*1), Y10; \
	VMOVUPS 32(base)(R11*1), Y11; \
	VMOVUPS (base)(R10*2), Y12; \
	VMOVUPS 32(base)(R10*2), Y13; \
	VMOVUPS (base)(R12*1), Y14; \
	VMOVUPS 32(base)(R12*1), Y15; \
	VMOVUPS Y0, (t)(SP); \
	VMOVUPS Y1, (t+32)(SP); \
	VMOVUPS Y2, (t+64)(SP); \
	VMOVUPS Y3, (t+96)(SP); \
	VMOVUPS Y4, (t+128)(SP); \
	VMOVUPS Y5, (t+160)(SP); \
	VMOVUPS Y6, (t+192)(SP); \
	VMOVUPS Y7, (t+224)(SP); \
	VMOVUPS Y8, (t+256)(SP); \
	VMOVUPS Y9, (t+288)(SP); \
	VMOVUPS Y10, (t+320)(SP); \
	VMOVUPS Y11, (t+352)(SP); \
	VMOVUPS Y12, (t+384)(SP); \
	VMOVUPS Y13, (t+416)(SP); \
	VMOVUPS Y14, (t+448)(SP); \
	VMOVUPS Y15, (t+480)(SP)

// HALF4 transposes the 4 elements at byte o of the 8 tile rows from
// o(SP) on (64 bytes apart): a, b, c, d hold rows 0–3 with rows 4–7 in
// their upper lanes, and end, in the order c, d, a, b, as the 8 elements
// (32 bytes) of each of the 4 destination rows; t0 and t1 are scratch.
#define HALF4(o, xa, a, xb, b, xc, c, xd, d, t0, t1) \
	VMOVUPS     (o)(SP), xa; \
	VINSERTF128 $1, (o+256)(SP), a, a; \
	VMOVUPS     (o+64)(SP), xb; \
	VINSERTF128 $1, (o+320)(SP), b, b; \
	VMOVUPS     (o+128)(SP), xc; \
	VINSERTF128 $1, (o+384)(SP), c, c; \
	VMOVUPS     (o+192)(SP), xd; \
	VINSERTF128 $1, (o+448)(SP), d, d; \
	VUNPCKLPS   b, a, t0; \
	VUNPCKHPS   b, a, t1; \
	VUNPCKLPS   d, c, a; \
	VUNPCKHPS   d, c, b; \
	VUNPCKLPD   a, t0, c; \
	VUNPCKHPD   a, t0, d; \
	VUNPCKLPD   b, t1, a; \
	VUNPCKHPD   b, t1, b

// ROWS16 writes 4 destination lines of a 16×16 block of 4-byte elements,
// rows base+e*db (DX = db, R13 = 3*db), from elements off/4 to off/4+3
// of the 16 tile rows, with the store instruction st.
#define ROWS16(off, base, st) \
	HALF4(off, X0, Y0, X1, Y1, X2, Y2, X3, Y3, Y4, Y5); \
	HALF4(off+512, X6, Y6, X7, Y7, X8, Y8, X9, Y9, Y10, Y11); \
	st Y2, (base); \
	st Y8, 32(base); \
	st Y3, (base)(DX*1); \
	st Y9, 32(base)(DX*1); \
	st Y0, (base)(DX*2); \
	st Y6, 32(base)(DX*2); \
	st Y1, (base)(R13*1); \
	st Y7, 32(base)(R13*1)

// BLOCK16 transposes one 16×16 block of 4-byte elements: source lines at
// SI, destination rows in two groups of 8 at DI and DI+gs (R9 = gs). The
// source lines go through the tile, each read whole by two adjacent
// loads, rather than from the source 16 bytes at a time, four times each:
// source rows a power of two apart put the block's 16 lines in one set of
// the L1 cache, more than its ways. On an AMD EPYC (Zen 5, 12-way L1),
// one call on 16 rows 8 KiB apart took 150 ns through the tile against
// 255 (AVX-512: 170), and 2048² and 4096² float32 transposes 1.01–1.05
// and 4.07–4.18 ms against 1.03–1.12 and 4.4–5.5 (3 interleaved rounds).
#define BLOCK16(st) \
	TILE8(SI, 0); \
	LEAQ    (SI)(BX*8), AX; \
	TILE8(AX, 512); \
	ROWS16(0, DI, st); \
	LEAQ    (DI)(DX*4), R8; \
	ROWS16(16, R8, st); \
	LEAQ    (DI)(R9*1), R8; \
	ROWS16(32, R8, st); \
	LEAQ    (R8)(DX*4), R8; \
	ROWS16(48, R8, st)

// func transpose16x16AVX2(dst unsafe.Pointer, db, gs int, src unsafe.Pointer, sb, n, nt int)
TEXT ·transpose16x16AVX2(SB), $1024-56
	MOVQ dst+0(FP), DI
	MOVQ db+8(FP), DX
	MOVQ gs+16(FP), R9
	MOVQ src+24(FP), SI
	MOVQ sb+32(FP), BX
	MOVQ n+40(FP), CX
	SHRQ $4, CX
	JZ   transpose16x16AVX2_done
	LEAQ (BX)(BX*2), R10  // 3*sb
	LEAQ (BX)(BX*4), R11  // 5*sb
	LEAQ (R10)(BX*4), R12 // 7*sb
	LEAQ (DX)(DX*2), R13  // 3*db
	CMPQ nt+48(FP), $0
	JEQ  transpose16x16AVX2_cached
transpose16x16AVX2_nt:
	BLOCK16(VMOVNTPS)
	ADDQ $64, SI
	LEAQ (DI)(R9*2), DI
	DECQ CX
	JNZ  transpose16x16AVX2_nt
	JMP  transpose16x16AVX2_done
transpose16x16AVX2_cached:
	BLOCK16(VMOVUPS)
	ADDQ $64, SI
	LEAQ (DI)(R9*2), DI
	DECQ CX
	JNZ  transpose16x16AVX2_cached
transpose16x16AVX2_done:
	VZEROUPPER
	RET

// QUAD8 transposes 4 elements (bytes lo and hi = lo+16 on) of the 4
// tile rows from t(SP) on (64 bytes apart): a and b hold rows 0 and 1, c
// and d their next two elements, each with rows 2 and 3 in the upper
// lane; o0–o3 receive the 4 elements (32 bytes) of each of the 4
// destination rows.
#define QUAD8(lo, hi, t, xa, a, xb, b, xc, c, xd, d, o0, o1, o2, o3) \
	VMOVUPS     (t+lo)(SP), xa; \
	VINSERTF128 $1, (t+128+lo)(SP), a, a; \
	VMOVUPS     (t+64+lo)(SP), xb; \
	VINSERTF128 $1, (t+192+lo)(SP), b, b; \
	VMOVUPS     (t+hi)(SP), xc; \
	VINSERTF128 $1, (t+128+hi)(SP), c, c; \
	VMOVUPS     (t+64+hi)(SP), xd; \
	VINSERTF128 $1, (t+192+hi)(SP), d, d; \
	VUNPCKLPD   b, a, o0; \
	VUNPCKHPD   b, a, o1; \
	VUNPCKLPD   d, c, o2; \
	VUNPCKHPD   d, c, o3

// ROWS8 writes 4 destination lines of an 8×8 block of 8-byte elements,
// rows base+e*db (DX = db, R13 = 3*db), from elements lo/8 to lo/8+3 of
// the 8 tile rows, with the store instruction st.
#define ROWS8(lo, hi, base, st) \
	QUAD8(lo, hi, 0, X0, Y0, X1, Y1, X2, Y2, X3, Y3, Y4, Y5, Y6, Y7); \
	QUAD8(lo, hi, 256, X8, Y8, X9, Y9, X10, Y10, X11, Y11, Y12, Y13, Y14, Y15); \
	st Y4, (base); \
	st Y12, 32(base); \
	st Y5, (base)(DX*1); \
	st Y13, 32(base)(DX*1); \
	st Y6, (base)(DX*2); \
	st Y14, 32(base)(DX*2); \
	st Y7, (base)(R13*1); \
	st Y15, 32(base)(R13*1)

// BLOCK8 transposes one 8×8 block of 8-byte elements: source lines at
// SI, through the tile (as BLOCK16 does), destination rows at DI. On an
// AMD EPYC (Zen 5), with a third buffer copied between runs as bench
// permute does, a 2048² float64 transpose took 1.72 and 2.29 ms so
// against 2.15 and 3.17 reading the source rows 16 bytes at a time (2
// interleaved rounds; SSE2 kernels 1.78 and 2.80); with the source left
// in the L3 cache between runs, 1.52 against 1.10 ms.
#define BLOCK8(st) \
	TILE8(SI, 0); \
	ROWS8(0, 16, DI, st); \
	LEAQ    (DI)(DX*4), R8; \
	ROWS8(32, 48, R8, st)

// func transpose8x8AVX2(dst unsafe.Pointer, db, gs int, src unsafe.Pointer, sb, n, nt int)
TEXT ·transpose8x8AVX2(SB), $512-56
	MOVQ dst+0(FP), DI
	MOVQ db+8(FP), DX
	MOVQ gs+16(FP), R9
	MOVQ src+24(FP), SI
	MOVQ sb+32(FP), BX
	MOVQ n+40(FP), CX
	SHRQ $3, CX
	JZ   transpose8x8AVX2_done
	LEAQ (BX)(BX*2), R10  // 3*sb
	LEAQ (BX)(BX*4), R11  // 5*sb
	LEAQ (R10)(BX*4), R12 // 7*sb
	LEAQ (DX)(DX*2), R13  // 3*db
	CMPQ nt+48(FP), $0
	JEQ  transpose8x8AVX2_cached
transpose8x8AVX2_nt:
	BLOCK8(VMOVNTPS)
	ADDQ $64, SI
	ADDQ R9, DI
	DECQ CX
	JNZ  transpose8x8AVX2_nt
	JMP  transpose8x8AVX2_done
transpose8x8AVX2_cached:
	BLOCK8(VMOVUPS)
	ADDQ $64, SI
	ADDQ R9, DI
	DECQ CX
	JNZ  transpose8x8AVX2_cached
transpose8x8AVX2_done:
	VZEROUPPER
	RET

// PAIR16 gathers element off/16 of the 4 columns at base+j*sb (BX = sb,
// R10 = 3*sb), the 64 bytes of one destination row: columns 0 and 1 in
// a, 2 and 3 in b.
#define PAIR16(off, base, xa, a, xb, b) \
	VMOVUPS     off(base), xa; \
	VINSERTF128 $1, off(base)(BX*1), a, a; \
	VMOVUPS     off(base)(BX*2), xb; \
	VINSERTF128 $1, off(base)(R10*1), b, b

// ROWS4 gathers elements 0–3 of the 4 columns at SI, the 4 destination
// rows of a 4×4 block of 16-byte elements, into Y0–Y7 (row e in Y2e and
// Y2e+1).
#define ROWS4 \
	PAIR16(0, SI, X0, Y0, X1, Y1); \
	PAIR16(16, SI, X2, Y2, X3, Y3); \
	PAIR16(32, SI, X4, Y4, X5, Y5); \
	PAIR16(48, SI, X6, Y6, X7, Y7)

// STORE4 writes the 4 rows of ROWS4 to base+e*db (DX = db, R13 = 3*db)
// with the store instruction st.
#define STORE4(base, st) \
	st Y0, (base); \
	st Y1, 32(base); \
	st Y2, (base)(DX*1); \
	st Y3, 32(base)(DX*1); \
	st Y4, (base)(DX*2); \
	st Y5, 32(base)(DX*2); \
	st Y6, (base)(R13*1); \
	st Y7, 32(base)(R13*1)

// func transpose4x4AVX2(dst unsafe.Pointer, db int, src unsafe.Pointer, sb, n, nt int)
//
// transpose4x4AVX2 is the 16-byte kernel: 4 source lines, 4 elements
// each, become 4 destination lines; destination rows are db apart, n is
// a multiple of 4. Whole 16-byte elements need no shuffle: each half
// line is two of them, loaded into the two lanes.
TEXT ·transpose4x4AVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ db+8(FP), DX
	MOVQ src+16(FP), SI
	MOVQ sb+24(FP), BX
	MOVQ n+32(FP), CX
	SHRQ $2, CX
	JZ   transpose4x4AVX2_done
	LEAQ (BX)(BX*2), R10 // 3*sb
	LEAQ (DX)(DX*2), R13 // 3*db
	CMPQ nt+40(FP), $0
	JEQ  transpose4x4AVX2_cached
transpose4x4AVX2_nt:
	ROWS4
	STORE4(DI, VMOVNTPS)
	ADDQ $64, SI
	LEAQ (DI)(DX*4), DI
	DECQ CX
	JNZ  transpose4x4AVX2_nt
	JMP  transpose4x4AVX2_done
transpose4x4AVX2_cached:
	ROWS4
	STORE4(DI, VMOVUPS)
	ADDQ $64, SI
	LEAQ (DI)(DX*4), DI
	DECQ CX
	JNZ  transpose4x4AVX2_cached
transpose4x4AVX2_done:
	VZEROUPPER
	RET

// GROUP4 writes one 64-byte line of each of the 8 destination rows at DI
// and R12 = DI+4*db from 4 columns at SI (elements 0–3 from each
// column's first line, 4–7 from its second), with the store instruction
// st.
#define GROUP4(st) \
	ROWS4; \
	STORE4(DI, st); \
	PAIR16(64, SI, X0, Y0, X1, Y1); \
	PAIR16(80, SI, X2, Y2, X3, Y3); \
	PAIR16(96, SI, X4, Y4, X5, Y5); \
	PAIR16(112, SI, X6, Y6, X7, Y7); \
	STORE4(R12, st)

// PREFETCH4 prefetches the two lines of each of the 4 columns at R11.
#define PREFETCH4 \
	PREFETCHT0 (R11); \
	PREFETCHT0 64(R11); \
	PREFETCHT0 (R11)(BX*1); \
	PREFETCHT0 64(R11)(BX*1); \
	PREFETCHT0 (R11)(BX*2); \
	PREFETCHT0 64(R11)(BX*2); \
	PREFETCHT0 (R11)(R10*1); \
	PREFETCHT0 64(R11)(R10*1)

// func transposeGroup4x4AVX2(dst unsafe.Pointer, db int, src unsafe.Pointer, sb, n, pf, nt int)
//
// transposeGroup4x4AVX2 is transposeGroup4x4AVX512 on AVX2: one group of
// 8 destination rows (db apart) across n columns (a multiple of 4) of 8
// elements each, sb apart, 4 columns at a time, each destination row
// written as one sequential run of lines; it prefetches the two lines pf
// bytes on in each column read.
TEXT ·transposeGroup4x4AVX2(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ db+8(FP), DX
	MOVQ src+16(FP), SI
	MOVQ sb+24(FP), BX
	MOVQ n+32(FP), CX
	SHRQ $2, CX
	JZ   transposeGroup4x4AVX2_done
	MOVQ SI, R11
	ADDQ pf+40(FP), R11  // the lines to prefetch
	LEAQ (BX)(BX*2), R10 // 3*sb
	LEAQ (DX)(DX*2), R13 // 3*db
	LEAQ (DI)(DX*4), R12 // rows 4–7
	CMPQ nt+48(FP), $0
	JEQ  transposeGroup4x4AVX2_cached
transposeGroup4x4AVX2_nt:
	PREFETCH4
	GROUP4(VMOVNTPS)
	LEAQ (SI)(BX*4), SI
	LEAQ (R11)(BX*4), R11
	ADDQ $64, DI
	ADDQ $64, R12
	DECQ CX
	JNZ  transposeGroup4x4AVX2_nt
	JMP  transposeGroup4x4AVX2_done
transposeGroup4x4AVX2_cached:
	PREFETCH4
	GROUP4(VMOVUPS)
	LEAQ (SI)(BX*4), SI
	LEAQ (R11)(BX*4), R11
	ADDQ $64, DI
	ADDQ $64, R12
	DECQ CX
	JNZ  transposeGroup4x4AVX2_cached
transposeGroup4x4AVX2_done:
	VZEROUPPER
	RET

// func transposeRuns32AVX2(dst unsafe.Pointer, db int, src unsafe.Pointer, sb, n, nt int)
//
// transposeRuns32AVX2 is transposeRuns32AVX512 on AVX2: the source lines
// at src and src+sb hold runs i, i+1 of two columns; destination row i
// (db apart, n rows, n even) receives in its line run i of both columns.
// A run is one register, so the transpose is only in the addresses. It
// prefetches the lines 8·sb further on, as transposeRuns32AVX512 does.
TEXT ·transposeRuns32AVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ db+8(FP), DX
	MOVQ src+16(FP), SI
	MOVQ sb+24(FP), BX
	MOVQ n+32(FP), CX
	SHRQ $1, CX
	JZ   transposeRuns32AVX2_done
	LEAQ (SI)(BX*8), R9 // the lines 4 calls on
	CMPQ nt+40(FP), $0
	JEQ  transposeRuns32AVX2_cached
transposeRuns32AVX2_nt:
	PREFETCHT0 (R9)
	PREFETCHT0 (R9)(BX*1)
	ADDQ       $64, R9
	VMOVUPS    (SI), Y0
	VMOVUPS    32(SI), Y1
	VMOVUPS    (SI)(BX*1), Y2
	VMOVUPS    32(SI)(BX*1), Y3
	VMOVNTPS   Y0, (DI)
	VMOVNTPS   Y2, 32(DI)
	VMOVNTPS   Y1, (DI)(DX*1)
	VMOVNTPS   Y3, 32(DI)(DX*1)
	ADDQ       $64, SI
	LEAQ       (DI)(DX*2), DI
	DECQ       CX
	JNZ        transposeRuns32AVX2_nt
	JMP        transposeRuns32AVX2_done
transposeRuns32AVX2_cached:
	PREFETCHT0 (R9)
	PREFETCHT0 (R9)(BX*1)
	ADDQ       $64, R9
	VMOVUPS    (SI), Y0
	VMOVUPS    32(SI), Y1
	VMOVUPS    (SI)(BX*1), Y2
	VMOVUPS    32(SI)(BX*1), Y3
	VMOVUPS    Y0, (DI)
	VMOVUPS    Y2, 32(DI)
	VMOVUPS    Y1, (DI)(DX*1)
	VMOVUPS    Y3, 32(DI)(DX*1)
	ADDQ       $64, SI
	LEAQ       (DI)(DX*2), DI
	DECQ       CX
	JNZ        transposeRuns32AVX2_cached
transposeRuns32AVX2_done:
	VZEROUPPER
	RET
