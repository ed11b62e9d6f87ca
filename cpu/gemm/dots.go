package gemm

import (
	"unsafe"

	"github.com/goferro/goferro/internal/level1"
)

// Products whose C is smaller than a micro-tile, over a long k (8×8×1024;
// 2×2×65536), are dot products: each element of C is a row of A times a
// column of B (complex products alike, on complex views of the real
// plan). Packed for the micro-kernels, such a product computes a whole
// 12×16 tile for each of its few elements, mostly padding, and packs both
// operands first (float64 8×8×1024 took 18 µs, 2×2×65536 710 µs, where
// numpy on OpenBLAS takes 5.7 and 117).

// dotChunk is the length of k that dotProducts takes at a time: the
// chunks of A's rows and B's columns (gathered when not contiguous, at
// most dotChunk·n elements of B) stay in the L2 cache while each is used
// n or m times. Whole lines at once, a product too big for the caches read
// each row of A once for every column of B from memory: float64, one
// thread, B column-major, 4×4×2²⁰ took 6.4–6.7 ms against 3.4–4.5 in
// chunks, 8×8×2¹⁶ 0.69 against 0.50.
const dotChunk = 2048

// usesDots reports whether a product of real-view extents m×n×k (a
// complex one's n and k doubled) runs as dot products: where C fits in
// half a micro-tile (at most mr·nr/2 elements, neither extent a full
// tile's) and k is long enough for a dot's fixed cost to be paid,
// k ≥ 2·m·n. One thread, float64, AVX-512 kernel 12×16, B row-major, ns
// as dot products against packed (BenchmarkDots): 8×8×64 1447 against
// 1451, 8×8×256 3125 against 5093, 4×4×32 488 against 696. Nearer a full
// tile the kernel's work per element beats the dots' at long k: 11×15×16384
// took 512 µs as dots against 421 packed, 8×15×16384 439 against 377.
func usesDots[R float](m, n, k int, kern *kernel[R]) bool {
	return m < kern.mr && n < kern.nr && 2*m*n <= kern.mr*kern.nr && k >= dotsKPerOutput*m*n
}

// dotsKPerOutput is usesDots's least k per element of C (tests lower it).
var dotsKPerOutput = 2

// dotProducts computes one batch element of a plan chosen for dot
// products (see usesDots). A complex plan's dots run on complex views of
// its real operands, with alpha applied at the end.
func (p *plan[R]) dotProducts(ws *workspace[R], ao, bo, co int) {
	if !p.cplx {
		dotProductsOf(p, ws, p.a.data, p.b.data, p.c.data, 0, ao, bo, co, p.alpha, p.beta)
		return
	}
	switch q := any(p).(type) {
	case *plan[float64]:
		w := any(ws).(*workspace[float64])
		dotProductsOf(q, w, viewAs[complex128](q.a.data), viewAs[complex128](q.b.data), viewAs[complex128](q.c.data),
			1, ao, bo, co, complex(q.ar, q.ai), complex(q.beta, 0))
	case *plan[float32]:
		w := any(ws).(*workspace[float32])
		dotProductsOf(q, w, viewAs[complex64](q.a.data), viewAs[complex64](q.b.data), viewAs[complex64](q.c.data),
			1, ao, bo, co, complex(q.ar, q.ai), complex(q.beta, 0))
	}
}

// dotProductsOf is dotProducts on a, b and c, views of p's operands in
// elements of E, each 2^shift of p's real elements: the plan's offsets,
// strides and extents, in real elements, are shifted down to E's. It goes
// along k dotChunk elements at a time, reading lines of A and B that are
// contiguous along k in place and gathering the others into ws; each
// chunk's dots add to the sums of the chunks before.
func dotProductsOf[E level1.Scalar, R float](p *plan[R], ws *workspace[R], a, b, c []E, shift, ao, bo, co int, alpha, beta E) {
	pa, pb, pc := &p.a, &p.b, &p.c
	m, n, k := p.m, p.n>>shift, p.k>>shift
	unit := 1 << shift
	inPlaceA := !pa.gather() && pa.cs == unit
	inPlaceB := !pb.gather() && pb.rs == unit
	chunk := min(k, dotChunk)
	sums := growAs[E](&ws.tile, m*n)
	clear(sums)
	for q0 := 0; q0 < k; q0 += chunk {
		kb := min(chunk, k-q0)
		var cols []E
		if !inPlaceB {
			cols = growAs[E](&ws.b, n*chunk)
			for j := range n {
				gather(cols[j*chunk:j*chunk+kb], b, bo+offsetOf(pb.co, pb.cs, j), pb.ro, pb.rs, q0, shift)
			}
		}
		for i := range m {
			var row []E
			if base := (ao + offsetOf(pa.ro, pa.rs, i)) >> shift; inPlaceA {
				row = a[base+q0 : base+q0+kb]
			} else {
				row = gather(growAs[E](&ws.a, kb), a, ao+offsetOf(pa.ro, pa.rs, i), pa.co, pa.cs, q0, shift)
			}
			for j := range n {
				var col []E
				if inPlaceB {
					base := (bo+offsetOf(pb.co, pb.cs, j))>>shift + q0
					col = b[base : base+kb]
				} else {
					col = cols[j*chunk : j*chunk+kb]
				}
				sums[i*n+j] += dotLine(row, col)
			}
		}
	}
	for i := range m {
		for j := range n {
			x := (co + i*pc.rs + j*pc.cs) >> shift
			c[x] = scaledSum(alpha, sums[i*n+j], beta, c[x])
		}
	}
}

// scaledSum returns alpha·s + beta·old, old unread when beta is zero (C
// may then hold NaNs), each product as scaled computes it.
func scaledSum[E level1.Scalar](alpha, s, beta, old E) E {
	switch v := scaled(alpha, s); beta {
	case 0:
		return v
	case 1:
		return old + v
	default:
		return v + scaled(beta, old)
	}
}

// scaled returns s·x; a complex x with a real s (the beta of every
// complex plan here, and most alphas) part by part, as the packed path
// scales, so that an infinite part does not make the other NaN: Go's
// complex product (1+0i)·(Inf+0i) is Inf+NaNi.
func scaled[E level1.Scalar](s, x E) E {
	switch sv := any(s).(type) {
	case complex128:
		if imag(sv) == 0 {
			xv := any(x).(complex128)
			return any(complex(real(sv)*real(xv), real(sv)*imag(xv))).(E)
		}
	case complex64:
		if imag(sv) == 0 {
			xv := any(x).(complex64)
			return any(complex(real(sv)*real(xv), real(sv)*imag(xv))).(E)
		}
	}
	return s * x
}

// gather fills dst with elements q0, q0+1, … of a line of src (its offsets
// base+tab[q], or base+q·stride where tab is nil, in real elements, each
// shifted down by shift to src's) and returns it.
func gather[E any](dst, src []E, base int, tab []int, stride, q0, shift int) []E {
	if tab != nil {
		for q, o := range tab[q0 : q0+len(dst)] {
			dst[q] = src[(base+o)>>shift]
		}
		return dst
	}
	for q := range dst {
		dst[q] = src[(base+(q0+q)*stride)>>shift]
	}
	return dst
}

// growAs grows the real workspace buffer *buf to hold n elements of E and
// returns them.
func growAs[E any, R float](buf *[]R, n int) []E {
	*buf = grow(*buf, n*int(unsafe.Sizeof(*new(E))/unsafe.Sizeof(*new(R))))
	return viewAs[E](*buf)[:n]
}

// dotBlock is the length up to which dotLine sums on level1.Dotu alone.
const dotBlock = 512

// dotLine returns Σ x[q]·y[q]: blocks of at most dotBlock elements on
// level1.Dotu (whose vector kernels keep 16 or 32 partial sums), the
// blocks' sums added pairwise. dotProducts adds its chunks' dots in order:
// float32, k = 2²³, relative error 4e-7, against 3e-6 packed and 5e-8 for
// gemv's fully pairwise dot.
func dotLine[E level1.Scalar](x, y []E) E {
	if len(x) <= dotBlock {
		return level1.Dotu(x, y)
	}
	h := (len(x)/2 + 31) &^ 31 // whole vector loops in the first half
	return dotLine(x[:h], y[:h]) + dotLine(x[h:], y[h:])
}
