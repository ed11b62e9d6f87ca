package driver

import (
	"errors"
	"fmt"

	"github.com/goferro/goferro/internal/sysmem"
)

// ErrMemoryBudget reports work that does not fit the memory it may use —
// an engine's, a location's, a contraction's budget — even sliced. The
// errors that wrap it are *BudgetError values.
var ErrMemoryBudget = errors.New("memory budget exceeded")

// BudgetError reports work that needs more memory than its budget: Need
// and Budget are in bytes, Where names the engine or location.
type BudgetError struct {
	Where        string
	Need, Budget int64
	Msg          string
}

// Error says what needs how much of what budget.
func (e *BudgetError) Error() string {
	s := fmt.Sprintf("%v: %s needs %s, its budget is %s", ErrMemoryBudget, e.Where, FormatBytes(e.Need), FormatBytes(e.Budget))
	if e.Msg != "" {
		s += " (" + e.Msg + ")"
	}
	return s
}

// Unwrap returns ErrMemoryBudget.
func (e *BudgetError) Unwrap() error { return ErrMemoryBudget }

// FormatBytes formats a byte count with a binary unit: "512 B", "1.5 GiB".
func FormatBytes(n int64) string { return sysmem.FormatBytes(n) }
