package goferro

// Every check the runtime makes on what crosses the engine contract lives
// here: program inputs at preparation and again at execution, the ingress
// checks, executor results, transferred copies and materialized outputs.

import (
	"errors"
	"fmt"
	"slices"

	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/internal/placement"
	"github.com/goferro/goferro/internal/schedule"
	"github.com/goferro/goferro/tensor"
)

// checkInputs validates the inputs against the program's declared inputs
// (count, dtype, rank, extents, symbolic extents bound consistently) and
// returns the symbol bindings.
func checkInputs(prog *graph.Program, inputs []*driver.Buffer) (map[string]int, error) {
	if len(inputs) != len(prog.Inputs) {
		return nil, newError(ErrInputType, "%d inputs given, the program takes %d", len(inputs), len(prog.Inputs))
	}
	var bind map[string]int // made at the first symbolic extent: most programs have none
	for i, b := range inputs {
		in := &prog.Inputs[i]
		bad := func(kind error, msg string, args ...any) error {
			e := newError(kind, "input %q: "+msg, append([]any{in.Name}, args...)...)
			e.Input = i
			return e
		}
		if err := checkBuffer(b); err != "" {
			return nil, bad(ErrInvalidInput, "%s", err)
		}
		if b.DType() != in.DType {
			return nil, bad(ErrInputType, "dtype %v, want %v", b.DType(), in.DType)
		}
		shape := b.ShapeView()
		if len(shape) != len(in.Shape) {
			return nil, bad(ErrInputType, "rank %d, want %d %v", len(shape), len(in.Shape), in.Shape)
		}
		for a, d := range in.Shape {
			got := shape[a]
			switch {
			case d.Sym == "" && got != d.Size:
				return nil, bad(ErrInputType, "shape %v, want %v (axis %d)", shape, in.Shape, a)
			case d.Sym != "":
				if n, ok := bind[d.Sym]; ok && n != got {
					return nil, bad(ErrInputType, "axis %d binds %s=%d, but %s=%d already", a, d.Sym, got, d.Sym, n)
				}
				if bind == nil {
					bind = map[string]int{}
				}
				bind[d.Sym] = got
			}
		}
	}
	return bind, nil
}

// checkBuffer returns what is wrong with an input buffer itself, or "".
func checkBuffer(b *driver.Buffer) string {
	switch {
	case b == nil:
		return "nil buffer"
	case b.Released():
		return "buffer already released"
	}
	if _, err := b.ShapeView().NumElements(); err != nil {
		return err.Error()
	}
	if !b.InBounds() {
		return fmt.Sprintf("strides %v offset %d address memory outside its %d elements", b.StridesView(), b.Offset(), b.Len())
	}
	return ""
}

// inputSig is the physical signature of one input: what the prepared
// cache is keyed by and what execution re-checks.
type inputSig struct {
	dtype     tensor.DType
	shape     tensor.Shape
	strides   []int
	placement driver.Placement
	backend   string
}

func sigOf(b *driver.Buffer) inputSig {
	return inputSig{dtype: b.DType(), shape: b.ShapeView(), strides: b.StridesView(), placement: b.Placement(), backend: b.Backend()}
}

func (s inputSig) equal(o inputSig) bool {
	return s.dtype == o.dtype && s.shape.Equal(o.shape) && slices.Equal(s.strides, o.strides) &&
		s.placement == o.placement && s.backend == o.backend
}

func (s inputSig) String() string {
	return fmt.Sprintf("%v%v strides %v at %v (%s)", s.dtype, s.shape, s.strides, s.placement, s.backend)
}

// recheckInputs re-checks execution inputs against the prepared ingress:
// the same physical signature, still accepted and owned by the engine
// they enter.
func (p *Prepared) recheckInputs(inputs []*driver.Buffer) error {
	if len(inputs) != len(p.sigs) {
		return newError(ErrInputType, "%d inputs given, the program takes %d", len(inputs), len(p.sigs))
	}
	for i, b := range inputs {
		bad := func(kind error, msg string, args ...any) *Error {
			e := newError(kind, msg, args...)
			e.Input = i
			return e
		}
		if err := checkBuffer(b); err != "" {
			return bad(ErrInvalidInput, "%s", err)
		}
		if sig := sigOf(b); !sig.equal(p.sigs[i]) {
			return bad(ErrInputMismatch, "input is %v, prepared for %v", sig, p.sigs[i])
		}
		l := p.plan.Ingress[i]
		why, err := refusal(p.snap, l.Engine, b, p.snap.classes[l.Class], i)
		if err != nil {
			return err
		}
		if why != nil {
			e := bad(ErrInputMismatch, "refused by the engine it enters at %s", p.snap.classes[l.Class])
			e.Engine, e.Err = p.snap.engines[l.Engine].ID, why
			return e
		}
	}
	return nil
}

// refusal runs the three ingress checks of engine e for an input and
// returns why the engine refuses it (its Accept error, or the check that
// said no), or nil when it accepts it. A check that panics is an ErrPanic
// *Error.
func refusal(s *snapshot, e int, b *driver.Buffer, class driver.StorageClass, input int) (why, err error) {
	eng := &s.engines[e]
	defer func() {
		if v := recover(); v != nil {
			e := newError(ErrPanic, "ingress check panicked: %v", v)
			e.Input, e.Engine = input, eng.ID
			why, err = nil, e
		}
	}()
	switch {
	case !eng.Ingress.Eligible(b.Placement(), class):
		return fmt.Errorf("a buffer at %v may not enter at %s", b.Placement(), class), nil
	case !eng.Ingress.Resident(b):
		return errors.New("the engine does not own the buffer's memory"), nil
	}
	return eng.Ingress.Accept(b, class), nil
}

// violation runs a contract check (driver.CheckResults or
// driver.CheckCopy) and returns the kind, result position and message of
// the violation it finds, if any; a residency check that panics is
// ErrPanic.
func violation(check func() error) (kind error, result int, msg string) {
	defer func() {
		if v := recover(); v != nil {
			kind, result, msg = ErrPanic, -1, fmt.Sprintf("residency check panicked: %v", v)
		}
	}()
	// A type assertion, not errors.As: its pointer argument would escape,
	// an allocation per instruction.
	if v, ok := check().(*driver.Violation); ok {
		return v.Kind, v.Result, v.Msg
	}
	return nil, -1, ""
}

// checkMemory walks the schedule counting the bytes of the copies every
// engine holds — inputs at their ingress, results, transferred copies,
// until their release — and reports the first engine whose peak goes over
// its budget (driver.Engine.Memory) as an ErrMemoryBudget *Error.
func (s *snapshot) checkMemory(sp *schedule.Program, pl *placement.Plan, types []driver.ResultType) error {
	held := make([]int64, len(s.engines))
	where := make([][]int, sp.NumSlots) // the engines holding a copy of each slot
	bytes := func(slot int) int64 {
		n, _ := types[slot].Shape.NumElements()
		return int64(n) * int64(types[slot].DType.Size())
	}
	hold := func(slot, e int) error {
		held[e] += bytes(slot)
		where[slot] = append(where[slot], e)
		eng := &s.engines[e]
		if eng.Memory > 0 && held[e] > eng.Memory {
			err := newError(driver.ErrMemoryBudget, "the values the program holds there at once do not fit")
			err.Engine, err.Slot = eng.ID, slot
			err.Err = &driver.BudgetError{Where: "engine " + string(eng.ID), Need: held[e], Budget: eng.Memory}
			return err
		}
		return nil
	}
	for i, slot := range sp.Inputs {
		if err := hold(slot, pl.Ingress[i].Engine); err != nil {
			return err
		}
	}
	for _, n := range pl.Nodes {
		switch n.Kind {
		case schedule.Op:
			for _, slot := range sp.Instrs[n.Instr].Out {
				if err := hold(slot, n.At.Engine); err != nil {
					return err
				}
			}
		case schedule.Transfer:
			if err := hold(n.Slot, n.At.Engine); err != nil {
				return err
			}
		case schedule.Release:
			for _, e := range where[n.Slot] {
				held[e] -= bytes(n.Slot)
			}
			where[n.Slot] = nil
		}
	}
	return nil
}

// checkMaterialized validates an engine's host copy of an output.
func checkMaterialized(t *tensor.Tensor, want driver.ResultType) error {
	switch {
	case t == nil:
		return fmt.Errorf("nil tensor")
	case t.DType() != want.DType || !t.ShapeView().Equal(want.Shape):
		return fmt.Errorf("materialized %v%v, want %v%v", t.DType(), t.Shape(), want.DType, want.Shape)
	}
	return nil
}
