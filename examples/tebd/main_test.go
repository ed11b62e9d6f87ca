package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"math"
	"math/cmplx"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/goferro/goferro/examples/internal/cli"
)

// field returns the value of key in the result line out.
func field(t *testing.T, out, key string) float64 {
	t.Helper()
	m := regexp.MustCompile(`\b` + key + `=(\S+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no %s= in %q", key, out)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatalf("%s=%s: %v", key, m[1], err)
	}
	return v
}

func runLine(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := run(context.Background(), args, &out, io.Discard)
	return out.String(), err
}

// A short chain with bonds large enough for any state follows the exact
// evolution up to the Trotter error, which falls as dt⁴ in the
// infidelity (dt² in the state) for the symmetric splitting, and keeps
// the Néel state's energy −(L−1)/4 to within dt².
func TestEvolutionMatchesExact(t *testing.T) {
	var prev float64
	for _, dt := range []string{"0.04", "0.02"} {
		out, err := runLine(t, "-L", "6", "-chi", "8", "-t", "2", "-dt", dt, "-tol", "1e-5")
		if err != nil {
			t.Fatalf("dt=%s: %v (%s)", dt, err, out)
		}
		inf, e := field(t, out, "infidelity"), field(t, out, "energy")
		if math.Abs(field(t, out, "exact_energy")+1.25) > 1e-12 || math.Abs(e+1.25) > 1e-4 {
			t.Errorf("dt=%s: energy %g, exact %g, want both −1.25", dt, e, field(t, out, "exact_energy"))
		}
		if field(t, out, "max_bond") > 8 || field(t, out, "steps")*mustFloat(dt) != 2 {
			t.Errorf("dt=%s: %s", dt, out)
		}
		if prev != 0 && !(inf < prev/10) {
			t.Errorf("dt=%s: infidelity %g, want at most a tenth of %g at twice the step", dt, inf, prev)
		}
		prev = inf
	}
	if !(prev > 0) {
		t.Errorf("infidelity %g: a Trotter splitting is not exact", prev)
	}
}

func mustFloat(s string) float64 {
	v, _ := strconv.ParseFloat(s, 64)
	return v
}

// Bonds cut to 2 lose weight at the truncations and miss the exact state
// by more than the tolerance: run reports it as errInaccurate, after the
// result line.
func TestTruncationReported(t *testing.T) {
	out, err := runLine(t, "-L", "6", "-chi", "2", "-t", "2", "-dt", "0.05")
	if !errors.Is(err, errInaccurate) {
		t.Fatalf("err = %v, want errInaccurate (%s)", err, out)
	}
	if field(t, out, "max_bond") != 2 || !(field(t, out, "discarded") > 1e-3) || !(field(t, out, "infidelity") > 1e-3) {
		t.Errorf("truncated run: %s", out)
	}
}

// The gate is unitary and is the identity at τ = 0; on two spins the MPS
// after one step of the whole time is the exact state (a single bond: no
// Trotter error), and the exact evolution starts at the basis state.
func TestGateAndExact(t *testing.T) {
	u, err := bondGate(0.3)
	if err != nil {
		t.Fatal(err)
	}
	us := u.Complex128Values()
	for x := range 4 {
		for y := range 4 {
			var d complex128
			for k := range 4 {
				d += us[x*4+k] * cmplx.Conj(us[y*4+k])
			}
			if want := complex(b2f(x == y), 0); cmplx.Abs(d-want) > 1e-15 {
				t.Errorf("(U·Uᴴ)[%d, %d] = %v, want %v", x, y, d, want)
			}
		}
	}
	out, err := runLine(t, "-L", "2", "-t", "0.7", "-dt", "0.7", "-tol", "1e-14")
	if err != nil {
		t.Errorf("two spins: %v (%s)", err, out)
	}
	ex, err := newExactEvolution(4)
	if err != nil {
		t.Fatal(err)
	}
	s := neelIndex(4)
	if s != 0b0101 {
		t.Errorf("neelIndex(4) = %04b, want 0101", s)
	}
	for x, a := range ex.state(s, 0) {
		if cmplx.Abs(a-complex(b2f(x == s), 0)) > 1e-14 {
			t.Fatalf("exact state at t = 0: amplitude %d = %v", x, a)
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// A done context stops the evolution with its error.
func TestCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := run(ctx, []string{"-L", "4", "-t", "0.1"}, io.Discard, io.Discard)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-L", "1"}, {"-L", "13"}, {"-chi", "0"}, {"-dt", "0"}, {"-dt", "NaN"}, {"-t", "-1"},
		{"-t", "1", "-dt", "0.3"}, {"-cutoff", "1"}, {"-tol", "0"}, {"extra"}, {"-bogus"},
	} {
		if _, err := parseFlags(args, io.Discard); !errors.Is(err, cli.ErrUsage) {
			t.Errorf("%s: err = %v, want cli.ErrUsage", strings.Join(args, " "), err)
		}
	}
	if _, err := parseFlags([]string{"-h"}, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: err = %v, want flag.ErrHelp", err)
	}
	c, err := parseFlags(nil, io.Discard)
	if err != nil || c.steps() != 400 {
		t.Errorf("defaults: %+v, %v; want 400 steps", c, err)
	}
}
