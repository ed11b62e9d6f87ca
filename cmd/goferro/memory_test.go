package main

import (
	"errors"
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
