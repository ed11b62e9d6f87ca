//go:build amd64 && !purego && !goferro_noasm

#include "textflag.h"

// func copyPanels(dst, src unsafe.Pointer, rows, chunks, rs, pb int)
// For each of rows source rows (rs bytes apart), copies chunks 64-byte
// pieces: piece c of row q goes to dst + c·pb + q·64. This packs a
// row-major block into B micro-panels of 64 bytes per k step; it walks
// panel by panel so that each destination is written front to back.
TEXT ·copyPanels(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ rows+16(FP), CX
	MOVQ chunks+24(FP), R8
	MOVQ rs+32(FP), R9
	MOVQ pb+40(FP), R10
	TESTQ CX, CX
	JZ done
	TESTQ R8, R8
	JZ done
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
done:
	VZEROUPPER
	RET
