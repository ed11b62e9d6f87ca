package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// Version is the goferro release this binary was built from.
const Version = "0.1.0-dev"

func init() {
	commands["version"] = command{summary: "print the goferro version", run: runVersion}
}

func runVersion(_ context.Context, args []string, stdout io.Writer) error {
	fs := newFlagSet("version", "usage: goferro version (or goferro --version)\nPrints the goferro version, the commit it was built from, the Go version and the platform.")
	pos, err := parseArgs(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("version takes no arguments (got %q)", pos)
	}
	rev := "unknown"
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				rev = s.Value
			}
		}
	}
	fmt.Fprintf(stdout, "goferro %s (%s, %s, %s/%s)\n", Version, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}
