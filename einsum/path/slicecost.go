package path

import "math"

// sliceCosts re-costs a path when one label is cut to a smaller size,
// without evaluating the path again: a step's FLOPs scale with the size of
// every label it involves and its result's size with every label the
// result keeps, so one Evaluate of the path and, per label, the steps that
// involve it, keep it and depend on it are enough. Slice tries every label
// at every block size after every choice; evaluating the whole path for
// each was most of its time. FLOPs are those of all the slices, each
// slice-invariant step counted once (see Invariant).
type sliceCosts struct {
	sizes     []float64 // elements of each step's result
	logFlops  []float64 // log2 FLOPs of each step in one slice
	logSlices float64   // log2 of the number of slices so far
	variant   []bool    // per step: it depends on a label sliced so far
	involved  [][]int   // per label, the steps that involve it
	kept      [][]int   // per label, the steps but the last whose result keeps it
	dependent [][]int   // per label, the steps that depend on it
	factor    []float64 // scratch: per step, what the cut multiplies
	terms     []float64 // scratch: per step, log2 of its FLOPs in all slices
}

// newSliceCosts evaluates p in n, the network of one slice of the labels
// in sliced (slices of them in all), and indexes its steps by label. With
// recompute every step counts as depending on a sliced label: no step is
// counted once.
func newSliceCosts(n Network, p Path, sliced []int, slices float64, recompute bool) (*sliceCosts, Cost, error) {
	c, err := Evaluate(n, p)
	if err != nil {
		return nil, c, err
	}
	ids, _ := p.IDs(len(n.Inputs)) // Evaluate has checked p
	sc := &sliceCosts{
		sizes:     make([]float64, len(p)),
		logFlops:  make([]float64, len(p)),
		logSlices: math.Log2(slices),
		variant:   make([]bool, len(p)),
		involved:  make([][]int, len(n.Sizes)),
		kept:      make([][]int, len(n.Sizes)),
		dependent: dependents(n, ids),
		factor:    make([]float64, len(p)),
		terms:     make([]float64, len(p)),
	}
	mark := make([]int, len(n.Sizes))
	for si, st := range c.Steps {
		sc.sizes[si], sc.logFlops[si] = st.Size, st.Log2Flops
		for _, id := range ids[si] {
			labels := n.Inputs[min(id, len(n.Inputs)-1)]
			if id >= len(n.Inputs) {
				labels = c.Steps[id-len(n.Inputs)].Labels
			}
			for _, l := range labels {
				if mark[l] != si+1 {
					mark[l] = si + 1
					sc.involved[l] = append(sc.involved[l], si)
				}
			}
		}
		if si < len(c.Steps)-1 {
			for _, l := range st.Labels {
				sc.kept[l] = append(sc.kept[l], si)
			}
		}
	}
	for _, l := range sliced {
		for _, si := range sc.dependent[l] {
			sc.variant[si] = true
		}
	}
	if recompute {
		for si := range sc.variant {
			sc.variant[si] = true
		}
	}
	return sc, c, nil
}

// dependents returns, per label of n, the steps (ids: the operands of each,
// as Path.IDs gives them) that depend on it: those whose operands, directly
// or through earlier steps, include an input that carries it.
func dependents(n Network, ids [][]int) [][]int {
	parent := make([]int, len(n.Inputs)+len(ids)) // the step consuming each id
	for si, step := range ids {
		for _, id := range step {
			parent[id] = si
		}
	}
	holders := make([][]int, len(n.Sizes)) // per label, the inputs carrying it
	for i, labels := range n.Inputs {
		for _, l := range labels {
			holders[l] = append(holders[l], i)
		}
	}
	dep := make([][]int, len(n.Sizes))
	reached := make([]bool, len(ids))
	for l, inputs := range holders {
		// Walk up from every input carrying l until a step already reached.
		for _, i := range inputs {
			for id := i; id < len(n.Inputs)+len(ids)-1 && !reached[parent[id]]; id = len(n.Inputs) + parent[id] {
				reached[parent[id]] = true
				dep[l] = append(dep[l], parent[id])
			}
		}
		for _, si := range dep[l] {
			reached[si] = false
		}
	}
	return dep
}

// over returns the elements of the intermediates (the final result left
// out) above limit.
func (sc *sliceCosts) over(limit float64) float64 {
	t := 0.0
	for _, s := range sc.sizes[:max(len(sc.sizes)-1, 0)] {
		if s > limit {
			t += s
		}
	}
	return t
}

// cut returns what over(limit) and the log2 FLOPs of all the slices become
// when label l of size d is cut to size: every step involving l does
// size/d of its FLOPs, every intermediate keeping l holds size/d of its
// elements, and there are d/size times the slices, which every step that
// depends on a sliced label (l now included) runs.
func (sc *sliceCosts) cut(l, d, size int, limit float64) (over, logFlops float64) {
	f := float64(size) / float64(d)
	for i := range sc.factor {
		sc.factor[i] = 1
	}
	for _, si := range sc.kept[l] {
		sc.factor[si] = f
	}
	for si, s := range sc.sizes[:max(len(sc.sizes)-1, 0)] {
		if s *= sc.factor[si]; s > limit {
			over += s
		}
	}
	logSlices := sc.logSlices + math.Log2(float64(d)/float64(size))
	copy(sc.terms, sc.logFlops)
	for _, si := range sc.involved[l] {
		sc.terms[si] += math.Log2(f)
	}
	for _, si := range sc.dependent[l] {
		if !sc.variant[si] {
			sc.terms[si] += logSlices
		}
	}
	for si, v := range sc.variant {
		if v {
			sc.terms[si] += logSlices
		}
	}
	return over, logSum(sc.terms)
}

// flops returns the log2 FLOPs of all the slices before any cut.
func (sc *sliceCosts) flops() float64 {
	copy(sc.terms, sc.logFlops)
	for si, v := range sc.variant {
		if v {
			sc.terms[si] += sc.logSlices
		}
	}
	return logSum(sc.terms)
}

// logSum returns log2 of the sum of 2^x over xs (-Inf for none), without
// overflow.
func logSum(xs []float64) float64 {
	top := math.Inf(-1)
	for _, x := range xs {
		top = max(top, x)
	}
	if math.IsInf(top, 0) {
		return top
	}
	t := 0.0
	for _, x := range xs {
		t += math.Exp2(x - top)
	}
	return top + math.Log2(t)
}
