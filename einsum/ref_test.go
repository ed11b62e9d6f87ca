package einsum

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/goferro/goferro/tensor"
)

// naive evaluates an einsum by looping over every assignment of every
// label, in complex128, independently of the planner.
func naive(t testing.TB, eq string, ops []*tensor.Tensor) *tensor.Tensor {
	t.Helper()
	e, err := Parse(eq)
	if err != nil {
		t.Fatalf("naive: parse %q: %v", eq, err)
	}
	shapes := make([][]int, len(ops))
	for i, o := range ops {
		shapes[i] = o.Shape()
	}
	b, err := e.bind(shapes)
	if err != nil {
		t.Fatalf("naive: bind %q: %v", eq, err)
	}
	outShape := make([]int, len(b.output))
	for i, l := range b.output {
		outShape[i] = b.sizes[l]
	}
	out, _ := tensor.Zeros(tensor.Complex128, outShape...)
	vals := make([][]complex128, len(ops))
	for i, o := range ops {
		vals[i] = o.Complex128Values()
	}
	L := len(b.sizes)
	for _, s := range b.sizes {
		if s == 0 {
			return out
		}
	}
	idx := make([]int, L)
	oidx := make([]int, len(b.output))
	for {
		prod := complex(1, 0)
		for i := range ops {
			// Row-major flat index, broadcasting extent-1 axes.
			f := 0
			for ax, l := range b.inputs[i] {
				x := idx[l]
				if shapes[i][ax] == 1 {
					x = 0
				}
				f = f*shapes[i][ax] + x
			}
			prod *= vals[i][f]
		}
		for j, l := range b.output {
			oidx[j] = idx[l]
		}
		cur, _ := out.Complex128At(oidx...)
		out.SetComplex128(cur+prod, oidx...)
		k := L - 1
		for ; k >= 0; k-- {
			idx[k]++
			if idx[k] < b.sizes[k] {
				break
			}
			idx[k] = 0
		}
		if k < 0 {
			break
		}
	}
	return out
}

// genCase builds a random equation, shapes and an optimizer choice.
type genCase struct {
	eq     string
	shapes [][]int
	opts   []Option
	desc   string
}

var labelPool = []rune("abcdefghijXYZжλß9ñΩ")

func genEquation(r *rand.Rand, ascii bool) genCase {
	return genEquationSized(r, ascii, 6, 4, 3, 5)
}

// genEquationSized draws up to maxLabels labels of extent up to maxSize,
// operands of rank up to maxRank and up to maxOps operands.
func genEquationSized(r *rand.Rand, ascii bool, maxLabels, maxSize, maxRank, maxOps int) genCase {
	nl := 1 + r.IntN(maxLabels)
	pool := labelPool
	if ascii {
		pool = []rune("abcdefghijXYZ")
	}
	perm := r.Perm(len(pool))
	labels := make([]rune, nl)
	sizes := map[rune]int{}
	for i := range labels {
		labels[i] = pool[perm[i]]
		sizes[labels[i]] = 1 + r.IntN(maxSize)
		if r.IntN(60) == 0 {
			sizes[labels[i]] = 0
		}
	}
	n := 1 + r.IntN(maxOps)
	useEll := r.IntN(4) == 0
	ellShape := []int{}
	if useEll {
		for k := r.IntN(3); k > 0; k-- {
			ellShape = append(ellShape, 1+r.IntN(3))
		}
	}
	var terms []string
	var shapes [][]int
	used := map[rune]int{}
	for i := 0; i < n; i++ {
		rank := r.IntN(maxRank + 1)
		if n == 1 {
			rank = 1 + r.IntN(maxRank+1)
		}
		var sb strings.Builder
		var shape []int
		ellAt := -1
		if useEll && r.IntN(3) > 0 {
			ellAt = r.IntN(rank + 1)
		}
		for j := 0; j <= rank; j++ {
			if j == ellAt {
				sb.WriteString("...")
				// A suffix of the ellipsis shape, with random broadcasts.
				w := r.IntN(len(ellShape) + 1)
				for _, d := range ellShape[len(ellShape)-w:] {
					if r.IntN(3) == 0 {
						d = 1
					}
					shape = append(shape, d)
				}
			}
			if j == rank {
				break
			}
			l := labels[r.IntN(nl)]
			sb.WriteRune(l)
			used[l]++
			shape = append(shape, sizes[l])
		}
		terms = append(terms, sb.String())
		shapes = append(shapes, shape)
	}
	eq := strings.Join(terms, ",")
	if r.IntN(4) > 0 {
		// Explicit output: a random subset of the used labels.
		var cand []rune
		for _, l := range labels {
			if used[l] > 0 && r.IntN(2) == 0 {
				cand = append(cand, l)
			}
		}
		r.Shuffle(len(cand), func(i, j int) { cand[i], cand[j] = cand[j], cand[i] })
		out := string(cand)
		if useEll && strings.Contains(eq, "...") && r.IntN(4) > 0 {
			k := r.IntN(len(cand) + 1)
			out = string(cand[:k]) + "..." + string(cand[k:])
		}
		eq += "->" + out
	}
	c := genCase{eq: eq, shapes: shapes}
	switch r.IntN(7) {
	case 0:
		c.opts, c.desc = []Option{WithOptimizer(OptimizeGreedy)}, "greedy"
	case 1:
		c.opts, c.desc = []Option{WithOptimizer(OptimizeOptimal)}, "optimal"
	case 2:
		c.opts, c.desc = []Option{WithOptimizer(OptimizeRandom), WithSearch(4, 0, r.Uint64())}, "random"
	case 3:
		p := randomPath(r, n)
		c.opts, c.desc = []Option{WithPath(p)}, fmt.Sprint("path ", p)
	case 4:
		c.opts, c.desc = []Option{WithOptimizer(OptimizeSearch), WithSearch(6, 0, r.Uint64()), WithWriteWeight(float64(r.IntN(2) * 64))}, "search"
	default:
		c.desc = "auto"
	}
	if r.IntN(4) == 0 {
		c.opts = append(c.opts, WithAnyOutputLayout())
		c.desc += " any-layout"
	}
	return c
}

// randomPath returns a random linear path, sometimes with unary or n-ary
// steps.
func randomPath(r *rand.Rand, n int) [][]int {
	var p [][]int
	for m := n; m > 1; {
		k := 2
		if m > 2 && r.IntN(5) == 0 {
			k = 3
		}
		if r.IntN(8) == 0 {
			k = 1
		}
		pos := r.Perm(m)[:k]
		p = append(p, pos)
		m -= k - 1
	}
	if n == 1 && r.IntN(2) == 0 {
		p = [][]int{{0}}
	}
	return p
}

func randTensor(t testing.TB, r *rand.Rand, dt tensor.DType, shape []int) *tensor.Tensor {
	x, err := tensor.Zeros(dt, shape...)
	if err != nil {
		t.Fatal(err)
	}
	n := x.Len()
	for i := 0; i < n; i++ {
		idx := tensor.Unravel(i, shape)
		var v complex128
		switch {
		case dt.IsInt():
			v = complex(float64(r.IntN(5)-2), 0)
		case dt == tensor.Bool:
			v = complex(float64(r.IntN(2)), 0)
		case dt.IsComplex():
			v = complex(r.Float64()*2-1, r.Float64()*2-1)
		default:
			v = complex(r.Float64()*2-1, 0)
		}
		x.SetComplex128(v, idx...)
	}
	// Sometimes hand over a non-contiguous view of the same values.
	if len(shape) >= 2 && r.IntN(4) == 0 {
		perm := slices.Collect(func(yield func(int) bool) {
			for i := len(shape) - 1; i >= 0; i-- {
				if !yield(i) {
					return
				}
			}
		})
		c, _ := x.Permute(perm...)
		c = c.Clone()
		v, _ := c.Permute(perm...)
		return v
	}
	return x
}

func tolFor(dt tensor.DType) (float64, float64) {
	switch dt {
	case tensor.Float32, tensor.Complex64:
		return 1e-4, 1e-4
	case tensor.Float64, tensor.Complex128:
		return 1e-10, 1e-10
	}
	return 0, 0
}

func checkCase(t *testing.T, r *rand.Rand, c genCase, dt tensor.DType) {
	t.Helper()
	ops := make([]*tensor.Tensor, len(c.shapes))
	for i, s := range c.shapes {
		ops[i] = randTensor(t, r, dt, s)
	}
	got, err := ContractWith(c.eq, ops, c.opts...)
	if err != nil {
		t.Fatalf("%q shapes %v (%s, %v): %v", c.eq, c.shapes, c.desc, dt, err)
	}
	want := naive(t, c.eq, ops)
	if got.DType() != dt {
		t.Fatalf("%q: dtype %v, want %v", c.eq, got.DType(), dt)
	}
	if dt == tensor.Bool {
		// OR of ANDs.
		wv := want.Complex128Values()
		for i := range wv {
			if wv[i] != 0 {
				wv[i] = 1
			}
		}
		w2, _ := tensor.New(wv, want.Shape()...)
		want = w2
	}
	rtol, atol := tolFor(dt)
	if err := tensor.CheckClose(got, want, rtol, atol); err != nil {
		t.Fatalf("%q shapes %v (%s, %v): %v", c.eq, c.shapes, c.desc, dt, err)
	}
}

func TestRandomAgainstNaive(t *testing.T) {
	n := 3000
	if s := os.Getenv("EINSUM_RANDOM_CASES"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	if testing.Short() {
		n = 500
	}
	seed := uint64(1)
	if s := os.Getenv("EINSUM_RANDOM_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	r := rand.New(rand.NewPCG(seed, 2))
	for i := 0; i < n; i++ {
		c := genEquation(r, false)
		dt := tensor.DTypes[r.IntN(len(tensor.DTypes))]
		checkCase(t, r, c, dt)
	}
}

// TestRandomLarger uses more labels and higher ranks, so that layouts,
// copies, demoted batch axes and tiled loops are exercised.
func TestRandomLarger(t *testing.T) {
	n := 1500
	if testing.Short() {
		n = 200
	}
	r := rand.New(rand.NewPCG(17, 3))
	dts := []tensor.DType{tensor.Float64, tensor.Complex128, tensor.Float32, tensor.Int64}
	for i := 0; i < n; i++ {
		c := genEquationSized(r, false, 9, 3, 6, 6)
		checkCase(t, r, c, dts[r.IntN(len(dts))])
	}
}
