package gemm

import (
	"github.com/goferro/goferro/internal/level1"
	"github.com/goferro/goferro/internal/xmath"
)

// Matrix-vector products (n == 1 or m == 1) skip packing: packing would
// touch every element of the matrix once more, as often as the product
// itself does, and the micro-tiles would be mostly padding.

// gemv computes one batch element of a real plan with m == 1 or n == 1.
// It reports false when the layout is not one it handles.
//
// The m == 1 case is the n == 1 case for Bᵀ·aᵀ, written out again: one body
// for both (through a helper, or choosing the operands first) measured 2–6%
// more instructions per call in the tiny batched products einsum lowers to,
// where gemv runs once per batch element.
func (p *plan[R]) gemv(ws *workspace[R], ao, bo, co int) bool {
	a, b, c := &p.a, &p.b, &p.c
	alpha, beta := p.alpha, p.beta
	if a.gather() || b.gather() {
		p.gemvGather(ws, ao, bo, co)
		return true
	}
	switch {
	case p.n == 1 && (a.cs == 1 || a.rs == 1):
		// c[i] = alpha·A[i,:]·b + beta·c[i]
		if a.cs == 1 && p.k < gemvShortLine {
			p.shortLines(ws, a.data, ao, a.rs, p.m, b.data, bo, b.rs, co, c.rs)
			return true
		}
		if a.cs == 1 {
			for i := 0; i < p.m; i++ {
				s := dot(a.data, ao+i*a.rs, b.data, bo, b.rs, p.k)
				p.store(co+i*c.rs, alpha*s, beta)
			}
			return true
		}
		acc := grow(ws.tile, p.m)
		clear(acc)
		for q := 0; q < p.k; q++ {
			axpy(acc, b.data[bo+q*b.rs], a.data[ao+q*a.cs:ao+q*a.cs+p.m])
		}
		for i, s := range acc {
			p.store(co+i*c.rs, alpha*s, beta)
		}
		ws.tile = acc
		return true
	case p.m == 1 && (b.cs == 1 || b.rs == 1):
		// c[j] = alpha·a·B[:,j] + beta·c[j]
		if b.rs == 1 && p.k < gemvShortLine {
			p.shortLines(ws, b.data, bo, b.cs, p.n, a.data, ao, a.cs, co, c.cs)
			return true
		}
		if b.rs == 1 {
			for j := 0; j < p.n; j++ {
				s := dot(b.data, bo+j*b.cs, a.data, ao, a.cs, p.k)
				p.store(co+j*c.cs, alpha*s, beta)
			}
			return true
		}
		acc := grow(ws.tile, p.n)
		clear(acc)
		for q := 0; q < p.k; q++ {
			axpy(acc, a.data[ao+q*a.cs], b.data[bo+q*b.rs:bo+q*b.rs+p.n])
		}
		for j, s := range acc {
			p.store(co+j*c.cs, alpha*s, beta)
		}
		ws.tile = acc
		return true
	}
	return false
}

// gemvShortLine is the length of the lines of A (n = 1) or B (m = 1),
// contiguous along k, below which gemv sums them four at a time in Go
// (shortLines).
const gemvShortLine = 16

// shortLines computes gemv's product for lines shorter than
// gemvShortLine: c[co+i·cs] = alpha·line(i)·x + beta·c[co+i·cs] for i <
// count, where line i is count's lines[base+i·stride:][:k] and x is the
// vector's k elements from vec[vbase] vs apart. Four lines at a time,
// their sums independent chains of additions: one at a time, through dot,
// a line of four elements took 14 ns, mostly calls and a chain of
// additions waiting on itself (float64 einsum ijk,k->ij over 512×512×4).
func (p *plan[R]) shortLines(ws *workspace[R], lines []R, base, stride, count int, vec []R, vbase, vs, co, cs int) {
	x := gather(grow(ws.b, p.k), vec, vbase, nil, vs, 0, 0)
	ws.b = x
	i := 0
	for ; i+4 <= count; i += 4 {
		at := base + i*stride
		l0, l1 := lines[at:][:len(x)], lines[at+stride:][:len(x)]
		l2, l3 := lines[at+2*stride:][:len(x)], lines[at+3*stride:][:len(x)]
		var s0, s1, s2, s3 R
		for q, v := range x {
			s0 += l0[q] * v
			s1 += l1[q] * v
			s2 += l2[q] * v
			s3 += l3[q] * v
		}
		for r, s := range [4]R{s0, s1, s2, s3} {
			p.store(co+(i+r)*cs, p.alpha*s, p.beta)
		}
	}
	for ; i < count; i++ {
		line := lines[base+i*stride:][:len(x)]
		var s R
		for q, v := range x {
			s += line[q] * v
		}
		p.store(co+i*cs, p.alpha*s, p.beta)
	}
}

// gemvGather is gemv where A or B has offset tables: it gathers the vector
// once, and each row of A (n == 1) or column of B (m == 1) in turn, into
// contiguous buffers for dot.
func (p *plan[R]) gemvGather(ws *workspace[R], ao, bo, co int) {
	a, b, c := &p.a, &p.b, &p.c
	ws.a, ws.b = grow(ws.a, p.k), grow(ws.b, p.k)
	if p.n == 1 {
		// c[i] = alpha·A[i,:]·b + beta·c[i]
		x := gather(ws.b, b.data, bo, b.ro, b.rs, 0, 0)
		for i := 0; i < p.m; i++ {
			row := gather(ws.a, a.data, ao+offsetOf(a.ro, a.rs, i), a.co, a.cs, 0, 0)
			p.store(co+i*c.rs, p.alpha*dot(row, 0, x, 0, 1, p.k), p.beta)
		}
		return
	}
	// c[j] = alpha·a·B[:,j] + beta·c[j]
	x := gather(ws.a, a.data, ao, a.co, a.cs, 0, 0)
	for j := 0; j < p.n; j++ {
		col := gather(ws.b, b.data, bo+offsetOf(b.co, b.cs, j), b.ro, b.rs, 0, 0)
		p.store(co+j*c.cs, p.alpha*dot(col, 0, x, 0, 1, p.k), p.beta)
	}
}

// offsetOf is the offset of line i: tab[i], or i·stride where tab is nil.
func offsetOf(tab []int, stride, i int) int {
	if tab != nil {
		return tab[i]
	}
	return i * stride
}

func (p *plan[R]) store(x int, v, beta R) {
	if beta == 0 {
		p.c.data[x] = v
	} else {
		p.c.data[x] = v + beta*p.c.data[x]
	}
}

// dot returns Σ x[xo+q]·y[yo+q·ys] for q < n, summed pairwise (dotLine,
// xmath.DotStrided): a float32 dot of 10^7 elements is off by about 1e-7
// relative, not 1e-3 as summed in order.
func dot[R float](x []R, xo int, y []R, yo, ys, n int) R {
	if ys == 1 {
		return dotLine(x[xo:xo+n], y[yo:yo+n]) // on the vector kernels
	}
	return xmath.DotStrided(x, xo, 1, y, yo, ys, n)
}

// axpy adds s·x to acc, unless s is zero: then a column of A or row of B
// whose b or a element is zero is not read, as BLAS's gemv skips it.
func axpy[R float](acc []R, s R, x []R) {
	if s != 0 {
		level1.Axpy(s, x[:len(acc)], acc)
	}
}
