# Generates kernel_amd64.s, the amd64 micro-kernels: python3 gen_kernel_amd64.py
#
# AVX2+FMA kernels (6×NR, NR = 8 float64 or 16 float32): a 6×(2 ymm) tile
# of C in Y0..Y11; each k step loads one row of the packed B micro-panel
# into Y12/Y13 and broadcasts the six A values of that step through
# Y14/Y15 (VBROADCASTSx + VFMADD231Px).
#
# AVX-512F kernels (12×NR, NR = 16 float64 or 32 float32): a 12×(2 zmm)
# tile of C in Z0..Z23; each k step loads one row of B into Z24/Z25 and
# broadcasts the twelve A values through Z26..Z31 in turn. Twelve rows keep
# 24 independent FMA chains in flight (two FMA units with a latency of four
# need eight) and cost 14 loads per 24 FMAs.
#
# Half-width forms of both (half=True: one vector a row, the accumulators
# Y0..Y5 or Z0..Z11) compute the first NR/2 columns of the same panels,
# for a ragged last B micro-panel (kernel.narrow). pack_lines generates the
# AVX2 loops that pack lines contiguous along the depth: rows of a
# row-major A (packA…) and columns of a column-major B (packB…).
PF_DIST = 512  # bytes of packed A prefetched ahead (AVX2 kernels)


class ISA:
    """The registers and instructions one vector width uses."""

    def __init__(self, zmm):
        self.zmm = zmm
        self.vec = 64 if zmm else 32  # bytes in a vector register
        self.mr = 12 if zmm else 6
        self.acc = 2 * self.mr  # accumulators: two vectors a row
        self.breg = (self.acc, self.acc + 1)
        nb = 6 if zmm else 2
        self.bcast = [self.acc + 2 + i for i in range(nb)]
        self.pf_dist = 1024 if zmm else PF_DIST

    def r(self, i):
        return ("Z%d" if self.zmm else "Y%d") % i

    def zero(self, i):
        # VXORPS on zmm needs AVX512DQ; VPXORQ is AVX512F.
        if self.zmm:
            return f"VPXORQ Z{i}, Z{i}, Z{i}"
        return f"VXORPS Y{i}, Y{i}, Y{i}"


def kern(name, elt, strided, isa, unroll=4, rows=None, half=False):
    """A micro-kernel; with rows < isa.mr, one that computes only the first
    rows rows of a packed micro-panel (a ragged last one); with half, one
    that computes only the first vector's columns of each row (a ragged
    last B micro-panel of at most NR/2 columns)."""
    mr = isa.mr  # values a depth step in a packed A micro-panel
    rows = rows or mr
    nvec = 1 if half else 2  # vectors a row of the tile
    acc = nvec * rows
    d = elt == 'd'
    esz = 8 if d else 4
    bcast = "VBROADCASTSD" if d else "VBROADCASTSS"
    fma = "VFMADD231PD" if d else "VFMADD231PS"
    mul = "VMULPD" if d else "VMULPS"
    mov = "VMOVUPD" if d else "VMOVUPS"
    R = isa.r
    vec = isa.vec
    astep = mr * esz
    bstep = nvec * vec  # the part of a B micro-panel row it reads
    L = []
    w = L.append
    ty = "float64" if d else "float32"
    if strided:
        w(f"// func {name}(k int, a, b, c *{ty}, rsc int, alpha, beta {ty}, mv int, pf *{ty}, ldb, ars, acs int)")
    else:
        w(f"// func {name}(k int, a, b, c *{ty}, rsc int, alpha, beta {ty}, mv int, pf *{ty}, ldb int)")
    # frame: k a b c rsc (40) alpha beta (16 or 8) mv pf ldb [ars acs]
    ab = 40
    bo = ab + esz
    mvo = ab + 2 * esz
    mvo = (mvo + 7) // 8 * 8
    pfo = mvo + 8
    ldbo = pfo + 8
    size = ldbo + 8 + (16 if strided else 0)
    w(f"TEXT ·{name}(SB), NOSPLIT, $0-{size}")
    w("\tMOVQ k+0(FP), CX")
    w("\tMOVQ a+8(FP), SI")
    w("\tMOVQ b+16(FP), DI")
    w("\tMOVQ c+24(FP), DX")
    w("\tMOVQ rsc+32(FP), R8")
    sh = 3 if d else 2
    w(f"\tSHLQ ${sh}, R8")
    # Strided A: rows 3g, 3g+1, 3g+2 at base g, base g + ars, base g + 2·ars.
    bases = ["SI", "R12", "R14", "BX"][:(rows + 2) // 3]
    if strided:
        w(f"\tMOVQ ars+{ldbo+8}(FP), R11")
        w(f"\tSHLQ ${sh}, R11")
        w(f"\tMOVQ acs+{ldbo+16}(FP), R13")
        w(f"\tSHLQ ${sh}, R13")
        for g in range(1, len(bases)):
            w(f"\tLEAQ ({bases[g-1]})(R11*2), {bases[g]}")
            w(f"\tADDQ R11, {bases[g]}")
    w(f"\tMOVQ pf+{pfo}(FP), R15")
    w("\tMOVQ DX, R9")
    # Each C row is bstep bytes: prefetch its first and last byte's lines
    # (and the one between for 128-byte rows).
    for i in range(rows):
        w("\tPREFETCHT0 (R9)")
        for o in range(64, bstep, 64):
            w(f"\tPREFETCHT0 {o}(R9)")
        w(f"\tPREFETCHT0 {bstep-1}(R9)")
        if i < rows - 1:
            w("\tADDQ R8, R9")
    for r in range(acc):
        w("\t" + isa.zero(r))
    # B rows are ldb elements apart: AX = ldb, R9 = 3·ldb bytes (R9 is free
    # until the stores).
    w(f"\tMOVQ ldb+{ldbo}(FP), AX")
    w(f"\tSHLQ ${sh}, AX")
    w("\tLEAQ (AX)(AX*2), R9")
    w("\tMOVQ CX, R10")
    w(f"\tSHRQ ${ {1:0,2:1,4:2,8:3}[unroll] }, R10")
    w("\tJZ tail")
    w("loop:")

    b0, b1 = isa.breg

    def step(ao, u, advance, pf=()):
        # B row u of this iteration: DI + u·ldb.
        idx = ["", "(AX*1)", "(AX*2)", "(R9*1)"][u]
        w(f"\t{mov} (DI){idx}, {R(b0)}")
        if not half:
            w(f"\t{mov} {vec}(DI){idx}, {R(b1)}")
        for i in range(rows):
            br = isa.bcast[i % len(isa.bcast)]
            if strided:
                base = bases[i // 3]
                addr = [f"({base})", f"({base})(R11*1)", f"({base})(R11*2)"][i % 3]
            else:
                addr = f"{ao + i*esz}(SI)"
            w(f"\t{bcast} {addr}, {R(br)}")
            w(f"\t{fma} {R(b0)}, {R(br)}, {R(nvec*i)}")
            if not half:
                w(f"\t{fma} {R(b1)}, {R(br)}, {R(2*i+1)}")
        if strided and advance:
            w("\tADDQ R13, SI")
            for b in bases[1:]:
                w(f"\tADDQ R13, {b}")
        for o in pf:
            w(f"\tPREFETCHT0 {o}(SI)")

    # The packed A lines the unrolled loop reads, prefetched pf_dist ahead,
    # shared out over its steps.
    lines = [isa.pf_dist + 64 * j for j in range((unroll * astep + 63) // 64)]
    per = (len(lines) + unroll - 1) // unroll
    for u in range(unroll):
        pf = () if strided else lines[u * per:(u + 1) * per]
        step(u * astep, u, True, pf)
    if not strided:
        w(f"\tADDQ ${unroll*astep}, SI")
    # One line of the caller's next B micro-panel towards L2 per 4 k steps;
    # two for the strided kernels, which small products run (A and B read
    # in place): there the caller points pf at the next batch element's
    # operands, more lines than the kernel calls of one product walk at
    # one line.
    w("\tPREFETCHT1 (R15)")
    if strided:
        w("\tPREFETCHT1 64(R15)")
    w(f"\tADDQ ${128 if strided else 64}, R15")
    w("\tLEAQ (DI)(AX*4), DI")
    w("\tDECQ R10")
    w("\tJNZ loop")
    w("tail:")
    w(f"\tANDQ ${unroll-1}, CX")
    w("\tJZ done")
    w("loop1:")
    step(0, 0, True)
    if not strided:
        w(f"\tADDQ ${astep}, SI")
    w("\tADDQ AX, DI")
    w("\tDECQ CX")
    w("\tJNZ loop1")
    w("done:")
    w(f"\tMOVQ mv+{mvo}(FP), R9")
    # beta == 1 with alpha == ±1 (accumulating products, and the rank-k
    # updates C −= A·B of linalg) adds to or subtracts from C: one add a
    # vector on the FP add pipes, which the loop leaves idle, where scaling
    # and a multiply-add took two ops a vector on the FMA pipes the next
    # tile's loop needs.
    one, minus = ("$0x3FF0000000000000", "$0xBFF0000000000000") if d else ("$0x3F800000", "$0xBF800000")
    if d:
        w(f"\tMOVQ beta+{bo}(FP), AX")
        w(f"\tMOVQ {one}, BX")
        w("\tCMPQ AX, BX")
        w("\tJNE general")
        w(f"\tMOVQ alpha+{ab}(FP), AX")
        w("\tCMPQ AX, BX")
        w("\tJEQ addc")
        w(f"\tMOVQ {minus}, BX")
        w("\tCMPQ AX, BX")
        w("\tJEQ subc")
    else:
        w(f"\tMOVL beta+{bo}(FP), AX")
        w(f"\tCMPL AX, {one}")
        w("\tJNE general")
        w(f"\tMOVL alpha+{ab}(FP), AX")
        w(f"\tCMPL AX, {one}")
        w("\tJEQ addc")
        w(f"\tCMPL AX, {minus}")
        w("\tJEQ subc")
    w("general:")
    # alpha == 1 (the common case) skips the scaling.
    if d:
        w(f"\tMOVQ alpha+{ab}(FP), AX")
        w("\tMOVQ $0x3FF0000000000000, BX")
        w("\tCMPQ AX, BX")
    else:
        w(f"\tMOVL alpha+{ab}(FP), AX")
        w("\tCMPL AX, $0x3F800000")
    w("\tJEQ scaled")
    w(f"\t{bcast} alpha+{ab}(FP), {R(b0)}")
    for r in range(acc):
        w(f"\t{mul} {R(b0)}, {R(r)}, {R(r)}")
    w("scaled:")
    if d:
        w(f"\tMOVQ beta+{bo}(FP), AX")
        w("\tTESTQ AX, AX")
    else:
        w(f"\tMOVL beta+{bo}(FP), AX")
        w("\tTESTL AX, AX")
    w("\tJZ store")

    add = "VADDPD" if d else "VADDPS"
    sub = "VSUBPD" if d else "VSUBPS"

    def stores(how):
        # The first mv rows of the tile to C: the tile itself ("store"),
        # plus beta·C ("beta"), C + the tile ("add") or C − the tile ("sub").
        at = lambda q: f"{vec * q}(DX)" if q else "(DX)"
        for i in range(rows):
            for q in range(nvec):
                r = R(nvec * i + q)
                if how == "beta":
                    w(f"\t{fma} {at(q)}, {R(b1)}, {r}")
                elif how == "add":
                    w(f"\t{add} {at(q)}, {r}, {r}")
                elif how == "sub":
                    w(f"\t{mov} {at(q)}, {R(b0)}")
                    w(f"\t{sub} {r}, {R(b0)}, {r}")
            for q in range(nvec):
                w(f"\t{mov} {R(nvec * i + q)}, {at(q)}")
            if i < rows - 1:
                w("\tDECQ R9")
                w("\tJZ end")
                w("\tADDQ R8, DX")
    w(f"\t{bcast} beta+{bo}(FP), {R(b1)}")
    stores("beta")
    w("\tVZEROUPPER")
    w("\tRET")
    for how in ("add", "sub"):
        w(f"{how}c:")
        stores(how)
        w("\tVZEROUPPER")
        w("\tRET")
    w("store:")
    stores("store")
    w("end:")
    w("\tVZEROUPPER")
    w("\tRET")
    return "\n".join(L)


def pack_lines(name, elt, rows):
    """A loop packing rows (6, 8, 12, 16 or 32) lines that are contiguous along
    the depth, rs bytes apart (rows of a row-major A, columns of a
    column-major B), into a micro-panel (rows values a depth step), four
    steps at a time: each group of four lines is a 4×4 transpose in
    registers, a last pair of lines (for six) a 2×4 one."""
    d = elt == 'd'
    es = 8 if d else 4
    V = 'Y' if d else 'X'  # four values a register
    mov = 'VMOVUPD' if d else 'VMOVUPS'
    step = rows * es  # bytes a depth step in the panel
    L = []
    w = L.append
    w(f"// func {name}(dst, src unsafe.Pointer, rs, k4 int)")
    w(f"TEXT ·{name}(SB), NOSPLIT, $0-32")
    w("\tMOVQ dst+0(FP), DI")
    w("\tMOVQ src+8(FP), SI")
    w("\tMOVQ rs+16(FP), R8")
    w("\tMOVQ k4+24(FP), CX")
    w("\tTESTQ CX, CX")
    w("\tJZ done")
    w("\tLEAQ (R8)(R8*2), R9")
    w("\tLEAQ (SI)(R8*4), R10")
    bases = ["SI", "R10"]  # a base for each group of four rows
    for reg in ["R11", "R12", "R13", "AX", "BX", "DX"][: (rows + 3) // 4 - 2]:
        w(f"\tLEAQ ({bases[-1]})(R8*4), {reg}")
        bases.append(reg)
    w("loop:")
    for g in range(rows // 4):
        base = bases[g]
        for i, a in enumerate([f"({base})", f"({base})(R8*1)", f"({base})(R8*2)", f"({base})(R9*1)"]):
            w(f"\t{mov} {a}, {V}{i}")
        if d:
            w("\tVUNPCKLPD Y1, Y0, Y4")  # a0 b0 a2 b2
            w("\tVUNPCKHPD Y1, Y0, Y5")  # a1 b1 a3 b3
            w("\tVUNPCKLPD Y3, Y2, Y6")
            w("\tVUNPCKHPD Y3, Y2, Y7")
            w("\tVPERM2F128 $0x20, Y6, Y4, Y0")  # a0 b0 c0 d0
            w("\tVPERM2F128 $0x20, Y7, Y5, Y1")
            w("\tVPERM2F128 $0x31, Y6, Y4, Y2")
            w("\tVPERM2F128 $0x31, Y7, Y5, Y3")
        else:
            w("\tVUNPCKLPS X1, X0, X4")  # a0 b0 a1 b1
            w("\tVUNPCKHPS X1, X0, X5")  # a2 b2 a3 b3
            w("\tVUNPCKLPS X3, X2, X6")
            w("\tVUNPCKHPS X3, X2, X7")
            w("\tVUNPCKLPD X6, X4, X0")  # a0 b0 c0 d0
            w("\tVUNPCKHPD X6, X4, X1")
            w("\tVUNPCKLPD X7, X5, X2")
            w("\tVUNPCKHPD X7, X5, X3")
        for q in range(4):
            w(f"\t{mov} {V}{q}, {q*step + g*4*es}(DI)")
    if rows == 6:
        # Rows 4 and 5: a 2×4 transpose.
        w(f"\t{mov} (R10), {V}0")
        w(f"\t{mov} (R10)(R8*1), {V}1")
        o = 4 * es
        if d:
            w("\tVUNPCKLPD Y1, Y0, Y4")  # a0 b0 a2 b2
            w("\tVUNPCKHPD Y1, Y0, Y5")  # a1 b1 a3 b3
            w(f"\tVMOVUPD X4, {o}(DI)")
            w(f"\tVMOVUPD X5, {step + o}(DI)")
            w(f"\tVEXTRACTF128 $1, Y4, {2*step + o}(DI)")
            w(f"\tVEXTRACTF128 $1, Y5, {3*step + o}(DI)")
        else:
            w("\tVUNPCKLPS X1, X0, X4")  # a0 b0 a1 b1
            w("\tVUNPCKHPS X1, X0, X5")  # a2 b2 a3 b3
            w(f"\tVMOVLPS X4, {o}(DI)")
            w(f"\tVMOVHPS X4, {step + o}(DI)")
            w(f"\tVMOVLPS X5, {2*step + o}(DI)")
            w(f"\tVMOVHPS X5, {3*step + o}(DI)")
    for b in bases:
        w(f"\tADDQ ${4*es}, {b}")
    w(f"\tADDQ ${4*step}, DI")
    w("\tDECQ CX")
    w("\tJNZ loop")
    w("done:")
    w("\tVZEROUPPER")
    w("\tRET")
    return "\n".join(L)


def cplx_cols32(name):
    """A loop packing a full complex64 micro-panel of a column-major B
    (columns cs bytes apart, contiguous along the depth) in the 1m layout,
    four depth steps at a time: each group of four columns is a 4×4
    transpose of 64-bit complex numbers in registers, giving depth q's row
    (x₀ y₀ x₁ y₁ …) and, swapped and a sign flipped, its row
    (−y₀ x₀ −y₁ x₁ …). cols (8 or 16 complex columns) picks the loop."""
    L = []
    w = L.append
    w(f"// func {name}(dst, src unsafe.Pointer, cs, quads, cols int)")
    w(f"TEXT ·{name}(SB), NOSPLIT, $0-40")
    w("\tMOVQ dst+0(FP), DI")
    w("\tMOVQ src+8(FP), SI")
    w("\tMOVQ cs+16(FP), R8")
    w("\tMOVQ quads+24(FP), CX")
    w("\tMOVQ cols+32(FP), DX")
    w("\tTESTQ CX, CX")
    w("\tJZ done")
    w("\tLEAQ (R8)(R8*2), R9")
    w("\tLEAQ (SI)(R8*4), R10")
    w("\tLEAQ (R10)(R8*4), R11")
    w("\tLEAQ (R11)(R8*4), R12")
    w("\tMOVQ $0x80000000, AX")
    w("\tVMOVQ AX, X15")
    w("\tVPBROADCASTQ X15, Y15 // −0, +0 in each complex number: the signs to flip")
    w("\tCMPQ DX, $16")
    w("\tJNE cols8")
    for cols, label in ((16, "cols16"), (8, "cols8")):
        row = cols * 8  # bytes a panel row: cols complex64 values
        w(f"{label}:")
        for g, base in enumerate(["SI", "R10", "R11", "R12"][: cols // 4]):
            for i, a in enumerate([f"({base})", f"({base})(R8*1)", f"({base})(R8*2)", f"({base})(R9*1)"]):
                w(f"\tVMOVUPS {a}, Y{i}")
            w("\tVUNPCKLPD Y1, Y0, Y4")
            w("\tVUNPCKHPD Y1, Y0, Y5")
            w("\tVUNPCKLPD Y3, Y2, Y6")
            w("\tVUNPCKHPD Y3, Y2, Y7")
            w("\tVPERM2F128 $0x20, Y6, Y4, Y0")
            w("\tVPERM2F128 $0x20, Y7, Y5, Y1")
            w("\tVPERM2F128 $0x31, Y6, Y4, Y2")
            w("\tVPERM2F128 $0x31, Y7, Y5, Y3")
            for q in range(4):
                w(f"\tVMOVUPS Y{q}, {2*q*row + 32*g}(DI)")
                w(f"\tVPERMILPS $0xB1, Y{q}, Y8")
                w("\tVXORPS Y15, Y8, Y8")
                w(f"\tVMOVUPS Y8, {(2*q+1)*row + 32*g}(DI)")
        for b in ["SI", "R10", "R11", "R12"][: cols // 4]:
            w(f"\tADDQ $32, {b}")
        w(f"\tADDQ ${8*row}, DI")
        w("\tDECQ CX")
        w(f"\tJNZ {label}")
        w("\tJMP done")
    w("done:")
    w("\tVZEROUPPER")
    w("\tRET")
    return "\n".join(L)


def cplx_deal(name, elt, rows=12):
    """A loop packing a full micro-panel of twelve or six rows of a
    column-major complex A (complex128 or complex64, rows contiguous values
    a column, columns cs bytes apart) in the 1m layout: each depth step's
    real parts to one row of the panel and its imaginary parts to the
    next."""
    L = []
    w = L.append
    w(f"// func {name}(dst, src unsafe.Pointer, cs, kc int)")
    w(f"TEXT ·{name}(SB), NOSPLIT, $0-32")
    w("\tMOVQ dst+0(FP), DI")
    w("\tMOVQ src+8(FP), SI")
    w("\tMOVQ cs+16(FP), R8")
    w("\tMOVQ kc+24(FP), CX")
    w("\tTESTQ CX, CX")
    w("\tJZ done")
    w("loop:")
    step = (deal12 if rows == 12 else deal6)(w, elt == 'd')
    w("\tADDQ R8, SI")
    w(f"\tADDQ ${step}, DI")
    w("\tDECQ CX")
    w("\tJNZ loop")
    w("done:")
    w("\tVZEROUPPER")
    w("\tRET")
    return "\n".join(L)


def deal12(w, d):
    """cplx_deal's body for twelve rows; returns the panel bytes a step."""
    if d:
        for i in range(6):
            w(f"\tVMOVUPD {32*i}(SI), Y{i}")
        for g in range(3):
            a, b = 2 * g, 2 * g + 1
            w(f"\tVUNPCKLPD Y{b}, Y{a}, Y6")  # x x | x x, lanes crossed
            w(f"\tVUNPCKHPD Y{b}, Y{a}, Y7")
            w("\tVPERMPD $0xD8, Y6, Y6")
            w("\tVPERMPD $0xD8, Y7, Y7")
            w(f"\tVMOVUPD Y6, {32*g}(DI)")
            w(f"\tVMOVUPD Y7, {96 + 32*g}(DI)")
        return 192
    for i in range(3):
        w(f"\tVMOVUPS {32*i}(SI), Y{i}")
    w("\tVSHUFPS $0x88, Y1, Y0, Y4")  # real parts of values 0-7, pairs crossed
    w("\tVSHUFPS $0xDD, Y1, Y0, Y5")
    w("\tVPERMPD $0xD8, Y4, Y4")
    w("\tVPERMPD $0xD8, Y5, Y5")
    w("\tVSHUFPS $0x88, Y2, Y2, Y6")  # values 8-11
    w("\tVSHUFPS $0xDD, Y2, Y2, Y7")
    w("\tVPERMPD $0x08, Y6, Y6")
    w("\tVPERMPD $0x08, Y7, Y7")
    w("\tVMOVUPS Y4, (DI)")
    w("\tVMOVUPS X6, 32(DI)")
    w("\tVMOVUPS Y5, 48(DI)")
    w("\tVMOVUPS X7, 80(DI)")
    return 96


def deal6(w, d):
    """cplx_deal's body for six rows (the AVX2 kernels' micro-panel)."""
    if d:
        for i in range(3):
            w(f"\tVMOVUPD {32*i}(SI), Y{i}")
        w("\tVUNPCKLPD Y1, Y0, Y4")  # values 0-3
        w("\tVUNPCKHPD Y1, Y0, Y5")
        w("\tVPERMPD $0xD8, Y4, Y4")
        w("\tVPERMPD $0xD8, Y5, Y5")
        w("\tVUNPCKLPD Y2, Y2, Y6")  # values 4 and 5
        w("\tVUNPCKHPD Y2, Y2, Y7")
        w("\tVPERMPD $0x08, Y6, Y6")
        w("\tVPERMPD $0x08, Y7, Y7")
        w("\tVMOVUPD Y4, (DI)")
        w("\tVMOVUPD X6, 32(DI)")
        w("\tVMOVUPD Y5, 48(DI)")
        w("\tVMOVUPD X7, 80(DI)")
        return 96
    w("\tVMOVUPS (SI), Y0")  # values 0-3
    w("\tVMOVUPS 32(SI), X1")  # values 4 and 5
    w("\tVSHUFPS $0x88, Y0, Y0, Y4")
    w("\tVSHUFPS $0xDD, Y0, Y0, Y5")
    w("\tVPERMPD $0x08, Y4, Y4")
    w("\tVPERMPD $0x08, Y5, Y5")
    w("\tVSHUFPS $0x88, X1, X1, X6")
    w("\tVSHUFPS $0xDD, X1, X1, X7")
    w("\tVMOVUPS X4, (DI)")
    w("\tVMOVLPS X6, 16(DI)")
    w("\tVMOVUPS X5, 24(DI)")
    w("\tVMOVLPS X7, 40(DI)")
    return 48

hdr = """//go:build amd64 && !purego && !goferro_noasm

// Code generated by gen_kernel_amd64.py; DO NOT EDIT.

// Micro-kernels for AVX2+FMA (6×NR tiles, NR = 8 float64 or 16 float32)
// and AVX-512F (12×NR tiles, NR = 16 float64 or 32 float32). Each computes
// C = alpha·A·B + beta·C and stores the tile's first mv rows; C rows are
// rsc elements apart and each row is contiguous.
// While it runs it prefetches k/4 cache lines from pf towards L2, the
// strided kernels k/2 (the caller points pf at the next B micro-panel, a
// slice per call, or at the next batch element's operands).
// B is a packed micro-panel (k steps of NR values). A is a packed
// micro-panel (k steps of MR values) or, for the strided kernels, element
// (i, p) at a + i·ars + p·acs. beta == +0 means C is written, never read.
//
// packA6x64, packA6x32, packA12x64 and packA12x32 pack 4·k4 depth steps
// of six or twelve float64 or float32 rows of a row-major A (rs bytes
// apart from src) into the kernels' A micro-panel at dst, four steps at a
// time (4×4 transposes in registers); packB8x64, packB16x64, packB16x32
// and packB32x32 pack 8, 16 or 32 columns of a column-major B into its
// micro-panel alike. They need AVX2 only. The half-width kernels
// (dkern12x8…, skern12x16…, dkern6x4…, skern6x8…) compute the first NR/2
// columns of a tile: one vector a row. cplxCols32 packs a full complex64
// micro-panel (8 or 16 complex columns) of a column-major B in the 1m
// layout, four depth steps at a time. cplxDeal64 and cplxDeal32 (twelve
// rows) and cplxDeal6x64 and cplxDeal6x32 (six) pack a full micro-panel of
// a column-major complex A: each depth step's real parts to one row, its
// imaginary parts to the next.

#include "textflag.h"
"""
avx2, avx512 = ISA(False), ISA(True)
out = [hdr]
out.append(kern("dkern6x8", 'd', False, avx2))
out.append(kern("dkern6x8s", 'd', True, avx2))
out.append(kern("skern6x16", 's', False, avx2))
out.append(kern("skern6x16s", 's', True, avx2))
out.append(kern("dkern12x16", 'd', False, avx512))
out.append(kern("dkern12x16s", 'd', True, avx512))
out.append(kern("skern12x32", 's', False, avx512))
out.append(kern("skern12x32s", 's', True, avx512))
for r in (4, 8):
    out.append(kern(f"dkern12x16r{r}", 'd', False, avx512, rows=r))
    out.append(kern(f"dkern12x16r{r}s", 'd', True, avx512, rows=r))
    out.append(kern(f"skern12x32r{r}", 's', False, avx512, rows=r))
    out.append(kern(f"skern12x32r{r}s", 's', True, avx512, rows=r))
# Half-width kernels for a ragged last B micro-panel of at most NR/2
# columns: the same panels, half the multiply-adds.
out.append(kern("dkern6x4", 'd', False, avx2, half=True))
out.append(kern("dkern6x4s", 'd', True, avx2, half=True))
out.append(kern("skern6x8", 's', False, avx2, half=True))
out.append(kern("skern6x8s", 's', True, avx2, half=True))
for r in (None, 4, 8):
    tail = f"r{r}" if r else ""
    out.append(kern(f"dkern12x8{tail}", 'd', False, avx512, rows=r, half=True))
    out.append(kern(f"dkern12x8{tail}s", 'd', True, avx512, rows=r, half=True))
    out.append(kern(f"skern12x16{tail}", 's', False, avx512, rows=r, half=True))
    out.append(kern(f"skern12x16{tail}s", 's', True, avx512, rows=r, half=True))
out.append(pack_lines("packA6x64", 'd', 6))
out.append(pack_lines("packA6x32", 's', 6))
out.append(pack_lines("packA12x64", 'd', 12))
out.append(pack_lines("packA12x32", 's', 12))
out.append(pack_lines("packB8x64", 'd', 8))
out.append(pack_lines("packB16x64", 'd', 16))
out.append(pack_lines("packB16x32", 's', 16))
out.append(pack_lines("packB32x32", 's', 32))
out.append(cplx_cols32("cplxCols32"))
out.append(cplx_deal("cplxDeal64", 'd'))
out.append(cplx_deal("cplxDeal32", 's'))
out.append(cplx_deal("cplxDeal6x64", 'd', 6))
out.append(cplx_deal("cplxDeal6x32", 's', 6))
open("kernel_amd64.s", "w").write("\n\n".join(out) + "\n")
