package linalg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/goferro/goferro/internal/level1"
)

// leafPassGo is leafKernel's contract in plain Go, the reference for the
// assembly kernels.
func leafPassGo(rows *float64, n, j int, s float64, wp *float64, next int, accp *float64, ld int) {
	w, acc := unsafe.Slice(wp, leafWidth), unsafe.Slice(accp, leafWidth)
	for i := range n {
		row := unsafe.Slice((*float64)(unsafe.Add(unsafe.Pointer(rows), i*ld*8)), leafWidth)
		v := row[j] * s
		x := row[next] + v*w[next]
		for c := range row {
			row[c] += v * w[c]
			acc[c] += x * row[c]
		}
		row[j] = v
	}
}

// TestLeafKernels runs each assembly kernel this CPU has against
// leafPassGo, on every lane j (next = j, as leafFactor's first and last
// passes have it, and j+1), on row counts around its two-row steps, and
// with rows leafWidth apart (a copy's) and further (a row-major panel's,
// whose elements between the rows a kernel must not touch).
func TestLeafKernels(t *testing.T) {
	if len(leafKernels) == 0 {
		t.Skip("no leaf kernels on this CPU and build")
	}
	rng := newRand(71)
	for ki, kernel := range leafKernels {
		for _, ld := range []int{leafWidth, leafWidth + 5} {
			for _, n := range []int{0, 1, 2, 3, 4, 7, 33} {
				for j := range leafWidth {
					for _, next := range []int{j, min(j+1, leafWidth-1)} {
						name := fmt.Sprintf("kernel %d, ld=%d n=%d j=%d next=%d", ki, ld, n, j, next)
						testLeafKernel(t, name, rng, kernel, ld, n, j, next)
					}
				}
			}
		}
	}
}

func testLeafKernel(t *testing.T, name string, rng *rand.Rand, kernel leafKernel, ld, n, j, next int) {
	t.Helper()
	// One more element on each side: a kernel must not touch them.
	buf := make([]float64, n*ld+2)
	w, acc := make([]float64, leafWidth), make([]float64, leafWidth)
	for i := range buf {
		buf[i] = rng.NormFloat64()
	}
	for c := j + 1; c < leafWidth; c++ {
		w[c] = rng.NormFloat64()
	}
	for c := range acc {
		acc[c] = rng.NormFloat64()
	}
	s := rng.NormFloat64()
	want, wantAcc, w0 := slices.Clone(buf), slices.Clone(acc), slices.Clone(w)
	leafPassGo(&want[1], n, j, s, &w[0], next, &wantAcc[0], ld)
	kernel(&buf[1], n, j, s, &w[0], next, &acc[0], ld)
	for i := range buf {
		if math.Abs(buf[i]-want[i]) > 1e-14*(1+math.Abs(want[i])) {
			t.Fatalf("%s: element %d = %v, want %v", name, i-1, buf[i], want[i])
		}
	}
	if !slices.Equal(w, w0) {
		t.Fatalf("%s: w changed", name)
	}
	for c := range acc {
		if math.Abs(acc[c]-wantAcc[c]) > 1e-12*(1+float64(n)) {
			t.Fatalf("%s: acc[%d] = %v, want %v", name, c, acc[c], wantAcc[c])
		}
	}
}

// TestLeafTKernels runs each triangular-factor kernel this CPU has
// against appendFactorColumn on every column j of a random triangular
// factor, with 8 bytes either side that a kernel must not touch.
func TestLeafTKernels(t *testing.T) {
	if len(leafTKernels) == 0 {
		t.Skip("no leaf kernels on this CPU and build")
	}
	rng := newRand(72)
	for ki, kernel := range leafTKernels {
		for j := range leafWidth {
			buf := make([]float64, leafWidth*leafWidth+2)
			for i := range buf {
				buf[i] = rng.NormFloat64()
			}
			got := mat[float64]{rows: leafWidth, cols: leafWidth, ld: leafWidth, data: buf[1 : len(buf)-1]}
			for c := j; c < leafWidth; c++ { // the columns from j on are zeros
				clear(got.col(c))
			}
			for c := range j { // and T is upper triangular
				clear(got.col(c)[c+1:])
			}
			x := make([]float64, leafWidth)
			for i := range x {
				x[i] = rng.NormFloat64()
			}
			tau := rng.NormFloat64()
			want := got.clone()
			appendFactorColumn(want, j, x[:j], tau)
			before := slices.Clone(buf)
			kernel(&got.data[0], j, &x[0], -tau)
			got.set(j, j, tau)
			if buf[0] != before[0] || buf[len(buf)-1] != before[len(buf)-1] {
				t.Fatalf("kernel %d, j=%d: wrote outside t", ki, j)
			}
			for i, w := range want.data {
				if g := got.data[i]; math.Abs(g-w) > 1e-14*(1+math.Abs(w)) || math.Signbit(g) != math.Signbit(w) {
					t.Fatalf("kernel %d, j=%d: element (%d, %d) = %v, want %v", ki, j, i%leafWidth, i/leafWidth, g, w)
				}
			}
		}
	}
}

// leafKinds are TestLeafFactor's kinds of panel, and leafDeclines those
// leafFactor must decline.
var (
	leafKinds    = []string{"random", "zero column", "zero below", "repeated", "large", "small", "huge", "tiny", "tiny column"}
	leafDeclines = map[string]bool{"huge": true, "tiny": true, "tiny column": true}
)

// leafPanel returns a column-major m×n panel of the kind.
func leafPanel(rng *rand.Rand, kind string, m, n int) mat[float64] {
	a := newMat[float64](m, n)
	for i := range a.data {
		a.data[i] = rng.NormFloat64()
	}
	c := n / 2
	switch kind {
	case "zero column":
		clear(a.col(c))
	case "zero below":
		clear(a.col(c)[c+1:])
	case "repeated":
		if c > 0 {
			copy(a.col(c), a.col(c-1))
		}
	case "large", "small", "huge", "tiny":
		f := map[string]float64{"large": 0x1p500, "small": 0x1p-250, "huge": 0x1p700, "tiny": 0x1p-700}[kind]
		for i := range a.data {
			a.data[i] *= f
		}
	case "tiny column":
		// Column 0 small, the last column tiny below its first row: x·row
		// underflows, and the last column, with no rows below its
		// diagonal when m = n, has no x of its own to decline on.
		level1.Scal(0x1p-300, a.col(0))
		a.col(n - 1)[0] = 0
		level1.Scal(0x1p-800, a.col(n-1))
	}
	return a
}

// rowMajorCopy returns a copy of a stored row-major, its rows ld apart.
func rowMajorCopy(a mat[float64], ld int) mat[float64] {
	r := mat[float64]{rows: a.rows, cols: a.cols, ld: ld, data: make([]float64, a.rows*ld), rowMajor: true}
	for i := range a.rows {
		for j := range a.cols {
			r.set(i, j, a.at(i, j))
		}
	}
	return r
}

// TestLeafFactorRowMajor runs leafFactor in place on row-major panels of
// leafWidth columns (rows further apart than that) and checks that it
// declines where it does on their column-major copies, and otherwise
// computes the same panel, τ and triangular factor, to the bit: the same
// passes on the same rows.
func TestLeafFactorRowMajor(t *testing.T) {
	rng := newRand(74)
	for ki, kernel := range append([]leafKernel{leafPassGo}, leafKernels...) {
		for _, m := range []int{leafWidth, leafWidth + 1, 37, 130} {
			for _, kind := range leafKinds {
				a := leafPanel(rng, kind, m, leafWidth)
				r := rowMajorCopy(a, leafWidth+3)
				wantTaus, taus := make([]float64, leafWidth), make([]float64, leafWidth)
				wantT, wantOK := leafFactor(kernel, a, wantTaus)
				gotT, ok := leafFactor(kernel, r, taus)
				if ok != wantOK {
					t.Fatalf("kernel %d, %d×%d %s: declined %v, column-major %v", ki, m, leafWidth, kind, !ok, !wantOK)
				}
				if !ok {
					continue
				}
				if !slices.Equal(r.data, rowMajorCopy(a, leafWidth+3).data) || !slices.Equal(taus, wantTaus) || !slices.Equal(gotT.data, wantT.data) {
					t.Fatalf("kernel %d, %d×%d %s: row-major factors differ", ki, m, leafWidth, kind)
				}
				recycle(gotT)
				recycle(wantT)
			}
		}
	}
}

// TestLeafFactor compares leafFactor, on leafPassGo and on each assembly
// kernel, with geqr2 and triangularFactor: the same R, reflectors, τ and
// triangular factor, on panels of the widths geqrt hands it (and one and
// two columns), square and tall, with columns that are zero, zero below
// the diagonal or repeated, with all entries scaled towards overflow and
// underflow, and with one column too small for the plain sums beside one
// that is not. It declines, leaving the panel as it was, exactly where it
// must (leafFactor's rule), and takes its padding from a pooled buffer
// left full of NaN.
func TestLeafFactor(t *testing.T) {
	kernels := append([]leafKernel{leafPassGo}, leafKernels...)
	rng := newRand(73)
	for ki, kernel := range kernels {
		for _, n := range []int{1, 2, 8, 12, 15, 16} {
			for _, m := range []int{n, n + 1, n + 2, 37, 130} {
				for _, kind := range leafKinds {
					a := leafPanel(rng, kind, m, n)
					want := a.clone()
					wantTaus := make([]float64, n)
					geqr2(want, wantTaus, leftWork[float64](m, n))
					v, restore := explicitV(want)
					wantT := triangularFactor(v, wantTaus)
					restore()
					taus := make([]float64, n)
					orig := a.clone()
					dirty := scratch[float64](leafWidth, m)
					for i := range dirty.data {
						dirty.data[i] = math.NaN()
					}
					recycle(dirty)
					gotT, ok := leafFactor(kernel, a, taus)
					// With one column, "tiny column" is column 0, small
					// but not tiny.
					decline := leafDeclines[kind] && !(n == 1 && kind == "tiny column")
					switch {
					case ok && decline:
						t.Fatalf("kernel %d, %d×%d %s: not declined", ki, m, n, kind)
					case !ok && !decline:
						t.Fatalf("kernel %d, %d×%d %s: declined", ki, m, n, kind)
					case !ok:
						if !slices.Equal(a.data, orig.data) {
							t.Fatalf("kernel %d, %d×%d %s: declined, but changed the panel", ki, m, n, kind)
						}
						recycle(wantT)
						continue
					}
					checkLeaf(t, orig, a, taus, gotT)
					if kind == "repeated" {
						// Column c's x after the first c reflectors is
						// rounding noise, which its reflector scales up:
						// two correct factorisations need not agree on it.
						recycle(gotT)
						recycle(wantT)
						continue
					}
					scale := maxAbs(want.data)
					for i := range a.data {
						if math.Abs(a.data[i]-want.data[i]) > 1e-12*scale {
							t.Fatalf("kernel %d, %d×%d %s: panel element %d = %v, want %v", ki, m, n, kind, i, a.data[i], want.data[i])
						}
					}
					for i := range taus {
						if math.Abs(taus[i]-wantTaus[i]) > 1e-12 {
							t.Fatalf("kernel %d, %d×%d %s: τ[%d] = %v, want %v", ki, m, n, kind, i, taus[i], wantTaus[i])
						}
					}
					for i := range gotT.data {
						if math.Abs(gotT.data[i]-wantT.data[i]) > 1e-11 {
							t.Fatalf("kernel %d, %d×%d %s: T element %d = %v, want %v", ki, m, n, kind, i, gotT.data[i], wantT.data[i])
						}
					}
					recycle(gotT)
					recycle(wantT)
				}
			}
		}
	}
}

// checkLeaf checks a leaf's factorisation of orig, left in a (R above the
// diagonal, V below it) with its τ and triangular factor t: Q = I − V·T·Vᵀ
// has orthonormal columns, Q·R is orig to rounding in each column's own
// scale, and T's diagonal is τ.
func checkLeaf(t *testing.T, orig, a mat[float64], taus []float64, tf mat[float64]) {
	t.Helper()
	m, n := a.rows, a.cols
	v := func(i, j int) float64 {
		switch {
		case i == j:
			return 1
		case i < j:
			return 0
		}
		return a.at(i, j)
	}
	tv := newMat[float64](n, m) // T·Vᵀ
	for p := range n {
		for k := range m {
			s := 0.0
			for r := range n {
				s += tf.at(p, r) * v(k, r)
			}
			tv.set(p, k, s)
		}
	}
	q := newMat[float64](m, m) // I − V·T·Vᵀ
	for i := range m {
		for k := range m {
			s := 0.0
			for p := range n {
				s += v(i, p) * tv.at(p, k)
			}
			if i == k {
				s = 1 - s
			} else {
				s = -s
			}
			q.set(i, k, s)
		}
	}
	tol := 1e-14 * float64(m)
	for i := range m {
		for j := range n {
			s := 0.0
			for p := range min(j+1, m) {
				s += q.at(i, p) * a.at(p, j) // R is a's upper triangle
			}
			// Column by column, as Householder QR's error is bounded.
			if math.Abs(s-orig.at(i, j)) > tol*maxAbs(orig.col(j)) {
				t.Fatalf("%d×%d: (Q·R)[%d,%d] = %v, want %v", m, n, i, j, s, orig.at(i, j))
			}
		}
		for k := range m {
			s := 0.0
			for p := range m {
				s += q.at(p, i) * q.at(p, k)
			}
			if i == k {
				s--
			}
			if math.Abs(s) > tol {
				t.Fatalf("%d×%d: (QᵀQ − I)[%d,%d] = %v", m, n, i, k, s)
			}
		}
	}
	for j := range n {
		if tf.at(j, j) != taus[j] {
			t.Fatalf("%d×%d: T[%d,%d] = %v, τ = %v", m, n, j, j, tf.at(j, j), taus[j])
		}
	}
}

// TestLeafNorm checks leafNorm against math.Hypot over leafFactor's range
// of squared norms, alpha from underflowing squares to overflowing ones.
func TestLeafNorm(t *testing.T) {
	rng := newRand(73)
	for _, scale := range []float64{0x1p-560, 0x1p-300, 1, 0x1p300, 0x1p511, 0x1p513} {
		for range 200 {
			alpha := rng.NormFloat64() * scale
			x := math.Abs(rng.NormFloat64()) * math.Min(scale, 0x1p511)
			xx := x * x
			if !plainSquaresExact(xx) {
				continue
			}
			got, want := leafNorm(alpha, xx), math.Hypot(alpha, math.Sqrt(xx))
			if math.Abs(got-want) > 4*0x1p-53*want {
				t.Fatalf("leafNorm(%v, %v) = %v, want %v", alpha, xx, got, want)
			}
		}
	}
}

// TestMulVecs16Kernels runs each triangular-times-vectors kernel this CPU
// has against a plain product, upper and lower, on vector counts around
// its steps, with the vectors and results apart by more than 16 (the gaps
// must stay as they were).
func TestMulVecs16Kernels(t *testing.T) {
	if len(mulVecs16Kernels) == 0 {
		t.Skip("no such kernels on this CPU and build")
	}
	rng := newRand(74)
	for ki, kernel := range mulVecs16Kernels {
		for _, lower := range []bool{false, true} {
			for _, n := range []int{0, 1, 2, 3, 4, 5, 6, 7, 9, 33} {
				m := make([]float64, 256)
				for i := range m {
					m[i] = rng.NormFloat64()
				}
				const ldx, ldo = 19, 21
				x, out := make([]float64, ldx*n+1), make([]float64, ldo*n+1)
				for i := range x {
					x[i] = rng.NormFloat64()
				}
				for i := range out {
					out[i] = rng.NormFloat64()
				}
				want := slices.Clone(out)
				for j := range n {
					for r := range 16 {
						s := 0.0
						for c := range 16 {
							if lower && c <= r || !lower && c >= r {
								s += m[r+16*c] * x[j*ldx+c]
							}
						}
						want[j*ldo+r] = s
					}
				}
				for i := range m { // zeros in the other triangle
					if r, c := i%16, i/16; lower && c > r || !lower && c < r {
						m[i] = 0
					}
				}
				var xp, op *float64
				if n > 0 {
					xp, op = &x[0], &out[0]
				}
				kernel(&m[0], lower, xp, ldx, op, ldo, n)
				for i, w := range want {
					if !(math.Abs(out[i]-w) <= 1e-13*(1+math.Abs(w))) {
						t.Fatalf("kernel %d, lower %v, n=%d: out[%d] = %v, want %v", ki, lower, n, i, out[i], w)
					}
				}
			}
		}
	}
}
