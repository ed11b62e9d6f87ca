package ref_test

import (
	"strings"
	"testing"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/einsum/naive"
	"github.com/goferro/goferro/graph/ref"
	"github.com/goferro/goferro/tensor"
)

// ladder returns the inner product of two matrix product states of sites
// sites, of physical extent d and bond extent bond, and the path that
// contracts them site by site: the environment with the ket's site, then
// with the bra's.
func ladder(sites, d, bond int) (string, [][]int, [][]int) {
	next := 'a'
	label := func() string { next++; return string(next - 1) }
	var terms []string
	var shapes [][]int
	var ket, bra string
	for k := range sites {
		p := label()
		kt, bt := p, p
		ks, bs := []int{d}, []int{d}
		if k > 0 {
			kt, bt = kt+ket, bt+bra
			ks, bs = append(ks, bond), append(bs, bond)
		}
		if k < sites-1 {
			ket, bra = label(), label()
			kt, bt = kt+ket, bt+bra
			ks, bs = append(ks, bond), append(bs, bond)
		}
		terms = append(terms, kt, bt)
		shapes = append(shapes, ks, bs)
	}
	path := [][]int{{0, 1}}
	for live := 2*sites - 1; live > 1; live-- {
		path = append(path, []int{0, live - 1})
	}
	return strings.Join(terms, ",") + "->", shapes, path
}

// TestEinsumWithinSegments: the inner product of two matrix product
// states of eight sites under a limit below every site's
// bond×physical×bond intermediate (63 elements) and above an
// environment (9) plans as segments (einsum.Segments), a site each, and
// compiles into their slices: no contraction's result exceeds the limit
// but a part's last one (at most the part's result), and the program
// computes the contraction (naive loops over each step of the unsliced
// plan).
func TestEinsumWithinSegments(t *testing.T) {
	eq, shapes, path := ladder(8, 7, 3)
	const limit = 10
	p, err := einsum.NewPlan(eq, shapes, einsum.WithPath(path), einsum.WithMemoryLimit(limit))
	if err != nil {
		t.Fatal(err)
	}
	if p.Segments == nil {
		t.Fatalf("not segmented: slicing %+v", p.Slicing)
	}
	bound := float64(limit)
	for _, pt := range p.Segments.Parts {
		if s := pt.Plan.Slicing; s != nil {
			n, _ := tensor.Shape(s.Plan.OutputShape).NumElements()
			bound = max(bound, float64(n))
		}
	}
	prog, ts := compileWithin(t, eq, path, limit, shapes)
	ops := map[string]int{}
	for _, ins := range prog.Instructions {
		ops[ins.Op]++
		if ins.Op == "dot_general" {
			if n, _ := prog.SlotType(ins.Outputs[0].Slot).Shape.NumElements(); float64(n) > bound {
				t.Errorf("a contraction of %d elements, limit %v", n, limit)
			}
		}
	}
	if ops["slice"] == 0 || ops["add"] == 0 {
		t.Errorf("%d segments compile to %v", len(p.Segments.Parts), ops)
	}
	got, err := ref.Run(prog, ts...)
	if err != nil {
		t.Fatal(err)
	}
	whole := must(einsum.NewPlan(eq, shapes, einsum.WithPath(path)))
	want := must(cpu.Convert(must(naive.Replay(whole, ts)), tensor.Float64)) // Replay computes in complex128
	check(t, eq, got[0], want, 1e-12)
	t.Logf("%d segments, %d slices: %v", len(p.Segments.Parts), p.Segments.Slices(), ops)
}
