//go:build amd64 && !purego && !goferro_noasm

#include "textflag.h"

// The kernels of rotMat.seq: for each panel of eight rows (stride float64s
// apart, starting at z), with x the panel's first column: for k < n, with
// y = column k+1, column k = c[k]·x + s[k]·y and x = c[k]·y − s[k]·x;
// finally column n = x. A column of a panel is 64 contiguous bytes. The
// running column x is a dependency chain through the loop; each kernel
// keeps two chains going so that they overlap.

// func rotPanels(z *float64, panels, stride, n int, c, s *float64)
//
// AVX2 and FMA: a panel column is two registers (rows 0–3 and 4–7), the
// two chains.
TEXT ·rotPanels(SB), NOSPLIT, $0-48
	MOVQ z+0(FP), DI
	MOVQ panels+8(FP), R8
	MOVQ stride+16(FP), R9
	SHLQ $3, R9
	MOVQ n+24(FP), R10
	MOVQ c+32(FP), R11
	MOVQ s+40(FP), R12

panel:
	CMPQ R8, $1
	JLT  done
	MOVQ DI, BX
	VMOVUPD (BX), Y0
	VMOVUPD 32(BX), Y1
	XORQ AX, AX

loop:
	CMPQ AX, R10
	JGE  last
	VBROADCASTSD (R11)(AX*8), Y2
	VBROADCASTSD (R12)(AX*8), Y3
	VMOVUPD 64(BX), Y4
	VMOVUPD 96(BX), Y5
	VMULPD  Y4, Y3, Y6
	VMULPD  Y5, Y3, Y8
	VFMADD231PD Y0, Y2, Y6
	VFMADD231PD Y1, Y2, Y8
	VMOVUPD Y6, (BX)
	VMOVUPD Y8, 32(BX)
	VMULPD  Y4, Y2, Y7
	VMULPD  Y5, Y2, Y9
	VFNMADD231PD Y0, Y3, Y7
	VFNMADD231PD Y1, Y3, Y9
	VMOVAPD Y7, Y0
	VMOVAPD Y9, Y1
	ADDQ $64, BX
	INCQ AX
	JMP  loop

last:
	VMOVUPD Y0, (BX)
	VMOVUPD Y1, 32(BX)
	ADDQ R9, DI
	DECQ R8
	JMP  panel

done:
	VZEROUPPER
	RET

// func rotPanels512(z *float64, panels, stride, n int, c, s *float64)
//
// AVX-512: a panel column is one register; four panels go through the
// loop together, four chains, then two, then one for what is left.
TEXT ·rotPanels512(SB), NOSPLIT, $0-48
	MOVQ z+0(FP), DI
	MOVQ panels+8(FP), R8
	MOVQ stride+16(FP), R9
	SHLQ $3, R9
	MOVQ n+24(FP), R10
	MOVQ c+32(FP), R11
	MOVQ s+40(FP), R12

zquads:
	CMPQ R8, $4
	JLT  zpairs
	MOVQ DI, BX
	LEAQ (DI)(R9*1), DX
	LEAQ (DI)(R9*2), SI
	LEAQ (DX)(R9*2), R13
	VMOVUPD (BX), Z0
	VMOVUPD (DX), Z1
	VMOVUPD (SI), Z2
	VMOVUPD (R13), Z3
	XORQ AX, AX

zquadloop:
	CMPQ AX, R10
	JGE  zquaddone
	VBROADCASTSD (R11)(AX*8), Z4
	VBROADCASTSD (R12)(AX*8), Z5
	VMOVUPD 64(BX), Z6
	VMOVUPD 64(DX), Z7
	VMOVUPD 64(SI), Z8
	VMOVUPD 64(R13), Z9
	VMULPD  Z6, Z5, Z10
	VMULPD  Z7, Z5, Z11
	VMULPD  Z8, Z5, Z12
	VMULPD  Z9, Z5, Z13
	VFMADD231PD Z0, Z4, Z10
	VFMADD231PD Z1, Z4, Z11
	VFMADD231PD Z2, Z4, Z12
	VFMADD231PD Z3, Z4, Z13
	VMOVUPD Z10, (BX)
	VMOVUPD Z11, (DX)
	VMOVUPD Z12, (SI)
	VMOVUPD Z13, (R13)
	VMULPD  Z6, Z4, Z6
	VMULPD  Z7, Z4, Z7
	VMULPD  Z8, Z4, Z8
	VMULPD  Z9, Z4, Z9
	VFNMADD231PD Z0, Z5, Z6
	VFNMADD231PD Z1, Z5, Z7
	VFNMADD231PD Z2, Z5, Z8
	VFNMADD231PD Z3, Z5, Z9
	VMOVAPD Z6, Z0
	VMOVAPD Z7, Z1
	VMOVAPD Z8, Z2
	VMOVAPD Z9, Z3
	ADDQ $64, BX
	ADDQ $64, DX
	ADDQ $64, SI
	ADDQ $64, R13
	INCQ AX
	JMP  zquadloop

zquaddone:
	VMOVUPD Z0, (BX)
	VMOVUPD Z1, (DX)
	VMOVUPD Z2, (SI)
	VMOVUPD Z3, (R13)
	LEAQ (DI)(R9*4), DI
	SUBQ $4, R8
	JMP  zquads

zpairs:
	CMPQ R8, $2
	JLT  zsingle
	MOVQ DI, BX
	LEAQ (DI)(R9*1), DX
	VMOVUPD (BX), Z0
	VMOVUPD (DX), Z1
	XORQ AX, AX

zpairloop:
	CMPQ AX, R10
	JGE  zpairdone
	VBROADCASTSD (R11)(AX*8), Z2
	VBROADCASTSD (R12)(AX*8), Z3
	VMOVUPD 64(BX), Z4
	VMOVUPD 64(DX), Z5
	VMULPD  Z4, Z3, Z6
	VMULPD  Z5, Z3, Z8
	VFMADD231PD Z0, Z2, Z6
	VFMADD231PD Z1, Z2, Z8
	VMOVUPD Z6, (BX)
	VMOVUPD Z8, (DX)
	VMULPD  Z4, Z2, Z7
	VMULPD  Z5, Z2, Z9
	VFNMADD231PD Z0, Z3, Z7
	VFNMADD231PD Z1, Z3, Z9
	VMOVAPD Z7, Z0
	VMOVAPD Z9, Z1
	ADDQ $64, BX
	ADDQ $64, DX
	INCQ AX
	JMP  zpairloop

zpairdone:
	VMOVUPD Z0, (BX)
	VMOVUPD Z1, (DX)
	LEAQ (DI)(R9*2), DI
	SUBQ $2, R8
	JMP  zpairs

zsingle:
	CMPQ R8, $1
	JLT  zdone
	MOVQ DI, BX
	VMOVUPD (BX), Z0
	XORQ AX, AX

zsingleloop:
	CMPQ AX, R10
	JGE  zsingledone
	VBROADCASTSD (R11)(AX*8), Z2
	VBROADCASTSD (R12)(AX*8), Z3
	VMOVUPD 64(BX), Z4
	VMULPD  Z4, Z3, Z6
	VFMADD231PD Z0, Z2, Z6
	VMOVUPD Z6, (BX)
	VMULPD  Z4, Z2, Z7
	VFNMADD231PD Z0, Z3, Z7
	VMOVAPD Z7, Z0
	ADDQ $64, BX
	INCQ AX
	JMP  zsingleloop

zsingledone:
	VMOVUPD Z0, (BX)

zdone:
	VZEROUPPER
	RET
