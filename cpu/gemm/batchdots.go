package gemm

// A batch of dot products whose batch runs along memory and whose k does
// not (einsum's ij,ij->j: 256 dots of 4096 elements 256 apart) is summed a
// k index at a time across the batch: A's and B's elements at that k, a
// contiguous run over the batch each, multiplied element by element into
// the batch's sums. A dot at a time, each element came from a cache line
// of its own, shared with seven other dots that read it again later:
// float64 ij,ij->j over 4096×256, one thread, took 6.9 ms (numpy 0.44).

// batchInnerChunk is the length of k whose products are summed apart
// before they are added to the batch's sums, so that a long k is summed
// in pieces, as dotProducts sums it in chunks.
const batchInnerChunk = 512

// batchInner reports whether p is such a batch (see batchInnerShape), real
// and with no offset tables.
func (p *plan[R]) batchInner() bool {
	return !p.cplx && !p.scaleOnly && !p.a.gather() && !p.b.gather() &&
		batchInnerShape(p.m, p.n, p.k, p.batch, p.abs, p.bbs, p.cbs, p.a.cs, p.b.rs)
}

// batchInnerShape reports whether a batch of m×n×k products is one of dot
// products (m = n = 1, k ≥ 2) whose last batch axis, of two or more, is
// contiguous in A, B and C (batch strides abs, bbs and cbs) and whose k
// is not contiguous in both A and B (strides acs and brs; where it is,
// dotProducts reads each dot in place).
func batchInnerShape(m, n, k int, batch, abs, bbs, cbs []int, acs, brs int) bool {
	last := len(batch) - 1
	return m == 1 && n == 1 && k >= 2 && last >= 0 && batch[last] >= 2 &&
		abs[last] == 1 && bbs[last] == 1 && cbs[last] == 1 && (acs != 1 || brs != 1)
}

// runBatchInner computes a batch for which batchInner holds, a run of its
// last axis at a time.
func (p *plan[R]) runBatchInner(ws *workspace[R]) {
	nb := p.batch[len(p.batch)-1]
	sums, part := grow(ws.a, nb), grow(ws.b, nb)
	a, b := p.a.data, p.b.data
	for run := range p.nbatch / nb {
		ao, bo, co := p.offsets(run * nb)
		clear(sums)
		for q0 := 0; q0 < p.k; q0 += batchInnerChunk {
			clear(part)
			for q := q0; q < min(q0+batchInnerChunk, p.k); q++ {
				x, y := a[ao+q*p.a.cs:][:nb], b[bo+q*p.b.rs:][:nb]
				for l := range part {
					part[l] += x[l] * y[l]
				}
			}
			for l, s := range part {
				sums[l] += s
			}
		}
		for l, s := range sums {
			p.store(co+l, p.alpha*s, p.beta)
		}
	}
	ws.a, ws.b = sums, part
}
