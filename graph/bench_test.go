package graph

import (
	"testing"
	"time"
)

// chain10k traces a 10,000-op program: a long chain of elementwise ops and
// matrix products over a few inputs, with some duplicated and dead code.
func chain10k() []Value {
	b := NewBuilder()
	x := b.Input("x", f64, Shape{Sym("n"), Size(8)})
	w := b.Input("w", f64, Dims(8, 8))
	one := b.Scalar(f64, 1)
	v := x
	for i := 0; i < 8000; i++ {
		switch i % 4 {
		case 0:
			v = MatMul(v, w)
		case 1:
			v = Add(v, one)
		case 2:
			v = Exp(Neg(v))
		case 3:
			v = Mul(v, x)
		}
		if i%50 == 0 {
			_ = Sub(v, x) // dead
		}
	}
	return []Value{v}
}

func BenchmarkCompile10k(b *testing.B) {
	outs := chain10k()
	p, err := Compile(outs...)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(p.Instructions)), "instructions")
	b.ResetTimer()
	for range b.N {
		if _, err := Compile(outs...); err != nil {
			b.Fatal(err)
		}
	}
}

func TestCompile10k(t *testing.T) {
	outs := chain10k()
	start := time.Now()
	p, err := Compile(outs...)
	el := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(p.Instructions); n < 10000 {
		t.Fatalf("%d instructions, want >= 10000", n)
	}
	t.Logf("compiled %d instructions in %v", len(p.Instructions), el)
	// Generous bound for shared CI machines; the benchmark measures it.
	if el > 2*time.Second {
		t.Fatalf("compiling took %v", el)
	}
}
