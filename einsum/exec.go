package einsum

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/goferro/goferro/cpu/gemm"

	"github.com/goferro/goferro/tensor"
)

// traceOps prints the time of every op to stderr (GOFERRO_EINSUM_TRACE=1),
// for profiling plans.
var traceOps = os.Getenv("GOFERRO_EINSUM_TRACE") == "1"

// workspace holds the reusable intermediate buffers of one execution.
type workspace[T num] struct {
	slots [][]T
	bufs  [][]T // per register
	offs  []int
}

// Execute contracts operands (which must have the plan's shapes and one
// common dtype) and returns a new tensor: row-major, or with
// WithAnyOutputLayout possibly a strided view of its own new buffer. ctx may be nil; when it
// is done between steps, Execute stops with an ErrCanceled error.
func (p *Plan) Execute(ctx context.Context, operands ...*tensor.Tensor) (*tensor.Tensor, error) {
	if len(operands) != len(p.InputShapes) {
		return nil, errf(ErrOperands, "plan for %q takes %d operands, got %d", p.Equation, len(p.InputShapes), len(operands))
	}
	var dt tensor.DType
	for i, t := range operands {
		if t == nil {
			return nil, operandErr(ErrOperands, i, "operand %d is nil", i)
		}
		if i == 0 {
			dt = t.DType()
		} else if t.DType() != dt {
			return nil, operandErr(ErrDType, i, "operand %d is %v but operand 0 is %v", i, t.DType(), dt)
		}
		if !slices.Equal([]int(t.Shape()), p.InputShapes[i]) {
			return nil, operandErr(ErrShape, i, "operand %d has shape %v, plan expects %v", i, t.Shape(), tensor.Shape(p.InputShapes[i]))
		}
	}
	switch dt {
	case tensor.Float32:
		return execTyped[float32](ctx, p, dt, operands)
	case tensor.Float64:
		return execTyped[float64](ctx, p, dt, operands)
	case tensor.Complex64:
		return execTyped[complex64](ctx, p, dt, operands)
	case tensor.Complex128:
		return execTyped[complex128](ctx, p, dt, operands)
	case tensor.Int32:
		return execTyped[int32](ctx, p, dt, operands)
	case tensor.Int64:
		return execTyped[int64](ctx, p, dt, operands)
	case tensor.Bool:
		// Sum of products over booleans is OR of ANDs: compute in int64.
		conv := make([]*tensor.Tensor, len(operands))
		for i, t := range operands {
			vals, _ := tensor.Values[bool](t)
			iv := make([]int64, len(vals))
			for j, v := range vals {
				if v {
					iv[j] = 1
				}
			}
			c, err := tensor.New(iv, t.Shape()...)
			if err != nil {
				return nil, err
			}
			conv[i] = c
		}
		r, err := execTyped[int64](ctx, p, tensor.Int64, conv)
		if err != nil {
			return nil, err
		}
		iv, _ := tensor.Values[int64](r) // logical order, whatever the layout
		bv := make([]bool, len(iv))
		for j, v := range iv {
			bv[j] = v != 0
		}
		return tensor.New(bv, p.OutputShape...)
	}
	return nil, errf(ErrDType, "unsupported dtype %v", dt)
}

func execTyped[T num](ctx context.Context, p *Plan, dt tensor.DType, operands []*tensor.Tensor) (*tensor.Tensor, error) {
	out, err := tensor.Zeros(dt, p.OutputShape...)
	if err != nil {
		return nil, err
	}
	if p.prog.zero {
		return out, nil
	}
	outBuf, err := tensor.Buffer[T](out)
	if err != nil {
		return nil, err
	}
	if !slices.Equal(p.prog.outStrides, tensor.RowMajorStrides(p.OutputShape)) && len(outBuf) > 1 {
		// The last step writes another axis order: return that view.
		if out, err = tensor.FromStrided(outBuf, p.OutputShape, p.prog.outStrides, 0); err != nil {
			return nil, err
		}
	}
	prog := &p.prog
	pool := &p.pools[dt]
	ws, _ := pool.Get().(*workspace[T])
	if ws == nil {
		ws = &workspace[T]{
			slots: make([][]T, len(prog.slotCaps)),
			bufs:  make([][]T, len(prog.regs)),
			offs:  make([]int, len(prog.regs)),
		}
	}
	defer func() {
		for i := range ws.bufs {
			if prog.regs[i].input >= 0 || prog.regs[i].output {
				ws.bufs[i] = nil // do not keep callers' memory alive
			}
		}
		pool.Put(ws)
	}()
	for i := range prog.regs {
		r := &prog.regs[i]
		switch {
		case r.output:
			ws.bufs[i], ws.offs[i] = outBuf, 0
		case r.input >= 0:
			t := operands[r.input].Contiguous()
			b, err := tensor.Buffer[T](t)
			if err != nil {
				return nil, operandErr(ErrDType, r.input, "operand %d: %v", r.input, err)
			}
			ws.bufs[i], ws.offs[i] = b, t.Offset()
		case r.slot >= 0:
			if ws.slots[r.slot] == nil {
				ws.slots[r.slot] = make([]T, prog.slotCaps[r.slot])
			}
			ws.bufs[i], ws.offs[i] = ws.slots[r.slot], 0
		}
	}
	threads := p.threads
	if threads <= 0 {
		threads = gemm.Threads()
	}
	var t0 time.Time
	var c0 time.Duration
	if traceOps {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	for i := range prog.ops {
		if traceOps {
			t0, c0 = time.Now(), threadCPU()
		}
		if ctx != nil && i&7 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, &Error{Kind: ErrCanceled, Pos: -1, Operand: -1, Msg: fmt.Sprintf("stopped before op %d of %d", i, len(prog.ops)), Err: err}
			}
		}
		o := &prog.ops[i]
		dst, do := ws.bufs[o.dst], ws.offs[o.dst]
		switch o.kind {
		case opCopy, opMul:
			if o.zero > 0 {
				clear(dst[do : do+o.zero])
			}
			elementOp(threads, o, dst, do, ws.bufs[o.a], ws.offs[o.a], ws.bufs, ws.offs)
		case opGemm:
			if err := runGemm(p.threads, o, ws.bufs[o.a], ws.offs[o.a], ws.bufs[o.b], ws.offs[o.b], dst, do); err != nil {
				return nil, &Error{Kind: ErrShape, Pos: -1, Operand: -1, Msg: fmt.Sprintf("internal: GEMM of op %d failed", i), Err: err}
			}
		}
		if traceOps {
			fmt.Fprintf(os.Stderr, "einsum op %d kind=%d shape=%v ds=%v ss=%v ts=%v m=%d n=%d k=%d batch=%v ma=%v mb=%v mc=%v wall_ms=%.3f cpu_ms=%.3f\n", i, o.kind, o.shape, o.ds, o.ss, o.ts, o.m, o.n, o.k, o.batch, o.ma, o.mb, o.mc, time.Since(t0).Seconds()*1e3, (threadCPU()-c0).Seconds()*1e3)
		}
	}
	return out, nil
}

// parallelElems is the size from which copies and products are split
// across goroutines.
const parallelElems = 1 << 18

// elementOp runs a copy or product, splitting its outermost loop across
// goroutines when it is large (accumulating copies run serially).
func elementOp[T num](threads int, o *op, dst []T, do int, a []T, ao int, bufs [][]T, offs []int) {
	var b []T
	bo := 0
	if o.kind == opMul {
		b, bo = bufs[o.b], offs[o.b]
	}
	run := func(o *op, do, ao, bo int) {
		switch {
		case o.kind == opCopy && o.tab != nil:
			copyTable(dst, do, a, ao, o)
		case o.kind == opCopy:
			copyStrided(dst, do, a, ao, o.shape, o.ds, o.ss, o.zero > 0)
		case o.tab != nil:
			mulTable(dst, do, a, ao, b, bo, o)
		default:
			mulStrided(dst, do, a, ao, b, bo, o.shape, o.ds, o.ss, o.ts)
		}
	}
	n := 1
	for _, d := range o.shape {
		n *= d
	}
	outer := len(o.shape) - o.tabDims
	if threads <= 1 || n < parallelElems || o.zero > 0 || outer < 1 || o.shape[0] < 2 {
		run(o, do, ao, bo)
		return
	}
	parts := min(threads, o.shape[0])
	var wg sync.WaitGroup
	for t := 0; t < parts; t++ {
		lo, hi := o.shape[0]*t/parts, o.shape[0]*(t+1)/parts
		sub := *o
		sub.shape = append([]int{hi - lo}, o.shape[1:]...)
		d, s1 := do+lo*o.ds[0], ao+lo*o.ss[0]
		s2 := bo
		if o.kind == opMul {
			s2 += lo * o.ts[0]
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(&sub, d, s1, s2)
		}()
	}
	wg.Wait()
}

// Contract evaluates the einsum equation eq over operands, e.g.
// Contract("ij,jk->ik", a, b), with the default optimizer. It plans and
// executes once; use NewPlan to reuse a plan, ContractWith for options.
func Contract(eq string, operands ...*tensor.Tensor) (*tensor.Tensor, error) {
	return ContractWith(eq, operands)
}

// ContractWith is Contract with options (path or optimizer, memory limit,
// threads).
func ContractWith(eq string, operands []*tensor.Tensor, opts ...Option) (*tensor.Tensor, error) {
	return ContractContext(context.Background(), eq, operands, opts...)
}

// ContractContext is ContractWith under a context: it ends a path search
// early (see NewPlanContext) and cancels execution between steps (see
// Plan.Execute).
func ContractContext(ctx context.Context, eq string, operands []*tensor.Tensor, opts ...Option) (*tensor.Tensor, error) {
	shapes := make([][]int, len(operands))
	for i, t := range operands {
		if t == nil {
			return nil, operandErr(ErrOperands, i, "operand %d is nil", i)
		}
		shapes[i] = t.Shape()
	}
	p, err := NewPlanContext(ctx, eq, shapes, opts...)
	if err != nil {
		return nil, err
	}
	return p.Execute(ctx, operands...)
}
