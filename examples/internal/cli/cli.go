// Package cli holds what the examples' commands share: parsing the command
// line into a usage error, and a main function's exit statuses.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
)

// ErrUsage marks an error in the command line; Main exits with status 2
// on it.
var ErrUsage = errors.New("usage")

// Usagef returns an error wrapping ErrUsage, its message formatted as
// fmt.Sprintf does.
func Usagef(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(format, args...))
}

// Parse parses args with fs: it returns flag.ErrHelp for -h, an error
// wrapping ErrUsage for a bad flag or an argument left over, else nil.
func Parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return Usagef("%v", err)
	}
	if fs.NArg() > 0 {
		return Usagef("unexpected arguments %q", fs.Args())
	}
	return nil
}

// Main runs the command name: run with the command line and the standard
// streams, under a context that an interrupt cancels. It exits with status
// 0 when run succeeds or -h asked for help, 2 on a usage error and 1 on
// any other, printing the error after the command's name.
func Main(name string, run func(ctx context.Context, args []string, stdout, stderr io.Writer) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case errors.Is(err, ErrUsage):
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(2)
	default:
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}
