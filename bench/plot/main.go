// Command plot draws the PNG plots of a goferro benchmark report from the
// results.json that "goferro bench --out DIR" writes, into the same
// directory: einsum.png (peer time / goferro time of every einsum instance,
// on a log axis) and gemm.png (GFLOP/s of square GEMMs against n).
//
// It is a module of its own so that goferro's library users do not pull
// gonum/plot. From the goferro repository's root:
//
//	go run -C bench/plot . DIR
//
// where DIR is relative to bench/plot (for example ../../docs/benchmarks)
// or absolute; DIR/results.json may also be given as the file itself.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

const usage = `usage: go run -C bench/plot . DIR
Reads DIR/results.json, written by "goferro bench --out DIR", and writes
DIR/einsum.png and DIR/gemm.png. DIR is relative to bench/plot or absolute.`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run draws the plots for the arguments and returns the exit status: 0 on
// success, 1 when the results cannot be read or a plot cannot be written,
// 2 on bad usage.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		fmt.Fprintln(stdout, usage)
		return 0
	}
	if len(args) != 1 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	dir, file := args[0], filepath.Join(args[0], "results.json")
	if filepath.Ext(args[0]) == ".json" {
		dir, file = filepath.Dir(args[0]), args[0]
	}
	rs, err := loadResults(file)
	if err != nil {
		fmt.Fprintf(stderr, "plot: %v\n", err)
		return 1
	}
	peers := peersOf(rs)
	plots := []struct {
		file string
		draw func([]result, []string) (figure, error)
	}{{"einsum.png", einsumFigure}, {"gemm.png", gemmFigure}}
	for _, pl := range plots {
		path := filepath.Join(dir, pl.file)
		f, err := pl.draw(rs, peers)
		if errors.Is(err, errNoCases) {
			fmt.Fprintf(stdout, "%s not drawn: %v\n", path, err)
			continue
		}
		if err == nil {
			err = f.save(path)
		}
		if err != nil {
			fmt.Fprintf(stderr, "plot: %s: %v\n", path, err)
			return 1
		}
		fmt.Fprintf(stdout, "wrote %s\n", path)
	}
	return 0
}
