package cpu_test

import (
	"context"
	"testing"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/tensor"
)

// TestEinsumBoolIsLogical checks that Bool einsum is an OR of ANDs, never a
// count: eight all-true vectors of 256 have 2^64 true index assignments,
// which a count in int64 wraps to 0 (numpy gives True). The variants put
// the same count under a kept label and in a GEMM step.
func TestEinsumBoolIsLogical(t *testing.T) {
	cases := []struct {
		eq    string
		shape []int
	}{
		{"a,b,c,d,e,f,g,h->", []int{256}},
		{"ia,ib,ic,id,ie,if,ig,ih->i", []int{3, 256}},
		{"ai,bi,ci,di,ei,fi,gi,hi->", []int{256, 2}},
	}
	for _, c := range cases {
		ops := make([]*tensor.Tensor, 8)
		shapes := make([][]int, 8)
		for i := range ops {
			x, err := tensor.Zeros(tensor.Bool, c.shape...)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := tensor.Buffer[bool](x)
			for j := range b {
				b[j] = true
			}
			ops[i], shapes[i] = x, c.shape
		}
		p, err := einsum.NewPlan(c.eq, shapes)
		if err != nil {
			t.Fatalf("%s: %v", c.eq, err)
		}
		for _, threads := range []int{1, 2} {
			x, err := cpu.NewContraction(p, cpu.WithThreads(threads))
			if err != nil {
				t.Fatal(err)
			}
			got, err := x.Execute(context.Background(), ops...)
			if err != nil {
				t.Fatalf("%s: %v", c.eq, err)
			}
			vals, err := tensor.Values[bool](got)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				if !v {
					t.Errorf("%s (%d threads): element %d is false, want true (numpy)", c.eq, threads, i)
				}
			}
		}
	}
}
