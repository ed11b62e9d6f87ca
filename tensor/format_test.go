package tensor

import (
	"fmt"
	"testing"
)

func TestFormatVerbs(t *testing.T) {
	f := Must(New([]float64{1.5, -22.25, 3, 0.125}, 2, 2))
	c := Must(New([]complex128{1 + 2i, -0.5i}, 2))
	i := Must(New([]int32{7, -120, 3}, 3))
	b := Must(New([]bool{true, false}, 2))
	cube := Must(Arange(Int64, 8))
	cube = Must(cube.Reshape(2, 2, 2))
	var nilT *Tensor
	for _, tc := range []struct {
		format string
		x      *Tensor
		want   string
	}{
		{"%v", f, "[[1.5 -22.25]\n [3 0.125]]"},
		{"%s", f, "[[1.5 -22.25]\n [3 0.125]]"},
		{"%.2v", f, "[[1.5 -22]\n [3 0.12]]"},
		{"%.2f", f, "[[  1.50 -22.25]\n [  3.00   0.12]]"},
		{"%+.1f", f, "[[ +1.5 -22.2]\n [ +3.0  +0.1]]"},
		{"%8.1f", f, "[[     1.5    -22.2]\n [     3.0      0.1]]"},
		{"%-6.1f|", f, "[[1.5    -22.2 ]\n [3.0    0.1   ]]|"},
		{"%.3e", f, "[[ 1.500e+00 -2.225e+01]\n [ 3.000e+00  1.250e-01]]"},
		{"%g", f, "[[   1.5 -22.25]\n [     3  0.125]]"},
		{"%v", c, "[(1+2i) (0-0.5i)]"},
		{"%.1f", c, "[(1.0+2.0i) (0.0-0.5i)]"},
		{"%v", i, "[7 -120 3]"},
		{"%d", i, "[7 -120 3]"},
		{"%.3f", i, "[   7 -120    3]"},
		{"%5d", i, "[    7  -120     3]"},
		{"%v", b, "[true false]"},
		{"%f", b, "[ true false]"},
		{"%d", b, "[true false]"},
		{"%v", cube, "[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]"},
		{"%v", Scalar(2.5), "2.5"},
		{"%.3f", Scalar(complex64(1 - 1i)), "(1.000-1.000i)"},
		{"%v", Must(Zeros(Float32, 3, 0)), "[]"},
		{"%d", f, "%!d(*tensor.Tensor=float64 (2, 2))"},
		{"%x", i, "%!x(*tensor.Tensor=int32 (3,))"},
		{"%v", nilT, "<nil>"},
		{"%.2f", nilT, "<nil>"},
	} {
		if got := fmt.Sprintf(tc.format, tc.x); got != tc.want {
			t.Errorf("Sprintf(%q, %v %v) =\n%s\nwant\n%s", tc.format, tc.x.DType(), tc.x.Shape(), got, tc.want)
		}
	}
	if got := nilT.String(); got != "<nil>" {
		t.Errorf("nil String() = %q", got)
	}
}

// TestFormatSummary checks which elements a summarised tensor prints
// against a naive list: the first and last three along each long axis.
func TestFormatSummary(t *testing.T) {
	x := Must(Arange(Int32, 1001))
	want := "[0 1 2 ... 998 999 1000]"
	if got := x.String(); got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	// Exactly 1000 elements print in full, as numpy's threshold does.
	y := Must(Arange(Int32, 1000))
	if got := y.String(); len(got) < 3000 || got[len(got)-5:] != " 999]" {
		t.Errorf("1000 elements summarised: %q", got)
	}
	// An axis of 6 or fewer is never cut.
	z := Must(Must(Arange(Int32, 6*200)).Reshape(6, 200))
	got := fmt.Sprintf("%v", z)
	rows := 0
	for _, c := range got {
		if c == '\n' {
			rows++
		}
	}
	if rows != 5 {
		t.Errorf("(6, 200) printed %d row breaks, want 5:\n%s", rows, got)
	}
}
