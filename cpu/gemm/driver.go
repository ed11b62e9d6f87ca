package gemm

import (
	"unsafe"

	"github.com/goferro/goferro/internal/reuse"
)

// plan is one GEMM call lowered to real arithmetic: C = alpha·A·B + beta·C
// over real views of the operands. A complex product of extents m, n, k runs
// as a real m×2n×2k product (the 1m method): A is packed interleaved with
// alpha folded in, B as 2×2 real blocks, and C is its own interleaved real
// view, so complex runs on the real micro-kernels at real speed.
type plan[R float] struct {
	kern *kernel[R]
	blk  blocking
	cplx bool
	// Real-view extents: for complex, n and k are twice the user's.
	m, n, k int
	// alpha and beta are what the kernel applies: for complex, alpha is 1
	// (ar+i·ai is folded into packed A) and beta is real; a non-real beta
	// (br+i·bi) is applied to C in a pre-pass (prescale), then beta is 1.
	alpha, beta R
	ar, ai      R
	br, bi      R
	prescale    bool
	scaleOnly   bool // alpha == 0 or k == 0: C = beta·C only
	a, b, c     operand[R]
	direct      bool // C rows are contiguous: the kernel writes C in place
	// directA: full A micro-panels are read in place by the strided kernel
	// (small problems, where packing would cost more than it saves); real
	// element (i, p) of A is at ao + i·dars + p·dacs.
	directA    bool
	dars, dacs int
	// directB: the kernels read full B micro-panels in place (small
	// row-major real B), rows p.b.rs apart; only a ragged last panel is
	// packed.
	directB bool
	vector  bool       // matrix-vector product (of complex numbers for a complex plan): see gemv
	rview   vecView[R] // a real vector plan's view for gemv
	dots    bool       // product of a C smaller than a micro-tile, real or complex: see dots.go
	tiles   bool       // a batchInner batch computed by batchTilesOf (set by run)
	// Batch: user extents and strides, offsets of batch element zero (real
	// units) and sc, the real elements per user element.
	batch            []int
	abs, bbs, cbs    []int
	aoff, boff, coff int
	sc               int
	nbatch           int
}

// offsets returns the real-view offsets of batch element l.
func (p *plan[R]) offsets(l int) (ao, bo, co int) {
	ao, bo, co = p.aoff, p.boff, p.coff
	for i := len(p.batch) - 1; i >= 0; i-- {
		d := p.batch[i]
		x := l % d
		l /= d
		ao += x * p.abs[i] * p.sc
		bo += x * p.bbs[i] * p.sc
		co += x * p.cbs[i] * p.sc
	}
	return ao, bo, co
}

// workspace holds one goroutine's packing buffers, and the walk of the
// kernels' prefetch hint over the operands of the next batch element.
type workspace[R float] struct {
	a, b, tile []R
	next       nextOperands
}

// nextOperands is where a serial run of small batched products points the
// kernels' prefetch hint while it computes one element: at the next
// element's A and then its B, a slice per kernel call. Such products read
// B in place, so the hint has no packed panel to point to, and the next
// element's operands are outside every cache level but the last: one
// thread, float64, batches of 32 products of 64×64×64 ran about 11%
// faster with the same A and B for every element than with their own.
// Each span is [lo, hi] in its operand's real elements; cur is the next
// hint, in A's span and then B's; on is false where there is no next
// element to walk.
type nextOperands struct {
	aLo, aHi, bLo, bHi int
	cur                int
	inB, on            bool
}

// span returns the least and greatest real index of the block of x at
// off of rows rows and cols real columns (sc real elements a column), and whether to walk it: it must be strided with
// nonnegative strides and dense enough that walking its whole span
// prefetches little else (at most twice its elements).
func span[R float](x operand[R], off, rows, cols, sc int) (lo, hi int, ok bool) {
	if x.gather() || x.rs < 0 || x.cs < 0 || rows <= 0 || cols <= 0 {
		return 0, 0, false
	}
	hi = off + (rows-1)*x.rs + (cols/sc-1)*x.cs + sc - 1
	return off, hi, hi-off+1 <= 2*rows*cols
}

// walkNext sets ws.next to walk the operands of batch element l, or
// turns the walk off where l is past the last element or the operands
// are not worth walking.
func (p *plan[R]) walkNext(ws *workspace[R], l int) {
	ws.next.on = false
	if l >= p.nbatch || !p.directB {
		return
	}
	ao, bo, _ := p.offsets(l)
	aLo, aHi, okA := span(p.a, ao, p.m, p.k, p.sc)
	bLo, bHi, okB := span(p.b, bo, p.k/p.sc, p.n, p.sc)
	if !okA || !okB {
		return
	}
	ws.next = nextOperands{aLo: aLo, aHi: aHi, bLo: bLo, bHi: bHi, cur: aLo, on: true}
}

// hint returns the prefetch hint of the next kernel call and moves the
// walk on by step real elements: through A's span, then B's, then it
// stays at B's last element.
func (p *plan[R]) hint(n *nextOperands, step int) *R {
	if !n.inB {
		h := &p.a.data[n.cur]
		if n.cur += step; n.cur > n.aHi {
			n.cur, n.inB = n.bLo, true
		}
		return h
	}
	h := &p.b.data[n.cur]
	n.cur = min(n.cur+step, n.bHi)
	return h
}

// The workspaces, kept between calls (see package reuse: with a
// sync.Pool alone, a goroutine that moved to another processor after a
// garbage collection packed into fresh, page-faulting buffers).
var (
	wsPool64 reuse.Pool[workspace[float64]]
	wsPool32 reuse.Pool[workspace[float32]]
)

func getWorkspace[R float]() *workspace[R] {
	if w := poolOf[R, workspace[R]](&wsPool64, &wsPool32).Get(); w != nil {
		return w
	}
	return new(workspace[R])
}

func putWorkspace[R float](w *workspace[R]) { poolOf[R, workspace[R]](&wsPool64, &wsPool32).Put(w) }

// poolOf returns the pool of R's values of type V: p64 (a
// *reuse.Pool[V] for R float64) or p32.
func poolOf[R float, V any](p64, p32 any) *reuse.Pool[V] {
	var z R
	if _, ok := any(z).(float64); ok {
		return p64.(*reuse.Pool[V])
	}
	return p32.(*reuse.Pool[V])
}

func grow[R float](s []R, n int) []R {
	if cap(s) < n {
		return make([]R, n)
	}
	return s[:n]
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// split divides extent n into about-equal blocks of at most max elements,
// rounded up to a multiple of unit.
func split(n, max, unit int) int {
	if n <= 0 {
		return unit
	}
	nb := ceilDiv(n, max)
	return ceilDiv(ceilDiv(n, nb), unit) * unit
}

// region computes rows [i0, i1) and real columns [j0, j1) of C for the batch
// element whose real-view offsets are ao, bo, co. With sh non-nil it packs
// B panels together with the other shares of its group (see bShare), else
// on its own.
func (p *plan[R]) region(ws *workspace[R], sh *bShare[R], ao, bo, co, i0, i1, j0, j1 int) {
	if i0 >= i1 || j0 >= j1 {
		return
	}
	if p.scaleOnly || p.prescale {
		p.scaleC(co, i0, i1, j0, j1)
		if p.scaleOnly {
			return
		}
	}
	if p.vector && i0 == 0 && i1 == p.m && j0 == 0 && j1 == p.n && p.gemv(ws, ao, bo, co) {
		return
	}
	if p.dots && i0 == 0 && i1 == p.m && j0 == 0 && j1 == p.n {
		p.dotProducts(ws, ao, bo, co)
		return
	}
	mr, nr := p.kern.mr, p.kern.nr
	kunit := 1
	if p.cplx {
		kunit = 2
	}
	kc := split(p.k, p.blk.kc, kunit)
	mc := split(i1-i0, p.blk.mc, mr)
	nc := split(j1-j0, p.blk.nc, nr)
	ws.a = grow(ws.a, mc*kc)
	ws.tile = grow(ws.tile, mr*nr)
	for jc := j0; jc < j1; jc += nc {
		nb := min(nc, j1-jc)
		for pc := 0; pc < p.k; pc += kc {
			kb := min(kc, p.k-pc)
			beta := p.beta
			if pc > 0 {
				beta = 1
			}
			var b []R
			shared := false
			switch {
			case p.directB:
				// The kernels read B in place but for a ragged last
				// panel, packed alone.
				if full := nb / nr * nr; full < nb {
					ws.b = grow(ws.b, kb*nr)
					p.packB(ws.b, bo, pc, kb, jc+full, nb-full)
				}
				b = ws.b
			case sh != nil:
				b = sh.acquire(p, bo, pc, kb, jc, nb)
				shared = b != nil
			}
			if b == nil {
				ws.b = grow(ws.b, kc*nc)
				b = ws.b
				p.packB(b, bo, pc, kb, jc, nb)
			}
			for ic := i0; ic < i1; ic += mc {
				mb := min(mc, i1-ic)
				if p.directA {
					// Only a ragged last micro-panel needs packing, and
					// not even that where a kernel reads it in place.
					if r := mb % mr; r != 0 && p.kern.inPlace(r) == nil {
						p.packA(ws.a, ao, ic+mb-r, r, pc, kb)
					}
				} else {
					p.packA(ws.a, ao, ic, mb, pc, kb)
				}
				p.macro(ws, b, ao, bo, co, ic, mb, jc, nb, pc, kb, beta)
			}
			if sh != nil {
				if shared {
					sh.release()
				}
				sh.epoch++
			}
		}
	}
}

// macro runs the micro-kernel over one packed A block and B panel b (with
// directB, B itself but for a ragged last panel, alone in b).
func (p *plan[R]) macro(ws *workspace[R], b []R, ao, bo, co, ic, mb, jc, nb, pc, kb int, beta R) {
	mr, nr := p.kern.mr, p.kern.nr
	alpha := p.alpha
	cd := p.c.data
	rsc := p.c.rs
	tile := &ws.tile[0]
	// Each kernel call prefetches kb/4 lines of the next B micro-panel:
	// pfStep elements, so that panel is in L2 after a few calls.
	var rz R
	pfStep := kb / 4 * 64 / int(unsafe.Sizeof(rz))
	bEnd := kb*ceilDiv(nb, nr)*nr - 1
	for jr := 0; jr < nb; jr += nr {
		nn := min(nr, nb-jr)
		ldb := nr
		var bp *R
		switch {
		case p.directB && nn == nr:
			bp, ldb = &p.b.data[bo+pc*p.b.rs+jc+jr], p.b.rs
		case p.directB:
			bp = &b[0]
		default:
			bp = &b[jr*kb]
		}
		kern := p.kern
		if nn <= nr/2 && kern.narrow != nil {
			kern = kern.narrow // the same panels, nn ≤ kern.nr columns of them
		}
		pfo := (jr + nr) * kb
		for ir := 0; ir < mb; ir += mr {
			mm := min(mr, mb-ir)
			pf := bp
			switch {
			case !p.directB:
				pf = &b[min(pfo, bEnd)]
			case ws.next.on && p.directA:
				pf = p.hint(&ws.next, 2*pfStep) // the strided kernels prefetch twice as far
			case ws.next.on:
				pf = p.hint(&ws.next, pfStep)
			}
			pfo += pfStep
			if s := kern.inPlace(mm); p.directA && s != nil {
				ap := &p.a.data[ao+(ic+ir)*p.dars+pc*p.dacs]
				if p.direct && nn == kern.nr {
					s(kb, ap, bp, &cd[co+(ic+ir)*rsc+jc+jr], rsc, alpha, beta, mm, pf, ldb, p.dars, p.dacs)
					continue
				}
				s(kb, ap, bp, tile, nr, 1, 0, mm, pf, ldb, p.dars, p.dacs)
			} else {
				off := ir * kb
				if p.directA {
					off = 0 // the ragged panel, packed alone
				}
				ap := &ws.a[off]
				f := kern.full
				if mm < mr && kern.short != nil && kern.short[mm] != nil {
					f = kern.short[mm]
				}
				if p.direct && nn == kern.nr {
					f(kb, ap, bp, &cd[co+(ic+ir)*rsc+jc+jr], rsc, alpha, beta, mm, pf, ldb)
					continue
				}
				f(kb, ap, bp, tile, nr, 1, 0, mm, pf, ldb)
			}
			p.merge(ws.tile, co, ic+ir, jc+jr, mm, nn, beta)
		}
	}
}

// cIndex is the real-view index of real element (i, j) of C.
func (p *plan[R]) cIndex(co, i, j int) int {
	if p.cplx {
		return co + i*p.c.rs + (j>>1)*p.c.cs + j&1
	}
	return co + i*p.c.rs + j*p.c.cs
}

// merge adds alpha times an mm×nn corner of the tile into C at (i, j).
func (p *plan[R]) merge(t []R, co, i, j, mm, nn int, beta R) {
	nr := p.kern.nr
	alpha := p.alpha
	cd := p.c.data
	for r := 0; r < mm; r++ {
		row := t[r*nr : r*nr+nn]
		if p.direct {
			dst := cd[co+(i+r)*p.c.rs+j:]
			dst = dst[:len(row)]
			if beta == 0 {
				for q, v := range row {
					dst[q] = alpha * v
				}
			} else {
				for q, v := range row {
					dst[q] = alpha*v + beta*dst[q]
				}
			}
			continue
		}
		for q, v := range row {
			x := p.cIndex(co, i+r, j+q)
			if beta == 0 {
				cd[x] = alpha * v
			} else {
				cd[x] = alpha*v + beta*cd[x]
			}
		}
	}
}

// scaleC sets C = beta·C over a region (C = 0 when beta is zero, without
// reading C). For complex, beta is br+i·bi; a real one scales the parts
// one by one, as the packed path does: as a complex product, (3+0i) times
// (Inf+0i) is Inf+NaNi.
func (p *plan[R]) scaleC(co, i0, i1, j0, j1 int) {
	cd := p.c.data
	if p.cplx {
		br, bi := p.br, p.bi
		for i := i0; i < i1; i++ {
			for j := j0; j < j1; j += 2 {
				x := p.cIndex(co, i, j)
				switch {
				case br == 0 && bi == 0:
					cd[x], cd[x+1] = 0, 0
				case bi == 0:
					cd[x], cd[x+1] = cd[x]*br, cd[x+1]*br
				default:
					re, im := cd[x], cd[x+1]
					cd[x], cd[x+1] = re*br-im*bi, re*bi+im*br
				}
			}
		}
		return
	}
	beta := p.beta
	for i := i0; i < i1; i++ {
		for j := j0; j < j1; j++ {
			x := p.cIndex(co, i, j)
			if beta == 0 {
				cd[x] = 0
			} else if beta != 1 {
				cd[x] *= beta
			}
		}
	}
}

// inPlace returns the kernel that computes an mm-row micro-panel reading
// A in place (strided), or nil where there is none.
func (k *kernel[R]) inPlace(mm int) stridedKernel[R] {
	if mm == k.mr {
		return k.strided
	}
	if k.shortStrided != nil {
		return k.shortStrided[mm]
	}
	return nil
}
