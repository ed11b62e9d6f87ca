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
// planning time. Rerun with
//
//	go test ./einsum -run TestSlicingReport -slicing-report=/tmp/rows.md
//
// (bench/slicing-report.md holds its table).
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
		whole, err := einsum.NewPlan(in.Equation(), in.Shapes, einsum.WithPath(sp.Path))
		if err != nil {
			t.Fatal(err)
		}
		limit := 0.0 // an eighth of the largest intermediate, the result left out
		for _, st := range whole.Steps[:len(whole.Steps)-1] {
			limit = max(limit, st.Size/8)
		}
		if len(whole.Steps) < 2 {
			fmt.Fprintf(&rows, "| %s | — | — | — | — | — | one step: no intermediate |\n", in.Name)
			continue
		}
		start := time.Now()
		p, err := einsum.NewPlan(in.Equation(), in.Shapes, einsum.WithPath(sp.Path), einsum.WithMemoryLimit(limit))
		took := time.Since(start)
		switch {
		case errors.Is(err, einsum.ErrMemoryLimit):
			fmt.Fprintf(&rows, "| %s | %.0f | — | — | — | %.2f | no slicing meets the limit |\n", in.Name, limit, took.Seconds())
			continue
		case err != nil:
			t.Fatalf("%s: %v", in.Name, err)
		case p.Slicing == nil:
			t.Errorf("%s: not sliced under %.0f elements", in.Name, limit)
			continue
		}
		s := p.Slicing
		for _, st := range s.Plan.Steps[:len(s.Plan.Steps)-1] {
			if st.Size > limit {
				t.Errorf("%s: an intermediate of one slice has %.0f elements, above %.0f", in.Name, st.Size, limit)
			}
		}
		over := s.Flops / whole.Flops
		overheads = append(overheads, over)
		var labels []string
		for j, l := range s.Labels {
			labels = append(labels, fmt.Sprintf("%s %d/%d", p.Labels[l], s.Blocks[j], s.Extents[j]))
		}
		fmt.Fprintf(&rows, "| %s | %.0f | %d | %.3f | %d | %.2f | %s |\n", in.Name, limit, s.Count, over, len(s.Hoisted), took.Seconds(), strings.Join(labels, ", "))
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
