package goferro_test

import (
	"strings"
	"testing"

	"github.com/goferro/goferro"
)

// TestPreparedExplain: the explanation lists ingress and every step, and
// the Prepared knows its program.
func TestPreparedExplain(t *testing.T) {
	r := newRig(t, rigOpts{})
	p := negSum(t, 2)
	prep, err := r.rt.Prepare(bg, p, host(randT(t, 1, 2), randT(t, 2, 2)))
	if err != nil {
		t.Fatal(err)
	}
	s := prep.String()
	for _, w := range []string{"input 0 enters at cpu.default.v1", "transfer %2", "op #1 at fake.b.v1", "release %0"} {
		if !strings.Contains(s, w) {
			t.Errorf("explanation lacks %q:\n%s", w, s)
		}
	}
	if prep.Program() != p {
		t.Error("Program")
	}
	if goferro.StepKind(9).String() != "step(9)" {
		t.Error("StepKind name")
	}
}
