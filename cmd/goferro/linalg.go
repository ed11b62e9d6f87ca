package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/cpu/gemm"
	"github.com/goferro/goferro/linalg"
	"github.com/goferro/goferro/tensor"
)

func init() {
	commands["linalg"] = command{summary: "factorise a .npy matrix (or a stack of them): linalg qr|svd|eigh A.npy --out DIR", run: runLinalg}
}

const linalgUsage = `usage: goferro linalg qr|svd|eigh A.npy --out DIR [--rank K] [--tol T] [--complete] [--threads T]
Factorises A, shape (..., m, n), as numpy.linalg does, each matrix of the
leading (batch) axes on its own (integers and booleans as float64), and writes the factors as .npy files into
DIR (created if missing):
  qr    Q.npy R.npy      A = Q·R, Q with orthonormal columns, R upper triangular
  svd   U.npy S.npy Vh.npy   A ≈ U·diag(S)·Vh, S descending
  eigh  W.npy V.npy      A = V·diag(W)·Vᴴ for Hermitian A (only the lower
                         triangle is read), W ascending
--rank and --tol truncate the SVD: it keeps at most K singular values and
the fewest whose discarded weight √(Σ dropped s²) is at most T·‖A‖_F.
It then prints one key=value line with the factors' shapes and, for svd,
the rank kept and the largest discarded weight (zero without truncation).`

// linalgOutputs are the files each factorisation writes, in the order its
// factors come.
var linalgOutputs = map[string][]string{
	"qr":   {"Q.npy", "R.npy"},
	"svd":  {"U.npy", "S.npy", "Vh.npy"},
	"eigh": {"W.npy", "V.npy"},
}

func runLinalg(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlagSet("linalg", linalgUsage)
	out := fs.String("out", "", "directory for the factors' .npy files (created if missing)")
	rank := fs.Int("rank", 0, "svd: keep at most this many singular values (0: no cap)")
	tol := fs.Float64("tol", 0, "svd: drop the smallest singular values whose root sum of squares is at most this fraction of ‖A‖_F (0: none)")
	complete := fs.Bool("complete", false, "qr and svd: square orthonormal factors (numpy's mode \"complete\", full_matrices=True) instead of reduced ones")
	threads := fs.Int("threads", 0, "goroutines (0: GOMAXPROCS)")
	pos, err := parseArgs(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("need an operation (qr, svd or eigh) and one .npy file (see goferro linalg -h)")
	}
	op, file := pos[0], pos[1]
	names, ok := linalgOutputs[op]
	switch {
	case !ok:
		return usagef("unknown operation %q (want qr, svd or eigh)", op)
	case *out == "":
		return usagef("--out DIR is required: the directory for %s", strings.Join(names, ", "))
	case *rank < 0 || *tol < 0 || *threads < 0:
		return usagef("--rank, --tol and --threads must not be negative")
	case op != "svd" && (*rank > 0 || *tol > 0):
		return usagef("--rank and --tol truncate svd only, not %s", op)
	case op == "eigh" && *complete:
		return usagef("--complete applies to qr and svd, not eigh")
	case *complete && (*rank > 0 || *tol > 0):
		return usagef("--complete does not combine with --rank or --tol")
	}
	if *threads > 0 {
		gemm.SetThreads(*threads)
	}
	a, err := loadNpy("A", file)
	if err != nil {
		return err
	}
	if dt := a.DType(); !dt.IsFloat() && !dt.IsComplex() {
		// numpy.linalg factorises integers and booleans as float64.
		if a, err = cpu.Convert(a, tensor.Float64); err != nil {
			return err
		}
	}
	mode := linalg.Reduced
	if *complete {
		mode = linalg.Complete
	}
	var factors []*tensor.Tensor
	kept := "" // svd: the rank kept and the largest discarded weight
	switch op {
	case "qr":
		q, r, err := linalg.QRContext(ctx, a, mode)
		if err != nil {
			return linalgErr(err)
		}
		factors = []*tensor.Tensor{q, r}
	case "svd":
		res, err := linalg.SVDContext(ctx, a, linalg.SVDOptions{Mode: mode, MaxRank: *rank, RelTol: *tol})
		if err != nil {
			return linalgErr(err)
		}
		factors = []*tensor.Tensor{res.U, res.S, res.Vh}
		worst := 0.0
		for _, v := range res.Discarded.Complex128Values() {
			worst = max(worst, real(v))
		}
		s := res.S.Shape()
		kept = fmt.Sprintf(" rank=%d discarded=%.6g", s[len(s)-1], worst)
	case "eigh":
		w, v, err := linalg.EighContext(ctx, a)
		if err != nil {
			return linalgErr(err)
		}
		factors = []*tensor.Tensor{w, v}
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	shapes := make([]string, len(names))
	for i, f := range factors {
		if err := tensor.SaveNpy(filepath.Join(*out, names[i]), f); err != nil {
			return fmt.Errorf("writing %s: %w", names[i], err)
		}
		shapes[i] = fmt.Sprintf("%s=%s", strings.ToLower(strings.TrimSuffix(names[i], ".npy")), compactShape(f.Shape()))
	}
	_, err = fmt.Fprintf(stdout, "op=%s dtype=%s a=%s %s%s out=%s\n",
		op, a.DType(), compactShape(a.Shape()), strings.Join(shapes, " "), kept, *out)
	return err
}

// compactShape is s as numpy prints it, without spaces, so that it stays
// one field of a key=value line: (2,3), (3,), ().
func compactShape(s tensor.Shape) string { return strings.ReplaceAll(s.String(), " ", "") }

// linalgErr marks the failures that come from the input as input errors
// (exit status 2): the solvers fail to converge only on NaN or Inf. Bad
// shapes and element types already carry tensor's kinds.
func linalgErr(err error) error {
	switch {
	case errors.Is(err, linalg.ErrNoConvergence):
		return &inputError{msg: userMessage("linalg", err) + " (does A hold NaN or Inf?)", err: err}
	case errors.Is(err, linalg.ErrArgument):
		return &inputError{err: err}
	}
	return err
}
