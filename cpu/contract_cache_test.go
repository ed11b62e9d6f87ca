package cpu

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/internal/prepcache"
	"github.com/goferro/goferro/tensor"
)

// cacheDelta returns how contractions' counters moved since before.
func cacheDelta(before prepcache.Stats) prepcache.Stats {
	now := contractions.Stats()
	return prepcache.Stats{Hits: now.Hits - before.Hits, Misses: now.Misses - before.Misses, Entries: now.Entries - before.Entries}
}

func randTensors(t *testing.T, seed uint64, shapes ...[]int) []*tensor.Tensor {
	t.Helper()
	var ops []*tensor.Tensor
	for i, s := range shapes {
		x, err := tensor.Rand(tensor.NewRNG(seed+uint64(i)), tensor.Float64, s...)
		if err != nil {
			t.Fatal(err)
		}
		ops = append(ops, x)
	}
	return ops
}

func values(t *testing.T, x *tensor.Tensor) []float64 {
	t.Helper()
	v, err := tensor.Values[float64](x)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// planned contracts the operands with a plan made for this call alone.
func planned(t *testing.T, eq string, ops []*tensor.Tensor, opts ...einsum.Option) []float64 {
	t.Helper()
	c, err := planContraction(context.Background(), eq, ops, opts)
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Execute(context.Background(), ops...)
	if err != nil {
		t.Fatal(err)
	}
	return values(t, r)
}

// TestContractCache checks which calls the cache of Contractions serves:
// a repeated equation and shapes with new values (giving what planning
// anew gives), not other shapes, calls with planning options, contractions
// with large intermediates or a search that ctx cut short.
func TestContractCache(t *testing.T) {
	contractions.Reset(contractionCacheSize)
	eq := "ab,bc,cd->ad"
	small := [][]int{{2, 3}, {3, 4}, {4, 5}}
	before := contractions.Stats()
	for seed := range uint64(3) {
		ops := randTensors(t, 10*seed, small...)
		got, err := Contract(eq, ops...)
		if err != nil {
			t.Fatal(err)
		}
		if want := planned(t, eq, ops); !slices.Equal(values(t, got), want) {
			t.Fatalf("call %d: %v, planned anew %v", seed, values(t, got), want)
		}
	}
	if d := cacheDelta(before); d != (prepcache.Stats{Hits: 2, Misses: 1, Entries: 1}) {
		t.Fatalf("three calls with one equation and shapes: %+v, want one miss, two hits, one entry", d)
	}

	before = contractions.Stats()
	if _, err := Contract(eq, randTensors(t, 1, []int{3, 3}, []int{3, 4}, []int{4, 5})...); err != nil {
		t.Fatal(err)
	}
	if d := cacheDelta(before); d.Misses != 1 || d.Entries != 1 {
		t.Fatalf("new shapes: %+v, want a miss and a new entry", d)
	}

	before = contractions.Stats()
	ops := randTensors(t, 2, small...)
	greedy := einsum.WithOptimizer(einsum.OptimizeGreedy)
	got, err := ContractContext(context.Background(), eq, ops, greedy)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(values(t, got), planned(t, eq, ops, greedy)) {
		t.Fatal("with an option: result differs from planning anew")
	}
	if d := cacheDelta(before); d != (prepcache.Stats{}) {
		t.Fatalf("a call with an option used the cache: %+v", d)
	}

	// An intermediate of 200·200 elements on every path, more than a
	// kept Contraction may hold.
	large := [][]int{{200, 200}, {200, 200}, {200, 200}}
	ops = randTensors(t, 3, large...)
	if c, err := planContraction(context.Background(), eq, ops, nil); err != nil || c.prog == nil || c.prog.Workspace() <= cachedWorkspace {
		t.Fatalf("the large case holds %d intermediates (err %v); want more than %d", c.prog.Workspace(), err, cachedWorkspace)
	}
	for range 2 {
		before = contractions.Stats()
		if _, err := Contract(eq, ops...); err != nil {
			t.Fatal(err)
		}
		if d := cacheDelta(before); d != (prepcache.Stats{Misses: 1}) {
			t.Fatalf("large intermediates: %+v, want a miss and no entry", d)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	before = contractions.Stats()
	_, err = ContractContext(ctx, "ab,bc->ac", randTensors(t, 4, []int{2, 3}, []int{3, 4}), nil...)
	if err == nil {
		t.Fatal("a cancelled context: no error")
	}
	if d := cacheDelta(before); d.Entries != 0 {
		t.Fatalf("a plan made under a cancelled context was kept: %+v", d)
	}
}

// TestContractionKey checks that keys tell apart shapes whose digits run
// together and equations of different lengths.
func TestContractionKey(t *testing.T) {
	key := func(eq string, shapes ...[]int) string {
		var ops []*tensor.Tensor
		for _, s := range shapes {
			x, err := tensor.Zeros(tensor.Float64, s...)
			if err != nil {
				t.Fatal(err)
			}
			ops = append(ops, x)
		}
		return string(contractionKey(nil, eq, ops))
	}
	keys := []string{
		key("a,b->ab", []int{12}, []int{3}),
		key("a,b->ab", []int{1}, []int{23}),
		key("ab,c->abc", []int{1, 2}, []int{3}),
		key("ab,c->abc", []int{12}, []int{3}),
		key("->", []int{}),
		key("->"),
	}
	for i := range keys {
		for j := range i {
			if keys[i] == keys[j] {
				t.Errorf("keys %d and %d are both %q", j, i, keys[i])
			}
		}
	}
	if a, b := key("ij,jk->ik", []int{2, 3}, []int{3, 4}), key("ij,jk->ik", []int{2, 3}, []int{3, 4}); a != b {
		t.Errorf("one equation and shapes: keys %q and %q", a, b)
	}
}

// TestContractCacheConcurrent contracts from many goroutines at once,
// over a few shapes that share cache entries: every result is the one
// planning anew gives (run under -race by the test script).
func TestContractCacheConcurrent(t *testing.T) {
	const eq = "ijk,jl->ilk"
	type tc struct {
		ops  []*tensor.Tensor
		want []float64
	}
	var cases []tc
	for n := range 4 {
		ops := randTensors(t, uint64(n), []int{n + 1, 2, n + 2}, []int{2, 3})
		cases = append(cases, tc{ops, planned(t, eq, ops)})
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				c := cases[(g+i)%len(cases)]
				got, err := Contract(eq, c.ops...)
				var v []float64
				if err == nil {
					v, err = tensor.Values[float64](got)
				}
				if err == nil && !slices.Equal(v, c.want) {
					err = fmt.Errorf("goroutine %d call %d: %v, want %v", g, i, v, c.want)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
