package linalg

import (
	"context"

	"github.com/goferro/goferro/tensor"
)

// Split is a tensor factorised across a bipartition of its axes:
// t ≈ Left ×_bond diag(S) ×_bond Right. Left has the left axes (in the
// order given) followed by the bond; Right has the bond followed by the
// remaining axes in their original order. S is nil for a QR or LQ split.
type Split struct {
	Left, S, Right *tensor.Tensor
	// Discarded is the Frobenius norm of what truncation dropped, as in
	// SVDResult (zero for QR and LQ).
	Discarded float64
}

// SplitSVD factorises t across the bipartition (leftAxes | the other axes)
// by a truncated SVD of its matricisation: t reshaped to the matrix whose
// rows run over the left axes and columns over the rest. Left is U with
// orthonormal columns over the left axes (a left-canonical tensor), Right
// is Vᴴ; opts truncate the bond as for SVD and must not ask for Complete.
// Every axis of t must appear at most once in leftAxes; either side may be
// empty (a side of extent 1).
func SplitSVD(t *tensor.Tensor, leftAxes []int, opts SVDOptions) (*Split, error) {
	return splitSVD(context.Background(), "SplitSVD", t, leftAxes, opts)
}

// SplitSVDContext is SplitSVD under a context, as SVDContext is SVD: it
// returns an *Error of kind ErrCanceled wrapping ctx.Err() once ctx is
// done.
func SplitSVDContext(ctx context.Context, t *tensor.Tensor, leftAxes []int, opts SVDOptions) (*Split, error) {
	return splitSVD(ctx, "SplitSVDContext", t, leftAxes, opts)
}

func splitSVD(ctx context.Context, op string, t *tensor.Tensor, leftAxes []int, opts SVDOptions) (*Split, error) {
	if opts.Mode != Reduced {
		return nil, newError(op, ErrArgument, "a split has one bond: mode must be Reduced, not %v", opts.Mode)
	}
	a, ls, rs, err := matricise(op, t, leftAxes)
	if err != nil {
		return nil, err
	}
	res, err := svd(ctx, op, a, opts, true)
	if err != nil {
		return nil, err
	}
	left, right, err := unmatricise(op, res.U, res.Vh, ls, rs)
	if err != nil {
		return nil, err
	}
	d, _ := res.Discarded.Complex128At()
	return &Split{Left: left, S: res.S, Right: right, Discarded: real(d)}, nil
}

// SplitQR factorises t across the bipartition (leftAxes | the other axes)
// by a reduced QR of its matricisation: Left is Q (orthonormal over the
// left axes, left-canonical) and Right is R, with a bond of
// min(rows, columns).
func SplitQR(t *tensor.Tensor, leftAxes []int) (*Split, error) {
	return splitQR(context.Background(), "SplitQR", t, leftAxes, false)
}

// SplitQRContext is SplitQR under a context, as QRContext is QR: it
// returns an *Error of kind ErrCanceled wrapping ctx.Err() once ctx is
// done.
func SplitQRContext(ctx context.Context, t *tensor.Tensor, leftAxes []int) (*Split, error) {
	return splitQR(ctx, "SplitQRContext", t, leftAxes, false)
}

// SplitLQ is SplitQR with an LQ factorisation: Left is L and Right is Q,
// orthonormal over the right axes (right-canonical).
func SplitLQ(t *tensor.Tensor, leftAxes []int) (*Split, error) {
	return splitQR(context.Background(), "SplitLQ", t, leftAxes, true)
}

// SplitLQContext is SplitLQ under a context, as QRContext is QR: it
// returns an *Error of kind ErrCanceled wrapping ctx.Err() once ctx is
// done.
func SplitLQContext(ctx context.Context, t *tensor.Tensor, leftAxes []int) (*Split, error) {
	return splitQR(ctx, "SplitLQContext", t, leftAxes, true)
}

// splitQR is SplitQR, or SplitLQ when lq is set.
func splitQR(ctx context.Context, op string, t *tensor.Tensor, leftAxes []int, lq bool) (*Split, error) {
	a, ls, rs, err := matricise(op, t, leftAxes)
	if err != nil {
		return nil, err
	}
	l, r, err := factorQR(ctx, op, a, Reduced, lq)
	if err != nil {
		return nil, err
	}
	if lq {
		l, r = r, l // factorQR returns Q and L
	}
	left, right, err := unmatricise(op, l, r, ls, rs)
	if err != nil {
		return nil, err
	}
	return &Split{Left: left, Right: right}, nil
}

// matricise permutes the left axes of t to the front and reshapes it to a
// matrix; it returns the left and right extents.
func matricise(op string, t *tensor.Tensor, leftAxes []int) (a *tensor.Tensor, ls, rs []int, err error) {
	if t == nil {
		return nil, nil, nil, newError(op, ErrArgument, "nil tensor")
	}
	shape := t.ShapeView()
	seen := make([]bool, len(shape))
	perm := make([]int, 0, len(shape))
	for _, ax := range leftAxes {
		if ax < 0 || ax >= len(shape) {
			return nil, nil, nil, newError(op, tensor.ErrIndex, "axis %d out of range for rank %d", ax, len(shape))
		}
		if seen[ax] {
			return nil, nil, nil, newError(op, tensor.ErrIndex, "axis %d given twice", ax)
		}
		seen[ax] = true
		perm = append(perm, ax)
		ls = append(ls, shape[ax])
	}
	for ax, d := range shape {
		if !seen[ax] {
			perm = append(perm, ax)
			rs = append(rs, d)
		}
	}
	p, err := t.Permute(perm...)
	if err == nil {
		a, err = p.Reshape(count(ls), count(rs))
	}
	if err != nil {
		return nil, nil, nil, &Error{Op: op, Kind: tensor.ErrShape, Msg: "matricising the tensor", Err: err}
	}
	return a, ls, rs, nil
}

// unmatricise reshapes the m×r left factor to (ls..., r) and the r×n right
// factor to (r, rs...).
func unmatricise(op string, l, r *tensor.Tensor, ls, rs []int) (left, right *tensor.Tensor, err error) {
	bond := l.Dim(1)
	left, err = l.Reshape(append(append([]int(nil), ls...), bond)...)
	if err == nil {
		right, err = r.Reshape(append([]int{r.Dim(0)}, rs...)...)
	}
	if err != nil {
		return nil, nil, &Error{Op: op, Kind: tensor.ErrShape, Msg: "reshaping the factors", Err: err}
	}
	return left, right, nil
}
