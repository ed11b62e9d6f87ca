package driver

import (
	"fmt"
	"slices"
)

// Violation is a breach of the contract found by CheckResults or
// CheckCopy. Kind is one of ErrOutputMismatch, ErrOutputResidencyMismatch
// and the ErrTransfer* sentinels; errors.Is finds it.
type Violation struct {
	Kind error
	// Result is the position of the offending result of an executor call,
	// or -1.
	Result int
	Msg    string
}

// Error names the kind, the result and what is wrong.
func (v *Violation) Error() string {
	if v.Result >= 0 {
		return fmt.Sprintf("%v: result %d: %s", v.Kind, v.Result, v.Msg)
	}
	return fmt.Sprintf("%v: %s", v.Kind, v.Msg)
}

// Unwrap returns the kind.
func (v *Violation) Unwrap() error { return v.Kind }

func violation(kind error, result int, msg string, args ...any) *Violation {
	return &Violation{Kind: kind, Result: result, Msg: fmt.Sprintf(msg, args...)}
}

// CheckResults validates what an executor returned for call: one new
// buffer per result (not an operand, not another result), each of the
// dtype and shape in want, addressing only memory inside itself, at
// call.Placement, and owned by the engine according to resident (its
// Ingress.Resident). want is the caller's own copy of the result types: an
// executor that modified call.Results cannot make a wrong result pass. The
// error is a *Violation; resident may panic through it.
//
// The runtime applies it to every executor call before publishing the
// results; package goferrotest applies it to engines under test.
func CheckResults(outs []*Buffer, call *Call, want []ResultType, resident func(*Buffer) bool) error {
	if len(outs) != len(want) {
		return violation(ErrOutputMismatch, -1, "%d results, want %d", len(outs), len(want))
	}
	for k, b := range outs {
		t := &want[k]
		switch {
		case b == nil:
			return violation(ErrOutputMismatch, k, "nil result")
		case slices.Contains(call.Inputs, b) || slices.Contains(outs[:k], b):
			return violation(ErrOutputMismatch, k, "result is an operand or another result; executors must return new buffers")
		case b.dtype != t.DType:
			return violation(ErrOutputMismatch, k, "dtype %v, want %v", b.dtype, t.DType)
		case !b.shape.Equal(t.Shape):
			return violation(ErrOutputMismatch, k, "shape %v, want %v", b.shape, t.Shape)
		case !b.InBounds():
			return violation(ErrOutputMismatch, k, "strides %v offset %d address memory outside its %d elements", b.strides, b.offset, b.length)
		case b.placement != call.Placement:
			return violation(ErrOutputResidencyMismatch, k, "placement %v, want %v", b.placement, call.Placement)
		case !resident(b):
			return violation(ErrOutputResidencyMismatch, k, "engine %s does not own the result's memory", call.Location.Engine)
		}
	}
	return nil
}

// CheckCopy validates the copy a transfer provider returned for req, in
// the order of the contract: logical element count (checked product of
// the extents), dtype, shape, length (the view inside its memory),
// placement (req.Dst, and not the source buffer itself), and residency at
// the destination engine according to resident. want is the type of the
// value moved. The error is a *Violation; resident may panic through it.
func CheckCopy(out *Buffer, req *TransferRequest, want ResultType, resident func(*Buffer) bool) error {
	wantN, _ := want.Shape.NumElements()
	switch cnt, err := out.shape.NumElements(); {
	case err != nil:
		return violation(ErrTransferElementCount, -1, "element count of %v overflows", out.shape)
	case cnt != wantN:
		return violation(ErrTransferElementCount, -1, "%d elements, want %d", cnt, wantN)
	case out.dtype != want.DType:
		return violation(ErrTransferDType, -1, "dtype %v, want %v", out.dtype, want.DType)
	case !out.shape.Equal(want.Shape):
		return violation(ErrTransferShape, -1, "shape %v, want %v", out.shape, want.Shape)
	case !out.InBounds():
		return violation(ErrTransferLength, -1, "buffer of %d elements cannot hold shape %v with strides %v offset %d", out.length, out.shape, out.strides, out.offset)
	case out == req.Src || out.placement != req.Dst:
		return violation(ErrTransferPlacement, -1, "placement %v, want %v", out.placement, req.Dst)
	case !resident(out):
		return violation(ErrTransferResidency, -1, "engine %s does not own the copy's memory", req.To.Engine)
	}
	return nil
}
