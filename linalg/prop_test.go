package linalg

import (
	"math"
	"testing"

	"github.com/goferro/goferro/tensor"
	"pgregory.net/rapid"
)

// TestFactorisationsProperty draws the inputs the fixed-shape accuracy
// tests do not combine: any shape up to 80×80 (empty included), a batch
// of up to two axes, a layout (contiguous, transposed, or every other row
// of a larger tensor whose skipped rows hold NaN), one or three threads
// with every parallel path taken, and the options of each call; each
// matrix of the batch must then meet the bounds, as in the
// accuracy tests.
func TestFactorisationsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		dt := rapid.SampledFrom(allDTypes).Draw(t, "dtype")
		kind := rapid.SampledFrom(kinds).Draw(t, "kind")
		op := rapid.SampledFrom([]string{"qr", "lq", "svd", "eigh"}).Draw(t, "op")
		// Most extents within one block of reflectors, some past two
		// (blocked bidiagonal and tridiagonal reductions).
		extent := rapid.OneOf(rapid.IntRange(0, 40), rapid.IntRange(65, 80))
		m := extent.Draw(t, "m")
		n := m
		if op != "eigh" {
			n = extent.Draw(t, "n")
		}
		batch := rapid.SliceOfN(rapid.IntRange(1, 2), 0, 2).Draw(t, "batch")
		layout := rapid.SampledFrom([]string{"contiguous", "transposed", "every other row"}).Draw(t, "layout")
		seed := rapid.Uint64().Draw(t, "seed")
		defer allParallel(rapid.SampledFrom([]int{1, 3}).Draw(t, "threads"))()

		ms := make([]cm, count(batch))
		for b := range ms {
			if op == "eigh" {
				ms[b] = roundTo(hermitianMatrix(kind, n, dt, seed+uint64(b)), dt)
			} else {
				ms[b] = roundTo(testMatrix(kind, m, n, dt, seed+uint64(b)), dt)
			}
		}
		x := inLayout(t, ms, dt, batch, layout)

		switch op {
		case "qr", "lq":
			mode := rapid.SampledFrom([]Mode{Reduced, Complete}).Draw(t, "mode")
			f, lq := QR, op == "lq"
			if lq {
				f = LQ
			}
			a, b, err := f(x, mode)
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range ms {
				if lq { // L, Q
					checkQR(t, want, element(t, b, batch, i), element(t, a, batch, i), mode, dt, true)
				} else {
					checkQR(t, want, element(t, a, batch, i), element(t, b, batch, i), mode, dt, false)
				}
			}
		case "svd":
			opts := SVDOptions{Mode: rapid.SampledFrom([]Mode{Reduced, Complete}).Draw(t, "mode")}
			if opts.Mode == Reduced {
				opts.MaxRank = rapid.IntRange(0, 5).Draw(t, "max rank")
				opts.RelTol = rapid.SampledFrom([]float64{0, 1e-3, 0.5}).Draw(t, "relative tolerance")
			}
			res, err := SVD(x, opts)
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range ms {
				checkSVD(t, want, &SVDResult{
					U: element(t, res.U, batch, i), S: element(t, res.S, batch, i),
					Vh: element(t, res.Vh, batch, i), Discarded: element(t, res.Discarded, batch, i),
				}, opts.Mode, dt)
			}
		case "eigh":
			w, v, err := Eigh(x)
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range ms {
				checkEigh(t, want, vectorsOf(element(t, w, batch, i))[0], matricesOf(t, element(t, v, batch, i))[0], dt)
			}
		}
	})
}

// inLayout returns the matrices as a tensor of shape (batch..., r, c)
// laid out as named: contiguous, the transposed view of a tensor of their
// transposes, or every other row of a tensor twice as tall whose other
// rows hold NaN (a call that reads them cannot meet the bounds).
func inLayout(t tb, ms []cm, dt tensor.DType, batch []int, layout string) *tensor.Tensor {
	t.Helper()
	r, c := ms[0].r, ms[0].c
	axis := len(batch) // the row axis
	var x *tensor.Tensor
	var err error
	switch layout {
	case "transposed":
		ts := make([]cm, len(ms))
		for b, a := range ms {
			ts[b] = newCM(c, r)
			for i := range r {
				for j := range c {
					ts[b].set(j, i, a.at(i, j))
				}
			}
		}
		perm := make([]int, axis+2)
		for i := range perm {
			perm[i] = i
		}
		perm[axis], perm[axis+1] = axis+1, axis
		x, err = toTensor(t, ts, dt, batch...).Permute(perm...)
	case "every other row":
		tall := make([]cm, len(ms))
		for b, a := range ms {
			tall[b] = newCM(2*r, c)
			for i := range 2 * r {
				for j := range c {
					z := complex(math.NaN(), 0)
					if i%2 == 0 {
						z = a.at(i/2, j)
					}
					tall[b].set(i, j, z)
				}
			}
		}
		ranges := make([]tensor.Range, axis+2)
		for i := range ranges {
			ranges[i] = tensor.All
		}
		ranges[axis] = tensor.Range{Full: true, Step: 2}
		x, err = toTensor(t, tall, dt, batch...).Slice(ranges...)
	default:
		x = toTensor(t, ms, dt, batch...)
	}
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// element returns x[b] for a tensor of shape (batch..., rest...), b
// counting the batch's elements in row-major order: a tensor of shape
// (rest...).
func element(t tb, x *tensor.Tensor, batch []int, b int) *tensor.Tensor {
	t.Helper()
	rest := x.ShapeView()[len(batch):]
	flat, err := x.Reshape(append([]int{count(batch)}, rest...)...)
	if err != nil {
		t.Fatal(err)
	}
	ranges := make([]tensor.Range, 1+len(rest))
	for i := range ranges {
		ranges[i] = tensor.All
	}
	ranges[0] = tensor.R(b, b+1)
	e, err := flat.Slice(ranges...)
	if err == nil {
		e, err = e.Squeeze(0)
	}
	if err != nil {
		t.Fatal(err)
	}
	return e
}
