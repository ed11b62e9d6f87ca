//go:build amd64 && !purego && !goferro_noasm

#include "textflag.h"

// func copyPanels(dst, src unsafe.Pointer, rows, chunks, rs, pb, w int)
// For each of rows source rows (rs bytes apart), copies chunks pieces of w
// bytes (64 or 128): piece c of row q goes to dst + c·pb + q·w. This packs
// a row-major block into B micro-panels of w bytes per k step; it walks
// panel by panel so that each destination is written front to back.
TEXT ·copyPanels(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ rows+16(FP), CX
	MOVQ chunks+24(FP), R8
	MOVQ rs+32(FP), R9
	MOVQ pb+40(FP), R10
	MOVQ w+48(FP), R14
	TESTQ CX, CX
	JZ done
	TESTQ R8, R8
	JZ done
	CMPQ R14, $128
	JEQ chunk2
chunk:
	MOVQ SI, R11
	MOVQ DI, R12
	MOVQ CX, R13
row:
	VMOVUPS (R11), Y0
	VMOVUPS 32(R11), Y1
	VMOVUPS Y0, (R12)
	VMOVUPS Y1, 32(R12)
	ADDQ R9, R11
	ADDQ $64, R12
	DECQ R13
	JNZ row
	ADDQ $64, SI
	ADDQ R10, DI
	DECQ R8
	JNZ chunk
	JMP done
chunk2:
	MOVQ SI, R11
	MOVQ DI, R12
	MOVQ CX, R13
row2:
	VMOVUPS (R11), Y0
	VMOVUPS 32(R11), Y1
	VMOVUPS 64(R11), Y2
	VMOVUPS 96(R11), Y3
	VMOVUPS Y0, (R12)
	VMOVUPS Y1, 32(R12)
	VMOVUPS Y2, 64(R12)
	VMOVUPS Y3, 96(R12)
	ADDQ R9, R11
	ADDQ $128, R12
	DECQ R13
	JNZ row2
	ADDQ $128, SI
	ADDQ R10, DI
	DECQ R8
	JNZ chunk2
done:
	VZEROUPPER
	RET

DATA negEven<>+0(SB)/8, $0x8000000000000000
DATA negEven<>+8(SB)/8, $0
DATA negEven<>+16(SB)/8, $0x8000000000000000
DATA negEven<>+24(SB)/8, $0
GLOBL negEven<>(SB), RODATA|NOPTR, $32

// func cplxPanels(dst, src unsafe.Pointer, rows, chunks, rs, pb, w int)
// The 1m packing of row-major complex128 B: for each of rows source rows
// (rs bytes apart) and each piece c of w bytes (64 or 128: w/16 complex
// values x+iy), writes (x, y, …) to dst + c·pb + q·2w and (−y, x, …) w
// bytes after.
TEXT ·cplxPanels(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ rows+16(FP), CX
	MOVQ chunks+24(FP), R8
	MOVQ rs+32(FP), R9
	MOVQ pb+40(FP), R10
	MOVQ w+48(FP), R14
	TESTQ CX, CX
	JZ cdone
	TESTQ R8, R8
	JZ cdone
	VMOVUPD negEven<>(SB), Y7
cchunk:
	MOVQ SI, R11
	MOVQ DI, R12
	MOVQ CX, R13
crow:
	XORQ AX, AX
cpiece:
	VMOVUPD (R11)(AX*1), Y0
	VMOVUPD 32(R11)(AX*1), Y1
	VPERMILPD $5, Y0, Y2
	VPERMILPD $5, Y1, Y3
	VXORPD Y7, Y2, Y2
	VXORPD Y7, Y3, Y3
	VMOVUPD Y0, (R12)(AX*1)
	VMOVUPD Y1, 32(R12)(AX*1)
	LEAQ (R12)(R14*1), BX
	VMOVUPD Y2, (BX)(AX*1)
	VMOVUPD Y3, 32(BX)(AX*1)
	ADDQ $64, AX
	CMPQ AX, R14
	JLT cpiece
	ADDQ R9, R11
	LEAQ (R12)(R14*2), R12
	DECQ R13
	JNZ crow
	ADDQ R14, SI
	ADDQ R10, DI
	DECQ R8
	JNZ cchunk
cdone:
	VZEROUPPER
	RET

DATA negEven32<>+0(SB)/4, $0x80000000
DATA negEven32<>+4(SB)/4, $0
DATA negEven32<>+8(SB)/4, $0x80000000
DATA negEven32<>+12(SB)/4, $0
DATA negEven32<>+16(SB)/4, $0x80000000
DATA negEven32<>+20(SB)/4, $0
DATA negEven32<>+24(SB)/4, $0x80000000
DATA negEven32<>+28(SB)/4, $0
GLOBL negEven32<>(SB), RODATA|NOPTR, $32

// func cplxPanels32(dst, src unsafe.Pointer, rows, chunks, rs, pb, w int)
// cplxPanels for complex64: a piece of w bytes holds w/8 complex values.
TEXT ·cplxPanels32(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ rows+16(FP), CX
	MOVQ chunks+24(FP), R8
	MOVQ rs+32(FP), R9
	MOVQ pb+40(FP), R10
	MOVQ w+48(FP), R14
	TESTQ CX, CX
	JZ sdone
	TESTQ R8, R8
	JZ sdone
	VMOVUPS negEven32<>(SB), Y7
schunk:
	MOVQ SI, R11
	MOVQ DI, R12
	MOVQ CX, R13
srow:
	XORQ AX, AX
spiece:
	VMOVUPS (R11)(AX*1), Y0
	VMOVUPS 32(R11)(AX*1), Y1
	VPERMILPS $0xB1, Y0, Y2
	VPERMILPS $0xB1, Y1, Y3
	VXORPS Y7, Y2, Y2
	VXORPS Y7, Y3, Y3
	VMOVUPS Y0, (R12)(AX*1)
	VMOVUPS Y1, 32(R12)(AX*1)
	LEAQ (R12)(R14*1), BX
	VMOVUPS Y2, (BX)(AX*1)
	VMOVUPS Y3, 32(BX)(AX*1)
	ADDQ $64, AX
	CMPQ AX, R14
	JLT spiece
	ADDQ R9, R11
	LEAQ (R12)(R14*2), R12
	DECQ R13
	JNZ srow
	ADDQ R14, SI
	ADDQ R10, DI
	DECQ R8
	JNZ schunk
sdone:
	VZEROUPPER
	RET

// func packCols(dst, src unsafe.Pointer, cols, panels, cs, pb, w int)
// For each of cols source columns (cs bytes apart), copies its first
// panels pieces of w bytes (96, 48 or 24: twelve float64 values, twelve
// float32 or six float64, six float32):
// piece c of column q goes to dst + c·pb + q·w. This packs a column-major
// block of A into micro-panels, reading down each column in turn.
TEXT ·packCols(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ cols+16(FP), CX
	MOVQ panels+24(FP), R8
	MOVQ cs+32(FP), R9
	MOVQ pb+40(FP), R10
	MOVQ w+48(FP), R13
	TESTQ CX, CX
	JZ colsdone
	TESTQ R8, R8
	JZ colsdone
	CMPQ R13, $48
	JEQ col48
	CMPQ R13, $24
	JEQ col24

col96:
	MOVQ SI, R11
	MOVQ DI, R12
	MOVQ R8, DX
piece96:
	VMOVUPS (R11), Y0
	VMOVUPS 32(R11), Y1
	VMOVUPS 64(R11), Y2
	VMOVUPS Y0, (R12)
	VMOVUPS Y1, 32(R12)
	VMOVUPS Y2, 64(R12)
	ADDQ $96, R11
	ADDQ R10, R12
	DECQ DX
	JNZ piece96
	ADDQ R9, SI
	ADDQ $96, DI
	DECQ CX
	JNZ col96
	JMP colsdone

col48:
	MOVQ SI, R11
	MOVQ DI, R12
	MOVQ R8, DX
piece48:
	VMOVUPS (R11), Y0
	VMOVUPS 32(R11), X1
	VMOVUPS Y0, (R12)
	VMOVUPS X1, 32(R12)
	ADDQ $48, R11
	ADDQ R10, R12
	DECQ DX
	JNZ piece48
	ADDQ R9, SI
	ADDQ $48, DI
	DECQ CX
	JNZ col48
	JMP colsdone

col24:
	MOVQ SI, R11
	MOVQ DI, R12
	MOVQ R8, DX
piece24:
	VMOVUPS (R11), X0
	MOVQ 16(R11), AX
	VMOVUPS X0, (R12)
	MOVQ AX, 16(R12)
	ADDQ $24, R11
	ADDQ R10, R12
	DECQ DX
	JNZ piece24
	ADDQ R9, SI
	ADDQ $24, DI
	DECQ CX
	JNZ col24

colsdone:
	VZEROUPPER
	RET

// func cplxCols(dst, src unsafe.Pointer, cs, pairs, cols int)
// Packs cols (4 or 8) complex128 columns of a column-major B (cs bytes
// apart, each contiguous along the depth) into a 1m micro-panel of 2·cols
// real values a row: depth q gives the row (x₀ y₀ x₁ y₁ …) and the row
// (−y₀ x₀ −y₁ x₁ …), for pairs·2 depth steps, two at a time (a 128-bit
// lane of each column's 256-bit load per step).
TEXT ·cplxCols(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ cs+16(FP), R8
	MOVQ pairs+24(FP), CX
	MOVQ cols+32(FP), DX
	TESTQ CX, CX
	JZ cplxcolsdone
	LEAQ (R8)(R8*2), R9
	LEAQ (SI)(R8*4), R10
	MOVQ $0x8000000000000000, AX
	VMOVQ AX, X15
	VINSERTF128 $1, X15, Y15, Y15 // −0, +0, −0, +0: the signs to flip
	CMPQ DX, $8
	JNE cplxcols4

cplxcols8:
	VMOVUPD (SI), Y0
	VMOVUPD (SI)(R8*1), Y1
	VMOVUPD (SI)(R8*2), Y2
	VMOVUPD (SI)(R9*1), Y3
	VMOVUPD (R10), Y4
	VMOVUPD (R10)(R8*1), Y5
	VMOVUPD (R10)(R8*2), Y6
	VMOVUPD (R10)(R9*1), Y7
	VPERM2F128 $0x20, Y1, Y0, Y8
	VPERM2F128 $0x20, Y3, Y2, Y9
	VPERM2F128 $0x20, Y5, Y4, Y10
	VPERM2F128 $0x20, Y7, Y6, Y11
	VMOVUPD Y8, (DI)
	VMOVUPD Y9, 32(DI)
	VMOVUPD Y10, 64(DI)
	VMOVUPD Y11, 96(DI)
	VPERMILPD $5, Y8, Y8
	VPERMILPD $5, Y9, Y9
	VPERMILPD $5, Y10, Y10
	VPERMILPD $5, Y11, Y11
	VXORPD Y15, Y8, Y8
	VXORPD Y15, Y9, Y9
	VXORPD Y15, Y10, Y10
	VXORPD Y15, Y11, Y11
	VMOVUPD Y8, 128(DI)
	VMOVUPD Y9, 160(DI)
	VMOVUPD Y10, 192(DI)
	VMOVUPD Y11, 224(DI)
	VPERM2F128 $0x31, Y1, Y0, Y8
	VPERM2F128 $0x31, Y3, Y2, Y9
	VPERM2F128 $0x31, Y5, Y4, Y10
	VPERM2F128 $0x31, Y7, Y6, Y11
	VMOVUPD Y8, 256(DI)
	VMOVUPD Y9, 288(DI)
	VMOVUPD Y10, 320(DI)
	VMOVUPD Y11, 352(DI)
	VPERMILPD $5, Y8, Y8
	VPERMILPD $5, Y9, Y9
	VPERMILPD $5, Y10, Y10
	VPERMILPD $5, Y11, Y11
	VXORPD Y15, Y8, Y8
	VXORPD Y15, Y9, Y9
	VXORPD Y15, Y10, Y10
	VXORPD Y15, Y11, Y11
	VMOVUPD Y8, 384(DI)
	VMOVUPD Y9, 416(DI)
	VMOVUPD Y10, 448(DI)
	VMOVUPD Y11, 480(DI)
	ADDQ $32, SI
	ADDQ $32, R10
	ADDQ $512, DI
	DECQ CX
	JNZ cplxcols8
	JMP cplxcolsdone

cplxcols4:
	VMOVUPD (SI), Y0
	VMOVUPD (SI)(R8*1), Y1
	VMOVUPD (SI)(R8*2), Y2
	VMOVUPD (SI)(R9*1), Y3
	VPERM2F128 $0x20, Y1, Y0, Y8
	VPERM2F128 $0x20, Y3, Y2, Y9
	VMOVUPD Y8, (DI)
	VMOVUPD Y9, 32(DI)
	VPERMILPD $5, Y8, Y8
	VPERMILPD $5, Y9, Y9
	VXORPD Y15, Y8, Y8
	VXORPD Y15, Y9, Y9
	VMOVUPD Y8, 64(DI)
	VMOVUPD Y9, 96(DI)
	VPERM2F128 $0x31, Y1, Y0, Y8
	VPERM2F128 $0x31, Y3, Y2, Y9
	VMOVUPD Y8, 128(DI)
	VMOVUPD Y9, 160(DI)
	VPERMILPD $5, Y8, Y8
	VPERMILPD $5, Y9, Y9
	VXORPD Y15, Y8, Y8
	VXORPD Y15, Y9, Y9
	VMOVUPD Y8, 192(DI)
	VMOVUPD Y9, 224(DI)
	ADDQ $32, SI
	ADDQ $256, DI
	DECQ CX
	JNZ cplxcols4

cplxcolsdone:
	VZEROUPPER
	RET
