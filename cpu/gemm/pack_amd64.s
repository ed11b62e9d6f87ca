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

// func packA12x64(dst, src unsafe.Pointer, rs, k4 int)
// Packs 4·k4 depth steps of twelve float64 rows of A (rs bytes apart from
// src) into a 12-row micro-panel at dst (twelve values a step), four steps
// at a time: each group of four rows is a 4×4 transpose in registers.
TEXT ·packA12x64(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ rs+16(FP), R8
	MOVQ k4+24(FP), CX
	TESTQ CX, CX
	JZ done
	LEAQ (R8)(R8*2), R9
	LEAQ (SI)(R8*4), R10
	LEAQ (R10)(R8*4), R11
loop:
	VMOVUPD (SI), Y0
	VMOVUPD (SI)(R8*1), Y1
	VMOVUPD (SI)(R8*2), Y2
	VMOVUPD (SI)(R9*1), Y3
	VUNPCKLPD Y1, Y0, Y4
	VUNPCKHPD Y1, Y0, Y5
	VUNPCKLPD Y3, Y2, Y6
	VUNPCKHPD Y3, Y2, Y7
	VPERM2F128 $0x20, Y6, Y4, Y0
	VPERM2F128 $0x20, Y7, Y5, Y1
	VPERM2F128 $0x31, Y6, Y4, Y2
	VPERM2F128 $0x31, Y7, Y5, Y3
	VMOVUPD Y0, 0(DI)
	VMOVUPD Y1, 96(DI)
	VMOVUPD Y2, 192(DI)
	VMOVUPD Y3, 288(DI)
	VMOVUPD (R10), Y0
	VMOVUPD (R10)(R8*1), Y1
	VMOVUPD (R10)(R8*2), Y2
	VMOVUPD (R10)(R9*1), Y3
	VUNPCKLPD Y1, Y0, Y4
	VUNPCKHPD Y1, Y0, Y5
	VUNPCKLPD Y3, Y2, Y6
	VUNPCKHPD Y3, Y2, Y7
	VPERM2F128 $0x20, Y6, Y4, Y0
	VPERM2F128 $0x20, Y7, Y5, Y1
	VPERM2F128 $0x31, Y6, Y4, Y2
	VPERM2F128 $0x31, Y7, Y5, Y3
	VMOVUPD Y0, 32(DI)
	VMOVUPD Y1, 128(DI)
	VMOVUPD Y2, 224(DI)
	VMOVUPD Y3, 320(DI)
	VMOVUPD (R11), Y0
	VMOVUPD (R11)(R8*1), Y1
	VMOVUPD (R11)(R8*2), Y2
	VMOVUPD (R11)(R9*1), Y3
	VUNPCKLPD Y1, Y0, Y4
	VUNPCKHPD Y1, Y0, Y5
	VUNPCKLPD Y3, Y2, Y6
	VUNPCKHPD Y3, Y2, Y7
	VPERM2F128 $0x20, Y6, Y4, Y0
	VPERM2F128 $0x20, Y7, Y5, Y1
	VPERM2F128 $0x31, Y6, Y4, Y2
	VPERM2F128 $0x31, Y7, Y5, Y3
	VMOVUPD Y0, 64(DI)
	VMOVUPD Y1, 160(DI)
	VMOVUPD Y2, 256(DI)
	VMOVUPD Y3, 352(DI)
	ADDQ $32, SI
	ADDQ $32, R10
	ADDQ $32, R11
	ADDQ $384, DI
	DECQ CX
	JNZ loop
done:
	VZEROUPPER
	RET

// func packA12x32(dst, src unsafe.Pointer, rs, k4 int)
// packA12x64 for float32.
TEXT ·packA12x32(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ rs+16(FP), R8
	MOVQ k4+24(FP), CX
	TESTQ CX, CX
	JZ done32
	LEAQ (R8)(R8*2), R9
	LEAQ (SI)(R8*4), R10
	LEAQ (R10)(R8*4), R11
loop32:
	VMOVUPS (SI), X0
	VMOVUPS (SI)(R8*1), X1
	VMOVUPS (SI)(R8*2), X2
	VMOVUPS (SI)(R9*1), X3
	VUNPCKLPS X1, X0, X4
	VUNPCKHPS X1, X0, X5
	VUNPCKLPS X3, X2, X6
	VUNPCKHPS X3, X2, X7
	VUNPCKLPD X6, X4, X0
	VUNPCKHPD X6, X4, X1
	VUNPCKLPD X7, X5, X2
	VUNPCKHPD X7, X5, X3
	VMOVUPS X0, 0(DI)
	VMOVUPS X1, 48(DI)
	VMOVUPS X2, 96(DI)
	VMOVUPS X3, 144(DI)
	VMOVUPS (R10), X0
	VMOVUPS (R10)(R8*1), X1
	VMOVUPS (R10)(R8*2), X2
	VMOVUPS (R10)(R9*1), X3
	VUNPCKLPS X1, X0, X4
	VUNPCKHPS X1, X0, X5
	VUNPCKLPS X3, X2, X6
	VUNPCKHPS X3, X2, X7
	VUNPCKLPD X6, X4, X0
	VUNPCKHPD X6, X4, X1
	VUNPCKLPD X7, X5, X2
	VUNPCKHPD X7, X5, X3
	VMOVUPS X0, 16(DI)
	VMOVUPS X1, 64(DI)
	VMOVUPS X2, 112(DI)
	VMOVUPS X3, 160(DI)
	VMOVUPS (R11), X0
	VMOVUPS (R11)(R8*1), X1
	VMOVUPS (R11)(R8*2), X2
	VMOVUPS (R11)(R9*1), X3
	VUNPCKLPS X1, X0, X4
	VUNPCKHPS X1, X0, X5
	VUNPCKLPS X3, X2, X6
	VUNPCKHPS X3, X2, X7
	VUNPCKLPD X6, X4, X0
	VUNPCKHPD X6, X4, X1
	VUNPCKLPD X7, X5, X2
	VUNPCKHPD X7, X5, X3
	VMOVUPS X0, 32(DI)
	VMOVUPS X1, 80(DI)
	VMOVUPS X2, 128(DI)
	VMOVUPS X3, 176(DI)
	ADDQ $16, SI
	ADDQ $16, R10
	ADDQ $16, R11
	ADDQ $192, DI
	DECQ CX
	JNZ loop32
done32:
	VZEROUPPER
	RET
