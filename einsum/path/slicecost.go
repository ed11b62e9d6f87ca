package path

import "math"

// sliceCosts re-costs a path when one label is cut to a smaller size,
// without evaluating the path again: a step's FLOPs scale with the size of
// every label it involves and its result's size with every label the
// result keeps, so one Evaluate of the path and, per label, the steps that
// involve it and keep it are enough. Slice tries every label at every
// block size after every choice; evaluating the whole path for each was
// most of its time.
type sliceCosts struct {
	sizes    []float64 // elements of each step's result
	logFlops []float64 // log2 FLOPs of each step
	top      float64   // the largest of logFlops
	involved [][]int   // per label, the steps that involve it
	kept     [][]int   // per label, the steps but the last whose result keeps it
	factor   []float64 // scratch: per step, what the cut multiplies
}

// newSliceCosts evaluates p in n and indexes its steps by label.
func newSliceCosts(n Network, p Path) (*sliceCosts, Cost, error) {
	c, err := Evaluate(n, p)
	if err != nil {
		return nil, c, err
	}
	ids, _ := p.IDs(len(n.Inputs)) // Evaluate has checked p
	sc := &sliceCosts{
		sizes:    make([]float64, len(p)),
		logFlops: make([]float64, len(p)),
		top:      math.Inf(-1),
		involved: make([][]int, len(n.Sizes)),
		kept:     make([][]int, len(n.Sizes)),
		factor:   make([]float64, len(p)),
	}
	mark := make([]int, len(n.Sizes))
	for si, st := range c.Steps {
		sc.sizes[si], sc.logFlops[si] = st.Size, st.Log2Flops
		sc.top = max(sc.top, st.Log2Flops)
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
	return sc, c, nil
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

// cut returns what over(limit) and the log2 FLOPs of the path become when
// label l of size d is cut to size: every step involving l does size/d of
// its FLOPs, and every intermediate keeping l holds size/d of its elements.
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
	for i := range sc.factor {
		sc.factor[i] = 1
	}
	for _, si := range sc.involved[l] {
		sc.factor[si] = f
	}
	// Sum 2^logFlops relative to the largest step, so that no count
	// overflows.
	if math.IsInf(sc.top, -1) {
		return over, sc.top // no step does any work
	}
	t := 0.0
	for si, lf := range sc.logFlops {
		t += math.Exp2(lf-sc.top) * sc.factor[si]
	}
	return over, sc.top + math.Log2(t)
}
