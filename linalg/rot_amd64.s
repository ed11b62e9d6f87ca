//go:build amd64 && !purego && !goferro_noasm

#include "textflag.h"

// func rotPanels(z *float64, panels, stride, n int, c, s *float64)
//
// For each panel of four rows (stride float64s apart, starting at z), with
// x the panel's first column: for k < n, y = column k+1;
// column k = c[k]·x + s[k]·y; x = c[k]·y − s[k]·x; finally column n = x.
// Two panels go through the loop together so that their dependency chains
// through x overlap.
TEXT ·rotPanels(SB), NOSPLIT, $0-48
	MOVQ z+0(FP), DI
	MOVQ panels+8(FP), R8
	MOVQ stride+16(FP), R9
	SHLQ $3, R9
	MOVQ n+24(FP), R10
	MOVQ c+32(FP), R11
	MOVQ s+40(FP), R12

pairs:
	CMPQ R8, $2
	JLT  single
	MOVQ DI, BX
	LEAQ (DI)(R9*1), DX
	VMOVUPD (BX), Y0
	VMOVUPD (DX), Y1
	XORQ AX, AX

pairloop:
	CMPQ AX, R10
	JGE  pairdone
	VBROADCASTSD (R11)(AX*8), Y2
	VBROADCASTSD (R12)(AX*8), Y3
	VMOVUPD 32(BX), Y4
	VMOVUPD 32(DX), Y5
	VMULPD  Y4, Y3, Y6
	VMULPD  Y5, Y3, Y8
	VFMADD231PD Y0, Y2, Y6
	VFMADD231PD Y1, Y2, Y8
	VMOVUPD Y6, (BX)
	VMOVUPD Y8, (DX)
	VMULPD  Y4, Y2, Y7
	VMULPD  Y5, Y2, Y9
	VFNMADD231PD Y0, Y3, Y7
	VFNMADD231PD Y1, Y3, Y9
	VMOVAPD Y7, Y0
	VMOVAPD Y9, Y1
	ADDQ $32, BX
	ADDQ $32, DX
	INCQ AX
	JMP  pairloop

pairdone:
	VMOVUPD Y0, (BX)
	VMOVUPD Y1, (DX)
	LEAQ (DI)(R9*2), DI
	SUBQ $2, R8
	JMP  pairs

single:
	CMPQ R8, $1
	JLT  done
	MOVQ DI, BX
	VMOVUPD (BX), Y0
	XORQ AX, AX

singleloop:
	CMPQ AX, R10
	JGE  singledone
	VBROADCASTSD (R11)(AX*8), Y2
	VBROADCASTSD (R12)(AX*8), Y3
	VMOVUPD 32(BX), Y4
	VMULPD  Y4, Y3, Y6
	VFMADD231PD Y0, Y2, Y6
	VMOVUPD Y6, (BX)
	VMULPD  Y4, Y2, Y7
	VFNMADD231PD Y0, Y3, Y7
	VMOVAPD Y7, Y0
	ADDQ $32, BX
	INCQ AX
	JMP  singleloop

singledone:
	VMOVUPD Y0, (BX)

done:
	VZEROUPPER
	RET
