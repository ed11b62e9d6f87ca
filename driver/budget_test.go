package driver_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/goferro/goferro/driver"
)

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1 KiB", 1536: "1.5 KiB", 3 << 30: "3 GiB"} {
		if got := driver.FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestBudgetError(t *testing.T) {
	err := error(&driver.BudgetError{Where: "cpu", Need: 3 << 30, Budget: 1 << 30, Msg: "why"})
	if !errors.Is(err, driver.ErrMemoryBudget) || !strings.Contains(err.Error(), "cpu needs 3 GiB, its budget is 1 GiB (why)") {
		t.Fatalf("%v", err)
	}
}
