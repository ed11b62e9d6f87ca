package gemm

import (
	"sync/atomic"

	"github.com/goferro/goferro/internal/level1"
)

// A batch of dot products whose last batch axis runs along memory in A,
// B and C while k does not (einsum's ij,ij->j: 256 dots of 4096 elements
// 256 apart) is summed a k index at a time across the batch: A's and B's
// elements at that k, a contiguous run over the batch each, are
// multiplied element by element into the run's sums. A dot at a time read
// each element from a cache line shared with the other dots, which read
// it again later: one thread, ij,ij->j over 4096×256 took 6.9 ms in
// float64 and 16 in complex128 (numpy 0.44 and 0.86). Complex batches run
// on complex views of the real plan, as dotProducts.

// batchInnerChunk is the length of k whose products are summed apart
// before they are added to the batch's sums, so that a long k is summed
// in pieces, as dotProducts sums it in chunks.
const batchInnerChunk = 512

// batchInner reports whether p is such a batch (see batchInnerShape), or
// one batchTilesOf computes (tiles, see batchTileShape), with no offset
// tables and no complex beta to apply beforehand.
func (p *plan[R]) batchInner() (ok, tiles bool) {
	shift := 0
	if p.cplx {
		shift = 1
	}
	if p.scaleOnly || p.prescale || p.a.gather() || p.b.gather() {
		return false, false
	}
	acs, brs := p.a.cs>>shift, p.b.rs>>shift
	if batchInnerShape(p.m, p.n>>shift, p.k>>shift, p.batch, p.abs, p.bbs, p.cbs, acs, brs) {
		return true, false
	}
	tiles = batchTileShape(p.m, p.n>>shift, p.k>>shift, p.batch, p.abs, p.bbs, acs, brs)
	return tiles, tiles
}

// batchTileShape reports whether a batch of m×n×k products is one of dot
// products (m = n = 1, k ≥ 2) whose last batch axis, of two or more, is
// contiguous in one operand, whose k is not, while the other's k is
// (einsum's ji,ij->i: 4096 dots of 256 elements, A's 4096 apart, B's
// contiguous). batchTilesOf computes them.
func batchTileShape(m, n, k int, batch, abs, bbs []int, acs, brs int) bool {
	last := len(batch) - 1
	return m == 1 && n == 1 && k >= 2 && last >= 0 && batch[last] >= 2 &&
		(abs[last] == 1 && acs != 1 && brs == 1 || bbs[last] == 1 && brs != 1 && acs == 1)
}

// batchInnerShape reports whether a batch of m×n×k products is one of dot
// products (m = n = 1, k ≥ 2) whose last batch axis, of two or more, is
// contiguous in A, B and C (batch strides abs, bbs and cbs) and whose k is
// not contiguous in both A and B (strides acs and brs; where it is,
// dotProducts reads each dot in place).
func batchInnerShape(m, n, k int, batch, abs, bbs, cbs []int, acs, brs int) bool {
	last := len(batch) - 1
	return m == 1 && n == 1 && k >= 2 && last >= 0 && batch[last] >= 2 &&
		abs[last] == 1 && bbs[last] == 1 && cbs[last] == 1 && (acs != 1 || brs != 1)
}

// batchInnerBlock is the length of the last batch axis's blocks, the
// units batchInner's work is cut into and shared out in: their sums stay
// in L1 while every k index adds to them, and the workspace stays small
// whatever the axis's length.
const batchInnerBlock = 1024

// batchInnerUnits returns the number of blocks of a batchInner batch.
func (p *plan[R]) batchInnerUnits() int {
	nb := p.batch[len(p.batch)-1]
	return p.nbatch / nb * ceilDiv(nb, batchInnerBlock)
}

// batchBlock returns the length of block u of a batchInner batch and the
// offsets of its first element in elements of views each 2^shift of p's
// real elements.
func (p *plan[R]) batchBlock(u, shift int) (n, ao, bo, co int) {
	nb := p.batch[len(p.batch)-1]
	perRun := ceilDiv(nb, batchInnerBlock)
	l0 := u % perRun * batchInnerBlock
	ao, bo, co = p.offsets(u/perRun*nb + l0)
	return min(batchInnerBlock, nb-l0), ao >> shift, bo >> shift, co >> shift
}

// runBatchInner computes block u of a batch for which batchInner holds, on
// complex views of the operands for a complex plan.
func (p *plan[R]) runBatchInner(ws *workspace[R], u int) {
	testBatchInnerUnits.Add(1)
	if !p.cplx {
		batchBlockOf(p, ws, p.a.data, p.b.data, p.c.data, 0, u, p.alpha, p.beta)
		return
	}
	switch q := any(p).(type) {
	case *plan[float64]:
		w := any(ws).(*workspace[float64])
		batchBlockOf(q, w, viewAs[complex128](q.a.data), viewAs[complex128](q.b.data), viewAs[complex128](q.c.data),
			1, u, complex(q.ar, q.ai), complex(q.beta, 0))
	case *plan[float32]:
		w := any(ws).(*workspace[float32])
		batchBlockOf(q, w, viewAs[complex64](q.a.data), viewAs[complex64](q.b.data), viewAs[complex64](q.c.data),
			1, u, complex(q.ar, q.ai), complex(q.beta, 0))
	}
}

// batchBlockOf computes block u on views of p's operands in elements of E
// (see batchInnerOf): by batchTilesOf for a tiled batch, else by
// batchInnerOf.
func batchBlockOf[E level1.Scalar, R float](p *plan[R], ws *workspace[R], a, b, c []E, shift, u int, alpha, beta E) {
	if p.tiles {
		batchTilesOf(p, ws, a, b, c, shift, u, alpha, beta)
		return
	}
	batchInnerOf(p, ws, a, b, c, shift, u, alpha, beta)
}

// batchTile is the number of dots batchTilesOf gathers at a time: a 64-byte
// cache line of float64s.
const batchTile = 8

// batchTilesOf computes block u of a batch for which batchTileShape holds:
// the operand contiguous along the batch has its block's k-vectors
// gathered batchTile at a time, each k index's batchTile elements a run
// (a cache line in float64), then dotted with the other operand's
// contiguous lines. A dot at a time gathered its vector an element per
// line, the lines of one column often in one set of L1 (A's k stride a
// multiple of 4 KiB) and evicted before the next dots used them.
func batchTilesOf[E level1.Scalar, R float](p *plan[R], ws *workspace[R], a, b, c []E, shift, u int, alpha, beta E) {
	k, last := p.k>>shift, len(p.batch)-1
	n, ao, bo, co := p.batchBlock(u, shift)
	cbs := p.cbs[last] // batch strides are in user elements, as the views'
	// x: the operand contiguous along the batch, its k stride xks; y: the
	// other, its batch stride ybs, k contiguous.
	x, xo, xks, y, yo, ybs := a, ao, p.a.cs>>shift, b, bo, p.bbs[last]
	if p.abs[last] != 1 {
		x, xo, xks, y, yo, ybs = b, bo, p.b.rs>>shift, a, ao, p.abs[last]
	}
	vecs := growAs[E](&ws.a, batchTile*k)
	// Short dots are summed in Go: through the vector kernels, a call and
	// the reduction of their partial sums cost more than the sum.
	short := k<<shift < minDotK
	for t0 := 0; t0 < n; t0 += batchTile {
		tn := min(batchTile, n-t0)
		for q := range k {
			run := x[xo+t0+q*xks:][:tn]
			for l, e := range run {
				vecs[l*k+q] = e
			}
		}
		for l := range tn {
			x, line := vecs[l*k:(l+1)*k], y[yo+(t0+l)*ybs:][:k]
			var s E
			if short {
				for q, xq := range x {
					s += xq * line[q]
				}
			} else {
				s = dotLine(x, line)
			}
			at := co + (t0+l)*cbs
			c[at] = scaledSum(alpha, s, beta, c[at])
		}
	}
}

// minMulAdd is the fewest real elements of a batch's run that
// batchInnerOf sums with level1.MulAdd: below, the call costs more than
// its vector loop saves. One thread, AMD EPYC (Zen 5), ij,ij->j over 2^18
// elements, Go loop against MulAdd: float64 runs of 8 0.23 against 0.30
// ms, 12 0.21 against 0.21, 16 0.19 against 0.15; complex128 runs of 4
// 0.47 against 0.58, 8 0.39 against 0.34.
const minMulAdd = 16

// testBatchInnerUnits counts the blocks runBatchInner computed (read by
// tests).
var testBatchInnerUnits atomic.Int64

// batchInnerOf is runBatchInner on a, b and c, views of p's operands in
// elements of E, each 2^shift of p's real elements (see dotProductsOf).
func batchInnerOf[E level1.Scalar, R float](p *plan[R], ws *workspace[R], a, b, c []E, shift, u int, alpha, beta E) {
	k := p.k >> shift
	n, ao, bo, co := p.batchBlock(u, shift)
	acs, brs := p.a.cs>>shift, p.b.rs>>shift
	sums, part := growAs[E](&ws.a, n), growAs[E](&ws.b, n)
	vector := n<<shift >= minMulAdd
	for q0 := 0; q0 < k; q0 += batchInnerChunk {
		acc := sums // the first piece sums in place, later ones apart
		if q0 > 0 {
			acc = part
		}
		clear(acc)
		for q := q0; q < min(q0+batchInnerChunk, k); q++ {
			x, y := a[ao+q*acs:][:n], b[bo+q*brs:][:n]
			if vector {
				level1.MulAdd(x, y, acc)
				continue
			}
			for l := range acc {
				acc[l] += x[l] * y[l]
			}
		}
		if q0 > 0 {
			for l, s := range part {
				sums[l] += s
			}
		}
	}
	out := c[co:][:n]
	for l, s := range sums {
		out[l] = scaledSum(alpha, s, beta, out[l])
	}
}
