package graph

import (
	"math/rand/v2"
	"testing"
)

// recipe is a random program description: each step applies an op to
// earlier values (by index), so the same recipe can be traced with dead
// and duplicated code mixed in.
type step struct {
	op   int
	a, b int
}

func randomRecipe(rng *rand.Rand, n int) []step {
	steps := make([]step, n)
	for i := range steps {
		avail := 2 + i // two inputs, then every step's result
		steps[i] = step{op: rng.IntN(6), a: rng.IntN(avail), b: rng.IntN(avail)}
	}
	return steps
}

func apply(s step, vals []Value, b *Builder) Value {
	x, y := vals[s.a], vals[s.b]
	switch s.op {
	case 0:
		return Add(x, y)
	case 1:
		return Mul(x, y)
	case 2:
		return Exp(x)
	case 3:
		return Transpose(Transpose(x)) // two permutes that stay
	case 4:
		return Sub(x, b.Scalar(f64, 2))
	default:
		return ReduceSum(BroadcastTo(x, Dims(2, 3, 3)), 0)
	}
}

// trace builds the recipe; with noise, every step is traced twice (the
// copy used at random), and dead ops are sprinkled in between.
func trace(steps []step, noise bool, rng *rand.Rand) Value {
	b := NewBuilder()
	vals := []Value{b.Input("x", f64, Dims(3, 3)), b.Input("y", f64, Dims(3, 3))}
	for _, s := range steps {
		v := apply(s, vals, b)
		if noise {
			w := apply(s, vals, b)
			if rng.IntN(2) == 0 {
				v = w
			}
			for range rng.IntN(3) {
				apply(step{op: rng.IntN(6), a: rng.IntN(len(vals)), b: rng.IntN(len(vals))}, vals, b)
			}
		}
		vals = append(vals, v)
	}
	return vals[len(vals)-1]
}

// TestPropertyDeadAndDuplicatedCode: programs that differ only by dead or
// duplicated code compile to the same fingerprint (and the same text).
func TestPropertyDeadAndDuplicatedCode(t *testing.T) {
	for seed := range uint64(100) {
		rng := rand.New(rand.NewPCG(seed, 3))
		steps := randomRecipe(rng, 5+rng.IntN(30))
		p, err := Compile(trace(steps, false, rng))
		if err != nil {
			t.Fatal(err)
		}
		q, err := Compile(trace(steps, true, rng))
		if err != nil {
			t.Fatal(err)
		}
		if p.Fingerprint() != q.Fingerprint() {
			t.Fatalf("seed %d: fingerprints differ:\n%v\n%v", seed, p, q)
		}
		if err := q.Validate(); err != nil {
			t.Fatal(err)
		}
		// No two instructions of a compiled program are equal.
		seen := map[string]bool{}
		for _, ins := range q.Instructions {
			k := string(appendAttrs(appendString(nil, ins.Op), &ins.Attrs))
			for _, s := range ins.Inputs {
				k += "," + itoa(int(s))
			}
			if seen[k] {
				t.Fatalf("seed %d: duplicate instruction %d left:\n%v", seed, ins.Index, q)
			}
			seen[k] = true
		}
	}
}
