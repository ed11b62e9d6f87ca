package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"regexp"
	"strings"
	"testing"
)

// benchRunner is a bench target's entry point (benchTargets' values).
type benchRunner func(ctx context.Context, args []string, stdout io.Writer) error

// checkBenchLines runs the target with each argument list and checks that
// its output ends with a line that line matches.
func checkBenchLines(t *testing.T, run benchRunner, line *regexp.Regexp, argLists [][]string) {
	t.Helper()
	for _, args := range argLists {
		var out bytes.Buffer
		if err := run(context.Background(), args, &out); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if last := lines[len(lines)-1]; !line.MatchString(last) {
			t.Errorf("%v: last line %q does not match", args, last)
		}
	}
}

// checkBenchUsageErrors checks that the target refuses each argument list
// with a usage error (exit status 2).
func checkBenchUsageErrors(t *testing.T, run benchRunner, argLists [][]string) {
	t.Helper()
	for _, args := range argLists {
		var out bytes.Buffer
		var ue *usageError
		if err := run(context.Background(), args, &out); !errors.As(err, &ue) {
			t.Errorf("%v: err = %v, want a usage error", args, err)
		}
	}
}
