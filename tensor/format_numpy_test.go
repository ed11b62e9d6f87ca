package tensor

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// numpyFormat prints each .npy file named on the command line with
// array2string in fixed-point mode at the precision that follows its name,
// with numpy's default threshold and edge items and no line wrapping.
const numpyFormat = `
import sys, numpy as np
args = sys.argv[1:]
for path, prec in zip(args[0::2], args[1::2]):
    a = np.load(path)
    print(np.array2string(a, precision=int(prec), floatmode='fixed', max_line_width=10**9))
    print('\x00')
`

// TestFormatNumpy checks the float verbs against numpy's printing: the same
// brackets, row breaks, blank lines, summarisation with "..." and column
// alignment. numpy chooses fixed or scientific notation from the values;
// the cases are built so that it chooses the notation of the verb.
func TestFormatNumpy(t *testing.T) {
	py := numpyPython(t)
	dir := t.TempDir()
	// Values whose magnitudes span less than 10³ keep numpy in fixed
	// notation; they are not ties at the precisions used.
	fixed := func(shape ...int) *Tensor {
		x := Must(Zeros(Float64, shape...))
		b := x.data.([]float64)
		for i := range b {
			b[i] = float64((i*37)%101-50)*0.1234567 + 0.01
		}
		return x
	}
	// arange over more than three decades makes numpy use scientific.
	sci := func(shape ...int) *Tensor {
		x := Must(Zeros(Float64, shape...))
		b := x.data.([]float64)
		for i := range b {
			b[i] = float64(i) * 1.001
		}
		return x
	}
	ints := func(shape ...int) *Tensor {
		x := Must(Zeros(Int64, shape...))
		b := x.data.([]int64)
		for i := range b {
			b[i] = int64((i*7919)%20011 - 10000)
		}
		return x
	}
	cases := []struct {
		x      *Tensor
		format string
		prec   int
	}{
		{fixed(7), "%.3f", 3},
		{fixed(2, 3), "%.3f", 3},
		{fixed(2, 2, 3), "%.1f", 1},
		{fixed(2, 2, 2, 2), "%.2f", 2},
		{fixed(1001), "%.3f", 3},
		{fixed(3, 400), "%.4f", 4},
		{fixed(8, 7, 20), "%.2f", 2},
		{Must(fixed(20, 60).Slice(Range{Start: 19, Stop: -21, Step: -1}, Range{Start: 0, Stop: 60, Step: 1})), "%.3f", 3},
		{fixed(40, 30).T(), "%.3f", 3},
		{sci(2, 10, 100), "%.2e", 2},
		{sci(1500), "%.4e", 4},
		{ints(4, 5), "%f", 0},
		{ints(30, 40), "%.3f", 3},
		{ints(2, 3, 4, 50), "%g", 0},
	}
	var args []string
	for i, c := range cases {
		path := filepath.Join(dir, fmt.Sprintf("case%d.npy", i))
		if err := SaveNpy(path, c.x); err != nil {
			t.Fatal(err)
		}
		args = append(args, path, fmt.Sprint(c.prec))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, py, append([]string{"-c", numpyFormat}, args...)...).Output()
	if err != nil {
		t.Fatalf("python: %v", err)
	}
	want := strings.Split(string(out), "\n\x00\n")
	if len(want) != len(cases)+1 {
		t.Fatalf("python printed %d arrays, want %d", len(want)-1, len(cases))
	}
	for i, c := range cases {
		if got := fmt.Sprintf(c.format, c.x); got != want[i] {
			t.Errorf("case %d %v %s:\ngot\n%s\nnumpy\n%s", i, c.x.Shape(), c.format, got, want[i])
		}
	}
}
