package cpu_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/tensor"
)

// TestSummedContraction covers contractions whose contracted labels are no
// single run in both operands, large enough that the program sums GEMMs
// over the outer ones rather than copying an operand.
func TestSummedContraction(t *testing.T) {
	cases := []struct {
		eq     string
		shapes [][]int
		summed string // the labels summed outside the GEMM
	}{
		// The benchmark layout (bench/einsum-layouts.json), scaled down.
		{"ijk,ik->j", [][]int{{4, 4096, 16}, {4, 16}}, "i"},
		// Two summed loops that no stride merges.
		{"hijk,ihk->j", [][]int{{2, 3, 2048, 16}, {3, 2, 16}}, "hi"},
		// A result written transposed (the GEMM computes Cᵀ = Bᵀ·Aᵀ).
		{"ijk,ikl->lj", [][]int{{2, 2048, 64}, {2, 64, 4}}, "i"},
		// With a batch label.
		{"bijk,bik->bj", [][]int{{3, 4, 2048, 16}, {3, 4, 16}}, "i"},
	}
	r := rand.New(rand.NewPCG(5, 6))
	for _, c := range cases {
		checkInPlace(t, r, c.eq, c.shapes, func(l cpu.StepLayout) []int { return l.Summed }, c.summed)
	}
}

// TestFreeGroupSplit covers small products whose free labels are no
// single run in an operand (contracting the middle index of a matrix
// product state's tensor with a vector, or with a gate): the program runs
// a batch of them over the outer label, reading the tensor in place and
// writing the result in place, rather than copying them.
func TestFreeGroupSplit(t *testing.T) {
	cases := []struct {
		eq     string
		shapes [][]int
		batch  string // the free labels looped over as a batch
	}{
		{"ijk,j->ik", [][]int{{64, 4, 64}, {4}}, "i"},
		{"j,ijk->ik", [][]int{{2}, {64, 2, 256}}, "i"},
		// The kept run is the longer one, the unit-stride one looped.
		{"ijk,j->ik", [][]int{{256, 64, 4}, {64}}, "k"},
		// Gates on the physical indices.
		{"ijk,jl->ilk", [][]int{{128, 2, 128}, {2, 2}}, "i"},
		{"ijkl,jkmn->imnl", [][]int{{64, 2, 2, 64}, {2, 2, 2, 2}}, "i"},
		{"ijkl,jkmn->imnl", [][]int{{64, 4, 4, 64}, {4, 4, 4, 4}}, "i"},
	}
	r := rand.New(rand.NewPCG(7, 8))
	for _, c := range cases {
		checkInPlace(t, r, c.eq, c.shapes, func(l cpu.StepLayout) []int { return l.Batch }, c.batch)
	}
}

// checkInPlace plans a one-step contraction, checks that it copies
// nothing and that the labels loops picks from its layout are want's, and
// compares its result with the naive einsum in every dtype (integers and
// booleans on the portable product).
func checkInPlace(t *testing.T, r *rand.Rand, eq string, shapes [][]int, loops func(cpu.StepLayout) []int, want string) {
	t.Helper()
	p, err := einsum.NewPlan(eq, shapes)
	if err != nil {
		t.Fatal(err)
	}
	x, err := cpu.NewContraction(p)
	if err != nil {
		t.Fatal(err)
	}
	l := x.Layouts()[0]
	var names []string
	for _, s := range loops(l) {
		names = append(names, p.Labels[s])
	}
	slices.Sort(names)
	if got := strings.Join(names, ""); got != want || l.Copies != 0 {
		t.Errorf("%s %v: loops over %q, %d copies; want %q, none", eq, shapes, got, l.Copies, want)
	}
	for _, dt := range tensor.DTypes {
		checkCase(t, r, genCase{eq: eq, shapes: shapes, desc: "read in place"}, dt)
	}
}
