package main

import (
	"cmp"
	"context"
	"errors"
	"io"
	"io/fs"
	"math"
	"math/cmplx"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/linalg"
	"github.com/goferro/goferro/tensor"
)

// The linalg command's tests check each factorisation against the matrix
// it came from: the factors must multiply back to A, the orthonormal ones
// must be orthonormal, the triangular ones triangular and the spectra
// sorted, each within a few ε·n·‖A‖ of exact.

// mat is one matrix of a stack, row-major.
type mat struct {
	rows, cols int
	v          []complex128
}

func (m mat) at(i, j int) complex128 { return m.v[i*m.cols+j] }

// stack splits t, shape (..., m, n), into its matrices; a vector stack
// (..., k), as S and W, gives k×1 matrices.
func stack(t *testing.T, x *tensor.Tensor) []mat {
	t.Helper()
	s := x.Shape()
	rows, cols := 1, 1
	switch {
	case len(s) >= 2:
		rows, cols = s[len(s)-2], s[len(s)-1]
	case len(s) == 1:
		rows = s[0]
	}
	v := x.Complex128Values()
	per := rows * cols
	if per == 0 {
		t.Fatalf("empty matrices %v", s)
	}
	var out []mat
	for p := 0; p < len(v); p += per {
		out = append(out, mat{rows, cols, v[p : p+per]})
	}
	return out
}

// vectors splits a stack of vectors, shape (..., k).
func vectors(x *tensor.Tensor) [][]float64 {
	s := x.Shape()
	k := s[len(s)-1]
	var out [][]float64
	v := x.Complex128Values()
	for p := 0; p < len(v); p += k {
		row := make([]float64, k)
		for i := range row {
			row[i] = real(v[p+i])
		}
		out = append(out, row)
	}
	return out
}

// mul returns a·diag(d)·b (d nil: no diagonal), conjugating b when conjB.
func mul(a mat, d []float64, b mat, conjB bool) mat {
	c := mat{a.rows, b.cols, make([]complex128, a.rows*b.cols)}
	for i := range a.rows {
		for j := range b.cols {
			var s complex128
			for k := range a.cols {
				x := a.at(i, k) * b.at(k, j)
				if conjB {
					x = a.at(i, k) * cmplx.Conj(b.at(k, j))
				}
				if d != nil {
					x *= complex(d[k], 0)
				}
				s += x
			}
			c.v[i*c.cols+j] = s
		}
	}
	return c
}

// adjoint returns mᴴ.
func adjoint(m mat) mat {
	c := mat{m.cols, m.rows, make([]complex128, len(m.v))}
	for i := range m.rows {
		for j := range m.cols {
			c.v[j*c.cols+i] = cmplx.Conj(m.at(i, j))
		}
	}
	return c
}

func frob(m mat) float64 {
	s := 0.0
	for _, v := range m.v {
		s += real(v)*real(v) + imag(v)*imag(v)
	}
	return math.Sqrt(s)
}

// distance returns ‖a − b‖_F.
func distance(a, b mat) float64 {
	d := mat{a.rows, a.cols, make([]complex128, len(a.v))}
	for i := range a.v {
		d.v[i] = a.v[i] - b.v[i]
	}
	return frob(d)
}

// checkOrthonormal checks that the columns of q are orthonormal.
func checkOrthonormal(t *testing.T, what string, q mat, tol float64) {
	t.Helper()
	g := mul(adjoint(q), nil, q, false)
	for i := range g.rows {
		for j := range g.cols {
			want := complex(0, 0)
			if i == j {
				want = 1
			}
			if cmplx.Abs(g.at(i, j)-want) > tol {
				t.Fatalf("%s is not orthonormal: (%sᴴ%s)[%d,%d] = %v", what, what, what, i, j, g.at(i, j))
			}
		}
	}
}

// linalgInputs writes the test matrices and returns their files and values:
// a batched real tall 2×6×4, a complex wide 3×5, a Hermitian complex batch 2×4×4 and
// an integer 3×3.
func linalgInputs(t *testing.T, dir string) map[string]*tensor.Tensor {
	t.Helper()
	rng := tensor.NewRNG(17)
	tall, err := tensor.Randn(rng, tensor.Float64, 2, 6, 4)
	if err != nil {
		t.Fatal(err)
	}
	wide, err := tensor.Randn(rng, tensor.Complex128, 3, 5)
	if err != nil {
		t.Fatal(err)
	}
	g, err := tensor.Randn(rng, tensor.Complex128, 2, 4, 4)
	if err != nil {
		t.Fatal(err)
	}
	// h = g + gᴴ, batch by batch.
	hv := g.Complex128Values()
	for b := range 2 {
		m := hv[b*16 : b*16+16]
		for i := range 4 {
			for j := range i + 1 {
				s := m[i*4+j] + cmplx.Conj(m[j*4+i])
				m[i*4+j], m[j*4+i] = s, cmplx.Conj(s)
			}
		}
	}
	herm, err := tensor.New(hv, 2, 4, 4)
	if err != nil {
		t.Fatal(err)
	}
	ints, err := tensor.New([]int64{4, 1, 0, 1, 3, 1, 0, 1, 2}, 3, 3)
	if err != nil {
		t.Fatal(err)
	}
	in := map[string]*tensor.Tensor{"tall.npy": tall, "wide.npy": wide, "herm.npy": herm, "ints.npy": ints}
	for name, x := range in {
		if err := tensor.SaveNpy(filepath.Join(dir, name), x); err != nil {
			t.Fatal(err)
		}
	}
	return in
}

func loadFactor(t *testing.T, dir, name string) *tensor.Tensor {
	t.Helper()
	x, err := tensor.LoadNpy(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return x
}

const linalgTol = 1e-12 // relative to ‖A‖_F, for these float64 and complex128 matrices of size ≤ 6

func TestLinalgQR(t *testing.T) {
	dir := t.TempDir()
	in := linalgInputs(t, dir)
	for _, c := range []struct {
		file     string
		complete bool
		q, r     string
	}{
		{"tall.npy", false, "(2,6,4)", "(2,4,4)"},
		{"tall.npy", true, "(2,6,6)", "(2,6,4)"},
		{"wide.npy", false, "(3,3)", "(3,5)"},
		{"ints.npy", false, "(3,3)", "(3,3)"},
	} {
		out := filepath.Join(dir, "qr", c.file, "nested") // created by the command
		args := []string{"linalg", "qr", filepath.Join(dir, c.file), "--out", out}
		if c.complete {
			args = append(args, "--complete")
		}
		kv := summary(t, mustRun(t, args...).stdout)
		if kv["q"] != c.q || kv["r"] != c.r {
			t.Errorf("%v: summary %v, want q=%s r=%s", args, kv, c.q, c.r)
		}
		q, r := stack(t, loadFactor(t, out, "Q.npy")), stack(t, loadFactor(t, out, "R.npy"))
		for b, a := range stack(t, in[c.file]) {
			tol := linalgTol * frob(a)
			if d := distance(mul(q[b], nil, r[b], false), a); d > tol {
				t.Errorf("%v: matrix %d: ‖Q·R − A‖ = %g", args, b, d)
			}
			checkOrthonormal(t, "Q", q[b], 1e-13)
			for i := range r[b].rows {
				for j := range min(i, r[b].cols) {
					if r[b].at(i, j) != 0 {
						t.Errorf("%v: R[%d,%d] = %v below the diagonal", args, i, j, r[b].at(i, j))
					}
				}
			}
		}
	}
}

// TestLinalgSVD checks the full SVD, then truncation: --rank K keeps the K
// largest values and --tol T the fewest whose dropped weight is at most
// T·‖A‖_F, each with the reconstruction error the dropped values predict.
func TestLinalgSVD(t *testing.T) {
	dir := t.TempDir()
	in := linalgInputs(t, dir)
	for _, file := range []string{"tall.npy", "wide.npy"} {
		full := filepath.Join(dir, "svd", file)
		mustRun(t, "linalg", "svd", filepath.Join(dir, file), "--out", full)
		as := stack(t, in[file])
		u, vh := stack(t, loadFactor(t, full, "U.npy")), stack(t, loadFactor(t, full, "Vh.npy"))
		s := vectors(loadFactor(t, full, "S.npy"))
		for b, a := range as {
			if d := distance(mul(u[b], s[b], vh[b], false), a); d > linalgTol*frob(a) {
				t.Errorf("%s: matrix %d: ‖U·diag(S)·Vh − A‖ = %g", file, b, d)
			}
			checkOrthonormal(t, "U", u[b], 1e-13)
			checkOrthonormal(t, "Vhᴴ", adjoint(vh[b]), 1e-13)
			if !slices.IsSortedFunc(s[b], func(x, y float64) int { return cmp.Compare(y, x) }) {
				t.Errorf("%s: S %v not descending", file, s[b])
			}
		}

		// dropped returns √(Σ_{i≥r} s²) of matrix b.
		dropped := func(b, r int) float64 {
			w := 0.0
			for _, x := range s[b][r:] {
				w += x * x
			}
			return math.Sqrt(w)
		}
		// tol between the weights of dropping one and two values of
		// matrix 0 (and the norm of the largest A, so all keep ≤ k−1).
		k := len(s[0])
		norm := 0.0
		for _, a := range as {
			norm = max(norm, frob(a))
		}
		tol := (dropped(0, k-1) + dropped(0, k-2)) / 2 / frob(as[0])
		wantTol := 0
		for b, a := range as { // a batch keeps the largest rank any matrix needs
			r := k
			for r > 1 && dropped(b, r-1) <= tol*frob(a) {
				r--
			}
			wantTol = max(wantTol, r)
		}
		for _, c := range []struct {
			flags []string
			rank  int
		}{
			{[]string{"--rank", "2"}, 2},
			{[]string{"--tol", strconv.FormatFloat(tol, 'g', -1, 64)}, wantTol},
			{[]string{"--rank", "1", "--tol", strconv.FormatFloat(tol, 'g', -1, 64)}, 1},
		} {
			out := filepath.Join(dir, "trunc")
			args := append([]string{"linalg", "svd", filepath.Join(dir, file), "--out", out}, c.flags...)
			kv := summary(t, mustRun(t, args...).stdout)
			if kv["rank"] != strconv.Itoa(c.rank) {
				t.Errorf("%v: rank=%s, want %d", args, kv["rank"], c.rank)
			}
			u, vh := stack(t, loadFactor(t, out, "U.npy")), stack(t, loadFactor(t, out, "Vh.npy"))
			st := vectors(loadFactor(t, out, "S.npy"))
			worst := 0.0
			for b, a := range as {
				if len(st[b]) != c.rank || u[b].cols != c.rank || vh[b].rows != c.rank {
					t.Fatalf("%v: matrix %d: S %v, U %d×%d, Vh %d×%d", args, b, st[b], u[b].rows, u[b].cols, vh[b].rows, vh[b].cols)
				}
				want := dropped(b, c.rank)
				worst = max(worst, want)
				if d := distance(mul(u[b], st[b], vh[b], false), a); math.Abs(d-want) > linalgTol*norm {
					t.Errorf("%v: matrix %d: ‖A − Uᵣ·Sᵣ·Vhᵣ‖ = %g, want the dropped weight %g", args, b, d, want)
				}
			}
			if got := num(t, kv, "discarded"); math.Abs(got-worst) > 1e-5*worst {
				t.Errorf("%v: discarded=%g, want %g", args, got, worst)
			}
		}
	}
}

func TestLinalgEigh(t *testing.T) {
	dir := t.TempDir()
	in := linalgInputs(t, dir)
	for _, file := range []string{"herm.npy", "ints.npy"} {
		out := filepath.Join(dir, "eigh", file)
		kv := summary(t, mustRun(t, "linalg", "eigh", filepath.Join(dir, file), "--out", out).stdout)
		if kv["op"] != "eigh" || kv["dtype"] == "" {
			t.Errorf("%s: summary %v", file, kv)
		}
		w, v := vectors(loadFactor(t, out, "W.npy")), stack(t, loadFactor(t, out, "V.npy"))
		for b, a := range stack(t, in[file]) {
			if d := distance(mul(v[b], w[b], adjoint(v[b]), false), a); d > linalgTol*frob(a) {
				t.Errorf("%s: matrix %d: ‖V·diag(W)·Vᴴ − A‖ = %g", file, b, d)
			}
			checkOrthonormal(t, "V", v[b], 1e-13)
			if !slices.IsSorted(w[b]) {
				t.Errorf("%s: W %v not ascending", file, w[b])
			}
		}
	}
}

// TestLinalgErrors: bad input exits 2 with one line in the user's terms.
func TestLinalgErrors(t *testing.T) {
	dir := t.TempDir()
	linalgInputs(t, dir)
	nan, _ := tensor.New([]float64{1, 2, math.NaN(), 4}, 2, 2)
	if err := tensor.SaveNpy(filepath.Join(dir, "nan.npy"), nan); err != nil {
		t.Fatal(err)
	}
	tall, out := filepath.Join(dir, "tall.npy"), filepath.Join(dir, "out")
	goName := regexp.MustCompile(`\b[a-z]+\.[A-Z][A-Za-z]*\b`)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"lu", tall, "--out", out}, `unknown operation "lu"`},
		{[]string{"qr", tall}, "--out DIR is required"},
		{[]string{"qr"}, "need an operation"},
		{[]string{"qr", tall, "--out", out, "--rank", "2"}, "truncate svd only"},
		{[]string{"svd", tall, "--out", out, "--rank", "-1"}, "must not be negative"},
		{[]string{"svd", tall, "--out", out, "--complete", "--tol", "0.1"}, "does not combine"},
		{[]string{"eigh", tall, "--out", out}, "not square"},
		{[]string{"svd", filepath.Join(dir, "missing.npy"), "--out", out}, "does not exist"},
		{[]string{"svd", fix("garbage.npy"), "--out", out}, "A: "},
		{[]string{"eigh", filepath.Join(dir, "nan.npy"), "--out", out}, "NaN or Inf"},
		{[]string{"svd", tall, "--out", out, "--rank", "x"}, "see goferro linalg -h"},
	} {
		args := append([]string{"linalg"}, c.args...)
		r := cli(t, args...)
		msg := strings.TrimSpace(r.stderr)
		if r.code != 2 || strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "goferro linalg: ") ||
			strings.HasPrefix(msg, "goferro linalg: linalg") || goName.MatchString(msg) || !strings.Contains(msg, c.want) {
			t.Errorf("goferro %s: exit %d, message %q; want 2 and one line with %q", strings.Join(args, " "), r.code, msg, c.want)
		}
	}
}

// countdownCtx is a context whose Err turns context.Canceled at its call
// number left+1: a cancel in the middle of a factorisation.
type countdownCtx struct {
	context.Context
	left atomic.Int64
}

func (c *countdownCtx) Err() error {
	if c.left.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// TestLinalgCanceled: a context canceled while goferro linalg factorises
// (an interrupt) stops the factorisation with linalg.ErrCanceled wrapping
// context.Canceled, not an input error, and writes no factors.
func TestLinalgCanceled(t *testing.T) {
	dir := t.TempDir()
	a, err := tensor.Randn(tensor.NewRNG(5), tensor.Float64, 100, 100)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "a.npy")
	if err := tensor.SaveNpy(file, a); err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{"qr", "svd", "eigh"} {
		out := filepath.Join(dir, op)
		ctx := &countdownCtx{Context: context.Background()}
		ctx.left.Store(2)
		err := runLinalg(ctx, []string{op, file, "--out", out}, io.Discard)
		if !errors.Is(err, linalg.ErrCanceled) || !errors.Is(err, context.Canceled) || isInputError(err) {
			t.Errorf("%s: error %v, want linalg.ErrCanceled wrapping context.Canceled", op, err)
		}
		if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: --out %s exists (%v) after the cancel", op, out, err)
		}
	}
}

// TestBenchLinalg: each operation and dtype ends with the key=value line;
// bad flags are usage errors.
func TestBenchLinalg(t *testing.T) {
	line := regexp.MustCompile(`^linalg op=(qr|svd|eigh) dtype=(float64|float32|complex128|complex64) n=9 threads=1 runs=2 median_ms=[0-9.]+ min_ms=[0-9.]+$`)
	for _, op := range []string{"qr", "svd", "eigh"} {
		for _, dt := range []string{"float64", "float32", "complex128", "complex64"} {
			r := mustRun(t, "bench", "linalg", "--op", op, "-n", "9", "--dtype", dt, "--threads", "1", "--runs", "2")
			lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
			if last := lines[len(lines)-1]; !line.MatchString(last) || !strings.Contains(last, "op="+op+" dtype="+dt+" ") {
				t.Errorf("bench linalg --op %s --dtype %s: last line %q", op, dt, last)
			}
		}
	}
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"--op", "lu"}, 2},
		{[]string{"--dtype", "int32"}, 2},
		{[]string{"-n", "0"}, 2},
		{[]string{"--runs", "-1"}, 2},
		{[]string{"extra"}, 2},
		{[]string{"-n", "1000000", "--memory-limit", "1GiB"}, 3},
	} {
		if r := cli(t, append([]string{"bench", "linalg"}, c.args...)...); r.code != c.code || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("bench linalg %v: exit %d, want %d: %q", c.args, r.code, c.code, r.stderr)
		}
	}
}

// TestRunLinalgProgram: a saved program with a factorisation runs from the
// command line on the CPU engine, which runs the linalg family.
func TestRunLinalgProgram(t *testing.T) {
	dir := t.TempDir()
	in := linalgInputs(t, dir)
	b := graph.NewBuilder()
	x := b.Input("a", tensor.Float64, graph.Dims(2, 6, 4))
	q, r := linalg.GraphQR(graph.Neg(x), linalg.Reduced)
	p, err := graph.Compile(q, r)
	if err != nil {
		t.Fatal(err)
	}
	js, err := p.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(dir, "qr.json")
	if err := os.WriteFile(prog, js, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	mustRun(t, "run", prog, "--input", "a="+filepath.Join(dir, "tall.npy"), "--out", out)
	qs, rs := stack(t, loadFactor(t, out, "out0.npy")), stack(t, loadFactor(t, out, "out1.npy"))
	for k, a := range stack(t, in["tall.npy"]) {
		for i := range a.v {
			a.v[i] = -a.v[i]
		}
		if d := distance(mul(qs[k], nil, rs[k], false), a); d > linalgTol*frob(a) {
			t.Errorf("matrix %d: ‖Q·R + A‖ = %g", k, d)
		}
	}
}
