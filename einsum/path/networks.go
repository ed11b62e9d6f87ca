package path

import (
	"fmt"
	"math/rand/v2"
)

// Lattice returns the closed rows×cols square lattice: one tensor per site,
// in row-major order, one label of size bond per nearest-neighbour bond,
// and a scalar output. It is a standard benchmark of contraction
// optimizers: the best paths sweep it row by row, at about bond^min(rows,
// cols) elements per intermediate.
func Lattice(rows, cols, bond int) Network {
	n := Network{Inputs: make([][]int, rows*cols)}
	link := func(a, b int) {
		l := len(n.Sizes)
		n.Sizes = append(n.Sizes, bond)
		n.Inputs[a] = append(n.Inputs[a], l)
		n.Inputs[b] = append(n.Inputs[b], l)
	}
	for r := range rows {
		for c := range cols {
			t := r*cols + c
			if c+1 < cols {
				link(t, t+1)
			}
			if r+1 < rows {
				link(t, t+cols)
			}
		}
	}
	return n
}

// RandomRegular returns a random regular graph as a network: nt tensors
// of degree legs each, one label of size bond per edge, no self-loops or
// repeated edges, and a scalar output. The graph is drawn by the pairing
// model with restarts from a generator seeded with seed, so the same
// arguments always give the same network. nt·legs must be even and legs <
// nt.
func RandomRegular(nt, legs, bond int, seed uint64) (Network, error) {
	if nt <= 0 || legs <= 0 || legs >= nt || nt*legs%2 != 0 {
		return Network{}, fmt.Errorf("%w: no %d-regular graph on %d vertices", ErrInvalid, legs, nt)
	}
	rng := rand.New(rand.NewPCG(seed, 0x853c49e6748fea9b))
	stubs := make([]int, nt*legs)
	for attempt := 0; ; attempt++ {
		for i := range stubs {
			stubs[i] = i / legs
		}
		if n, ok := pairStubs(stubs, nt, bond, rng); ok {
			return n, nil
		}
		if attempt == 1000 {
			return Network{}, fmt.Errorf("%w: no simple %d-regular graph on %d vertices found", ErrInvalid, legs, nt)
		}
	}
}

// pairStubs joins the stubs in pairs: each step takes the last unpaired
// stub and a random other one that makes neither a loop nor a repeated
// edge, and gives up when none is left.
func pairStubs(stubs []int, nt, bond int, rng *rand.Rand) (Network, bool) {
	n := Network{Inputs: make([][]int, nt)}
	edge := make(map[[2]int]bool, len(stubs)/2)
	for len(stubs) > 0 {
		a := stubs[len(stubs)-1]
		stubs = stubs[:len(stubs)-1]
		ok := false
		for range 64 {
			if len(stubs) == 0 {
				break
			}
			j := rng.IntN(len(stubs))
			b := stubs[j]
			key := [2]int{min(a, b), max(a, b)}
			if a == b || edge[key] {
				continue
			}
			edge[key] = true
			stubs[j] = stubs[len(stubs)-1]
			stubs = stubs[:len(stubs)-1]
			l := len(n.Sizes)
			n.Sizes = append(n.Sizes, bond)
			n.Inputs[a] = append(n.Inputs[a], l)
			n.Inputs[b] = append(n.Inputs[b], l)
			ok = true
			break
		}
		if !ok {
			return Network{}, false
		}
	}
	return n, true
}
