package einsum_test

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goferro/goferro/einsum"
)

var slicingReport = flag.String("slicing-report", "", "write the slicing table of TestSlicingReport (markdown rows) to this file")

// TestSlicingReport slices every benchmark instance's stored opt_flops
// path to an eighth of its largest intermediate, checks that every
// intermediate of one slice fits, and with -slicing-report=FILE writes one
// markdown row per instance: the slices, the FLOPs overhead (the slices'
// FLOPs, slice-invariant steps counted once, over the unsliced path's),
// the slice-invariant results computed once (Slicing.Hoisted) and the
// planning time; for a plan cut into segments (Plan.Segments), the sums
// over its parts. Rerun with
//
//	go test ./einsum -run TestSlicingReport -slicing-report=/tmp/rows.md
//
// (-run TestSlicingReport/INSTANCE for one row; bench/slicing-report.md
// holds the table).
func TestSlicingReport(t *testing.T) {
	if testing.Short() && *slicingReport == "" {
		t.Skip("plans every instance sliced: seconds")
	}
	var rows strings.Builder
	var overheads []float64
	for _, in := range loadInstances(t) {
		sp, ok := in.Paths["opt_flops"]
		if !ok {
			continue
		}
		t.Run(in.Name, func(t *testing.T) {
			if over, ok := reportSlicing(t, in.Name, in.Equation(), in.Shapes, sp.Path, &rows); ok {
				overheads = append(overheads, over)
			}
		})
	}
	slices.Sort(overheads)
	median, most := 0.0, 0.0
	if n := len(overheads); n > 0 {
		median, most = (overheads[(n-1)/2]+overheads[n/2])/2, overheads[n-1]
	}
	fmt.Fprintf(&rows, "\nMedian FLOPs overhead %.3f, largest %.3f, over %d sliced instances (GOMAXPROCS=%d).\n", median, most, len(overheads), runtime.GOMAXPROCS(0))
	t.Log("\n" + rows.String())
	if *slicingReport != "" {
		if err := os.WriteFile(*slicingReport, []byte(rows.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// reportSlicing plans eq along path p under an eighth of its largest
// intermediate, checks that every intermediate of one slice (of every
// segment, for a segmented plan) fits, and writes the row of
// TestSlicingReport to rows. It returns the FLOPs overhead, and false for
// an instance not sliced.
func reportSlicing(t *testing.T, name, eq string, shapes [][]int, p [][]int, rows *strings.Builder) (float64, bool) {
	whole, err := einsum.NewPlan(eq, shapes, einsum.WithPath(p))
	if err != nil {
		t.Fatal(err)
	}
	if len(whole.Steps) < 2 {
		fmt.Fprintf(rows, "| %s | — | — | — | — | — | one step: no intermediate |\n", name)
		return 0, false
	}
	limit := 0.0 // an eighth of the largest intermediate, the result left out
	for _, st := range whole.Steps[:len(whole.Steps)-1] {
		limit = max(limit, st.Size/8)
	}
	start := time.Now()
	sp, err := einsum.NewPlan(eq, shapes, einsum.WithPath(p), einsum.WithMemoryLimit(limit))
	took := time.Since(start)
	switch {
	case errors.Is(err, einsum.ErrMemoryLimit):
		fmt.Fprintf(rows, "| %s | %.0f | — | — | — | %.2f | no slicing meets the limit |\n", name, limit, took.Seconds())
		return 0, false
	case err != nil:
		t.Fatal(err)
	case sp.Slicing == nil && sp.Segments == nil:
		t.Errorf("not sliced under %.0f elements", limit)
		return 0, false
	}
	// checkFits checks the intermediates of one slice of pl, and with
	// result its result (a segment's, read by a later one).
	checkFits := func(pl *einsum.Plan, result bool) {
		steps := pl.Steps
		if pl.Slicing != nil {
			steps = pl.Slicing.Plan.Steps
		}
		for _, st := range steps[:len(steps)-1] {
			if st.Size > limit {
				t.Errorf("an intermediate of one slice has %.0f elements, above %.0f", st.Size, limit)
			}
		}
		n := 1.0
		for _, d := range pl.OutputShape {
			n *= float64(d)
		}
		if result && n > limit {
			t.Errorf("a segment's result has %.0f elements, above %.0f", n, limit)
		}
	}
	if s := sp.Slicing; s != nil {
		checkFits(sp, false)
		over := s.Flops / whole.Flops
		var labels []string
		for j, l := range s.Labels {
			labels = append(labels, fmt.Sprintf("%s %d/%d", sp.Labels[l], s.Blocks[j], s.Extents[j]))
		}
		fmt.Fprintf(rows, "| %s | %.0f | %d | %.3f | %d | %.2f | %s |\n", name, limit, s.Count, over, len(s.Hoisted), took.Seconds(), strings.Join(labels, ", "))
		return over, true
	}
	g := sp.Segments
	hoisted, sliced := 0, 0
	var labels []string
	for k, pt := range g.Parts {
		checkFits(pt.Plan, k < len(g.Parts)-1)
		s := pt.Plan.Slicing
		if s == nil {
			continue
		}
		sliced++
		hoisted += len(s.Hoisted)
		for j, l := range s.Labels {
			if len(labels) < 4 {
				labels = append(labels, fmt.Sprintf("%s %d/%d", pt.Plan.Labels[l], s.Blocks[j], s.Extents[j]))
			}
		}
	}
	over := g.Flops / whole.Flops
	fmt.Fprintf(rows, "| %s | %.0f | %d | %.3f | %d | %.2f | local: %d segments, %d sliced (%s, …) |\n", name, limit, g.Slices(), over, hoisted, took.Seconds(), len(g.Parts), sliced, strings.Join(labels, ", "))
	return over, true
}
