//go:build amd64 && !purego && !goferro_noasm

#include "textflag.h"

// The kernels copy a panel one destination cache line wide:
// dst row i (i < n; n a multiple of 8 for 8-byte elements, of 4
// otherwise) receives, in its 64 bytes at dst+i*db, element i of each of
// the 64/size source rows at src+j*sb (j < 64/size). Strides db and sb
// are in bytes. Stores are non-temporal (MOVNTO), so dst must be 16-byte
// aligned; the caller fences once at the end of the copy (ntFence).

// func transposeNT4(dst unsafe.Pointer, db int, src unsafe.Pointer, sb, n int)
TEXT ·transposeNT4(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ db+8(FP), DX
	MOVQ src+16(FP), SI
	MOVQ sb+24(FP), BX
	MOVQ n+32(FP), CX
	SHRQ $2, CX
	JZ   done4
	LEAQ (BX)(BX*2), R8   // 3*sb
	LEAQ (DX)(DX*2), R9   // 3*db
	MOVQ BX, R10
	SHLQ $2, R10          // 4*sb
	MOVQ DX, R11
	SHLQ $2, R11          // 4*db

loop4:
	MOVQ SI, AX
	MOVQ $0, R12
block4:
	// Source rows j..j+3, elements i..i+3 of each.
	MOVUPS (AX), X0
	MOVUPS (AX)(BX*1), X1
	MOVUPS (AX)(BX*2), X2
	MOVUPS (AX)(R8*1), X3
	MOVAPS X0, X4
	UNPCKLPS X1, X4
	UNPCKHPS X1, X0
	MOVAPS X2, X5
	UNPCKLPS X3, X5
	UNPCKHPS X3, X2
	MOVAPS X4, X1
	UNPCKLPD X5, X1
	UNPCKHPD X5, X4
	MOVAPS X0, X3
	UNPCKLPD X2, X3
	UNPCKHPD X2, X0
	LEAQ (DI)(R12*1), R13
	MOVNTO X1, (R13)
	MOVNTO X4, (R13)(DX*1)
	MOVNTO X3, (R13)(DX*2)
	MOVNTO X0, (R13)(R9*1)
	ADDQ R10, AX
	ADDQ $16, R12
	CMPQ R12, $64
	JB   block4
	ADDQ $16, SI
	ADDQ R11, DI
	DECQ CX
	JNZ  loop4
done4:
	RET

// func transpose8(dst unsafe.Pointer, db int, src unsafe.Pointer, sb, n, nt int)
//
// n is a multiple of 8 here. Each 8×8 tile goes through a 512-byte stack
// buffer: the 8 source lines are read whole, two at a time, and
// transposed into it; then its 8 rows are stored as whole destination
// lines: non-temporal stores when nt is not 0 (dst 16-byte aligned),
// ordinary ones (any alignment) when it is.
TEXT ·transpose8(SB), $512-48
	MOVQ dst+0(FP), DI
	MOVQ db+8(FP), DX
	MOVQ src+16(FP), SI
	MOVQ sb+24(FP), BX
	MOVQ n+32(FP), CX
	MOVQ nt+40(FP), R8
	SHRQ $3, CX
	JZ   done8
	MOVQ DX, R10
	SHLQ $3, R10          // 8*db
	LEAQ buf-512(SP), R13

tile8:
	MOVQ SI, AX
	// Source rows 0 and 1, whole lines.
	MOVUPS (AX), X0
	MOVUPS 16(AX), X1
	MOVUPS 32(AX), X2
	MOVUPS 48(AX), X3
	MOVUPS (AX)(BX*1), X4
	MOVUPS 16(AX)(BX*1), X5
	MOVUPS 32(AX)(BX*1), X6
	MOVUPS 48(AX)(BX*1), X7
	MOVAPS X0, X8
	UNPCKLPD X4, X8
	UNPCKHPD X4, X0
	MOVUPS X8, 0(R13)
	MOVUPS X0, 64(R13)
	MOVAPS X1, X9
	UNPCKLPD X5, X9
	UNPCKHPD X5, X1
	MOVUPS X9, 128(R13)
	MOVUPS X1, 192(R13)
	MOVAPS X2, X10
	UNPCKLPD X6, X10
	UNPCKHPD X6, X2
	MOVUPS X10, 256(R13)
	MOVUPS X2, 320(R13)
	MOVAPS X3, X11
	UNPCKLPD X7, X11
	UNPCKHPD X7, X3
	MOVUPS X11, 384(R13)
	MOVUPS X3, 448(R13)
	LEAQ (AX)(BX*2), AX
	// Source rows 2 and 3, whole lines.
	MOVUPS (AX), X0
	MOVUPS 16(AX), X1
	MOVUPS 32(AX), X2
	MOVUPS 48(AX), X3
	MOVUPS (AX)(BX*1), X4
	MOVUPS 16(AX)(BX*1), X5
	MOVUPS 32(AX)(BX*1), X6
	MOVUPS 48(AX)(BX*1), X7
	MOVAPS X0, X8
	UNPCKLPD X4, X8
	UNPCKHPD X4, X0
	MOVUPS X8, 16(R13)
	MOVUPS X0, 80(R13)
	MOVAPS X1, X9
	UNPCKLPD X5, X9
	UNPCKHPD X5, X1
	MOVUPS X9, 144(R13)
	MOVUPS X1, 208(R13)
	MOVAPS X2, X10
	UNPCKLPD X6, X10
	UNPCKHPD X6, X2
	MOVUPS X10, 272(R13)
	MOVUPS X2, 336(R13)
	MOVAPS X3, X11
	UNPCKLPD X7, X11
	UNPCKHPD X7, X3
	MOVUPS X11, 400(R13)
	MOVUPS X3, 464(R13)
	LEAQ (AX)(BX*2), AX
	// Source rows 4 and 5, whole lines.
	MOVUPS (AX), X0
	MOVUPS 16(AX), X1
	MOVUPS 32(AX), X2
	MOVUPS 48(AX), X3
	MOVUPS (AX)(BX*1), X4
	MOVUPS 16(AX)(BX*1), X5
	MOVUPS 32(AX)(BX*1), X6
	MOVUPS 48(AX)(BX*1), X7
	MOVAPS X0, X8
	UNPCKLPD X4, X8
	UNPCKHPD X4, X0
	MOVUPS X8, 32(R13)
	MOVUPS X0, 96(R13)
	MOVAPS X1, X9
	UNPCKLPD X5, X9
	UNPCKHPD X5, X1
	MOVUPS X9, 160(R13)
	MOVUPS X1, 224(R13)
	MOVAPS X2, X10
	UNPCKLPD X6, X10
	UNPCKHPD X6, X2
	MOVUPS X10, 288(R13)
	MOVUPS X2, 352(R13)
	MOVAPS X3, X11
	UNPCKLPD X7, X11
	UNPCKHPD X7, X3
	MOVUPS X11, 416(R13)
	MOVUPS X3, 480(R13)
	LEAQ (AX)(BX*2), AX
	// Source rows 6 and 7, whole lines.
	MOVUPS (AX), X0
	MOVUPS 16(AX), X1
	MOVUPS 32(AX), X2
	MOVUPS 48(AX), X3
	MOVUPS (AX)(BX*1), X4
	MOVUPS 16(AX)(BX*1), X5
	MOVUPS 32(AX)(BX*1), X6
	MOVUPS 48(AX)(BX*1), X7
	MOVAPS X0, X8
	UNPCKLPD X4, X8
	UNPCKHPD X4, X0
	MOVUPS X8, 48(R13)
	MOVUPS X0, 112(R13)
	MOVAPS X1, X9
	UNPCKLPD X5, X9
	UNPCKHPD X5, X1
	MOVUPS X9, 176(R13)
	MOVUPS X1, 240(R13)
	MOVAPS X2, X10
	UNPCKLPD X6, X10
	UNPCKHPD X6, X2
	MOVUPS X10, 304(R13)
	MOVUPS X2, 368(R13)
	MOVAPS X3, X11
	UNPCKLPD X7, X11
	UNPCKHPD X7, X3
	MOVUPS X11, 432(R13)
	MOVUPS X3, 496(R13)
	LEAQ (AX)(BX*2), AX

	// The buffer's rows to the destination, whole lines.
	MOVQ R13, AX
	MOVQ DI, R11
	MOVQ $8, R12
rows8:
	MOVUPS (AX), X0
	MOVUPS 16(AX), X1
	MOVUPS 32(AX), X2
	MOVUPS 48(AX), X3
	TESTQ R8, R8
	JZ   cached8
	MOVNTO X0, (R11)
	MOVNTO X1, 16(R11)
	MOVNTO X2, 32(R11)
	MOVNTO X3, 48(R11)
	JMP  stored8
cached8:
	MOVUPS X0, (R11)
	MOVUPS X1, 16(R11)
	MOVUPS X2, 32(R11)
	MOVUPS X3, 48(R11)
stored8:
	ADDQ $64, AX
	ADDQ DX, R11
	DECQ R12
	JNZ  rows8

	ADDQ $64, SI
	ADDQ R10, DI
	DECQ CX
	JNZ  tile8
done8:
	RET

// func transposeNT16(dst unsafe.Pointer, db int, src unsafe.Pointer, sb, n int)
TEXT ·transposeNT16(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ db+8(FP), DX
	MOVQ src+16(FP), SI
	MOVQ sb+24(FP), BX
	MOVQ n+32(FP), CX
	TESTQ CX, CX
	JZ   done16
	LEAQ (BX)(BX*2), R8   // 3*sb

loop16:
	MOVUPS (SI), X0
	MOVUPS (SI)(BX*1), X1
	MOVUPS (SI)(BX*2), X2
	MOVUPS (SI)(R8*1), X3
	MOVNTO X0, (DI)
	MOVNTO X1, 16(DI)
	MOVNTO X2, 32(DI)
	MOVNTO X3, 48(DI)
	ADDQ $16, SI
	ADDQ DX, DI
	DECQ CX
	JNZ  loop16
done16:
	RET

// func ntFence()
TEXT ·ntFence(SB), NOSPLIT, $0-0
	SFENCE
	RET

// func copyRowsNT(dst unsafe.Pointer, db int, src unsafe.Pointer, sb, rows, n int)
//
// copyRowsNT copies rows rows of n bytes each, n a multiple of 16, from
// src+k*sb to dst+k*db with non-temporal stores; dst and db must keep
// every destination row 16-byte aligned.
TEXT ·copyRowsNT(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), R8
	MOVQ db+8(FP), R9
	MOVQ src+16(FP), R10
	MOVQ sb+24(FP), R11
	MOVQ rows+32(FP), DX
	TESTQ DX, DX
	JZ   doneRows
row:
	MOVQ R8, DI
	MOVQ R10, SI
	MOVQ n+40(FP), CX
	CMPQ CX, $64
	JB   rowTail
rowLines:
	MOVUPS (SI), X0
	MOVUPS 16(SI), X1
	MOVUPS 32(SI), X2
	MOVUPS 48(SI), X3
	MOVNTO X0, (DI)
	MOVNTO X1, 16(DI)
	MOVNTO X2, 32(DI)
	MOVNTO X3, 48(DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $64, CX
	CMPQ CX, $64
	JAE  rowLines
rowTail:
	TESTQ CX, CX
	JZ   rowDone
	MOVUPS (SI), X0
	MOVNTO X0, (DI)
	ADDQ $16, SI
	ADDQ $16, DI
	SUBQ $16, CX
	JMP  rowTail
rowDone:
	ADDQ R9, R8
	ADDQ R11, R10
	DECQ DX
	JNZ  row
doneRows:
	RET
