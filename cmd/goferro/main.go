// Command goferro is the front door to the goferro tensor library: einsum on
// .npy files and benchmark instances, GEMM and einsum benchmarks, and a demo.
// "devices" lists the engines found; "run" runs a saved program, an einsum
// or a benchmark instance on chosen engines (cpu, fake:N, opencl:I) and can
// write a Chrome trace; "explain" shows the prepared plan (placement,
// transfers, bytes, peak memory; --dot for Graphviz); "bench" alone runs the
// whole suite against numpy and torch and writes a Markdown report.
//
// Usage:
//
//	goferro <command> [flags] [arguments]
//
// Run "goferro help" for the list of commands.
package main

import (
	"context"

	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"

	"github.com/goferro/goferro/driver"
)

// command is one subcommand of the CLI. Each lives in its own file and adds
// itself to commands in an init function.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout io.Writer) error
}

var commands = map[string]command{}

// usageError marks errors caused by bad command-line input: they exit with
// status 2, like flag's own errors.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// parseInterleaved parses args with fs, letting flags follow positional
// arguments, and returns the positional arguments in order. The error is
// fs.Parse's (flag.ErrHelp for -h).
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes the command line and returns the process exit status:
// 0 on success, 2 for usage errors and bad input, 3 for work that does not
// fit the memory budget even sliced, 1 for other failures.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		printHelp(stdout)
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "goferro: unknown command %q (run \"goferro help\")\n", args[0])
		return 2
	}
	err := cmd.run(ctx, args[1:], stdout)
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "goferro %s: %v\n", args[0], err)
	var ue *usageError
	switch {
	case errors.Is(err, driver.ErrMemoryBudget):
		return 3
	case errors.As(err, &ue) || isInputError(err):
		return 2
	}
	return 1
}

func printHelp(w io.Writer) {
	fmt.Fprintln(w, "goferro — tensors, einsum and a multi-engine runtime for Go")
	fmt.Fprintln(w, "\nUsage: goferro <command> [flags] [arguments]\n\nCommands:")
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, "  %-10s %s\n", name, commands[name].summary)
	}
	fmt.Fprintln(w, "\nRun \"goferro <command> -h\" for a command's flags.")
}
