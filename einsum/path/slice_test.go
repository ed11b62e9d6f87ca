package path

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"
	"time"
)

// A chain of matrices a·b·c·d with extents 2, 3, 4, 5, 6.
func TestPeak(t *testing.T) {
	n := Network{Inputs: [][]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}}, Output: []int{0, 4}, Sizes: []int{2, 3, 4, 5, 6}}
	for _, c := range []struct {
		p    Path
		peak float64
	}{
		// Left to right: the second step holds ab (2×4) and makes abc
		// (2×5); the last makes the output, which does not count.
		{Path{{0, 1}, {0, 2}, {0, 1}}, 8 + 10},
		// Both ends first: ab (2×4) is held while cd (4×6) is made, and
		// both while the output is made.
		{Path{{0, 1}, {0, 1}, {0, 1}}, 8 + 24},
	} {
		if peak, err := Peak(n, c.p); err != nil || peak != c.peak {
			t.Errorf("path %v: peak %v (%v), want %v", c.p, peak, err, c.peak)
		}
	}
}

// lattice is an L×L square lattice of tensors with bonds of size d and no
// open legs.
func lattice(L, d int) Network {
	var n Network
	label := func() int { n.Sizes = append(n.Sizes, d); return len(n.Sizes) - 1 }
	right := make([][]int, L)
	down := make([][]int, L)
	for i := range L {
		right[i], down[i] = make([]int, L), make([]int, L)
		for j := range L {
			right[i][j], down[i][j] = -1, -1
			if j+1 < L {
				right[i][j] = label()
			}
			if i+1 < L {
				down[i][j] = label()
			}
		}
	}
	for i := range L {
		for j := range L {
			var legs []int
			for _, l := range []int{right[i][j], down[i][j]} {
				if l >= 0 {
					legs = append(legs, l)
				}
			}
			if j > 0 {
				legs = append(legs, right[i][j-1])
			}
			if i > 0 {
				legs = append(legs, down[i-1][j])
			}
			n.Inputs = append(n.Inputs, legs)
		}
	}
	return n
}

// Slicing a lattice to an eighth of its largest intermediate: every
// intermediate of one slice fits, its path is a path of the sliced network
// whose peak the slicing reports, every sliced label is distinct and
// cut into blocks that divide it, and the FLOPs add up.
func TestSliceLattice(t *testing.T) {
	for _, L := range []int{4, 6, 8} {
		n := lattice(L, 2)
		p, err := Greedy(n, Options{})
		if err != nil {
			t.Fatal(err)
		}
		c, _ := Evaluate(n, p)
		big, _, _ := largest(n, p)
		s, err := Slice(context.Background(), n, p, big/8, Options{})
		if err != nil {
			t.Fatal(err)
		}
		sn := s.Network(n)
		got, sc, err := largest(sn, s.Path)
		if err != nil {
			t.Fatalf("L=%d: the slice path does not fit the sliced network: %v", L, err)
		}
		peak, flops := naiveLoops(t, n, s)
		if got > big/8 || s.Peak != peak {
			t.Errorf("L=%d: one slice's largest intermediate %v (limit %v), peak %v reported %v", L, got, big/8, peak, s.Peak)
		}
		if math.Abs(s.Log2Flops-math.Log2(flops)) > 1e-9 {
			t.Errorf("L=%d: FLOPs %v, the loops run %v", L, s.Flops, flops)
		}
		seen := map[int]bool{}
		slices := 1.0
		for j, l := range s.Labels {
			if seen[l] || s.Sizes[j] >= n.Sizes[l] || n.Sizes[l]%s.Sizes[j] != 0 {
				t.Errorf("L=%d: label %d sliced twice, or its size %d in a slice does not divide %d", L, l, s.Sizes[j], n.Sizes[l])
			}
			seen[l] = true
			slices *= float64(n.Sizes[l] / s.Sizes[j])
		}
		if want := naiveNested(t, n, s, s.Path, 0); s.Slices != slices || math.Abs(s.Log2Flops-want) > 1e-9 || s.Flops > slices*sc.Flops {
			t.Errorf("L=%d: %v slices of %v FLOPs = %v, want 2^%v", L, s.Slices, sc.Flops, s.Flops, want)
		}
		// Slicing never beats the best unsliced path (it may beat greedy's:
		// Slice searches the sliced network's path).
		if len(n.Inputs) <= MaxOptimal {
			opt := mustCost(t, n, must(Optimal(context.Background(), n, Options{})))
			if s.Flops < opt.Flops*(1-1e-12) {
				t.Errorf("L=%d: %v FLOPs sliced, fewer than the optimal unsliced path's %v", L, s.Flops, opt.Flops)
			}
		}
		t.Logf("L=%d: largest intermediate %v -> %v with %d labels sliced, FLOPs overhead %.2f", L, big, got, len(s.Labels), s.Flops/c.Flops)
	}
}

// The chain a·b·c·d of TestPeak with its last output label (extent 6)
// sliced into single values, along ((ab)(cd)): ab involves no sliced label
// and runs once, cd and the last step run in each of the 6 slices. In the
// slice, ab (2×4) is held while cd (4×1) and the output are made.
func TestSlicingPrice(t *testing.T) {
	n := Network{Inputs: [][]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}}, Output: []int{0, 4}, Sizes: []int{2, 3, 4, 5, 6}}
	p := Path{{0, 1}, {0, 1}, {0, 1}}
	s := Slicing{Labels: []int{4}, Sizes: []int{1}, Slices: 6}
	big, err := s.price(n, p)
	if err != nil {
		t.Fatal(err)
	}
	// FLOPs: ab 2·3·4·2 = 48 once; cd 4·5·1·2 = 40 and (ab)(cd)
	// 2·4·1·2 = 16 six times.
	if want := 48 + 6*(40+16.0); s.Flops != want || math.Abs(s.Log2Flops-math.Log2(want)) > 1e-12 {
		t.Errorf("FLOPs %v (log2 %v), want %v", s.Flops, s.Log2Flops, want)
	}
	if !slices.Equal(s.Invariant, []bool{true, false, false}) || s.Peak != 8+4 || big != 8 {
		t.Errorf("invariant %v, peak %v, largest %v; want [true false false], 12, 8", s.Invariant, s.Peak, big)
	}
	if inv, err := Invariant(n, p, s.Labels); err != nil || !slices.Equal(inv, s.Invariant) {
		t.Errorf("Invariant %v %v, want %v", inv, err, s.Invariant)
	}
}

// naiveLoops runs the slices of s as nested loops, Labels outermost first,
// one block combination at a time (the last label varying fastest), and
// returns the most elements the intermediates hold at once and the FLOPs
// the steps run. In each slice the steps that depend on a label whose
// block changed, or on one inside it, run again — level by level (the
// innermost sliced label their inputs carry), outermost first, in path
// order within a level — their results of the slice before dropped
// first; the others' results are kept. A result read by a step of its own level
// is freed after it; the final result is left out.
func naiveLoops(t *testing.T, n Network, s Slicing) (peak, flops float64) {
	t.Helper()
	c, err := Evaluate(s.Network(n), s.Path)
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := s.Path.IDs(len(n.Inputs))
	level := make([]int, len(ids))
	for si := range ids {
		below := labelsBelow(n, ids, len(n.Inputs)+si)
		for j, l := range s.Labels {
			if slices.Contains(below, l) {
				level[si] = j + 1
			}
		}
	}
	blocks := s.blocks(n)
	live := map[int]float64{} // intermediate id -> elements
	var prev []int
	for slice := range int(s.Slices) {
		// The block of each label in this slice, and the outermost that
		// changed (0: the first slice, where every level runs).
		vals := make([]int, len(s.Labels))
		for j, k := len(s.Labels)-1, slice; j >= 0; j-- {
			vals[j], k = k%int(blocks[j]), k/int(blocks[j])
		}
		changed := 0
		if prev != nil {
			changed = 1
			for changed <= len(vals) && vals[changed-1] == prev[changed-1] {
				changed++
			}
		}
		prev = vals
		for id := range live {
			if level[id-len(n.Inputs)] >= changed {
				delete(live, id) // recomputed below
			}
		}
		for lv := changed; lv <= len(s.Labels); lv++ {
			for si, st := range c.Steps {
				if level[si] != lv {
					continue
				}
				size := st.Size
				if si == len(c.Steps)-1 {
					size = 0
				}
				total := size
				for _, x := range live {
					total += x
				}
				peak = max(peak, total)
				flops += st.Flops
				for _, id := range ids[si] {
					if id >= len(n.Inputs) && level[id-len(n.Inputs)] == lv {
						delete(live, id)
					}
				}
				live[len(n.Inputs)+si] = size
			}
		}
	}
	return peak, flops
}

// A limit no slicing can meet is ErrMemoryLimit.
func TestSliceImpossible(t *testing.T) {
	n := lattice(3, 2)
	p, _ := Greedy(n, Options{})
	if _, err := Slice(context.Background(), n, p, 0.5, Options{}); !errors.Is(err, ErrMemoryLimit) {
		t.Fatalf("error %v, want ErrMemoryLimit", err)
	}
	// A limit already met slices nothing, and the path is not worse.
	c, _ := Evaluate(n, p)
	s, err := Slice(context.Background(), n, p, c.LargestIntermediate, Options{})
	if err != nil || len(s.Labels) != 0 || s.Slices != 1 || s.Flops > c.Flops {
		t.Fatalf("slicing %+v %v, want none", s, err)
	}
}

// unslice restores every sliced label the path does not need: on a
// lattice whose path already fits the limit, labels sliced anyway are all
// restored, and the FLOPs drop back to the unsliced path's; a label the
// limit needs stays sliced.
func TestUnslice(t *testing.T) {
	n := lattice(4, 2)
	p, err := Greedy(n, Options{})
	if err != nil {
		t.Fatal(err)
	}
	big, c, _ := largest(n, p)
	o := Options{MemoryLimit: big, Trials: stepTrials, Time: 100 * time.Millisecond}
	s := Slicing{Labels: []int{0, 5}, Sizes: []int{1, 1}, Slices: 4, Path: p}
	if _, err := s.price(n, p); err != nil {
		t.Fatal(err)
	}
	u := unslice(context.Background(), n, s, o)
	if len(u.Labels) != 0 || u.Slices != 1 || u.Log2Flops > c.Log2Flops+1e-9 {
		t.Fatalf("unsliced %v (%v slices, log2 FLOPs %v), want none sliced and at most %v", u.Labels, u.Slices, u.Log2Flops, c.Log2Flops)
	}
	// Under a limit that needs slicing, Slice's answer keeps what it needs.
	s, err = Slice(context.Background(), n, p, big/8, Options{})
	if err != nil {
		t.Fatal(err)
	}
	o.MemoryLimit = big / 8
	if u := unslice(context.Background(), n, s, o); len(u.Labels) != len(s.Labels) {
		t.Errorf("unslice of Slice's answer %v restored labels: %v", s.Labels, u.Labels)
	}
}
