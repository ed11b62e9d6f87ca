package main

import (
	"context"
	"io"
	"maps"
	"slices"
	"strings"
)

// benchTargets are the "goferro bench <target>" subcommands; each lives in
// its own file and registers itself in an init function.
var benchTargets = map[string]func(ctx context.Context, args []string, stdout io.Writer) error{}

func init() {
	commands["bench"] = command{summary: "run benchmarks: the whole suite with a report (bench [all]), or one target (bench gemm ...)", run: runBench}
}

func runBench(ctx context.Context, args []string, stdout io.Writer) error {
	// No target (or only flags) runs the whole suite and writes a report.
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return runBenchAll(ctx, args, stdout)
	}
	if args[0] == "all" {
		return runBenchAll(ctx, args[1:], stdout)
	}
	f, ok := benchTargets[args[0]]
	if !ok {
		return usagef("unknown bench target %q (targets: %s, or all)", args[0], strings.Join(slices.Sorted(maps.Keys(benchTargets)), ", "))
	}
	return f(ctx, args[1:], stdout)
}
