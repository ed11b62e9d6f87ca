// Command goferro is the front door to the goferro tensor library: einsum on
// .npy files and benchmark instances, QR, SVD and eigh of .npy matrices
// ("linalg"), GEMM, linalg and einsum benchmarks, and a demo.
// "devices" lists the engines found; "run" runs a saved program, an einsum
// or a benchmark instance on chosen engines (cpu, fake:I, opencl:I) and can
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
	"slices"
	"sort"
	"strings"

	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/tensor"
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

// newFlagSet returns the flag set of the command name. Its -h prints the
// synopsis and then every flag the set defines, with its default, so the
// help cannot drift from the flags; parseArgs prints it.
func newFlagSet(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, synopsis)
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprintln(w, "\nflags:")
			fs.PrintDefaults()
		}
	}
	return fs
}

// parseArgs parses args with fs, letting flags follow positional arguments,
// and returns the positional arguments in order. An argument that begins
// with "->" is an einsum equation (one scalar operand), never a flag, and
// everything after "--" is positional. For -h it prints the help to stdout
// and returns flag.ErrHelp, which exits 0; a bad flag is a usage error that
// names the help.
func parseArgs(fs *flag.FlagSet, args []string, stdout io.Writer) ([]string, error) {
	var pos []string
	for len(args) > 0 {
		if strings.HasPrefix(args[0], "->") {
			pos, args = append(pos, args[0]), args[1:]
			continue
		}
		// flag.Parse would take "->..." for an unknown flag: parse up to it.
		end := slices.IndexFunc(args, func(a string) bool { return strings.HasPrefix(a, "->") })
		if end < 0 {
			end = len(args)
		}
		err := fs.Parse(args[:end])
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			fs.Usage()
			return nil, err
		}
		if err != nil {
			return nil, usagef("%v (see goferro %s -h)", err, fs.Name())
		}
		rest := fs.Args()
		if used := end - len(rest); used > 0 && args[used-1] == "--" {
			return slices.Concat(pos, rest, args[end:]), nil
		}
		if len(rest) > 0 {
			pos = append(pos, rest[0])
			rest = rest[1:]
		}
		args = slices.Concat(rest, args[end:])
	}
	return pos, nil
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
	help := len(args) > 0 && slices.Contains([]string{"help", "-h", "-help", "--help"}, args[0])
	switch {
	case len(args) == 0 || help && len(args) == 1:
		printHelp(stdout)
		return 0
	case help:
		// "help CMD [TARGET]" is "CMD [TARGET] -h".
		args = slices.Concat(args[1:], []string{"-h"})
	case args[0] == "--version" || args[0] == "-version":
		args = slices.Concat([]string{"version"}, args[1:])
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "goferro: unknown command %q (run \"goferro help\")\n", args[0])
		return 2
	}
	err := cmd.run(ctx, args[1:], stdout)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintf(stderr, "goferro %s: %s\n", args[0], userMessage(args[0], err))
	var ue *usageError
	switch {
	case errors.Is(err, driver.ErrMemoryBudget) || errors.Is(err, tensor.ErrMemory):
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
	fmt.Fprintln(w, "\nRun \"goferro help <command>\" or \"goferro <command> -h\" for a command's flags, \"goferro --version\" for the version.")
}
