package driver

import (
	"errors"
	"fmt"
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
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.4g %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
