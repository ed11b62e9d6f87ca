package gemm

import (
	"sync/atomic"
	"unsafe"
)

// testBlocking, when set, overrides the block sizes (a test hook that makes
// small problems cross every block boundary).
var testBlocking atomic.Pointer[blocking]

// testNoDirect, when set, makes every call pack A (a test hook).
var testNoDirect atomic.Bool

// testNoDirectB, when set, makes every call pack B (a test hook).
var testNoDirectB atomic.Bool

// testNoFewVectors, when set, leaves products of a few vectors to the
// paths they took before fewDots (a test hook).
var testNoFewVectors atomic.Bool

// testNoShareB, when set, makes every share of a parallel call pack its own
// B panels (a test hook).
var testNoShareB atomic.Bool

// Thresholds for going parallel, in multiply-adds (m·n·k, real view).
const (
	// minParallelWork is the least total work worth handing to polling
	// workers (useWorkers says when it is worth waking sleeping ones).
	minParallelWork = 48 * 48 * 48
	// smallElemWork is the per-element work below which a batch is always
	// split by element rather than by block.
	smallElemWork = 160 * 160 * 160
)

// viewAs returns x's buffer as elements of E: a complex buffer as its
// real elements (interleaved), or a real one as complex numbers.
func viewAs[E, X any](x []X) []E {
	if len(x) == 0 {
		return nil
	}
	n := len(x) * int(unsafe.Sizeof(*new(X))) / int(unsafe.Sizeof(*new(E)))
	return unsafe.Slice((*E)(unsafe.Pointer(unsafe.SliceData(x))), n)
}

// toReal splits a scalar into real and imaginary parts in R.
func toReal[T Scalar, R float](x T) (re, im R) {
	switch v := any(x).(type) {
	case float64:
		return R(v), 0
	case float32:
		return R(v), 0
	case complex128:
		return R(real(v)), R(imag(v))
	case complex64:
		return R(real(v)), R(imag(v))
	}
	return 0, 0
}

// transpose returns xᵀ, batch strides aside (run swaps those itself).
func transpose[T Scalar](x Matrix[T]) Matrix[T] {
	return Matrix[T]{Data: x.Data, Offset: x.Offset, RowStride: x.ColStride, ColStride: x.RowStride,
		RowOffsets: x.ColOffsets, ColOffsets: x.RowOffsets}
}

// operandOf returns the real view of x, whose elements are sc real
// elements each: strides and offset tables scaled to real units (the
// tables copied when sc is not 1).
func operandOf[T Scalar, R float](x Matrix[T], sc int) operand[R] {
	scale := func(tab []int) []int {
		if tab == nil || sc == 1 {
			return tab
		}
		s := make([]int, len(tab))
		for i, o := range tab {
			s[i] = o * sc
		}
		return s
	}
	return operand[R]{data: viewAs[R](x.Data), rs: x.RowStride * sc, cs: x.ColStride * sc,
		ro: scale(x.RowOffsets), co: scale(x.ColOffsets)}
}

// run lowers a checked call to a real plan and executes it.
func run[T Scalar, R float](threads int, batch []int, m, n, k int, alpha, beta T, a, b, c Matrix[T]) {
	nbatch := 1
	for _, d := range batch {
		nbatch *= d
	}
	if nbatch == 0 || m == 0 || n == 0 {
		return
	}
	var zero T
	var tz T
	var rz R
	sc := int(unsafe.Sizeof(tz) / unsafe.Sizeof(rz))
	cplx := sc == 2
	abs, bbs := a.BatchStrides, b.BatchStrides
	// Prefer C with contiguous rows: if only its columns are contiguous,
	// compute Cᵀ = Bᵀ·Aᵀ instead.
	crs, ccs := c.RowStride, c.ColStride
	if n == 1 {
		ccs = 1
	}
	if m == 1 {
		crs = n * ccs
	}
	if ccs != 1 && (crs == 1 || m == 1) {
		m, n = n, m
		crs, ccs = ccs, crs
		a, b = transpose(b), transpose(a)
		abs, bbs = bbs, abs
	}
	p := plan[R]{
		cplx:   cplx,
		m:      m,
		n:      n * sc,
		k:      k * sc,
		a:      operandOf[T, R](a, sc),
		b:      operandOf[T, R](b, sc),
		c:      operand[R]{data: viewAs[R](c.Data), rs: crs * sc, cs: ccs * sc},
		batch:  batch,
		abs:    abs,
		bbs:    bbs,
		cbs:    c.BatchStrides,
		aoff:   a.Offset * sc,
		boff:   b.Offset * sc,
		coff:   c.Offset * sc,
		sc:     sc,
		nbatch: nbatch,
	}
	p.direct = ccs == 1
	ar, ai := toReal[T, R](alpha)
	br, bi := toReal[T, R](beta)
	if beta == zero {
		br, bi = 0, 0 // +0: the kernels then never read C
	}
	p.br, p.bi = br, bi
	switch {
	case alpha == zero || k == 0:
		if beta == 1 {
			return
		}
		p.scaleOnly = true
		p.beta = br
	case cplx:
		p.alpha, p.ar, p.ai = 1, ar, ai
		p.beta = br
		if bi != 0 {
			p.prescale = true
			p.beta = 1
		}
	default:
		p.alpha, p.beta = ar, br
	}
	p.vector = (p.m == 1 || p.n == sc || p.fewVectors() && !testNoFewVectors.Load()) && !testNoDirect.Load()
	if p.vector && !cplx {
		p.rview = *viewOf(&p, p.a.data, p.b.data, p.c.data, 0, p.alpha)
	}
	p.kern = kernelFor[R]()
	// Also where A's rows and columns are both strided and n = 1, which
	// gemv leaves to the dots: packed, float64 1×1×2²⁰ with strides of 2
	// took 16 ms, a 12×16 tile for each multiply-add.
	p.dots = !p.scaleOnly && usesDots(p.m, p.n, p.k, p.kern) && !testNoDirect.Load()
	// Small A blocks are read in place rather than packed, and so are
	// real ones of any size that few column panels read (n ≤ 4·nr), their
	// strided dimension not a multiple of 4 KiB apart (as B's below; QR's
	// n = 1024 ran 10% slower with them): each A micro-panel is then read
	// at most four times, and packing it (a read and a write, then reads
	// of the copy) costs more than it saves. One thread, float64, AVX-512
	// (AMD EPYC, Zen 5), medians of nine:
	// 1000×32×1000 ran at 102 GFLOP/s in place against 78 packed,
	// 1000×64×1000 at 103 against 87, QR's 32×224×256 (C·V) at 108
	// against 84; float32 1000×32×1000 159 against 105; AVX2 float64
	// 1000×32×1000 52 against 44. Complex products gained nothing.
	es := int(unsafe.Sizeof(rz))
	smallA := p.m*p.k*es <= cacheL2/4
	fewColumnPanels := !cplx && p.n <= 4*p.kern.nr && max(p.a.rs, p.a.cs)*es%4096 != 0
	if (smallA || fewColumnPanels) && p.m >= p.kern.mr && !p.a.gather() && !testNoDirect.Load() {
		switch {
		case cplx:
			p.directA = p.a.cs == 2 && ar == 1 && ai == 0
			p.dars, p.dacs = p.a.rs, 1
		case p.a.cs == 1 || p.a.rs == 1:
			p.directA = true
			p.dars, p.dacs = p.a.rs, p.a.cs
		}
	}
	// So is a row-major real B when few row panels share each of its
	// micro-panels (packing pays for itself over more) and its rows are not
	// a multiple of 4 KiB apart (they would fall in one set of L1): one
	// thread, float64, AVX-512, m×n×k = 64×64×64 ran 6–10% faster in
	// place, 192×128×128 between 12% faster and 6% slower, 512×256×64 7%
	// slower, 64×512×32 (4 KiB rows) 33% slower (BenchmarkGemmShapes;
	// GOFERRO_NODIRECTB=1 packs); whatever B's size: 32×1000×1000 ran at
	// 94 GFLOP/s in place against 71 packed, 96×1000×1000 at 96 against
	// 86, QR's 256×32×256 (Q's C·V̄) at 104 against 83.
	if !cplx && !p.b.gather() && p.b.cs == 1 && p.n >= p.kern.nr &&
		p.m <= 8*p.kern.mr && p.b.rs*es%4096 != 0 && !testNoDirect.Load() && !testNoDirectB.Load() {
		p.directB = true
	}
	p.blk = blockingFor(p.kern, int(unsafe.Sizeof(rz)))
	if b := testBlocking.Load(); b != nil {
		p.blk = blocking{mc: max(b.mc/p.kern.mr, 1) * p.kern.mr, kc: b.kc, nc: max(b.nc/p.kern.nr, 1) * p.kern.nr}
	}

	elem := float64(p.m) * float64(p.n) * float64(max(p.k, 1))
	work := elem * float64(nbatch)
	if ok, tiles := p.batchInner(); ok && !testNoDirect.Load() {
		p.tiles = tiles
		units := p.batchInnerUnits()
		if threads <= 1 || units < 2 || work < minParallelWork || !useWorkers(work) {
			ws := getWorkspace[R]()
			for u := range units {
				p.runBatchInner(ws, u)
			}
			putWorkspace(ws)
			return
		}
		j := getJob[R]()
		j.p, j.batchInner = p, true
		runParallel(j, min(threads, units), threads)
		putJob(j)
		return
	}
	byBatch := nbatch >= threads && (p.vector || p.dots || elem < smallElemWork || nbatch%threads == 0 || nbatch >= 4*threads)
	// Matrix-vector products are memory-bound: split only over a batch.
	if threads <= 1 || work < minParallelWork || p.scaleOnly || (p.vector || p.dots) && !byBatch || !useWorkers(work) {
		ws := getWorkspace[R]()
		for l := 0; l < nbatch; l++ {
			ao, bo, co := p.offsets(l)
			p.walkNext(ws, l+1)
			p.region(ws, nil, ao, bo, co, 0, p.m, 0, p.n)
		}
		putWorkspace(ws)
		return
	}
	j := getJob[R]()
	j.p = p
	j.byBatch = byBatch
	nsh := threads
	if !byBatch {
		j.gm, j.gn = grid(p.m, p.n, p.kern.mr, p.kern.nr, threads)
		// Very tall products split into twice as many row blocks as
		// goroutines, taken as they come: a goroutine slowed down by
		// another process takes fewer. Each block packs its own copy of
		// B, so this pays only with ≥ 8·mc rows a block.
		if j.gn == 1 && p.m >= 16*threads*p.blk.mc {
			j.gm *= 2
		}
		nsh = j.gm * j.gn
		// Shares over the same columns pack each B panel once, together.
		if j.gm > 1 && !testNoShareB.Load() {
			j.shareB = true
			if cap(j.groups) < j.gn {
				j.groups = make([]bGroup[R], j.gn)
			}
			j.groups = j.groups[:j.gn]
			for i := range j.groups {
				j.groups[i].reset(j.gm)
			}
		}
	}
	runParallel(j, nsh, threads)
	putJob(j)
}
