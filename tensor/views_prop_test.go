package tensor

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// The property tests below drive random chains of view operations and check
// each result against a naive model. The model knows, for every multi-index
// of the current tensor, which buffer element it must address (pos) and which
// value it must read (val); it is built by composing plain index maps, one
// per operation, written the obvious way and independently of the package's
// stride arithmetic.

type model struct {
	shape []int
	buf   any // the typed buffer the tensor must share
	pos   func(idx []int) int
	val   func(idx []int) float64
}

// forEachIndex calls fn with every multi-index of shape in row-major order.
// fn must not keep idx.
func forEachIndex(shape []int, fn func(idx []int)) {
	for _, d := range shape {
		if d == 0 {
			return
		}
	}
	idx := make([]int, len(shape))
	for {
		fn(idx)
		k := len(shape) - 1
		for ; k >= 0; k-- {
			idx[k]++
			if idx[k] < shape[k] {
				break
			}
			idx[k] = 0
		}
		if k < 0 {
			return
		}
	}
}

func naiveSize(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

func naiveRavel(idx, shape []int) int {
	f := 0
	for i, x := range idx {
		f = f*shape[i] + x
	}
	return f
}

func naiveUnravel(f int, shape []int) []int {
	idx := make([]int, len(shape))
	for i := len(shape) - 1; i >= 0; i-- {
		idx[i] = f % shape[i]
		f /= shape[i]
	}
	return idx
}

// remap returns the model of a view whose index idx reads the old model at
// oldIdx(idx).
func (m model) remap(shape []int, oldIdx func([]int) []int) model {
	pos, val := m.pos, m.val
	return model{
		shape: shape,
		buf:   m.buf,
		pos:   func(idx []int) int { return pos(oldIdx(idx)) },
		val:   func(idx []int) float64 { return val(oldIdx(idx)) },
	}
}

// sameBuffer reports whether two typed buffers start at the same address.
func sameBuffer(a, b any) bool {
	return bufferAddr(a) == bufferAddr(b)
}

// valuesOf returns Values[T] for x's element type, as complex128.
func valuesOf(x *Tensor) ([]complex128, error) {
	switch x.DType() {
	case Float32:
		return convertValues[float32](x)
	case Float64:
		return convertValues[float64](x)
	case Complex64:
		return convertValues[complex64](x)
	case Complex128:
		return convertValues[complex128](x)
	case Int32:
		return convertValues[int32](x)
	case Int64:
		return convertValues[int64](x)
	}
	return convertValues[bool](x)
}

func convertValues[T Elem](x *Tensor) ([]complex128, error) {
	v, err := Values[T](x)
	if err != nil {
		return nil, err
	}
	out := make([]complex128, len(v))
	for i := range v {
		out[i] = getFlat(v, i)
	}
	return out, nil
}

// check compares a tensor with its model in every observable way.
func check(t *rapid.T, x *Tensor, m model, what string) {
	if !x.Shape().Equal(m.shape) {
		t.Fatalf("%s: shape %v, want %v", what, x.Shape(), m.shape)
	}
	n := naiveSize(m.shape)
	if x.Len() != n || x.Rank() != len(m.shape) {
		t.Fatalf("%s: Len %d Rank %d, want %d %d", what, x.Len(), x.Rank(), n, len(m.shape))
	}
	if x.DType() != dtypeOfBuffer(m.buf) {
		t.Fatalf("%s: dtype %v", what, x.DType())
	}
	if n > 0 && !sameBuffer(x.Data(), m.buf) {
		t.Fatalf("%s: tensor does not share the expected buffer", what)
	}
	st, off := x.Strides(), x.Offset()
	contiguous := true
	p0 := 0
	if n > 0 {
		p0 = m.pos(make([]int, len(m.shape)))
	}
	var row []float64
	forEachIndex(m.shape, func(idx []int) {
		p := off
		for i, v := range idx {
			p += v * st[i]
		}
		if want := m.pos(idx); p != want {
			t.Fatalf("%s: index %v addresses buffer element %d, want %d (strides %v offset %d)", what, idx, p, want, st, off)
		}
		got, err := x.Complex128At(idx...)
		if err != nil {
			t.Fatalf("%s: Complex128At(%v): %v", what, idx, err)
		}
		if want := m.val(idx); got != complex(want, 0) {
			t.Fatalf("%s: element %v = %v, want %v", what, idx, got, want)
		}
		if m.pos(idx) != p0+naiveRavel(idx, m.shape) {
			contiguous = false
		}
		row = append(row, m.val(idx))
	})
	if x.IsContiguous() != contiguous {
		t.Fatalf("%s: IsContiguous %v, want %v (shape %v strides %v)", what, x.IsContiguous(), contiguous, m.shape, st)
	}
	vals, err := valuesOf(x)
	if err != nil || len(vals) != n {
		t.Fatalf("%s: Values: %d values, %v", what, len(vals), err)
	}
	cv := x.Complex128Values()
	for i := range row {
		if vals[i] != complex(row[i], 0) || cv[i] != complex(row[i], 0) {
			t.Fatalf("%s: flat element %d: Values %v Complex128Values %v, want %v", what, i, vals[i], cv[i], row[i])
		}
	}
	// A write through the view lands in the model's buffer element, and
	// every index that aliases it (broadcast axes) sees it.
	if n > 0 {
		idx := make([]int, len(m.shape))
		for i, d := range m.shape {
			idx[i] = rapid.IntRange(0, d-1).Draw(t, "write index")
		}
		p := m.pos(idx)
		old := getFlat(m.buf, p)
		if err := x.SetComplex128(-12345, idx...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if getFlat(m.buf, p) != -12345 {
			t.Fatalf("%s: write at %v did not reach buffer element %d", what, idx, p)
		}
		forEachIndex(m.shape, func(j []int) {
			got, _ := x.Complex128At(j...)
			if (m.pos(j) == p) != (got == -12345) {
				t.Fatalf("%s: after writing %v, element %v = %v", what, idx, j, got)
			}
		})
		setFlat(m.buf, p, old)
	}
}

// drawBase draws a float64 tensor of small random shape, either row-major or
// with arbitrary strides (negative and zero included) over a buffer whose
// elements hold their own positions.
func drawBase(t *rapid.T) (*Tensor, model) {
	rank := rapid.IntRange(0, 4).Draw(t, "rank")
	shape := make([]int, rank)
	for i := range shape {
		shape[i] = rapid.IntRange(0, 4).Draw(t, "extent")
	}
	strides := RowMajorStrides(shape)
	offset := 0
	n := naiveSize(shape)
	bufLen := n
	if rapid.Bool().Draw(t, "arbitrary strides") {
		lo, hi := 0, 0
		for i := range strides {
			strides[i] = rapid.IntRange(-6, 6).Draw(t, "stride")
			if span := (shape[i] - 1) * strides[i]; shape[i] > 0 && span < 0 {
				lo += span
			} else if shape[i] > 0 {
				hi += span
			}
		}
		offset = -lo + rapid.IntRange(0, 3).Draw(t, "slack before")
		bufLen = offset + hi + 1 + rapid.IntRange(0, 3).Draw(t, "slack after")
	}
	// Views do not depend on the element type, but the copies behind
	// Reshape, Contiguous and Clone go through one loop per type. Element
	// values are buffer positions, exact in every numeric type.
	dt := rapid.SampledFrom([]DType{Float64, Float32, Complex64, Complex128, Int32, Int64}).Draw(t, "dtype")
	x, buf := stridedOf(t, dt, max(bufLen, 1), shape, strides, offset)
	m := model{
		shape: shape,
		buf:   buf,
		pos: func(idx []int) int {
			p := offset
			for i, v := range idx {
				p += v * strides[i]
			}
			return p
		},
	}
	pos := m.pos
	m.val = func(idx []int) float64 { return float64(pos(idx)) }
	return x, m
}

// stridedOf builds a view of dtype dt over a new buffer of n elements that
// hold their own positions.
func stridedOf(t *rapid.T, dt DType, n int, shape, strides []int, offset int) (*Tensor, any) {
	buf, err := MakeBuffer(dt, n)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		setFlat(buf, i, complex(float64(i), 0))
	}
	// FromStrided's view, for a dtype known at run time.
	x, err := newView(dt, buf, n, Shape(shape).Clone(), append([]int(nil), strides...), offset)
	if err != nil {
		t.Fatalf("FromStrided(%v, %v, %d) over %d: %v", shape, strides, offset, n, err)
	}
	return x, buf
}

// dtypeOfBuffer returns the DType of a typed buffer.
func dtypeOfBuffer(buf any) DType {
	for _, dt := range DTypes {
		if b, _ := MakeBuffer(dt, 0); reflect.TypeOf(buf) == reflect.TypeOf(b) {
			return dt
		}
	}
	return Invalid
}

// pySlice lists the indices Python's a[start:stop:step] selects from an axis
// of extent n, by walking them one by one.
func pySlice(n int, r Range) []int {
	step := r.Step
	if step == 0 {
		step = 1
	}
	norm := func(v int, isStart bool) int {
		if v < 0 {
			v += n
			if v < 0 {
				if step < 0 {
					return -1
				}
				return 0
			}
		} else if v >= n {
			if step < 0 {
				return n - 1
			}
			return n
		}
		return v
	}
	var start, stop int
	switch {
	case r.Full && step > 0:
		start, stop = 0, n
	case r.Full:
		start, stop = n-1, -1
	default:
		start, stop = norm(r.Start, true), norm(r.Stop, false)
	}
	var out []int
	for i := start; (step > 0 && i < stop) || (step < 0 && i > stop); i += step {
		out = append(out, i)
	}
	return out
}

// axisSpelling returns a or its negative spelling a-rank, at random.
func axisSpelling(t *rapid.T, a, rank int) int {
	if rapid.Bool().Draw(t, "negative axis") {
		return a - rank
	}
	return a
}

type viewOp func(t *rapid.T, x *Tensor, m model) (*Tensor, model, string)

// drawPerm draws a permutation of 0..r-1.
func drawPerm(t *rapid.T, r int, label string) []int {
	axes := make([]int, r)
	for i := range axes {
		axes[i] = i
	}
	return rapid.Permutation(axes).Draw(t, label)
}

// viewResult is what a view op returns: its result y (err fails the test)
// and y's model, m over shape, where result index idx is m's index
// oldIdx(idx).
func viewResult(t *rapid.T, y *Tensor, err error, what string, m model, shape []int, oldIdx func(idx []int) []int) (*Tensor, model, string) {
	if err != nil {
		t.Fatalf("%s of %v: %v", what, m.shape, err)
	}
	return y, m.remap(shape, oldIdx), what
}

// fromAxes returns the index map of a result whose axis j is axis src[j]
// of a rank-r tensor (the other axes at 0).
func fromAxes(r int, src []int) func(idx []int) []int {
	return func(idx []int) []int {
		o := make([]int, r)
		for j, a := range src {
			o[a] = idx[j]
		}
		return o
	}
}

func opPermute(t *rapid.T, x *Tensor, m model) (*Tensor, model, string) {
	r := len(m.shape)
	perm := drawPerm(t, r, "perm")
	spelled := make([]int, r)
	shape := make([]int, r)
	for i, p := range perm {
		spelled[i] = axisSpelling(t, p, r)
		shape[i] = m.shape[p]
	}
	y, err := x.Permute(spelled...)
	return viewResult(t, y, err, fmt.Sprintf("Permute%v", spelled), m, shape, fromAxes(r, perm))
}

func opTranspose(t *rapid.T, x *Tensor, m model) (*Tensor, model, string) {
	r := len(m.shape)
	shape := make([]int, r)
	src := make([]int, r)
	for i := range shape {
		shape[i], src[i] = m.shape[r-1-i], r-1-i
	}
	return viewResult(t, x.T(), nil, "T", m, shape, fromAxes(r, src))
}

func opSlice(t *rapid.T, x *Tensor, m model) (*Tensor, model, string) {
	r := len(m.shape)
	k := rapid.IntRange(0, r).Draw(t, "ranges")
	ranges := make([]Range, k)
	sel := make([][]int, r)
	shape := append([]int(nil), m.shape...)
	for i := range r {
		n := m.shape[i]
		if i < k {
			ranges[i] = Range{
				Start: rapid.IntRange(-n-2, n+2).Draw(t, "start"),
				Stop:  rapid.IntRange(-n-2, n+2).Draw(t, "stop"),
				Step:  rapid.IntRange(-3, 3).Draw(t, "step"),
				Full:  rapid.IntRange(0, 3).Draw(t, "full") == 0,
			}
			sel[i] = pySlice(n, ranges[i])
		} else {
			sel[i] = pySlice(n, All)
		}
		shape[i] = len(sel[i])
	}
	y, err := x.Slice(ranges...)
	return viewResult(t, y, err, fmt.Sprintf("Slice%+v", ranges), m, shape, func(idx []int) []int {
		old := make([]int, r)
		for i, v := range idx {
			old[i] = sel[i][v]
		}
		return old
	})
}

func opBroadcast(t *rapid.T, x *Tensor, m model) (*Tensor, model, string) {
	r := len(m.shape)
	lead := rapid.IntRange(0, 2).Draw(t, "new axes")
	shape := make([]int, 0, lead+r)
	for range lead {
		shape = append(shape, rapid.IntRange(0, 3).Draw(t, "new extent"))
	}
	for _, d := range m.shape {
		if d == 1 {
			d = rapid.IntRange(0, 3).Draw(t, "broadcast extent")
		}
		shape = append(shape, d)
	}
	if naiveSize(shape) > 1500 {
		return x, m, "BroadcastTo skipped"
	}
	y, err := x.BroadcastTo(shape...)
	old := m.shape
	return viewResult(t, y, err, fmt.Sprintf("BroadcastTo%v", shape), m, shape, func(idx []int) []int {
		o := make([]int, r)
		for i := range o {
			if old[i] != 1 {
				o[i] = idx[lead+i]
			}
		}
		return o
	})
}

func opDiagonal(t *rapid.T, x *Tensor, m model) (*Tensor, model, string) {
	r := len(m.shape)
	groups := map[int][]int{}
	for i, d := range m.shape {
		groups[d] = append(groups[d], i)
	}
	var cands [][]int
	for _, g := range groups {
		if len(g) >= 2 {
			cands = append(cands, g)
		}
	}
	if len(cands) == 0 {
		return x, m, "Diagonal skipped"
	}
	// Map iteration order is random; sort so that a seed replays.
	slices.SortFunc(cands, func(a, b []int) int { return a[0] - b[0] })
	g := rapid.SampledFrom(cands).Draw(t, "axis group")
	perm := rapid.Permutation(g).Draw(t, "diag axes")
	axes := perm[:rapid.IntRange(2, len(perm)).Draw(t, "diag count")]
	spelled := make([]int, len(axes))
	marked := make([]bool, r)
	first := r
	for i, a := range axes {
		spelled[i] = axisSpelling(t, a, r)
		marked[a] = true
		first = min(first, a)
	}
	// src[j] says which old axis result axis j comes from (first = the
	// diagonal, standing for all marked axes).
	var shape, src []int
	for i := range r {
		if i == first || !marked[i] {
			shape, src = append(shape, m.shape[i]), append(src, i)
		}
	}
	y, err := x.Diagonal(spelled...)
	return viewResult(t, y, err, fmt.Sprintf("Diagonal%v", spelled), m, shape, func(idx []int) []int {
		o := fromAxes(r, src)(idx)
		for b := range r {
			if marked[b] {
				o[b] = o[first]
			}
		}
		return o
	})
}

func opSqueeze(t *rapid.T, x *Tensor, m model) (*Tensor, model, string) {
	r := len(m.shape)
	drop := make([]bool, r)
	var axes []int
	all := rapid.Bool().Draw(t, "squeeze all")
	for i, d := range m.shape {
		if d == 1 && (all || rapid.Bool().Draw(t, "squeeze axis")) {
			drop[i] = true
			if !all {
				axes = append(axes, axisSpelling(t, i, r))
			}
		}
	}
	if len(axes) == 0 {
		// Squeeze() with no axes drops every extent-1 axis.
		for i, d := range m.shape {
			drop[i] = d == 1
		}
	}
	var shape, src []int
	for i, d := range m.shape {
		if !drop[i] {
			shape, src = append(shape, d), append(src, i)
		}
	}
	y, err := x.Squeeze(axes...)
	return viewResult(t, y, err, fmt.Sprintf("Squeeze%v", axes), m, shape, fromAxes(r, src))
}

func opUnsqueeze(t *rapid.T, x *Tensor, m model) (*Tensor, model, string) {
	r := len(m.shape)
	if r >= 7 {
		return x, m, "Unsqueeze skipped"
	}
	a := rapid.IntRange(0, r).Draw(t, "unsqueeze axis")
	spelled := axisSpelling(t, a, r+1)
	shape := append(append(append([]int(nil), m.shape[:a]...), 1), m.shape[a:]...)
	y, err := x.Unsqueeze(spelled)
	return viewResult(t, y, err, fmt.Sprintf("Unsqueeze(%d)", spelled), m, shape, func(idx []int) []int {
		return append(append([]int(nil), idx[:a]...), idx[a+1:]...)
	})
}

// drawShapeOfSize draws a shape with n elements (n > 0) of rank up to 5.
func drawShapeOfSize(t *rapid.T, n int) []int {
	var primes []int
	for p := 2; n > 1; {
		if n%p == 0 {
			primes, n = append(primes, p), n/p
		} else {
			p++
		}
	}
	rank := rapid.IntRange(1, 5).Draw(t, "reshape rank")
	shape := make([]int, rank)
	for i := range shape {
		shape[i] = 1
	}
	for _, p := range primes {
		shape[rapid.IntRange(0, rank-1).Draw(t, "factor slot")] *= p
	}
	if rapid.Bool().Draw(t, "rank 0") && len(primes) == 0 {
		return []int{}
	}
	return shape
}

// affine reports whether the model's positions are an affine function of
// the index, i.e. whether some strides and offset describe it: exactly when
// a reshape can be a view.
func affine(shape []int, pos func([]int) int) bool {
	if naiveSize(shape) == 0 {
		return true
	}
	zero := make([]int, len(shape))
	p0 := pos(zero)
	st := make([]int, len(shape))
	for i, d := range shape {
		if d > 1 {
			e := make([]int, len(shape))
			e[i] = 1
			st[i] = pos(e) - p0
		}
	}
	ok := true
	forEachIndex(shape, func(idx []int) {
		p := p0
		for i, v := range idx {
			p += v * st[i]
		}
		ok = ok && p == pos(idx)
	})
	return ok
}

func opReshape(t *rapid.T, x *Tensor, m model) (*Tensor, model, string) {
	n := naiveSize(m.shape)
	var shape []int
	if n == 0 {
		shape = make([]int, rapid.IntRange(1, 4).Draw(t, "empty rank"))
		for i := range shape {
			shape[i] = rapid.IntRange(0, 3).Draw(t, "empty extent")
		}
		shape[rapid.IntRange(0, len(shape)-1).Draw(t, "zero axis")] = 0
	} else {
		shape = drawShapeOfSize(t, n)
	}
	arg := append([]int(nil), shape...)
	if len(arg) > 0 && n > 0 && rapid.Bool().Draw(t, "infer") {
		arg[rapid.IntRange(0, len(arg)-1).Draw(t, "infer axis")] = -1
	}
	y, err := x.Reshape(arg...)
	if err != nil {
		t.Fatalf("Reshape(%v) of %v: %v", arg, m.shape, err)
	}
	old := m.shape
	next := m.remap(shape, func(idx []int) []int {
		return naiveUnravel(naiveRavel(idx, shape), old)
	})
	what := fmt.Sprintf("Reshape%v", arg)
	if affine(shape, next.pos) {
		return y, next, what + " (view)"
	}
	// No strides describe the result over the old buffer, so it must be a
	// fresh row-major copy: writes through it must not reach the source.
	return y, copyModel(t, y, next), what + " (copy)"
}

// copyModel checks that y is a fresh row-major copy holding next's values and
// returns the model of y over its own buffer.
func copyModel(t *rapid.T, y *Tensor, next model) model {
	buf := y.Data()
	if y.Len() > 0 && sameBuffer(buf, next.buf) {
		t.Fatalf("result of shape %v shares the source buffer but no strides describe it", next.shape)
	}
	// Writing through the copy must leave the source alone.
	if y.Len() > 0 {
		before := fmt.Sprint(next.buf)
		idx := make([]int, len(next.shape))
		for i, d := range next.shape {
			idx[i] = rapid.IntRange(0, d-1).Draw(t, "copy write index")
		}
		old, _ := y.Complex128At(idx...)
		y.SetComplex128(-777, idx...)
		if fmt.Sprint(next.buf) != before {
			t.Fatalf("writing through a copy of shape %v changed its source", next.shape)
		}
		y.SetComplex128(old, idx...)
	}
	off := y.Offset()
	shape := next.shape
	return model{
		shape: shape,
		buf:   buf,
		pos:   func(idx []int) int { return off + naiveRavel(idx, shape) },
		val:   next.val,
	}
}

func opContiguous(t *rapid.T, x *Tensor, m model) (*Tensor, model, string) {
	y := x.Contiguous()
	if x.IsContiguous() {
		if y != x {
			t.Fatalf("Contiguous of a contiguous tensor made a copy")
		}
		return y, m, "Contiguous (same)"
	}
	return y, copyModel(t, y, m), "Contiguous (copy)"
}

func opClone(t *rapid.T, x *Tensor, m model) (*Tensor, model, string) {
	y := x.Clone()
	if !y.IsContiguous() || y.Offset() != 0 {
		t.Fatalf("Clone is not row-major from 0")
	}
	return y, copyModel(t, y, m), "Clone"
}

var viewOps = []viewOp{opPermute, opTranspose, opSlice, opBroadcast, opDiagonal, opSqueeze, opUnsqueeze, opReshape, opContiguous, opClone}

func TestViewChainsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		x, m := drawBase(t)
		check(t, x, m, "base")
		trail := "base"
		steps := rapid.IntRange(1, 6).Draw(t, "steps")
		for range steps {
			op := viewOps[rapid.IntRange(0, len(viewOps)-1).Draw(t, "op")]
			y, next, what := op(t, x, m)
			trail += " → " + what
			check(t, y, next, trail)
			x, m = y, next
		}
		// Copy the result into a destination of another layout.
		r := x.Rank()
		perm := drawPerm(t, r, "dst layout")
		inv := make([]int, r)
		shape := make([]int, r)
		for i, p := range perm {
			inv[p] = i
			shape[i] = m.shape[p]
		}
		z, err := Zeros(x.DType(), shape...)
		if err != nil {
			t.Fatal(err)
		}
		dst, err := z.Permute(inv...)
		if err != nil {
			t.Fatal(err)
		}
		if err := CopyInto(dst, x); err != nil {
			t.Fatalf("%s: CopyInto: %v", trail, err)
		}
		forEachIndex(m.shape, func(idx []int) {
			got, _ := dst.Complex128At(idx...)
			if got != complex(m.val(idx), 0) {
				t.Fatalf("%s: CopyInto element %v = %v, want %v", trail, idx, got, m.val(idx))
			}
		})
	})
}

// TestCopyIntoOverlapProperty copies between overlapping views of one buffer
// and checks numpy's semantics: as if the source were read completely first.
func TestCopyIntoOverlapProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 12).Draw(t, "n")
		buf := make([]float64, n)
		for i := range buf {
			buf[i] = float64(i)
		}
		base, _ := New(buf, n)
		k := rapid.IntRange(0, n).Draw(t, "length")
		pick := func(label string) (*Tensor, []int) {
			step := rapid.SampledFrom([]int{1, -1}).Draw(t, label+" step")
			var r Range
			switch {
			case k == 0:
				start := rapid.IntRange(0, n-1).Draw(t, label+" start")
				r = Range{Start: start, Stop: start, Step: step}
			case step > 0:
				start := rapid.IntRange(0, n-k).Draw(t, label+" start")
				r = Range{Start: start, Stop: start + k, Step: 1}
			default:
				start := rapid.IntRange(k-1, n-1).Draw(t, label+" start")
				stop := start - k
				if stop < 0 {
					// A stop of -1 would mean the last element;
					// anything below -n means "before the first".
					stop = -n - 1
				}
				r = Range{Start: start, Stop: stop, Step: -1}
			}
			v, err := base.Slice(r)
			if err != nil {
				t.Fatal(err)
			}
			return v, pySlice(n, r)
		}
		dst, dsel := pick("dst")
		src, ssel := pick("src")
		if dst.Len() != k || src.Len() != k {
			t.Fatalf("views of %d and %d elements, want %d", dst.Len(), src.Len(), k)
		}
		want := append([]float64(nil), buf...)
		for i := range k {
			want[dsel[i]] = buf[ssel[i]]
		}
		if err := CopyInto(dst, src); err != nil {
			t.Fatal(err)
		}
		for i := range buf {
			if buf[i] != want[i] {
				t.Fatalf("after copying %v into %v: buffer %v, want %v", ssel, dsel, buf, want)
			}
		}
	})
}
