package main

import (
	"context"
	"io"
)

// benchTargets are the "goferro bench <target>" subcommands; each lives in
// its own file and registers itself in an init function.
var benchTargets = map[string]func(ctx context.Context, args []string, stdout io.Writer) error{}

func init() {
	commands["bench"] = command{summary: "run benchmarks (bench gemm ...)", run: runBench}
}

func runBench(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return usagef("bench needs a target: gemm")
	}
	f, ok := benchTargets[args[0]]
	if !ok {
		return usagef("unknown bench target %q", args[0])
	}
	return f(ctx, args[1:], stdout)
}
