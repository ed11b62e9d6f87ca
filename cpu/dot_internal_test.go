package cpu

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/internal/prepcache"
	"github.com/goferro/goferro/internal/strided"
	"github.com/goferro/goferro/tensor"
)

// TestDotGeneralStridedOperands checks dotGeneral on random dot_general
// dimension numbers and operands held in every kind of layout — permuted,
// strided with an offset, reversed, broadcast — against a naive sum over
// the contracted multi-index. Operands whose free or contracted axes form
// one strided run go to GEMM as views; the others with offset tables, and
// none of them is copied when its tables are short next to it: at most the
// extents of its two axis groups together, half its length.
func TestDotGeneralStridedOperands(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tables := dotTables.Load()
	for trial := range 400 {
		dt := []tensor.DType{tensor.Float32, tensor.Float64, tensor.Complex64, tensor.Complex128}[trial%4]
		nb, nc, nl, nr := rng.IntN(3), rng.IntN(3), rng.IntN(3), rng.IntN(3)
		ext := make([]int, nb+nc+nl+nr) // labels: batch, contracted, left free, right free
		for i := range ext {
			ext[i] = 1 + rng.IntN(4)
		}
		batch, contract := axisLabels(0, nb), axisLabels(nb, nc)
		lLabels := rng.Perm(nb + nc + nl) // left free labels follow the batch and contracted ones
		rLabels := rng.Perm(nb + nc + nr)
		for i, p := range rLabels {
			if p >= nb+nc {
				rLabels[i] = p + nl // right free labels come after the left free ones
			}
		}
		var dims graph.DotDims
		for _, lab := range batch {
			dims.LhsBatch = append(dims.LhsBatch, index(lLabels, lab))
			dims.RhsBatch = append(dims.RhsBatch, index(rLabels, lab))
		}
		for _, lab := range contract {
			dims.LhsContract = append(dims.LhsContract, index(lLabels, lab))
			dims.RhsContract = append(dims.RhsContract, index(rLabels, lab))
		}
		l, r := oddLayout(t, rng, dt, lLabels, ext), oddLayout(t, rng, dt, rLabels, ext)
		attrs := graph.Attrs{LhsBatch: dims.LhsBatch, RhsBatch: dims.RhsBatch, LhsContract: dims.LhsContract, RhsContract: dims.RhsContract}
		var out tensor.Shape
		var outLabels []int
		for _, labs := range [][]int{batch, freeOf(lLabels, nb+nc), freeOf(rLabels, nb+nc)} {
			for _, lab := range labs {
				out = append(out, ext[lab])
				outLabels = append(outLabels, lab)
			}
		}
		copies := dotCopies.Load()
		got, ok, err := dotGeneral(&attrs, l, r, out)
		if err != nil || !ok {
			t.Fatalf("trial %d: %v %v", trial, ok, err)
		}
		// The tables of an operand hold at most its two axis groups'
		// extents: where that is short next to it, it was not copied.
		bExt, kExt := extent(ext, batch), extent(ext, contract)
		lFree, rFree := extent(ext, freeOf(lLabels, nb+nc)), extent(ext, freeOf(rLabels, nb+nc))
		short := func(rows, cols int) bool { return 2*(rows+cols) <= bExt*rows*cols }
		if n := dotCopies.Load() - copies; n > 0 && short(lFree, kExt) && short(kExt, rFree) {
			t.Errorf("trial %d (%v, lhs %v strides %v, rhs %v strides %v, dims %+v): %d operands copied",
				trial, dt, l.ShapeView(), l.StridesView(), r.ShapeView(), r.StridesView(), dims, n)
		}
		want := naiveDot(l, r, lLabels, rLabels, outLabels, contract, ext)
		tol := 1e-12
		if dt == tensor.Float32 || dt == tensor.Complex64 {
			tol = 1e-5
		}
		g := got.Complex128Values()
		for i := range want {
			if cmplx.Abs(g[i]-want[i]) > tol*(1+cmplx.Abs(want[i])) {
				t.Fatalf("trial %d (%v, lhs %v strides %v, rhs %v strides %v, dims %+v): element %d is %v, want %v",
					trial, dt, l.ShapeView(), l.StridesView(), r.ShapeView(), r.StridesView(), dims, i, g[i], want[i])
			}
		}
	}
	if dotTables.Load() == tables {
		t.Error("no operand went to GEMM with offset tables")
	}
}

// TestDotGeneralGroupedAxes checks the case of the MPS network's
// gradient: an operand of shape (19, 27, 19), strides [19, 361, 1], whose
// two contracted axes are no one run, multiplied without a copy.
func TestDotGeneralGroupedAxes(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64, tensor.Complex64, tensor.Complex128} {
		ext := []int{19, 27, 19, 5} // labels: free of l, the two contracted, free of r
		x := tensor.Must(tensor.Rand(tensor.NewRNG(1), dt, 27, 19, 19))
		l := tensor.Must(x.Permute(1, 0, 2))
		r := tensor.Must(tensor.Rand(tensor.NewRNG(2), dt, 27, 19, 5))
		attrs := graph.Attrs{LhsContract: []int{1, 2}, RhsContract: []int{0, 1}}
		copies := dotCopies.Load()
		got, ok, err := dotGeneral(&attrs, l, r, tensor.Shape{19, 5})
		if err != nil || !ok {
			t.Fatalf("%v: %v %v", dt, ok, err)
		}
		if n := dotCopies.Load() - copies; n != 0 {
			t.Errorf("%v: %d operands copied, want none", dt, n)
		}
		want := naiveDot(l, r, []int{0, 1, 2}, []int{1, 2, 3}, []int{0, 3}, []int{1, 2}, ext)
		tol := 1e-12
		if dt == tensor.Float32 || dt == tensor.Complex64 {
			tol = 1e-5
		}
		for i, g := range got.Complex128Values() {
			if cmplx.Abs(g-want[i]) > tol*(1+cmplx.Abs(want[i])) {
				t.Fatalf("%v: element %d is %v, want %v", dt, i, g, want[i])
			}
		}
	}
}

// extent is the number of multi-indices of the labels.
func extent(ext, labels []int) int {
	n := 1
	for _, l := range labels {
		n *= ext[l]
	}
	return n
}

func axisLabels(lo, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = lo + i
	}
	return out
}

func index(labels []int, lab int) int {
	for i, l := range labels {
		if l == lab {
			return i
		}
	}
	panic(fmt.Sprint("no label ", lab))
}

// freeOf returns the labels of at least first, in the order held.
func freeOf(labels []int, first int) []int {
	var out []int
	for _, l := range labels {
		if l >= first {
			out = append(out, l)
		}
	}
	return out
}

// oddLayout returns random values of shape ext[labels] in a random layout:
// a permuted view of a contiguous tensor, a strided slice at an offset of a
// larger one, an axis reversed, or an extent-1 tensor broadcast.
func oddLayout(t *testing.T, rng *rand.Rand, dt tensor.DType, labels, ext []int) *tensor.Tensor {
	shape := make([]int, len(labels))
	for i, l := range labels {
		shape[i] = ext[l]
	}
	perm := rng.Perm(len(shape))
	inv := make([]int, len(perm))
	held := make([]int, len(perm))
	for i, p := range perm {
		held[i] = 2 * shape[p] // room for a step-2 slice at an offset
		inv[p] = i
	}
	big := tensor.Must(tensor.Rand(tensor.NewRNG(rng.Uint64()), dt, held...))
	ranges := make([]tensor.Range, len(held))
	for i := range held {
		switch rng.IntN(3) {
		case 0:
			ranges[i] = tensor.Range{Start: 0, Stop: held[i] / 2, Step: 1}
		case 1:
			ranges[i] = tensor.Range{Start: 1, Stop: held[i], Step: 2}
		default:
			ranges[i] = tensor.Range{Start: held[i]/2 - 1, Stop: math.MinInt, Step: -1}
		}
	}
	v, err := big.Slice(ranges...)
	if err != nil {
		t.Fatal(err)
	}
	if v, err = v.Permute(inv...); err != nil {
		t.Fatal(err)
	}
	if rng.IntN(5) == 0 && len(shape) > 0 { // broadcast one axis
		ax := rng.IntN(len(shape))
		one := make([]tensor.Range, len(shape))
		for i := range one {
			one[i] = tensor.All
		}
		one[ax] = tensor.Range{Start: 0, Stop: 1, Step: 1}
		if v, err = v.Slice(one...); err != nil {
			t.Fatal(err)
		}
		if v, err = v.BroadcastTo(shape...); err != nil {
			t.Fatal(err)
		}
	}
	return v
}

// naiveDot sums l·r over the contracted labels for every output index.
func naiveDot(l, r *tensor.Tensor, lLabels, rLabels, outLabels, contract, ext []int) []complex128 {
	lv, rv := l.Clone().Complex128Values(), r.Clone().Complex128Values()
	val := make([]int, len(ext))
	at := func(labels []int) int {
		off := 0
		for _, lab := range labels {
			off = off*ext[lab] + val[lab]
		}
		return off
	}
	var out []complex128
	var walk func(labels []int, body func())
	walk = func(labels []int, body func()) {
		if len(labels) == 0 {
			body()
			return
		}
		for v := range ext[labels[0]] {
			val[labels[0]] = v
			walk(labels[1:], body)
		}
	}
	walk(outLabels, func() {
		var s complex128
		walk(contract, func() { s += lv[at(lLabels)] * rv[at(rLabels)] })
		out = append(out, s)
	})
	return out
}

// TestOffsetTable checks offsetTable against strided.OffsetTable on random
// shapes and strides, negative, zero and extent-1 axes among them.
func TestOffsetTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		shape, strides := make([]int, rng.IntN(5)), []int(nil)
		for i := range shape {
			shape[i] = rng.IntN(5)
			strides = append(strides, rng.IntN(41)-20)
		}
		want := strided.OffsetTable(shape, strides)[0]
		if got := offsetTable(shape, strides); !slices.Equal(got, want) {
			t.Fatalf("offsetTable(%v, %v) = %v, want %v", shape, strides, got, want)
		}
	}
}

// TestDotPlans checks which dot_general calls reuse a kept plan: the same
// attributes, shapes and strides do; other strides, or the same axes as
// batch rather than contracted, do not, and give their own right result;
// plans with long offset tables are not kept.
func TestDotPlans(t *testing.T) {
	dotPlans.Reset(256)
	check := func(what string, a graph.Attrs, l, r *tensor.Tensor, out tensor.Shape, lLabels, rLabels, outLabels, contract, ext []int, want prepcache.Stats) {
		t.Helper()
		before := dotPlans.Stats()
		got, ok, err := dotGeneral(&a, l, r, out)
		if err != nil || !ok {
			t.Fatalf("%s: %v %v", what, ok, err)
		}
		now := dotPlans.Stats()
		if d := (prepcache.Stats{Hits: now.Hits - before.Hits, Misses: now.Misses - before.Misses, Entries: now.Entries - before.Entries}); d != want {
			t.Errorf("%s: cache moved by %+v, want %+v", what, d, want)
		}
		for i, w := range naiveDot(l, r, lLabels, rLabels, outLabels, contract, ext) {
			if g := got.Complex128Values()[i]; cmplx.Abs(g-w) > 1e-12*(1+cmplx.Abs(w)) {
				t.Fatalf("%s: element %d is %v, want %v", what, i, g, w)
			}
		}
	}
	miss, hit := prepcache.Stats{Misses: 1, Entries: 1}, prepcache.Stats{Hits: 1}
	ext := []int{3, 4, 5} // labels: free of l, contracted, free of r
	l := tensor.Must(tensor.Rand(tensor.NewRNG(1), tensor.Float64, 3, 4))
	r := tensor.Must(tensor.Rand(tensor.NewRNG(2), tensor.Float64, 4, 5))
	mm := graph.Attrs{LhsContract: []int{1}, RhsContract: []int{0}}
	check("a product", mm, l, r, tensor.Shape{3, 5}, []int{0, 1}, []int{1, 2}, []int{0, 2}, []int{1}, ext, miss)
	check("the product again", mm, l, r, tensor.Shape{3, 5}, []int{0, 1}, []int{1, 2}, []int{0, 2}, []int{1}, ext, hit)
	lt := tensor.Must(tensor.Must(tensor.Rand(tensor.NewRNG(3), tensor.Float64, 4, 3)).Permute(1, 0))
	check("a transposed lhs", mm, lt, r, tensor.Shape{3, 5}, []int{0, 1}, []int{1, 2}, []int{0, 2}, []int{1}, ext, miss)

	// The same operand shapes, the shared axis a batch axis.
	sq := tensor.Must(tensor.Rand(tensor.NewRNG(4), tensor.Float64, 4, 4))
	sq2 := tensor.Must(tensor.Rand(tensor.NewRNG(5), tensor.Float64, 4, 4))
	ext = []int{4, 4, 4}
	check("a square product", graph.Attrs{LhsContract: []int{1}, RhsContract: []int{0}}, sq, sq2, tensor.Shape{4, 4},
		[]int{0, 1}, []int{1, 2}, []int{0, 2}, []int{1}, ext, miss)
	check("a batch of outer products", graph.Attrs{LhsBatch: []int{1}, RhsBatch: []int{0}}, sq, sq2, tensor.Shape{4, 4, 4},
		[]int{0, 1}, []int{1, 2}, []int{1, 0, 2}, nil, ext, miss)

	// Contracted axes (80, 64) that are no one run: a table of 5120
	// entries, too long to keep, the operand not copied.
	x := tensor.Must(tensor.Rand(tensor.NewRNG(6), tensor.Float64, 80, 64, 64))
	big := tensor.Must(x.Permute(1, 0, 2))
	rb := tensor.Must(tensor.Rand(tensor.NewRNG(7), tensor.Float64, 80, 64, 2))
	ext = []int{64, 80, 64, 2}
	for range 2 {
		check("long tables", graph.Attrs{LhsContract: []int{1, 2}, RhsContract: []int{0, 1}}, big, rb, tensor.Shape{64, 2},
			[]int{0, 1, 2}, []int{1, 2, 3}, []int{0, 3}, []int{1, 2}, ext, prepcache.Stats{Misses: 1})
	}
}
