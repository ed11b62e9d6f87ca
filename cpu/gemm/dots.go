package gemm

import "github.com/goferro/goferro/internal/level1"

// Products whose C is smaller than a micro-tile, over a long k (8×8×1024;
// 2×2×65536), are dot products: each element of C is a row of A times a
// column of B. Packed for the micro-kernels, such a product computes a
// whole 12×16 tile for each of its few elements, mostly padding, and
// packs both operands first (8×8×1024 took 18 µs, 2×2×65536 710 µs, where
// numpy on OpenBLAS takes 5.7 and 117).

// dotChunk is the length of k that dots gathers at a time, when a row of
// A or a column of B is not contiguous: it bounds the gathered copy of B
// to dotChunk·n elements.
const dotChunk = 8192

// usesDots reports whether a real m×n×k product runs as dot products:
// where C fits in one micro-tile with room to spare and k is long enough
// for a dot's fixed cost to be paid, k ≥ 2·m·n. One thread, float64,
// AVX-512 kernel 12×16, B row-major, ns as dot products against packed
// (BenchmarkDots): 8×8×64 1447 against 1451, 8×8×256 3125 against 5093;
// 11×11×64 1723 against 1718, ×256 5106 against 6441; 8×15×64 1721
// against 1711, ×256 5742 against 6129; 4×4×32 488 against 696.
func usesDots[R float](m, n, k int, kern *kernel[R]) bool {
	return m < kern.mr && n < kern.nr && k >= dotsKPerOutput*m*n
}

// dotsKPerOutput is usesDots's least k per element of C (tests lower it).
var dotsKPerOutput = 2

// dotProducts computes one batch element of a real plan chosen for dot products
// (see usesDots). Lines of A and B that are contiguous along k are read in
// place; others are gathered, dotChunk elements of k at a time, into ws.
func (p *plan[R]) dotProducts(ws *workspace[R], ao, bo, co int) {
	a, b, c := &p.a, &p.b, &p.c
	inPlaceA := !a.gather() && a.cs == 1
	inPlaceB := !b.gather() && b.rs == 1
	chunk := p.k
	if !inPlaceA || !inPlaceB {
		chunk = min(p.k, dotChunk)
	}
	ws.tile = grow(ws.tile, p.m*p.n)
	sums := ws.tile
	clear(sums)
	for q0 := 0; q0 < p.k; q0 += chunk {
		kb := min(chunk, p.k-q0)
		if !inPlaceB {
			ws.b = grow(ws.b, p.n*chunk)
			for j := range p.n {
				base := bo + offsetOf(b.co, b.cs, j)
				gatherFrom(ws.b[j*chunk:j*chunk+kb], b.data, base, b.ro, b.rs, q0)
			}
		}
		for i := range p.m {
			var row []R
			if base := ao + offsetOf(a.ro, a.rs, i); inPlaceA {
				row = a.data[base+q0 : base+q0+kb]
			} else {
				ws.a = grow(ws.a, chunk)
				row = gatherFrom(ws.a[:kb], a.data, base, a.co, a.cs, q0)
			}
			for j := range p.n {
				var col []R
				if inPlaceB {
					base := bo + offsetOf(b.co, b.cs, j) + q0
					col = b.data[base : base+kb]
				} else {
					col = ws.b[j*chunk : j*chunk+kb]
				}
				sums[i*p.n+j] += dotLine(row, col)
			}
		}
	}
	for i := range p.m {
		for j := range p.n {
			p.store(co+i*c.rs+j*c.cs, p.alpha*sums[i*p.n+j], p.beta)
		}
	}
}

// gatherFrom gathers into dst the len(dst) elements of a line (see
// gatherLine) from its q0-th on.
func gatherFrom[R float](dst, src []R, base int, tab []int, stride, q0 int) []R {
	if tab != nil {
		return gatherLine(dst, src, base, tab[q0:], stride)
	}
	return gatherLine(dst, src, base+q0*stride, nil, stride)
}

// dotBlock is the length up to which dotLine sums on level1.Dotu alone.
const dotBlock = 512

// dotLine returns Σ x[q]·y[q]: blocks of at most dotBlock elements on
// level1.Dotu (whose vector kernels keep 16 or 32 partial sums), the
// blocks' sums added pairwise, so that a long float32 dot stays about as
// accurate as dot's pairwise sum.
func dotLine[R float](x, y []R) R {
	if len(x) <= dotBlock {
		return level1.Dotu(x, y)
	}
	h := (len(x)/2 + 31) &^ 31 // whole vector loops in the first half
	return dotLine(x[:h], y[:h]) + dotLine(x[h:], y[h:])
}
