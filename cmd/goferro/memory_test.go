package main

import (
	"errors"
	"math"
	"testing"

	"github.com/goferro/goferro/driver"
)

func TestParseBytes(t *testing.T) {
	for s, want := range map[string]int64{"512MiB": 512 << 20, "8GB": 8e9, "1.5GiB": 3 << 29, "100": 100, "none": 0, "2 KB": 2000, "7B": 7} {
		if got, err := parseBytes(s); err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v, want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "-1GB", "lots", "1e300TiB", "NaN"} {
		if _, err := parseBytes(s); err == nil {
			t.Errorf("parseBytes(%q) accepted", s)
		}
	}
}

func TestFitsBudget(t *testing.T) {
	if fitsBudget("x", 10, 0) != nil || fitsBudget("x", 10, 10) != nil {
		t.Error("a need within the budget (or no budget) is refused")
	}
	if err := fitsBudget("x", 11, 10); !errors.Is(err, driver.ErrMemoryBudget) {
		t.Errorf("over budget: %v", err)
	}
}

// FuzzParseBytes: any text is a byte count or an error, never a panic or a
// negative count, and what driver.FormatBytes prints of a count parses back
// to it within its four significant digits (and the byte parseBytes
// truncates).
func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"512MiB", "8GB", "1.5 GiB", "none", "7B", "-1", "1e18EiB", "0x10KB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseBytes(s)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("parseBytes(%q) = %d", s, n)
		}
		text := driver.FormatBytes(n)
		back, err := parseBytes(text)
		if err != nil {
			t.Fatalf("parseBytes(FormatBytes(%d) = %q): %v", n, text, err)
		}
		if d := math.Abs(float64(back-n)) - 1; d > 5e-4*float64(n) {
			t.Fatalf("%d printed as %q parses back to %d", n, text, back)
		}
	})
}
