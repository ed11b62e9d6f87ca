package einsumexec

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/goferro/goferro/cpu/gemm"
	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/internal/reuse"
	"github.com/goferro/goferro/internal/strided"
	"github.com/goferro/goferro/tensor"
)

// workspace holds the reusable intermediate buffers of one execution.
type workspace[T num] struct {
	slots [][]T
	bufs  [][]T // per register
	offs  []int
}

// errf returns an *einsum.Error about operand op (-1: none).
func errf(kind error, op int, format string, args ...any) *einsum.Error {
	return &einsum.Error{Kind: kind, Pos: -1, Operand: op, Msg: fmt.Sprintf(format, args...)}
}

// Execute contracts operands (which must have the plan's shapes and one
// common dtype) with GEMMs of the given goroutines (0: gemm.Threads()) and
// returns a new tensor: row-major or, when lowered with anyLayout, possibly
// a strided view of its own new buffer. ctx may be nil; when it is done
// between steps, Execute stops with an einsum.ErrCanceled error. Errors are
// *einsum.Error values. On Bool operands the result is numpy's: the OR of
// ANDs, never a count (see execBool).
func (pr *Program) Execute(ctx context.Context, threads int, operands ...*tensor.Tensor) (*tensor.Tensor, error) {
	dt, err := pr.check(operands)
	if err != nil {
		return nil, err
	}
	switch dt {
	case tensor.Float32:
		return execTyped[float32](ctx, pr, threads, dt, operands, false)
	case tensor.Float64:
		return execTyped[float64](ctx, pr, threads, dt, operands, false)
	case tensor.Complex64:
		return execTyped[complex64](ctx, pr, threads, dt, operands, false)
	case tensor.Complex128:
		return execTyped[complex128](ctx, pr, threads, dt, operands, false)
	case tensor.Int32:
		return execTyped[int32](ctx, pr, threads, dt, operands, false)
	case tensor.Int64:
		return execTyped[int64](ctx, pr, threads, dt, operands, false)
	case tensor.Bool:
		return pr.execBool(ctx, threads, operands)
	}
	return nil, errf(einsum.ErrDType, -1, "unsupported dtype %v", dt)
}

// ExecuteInto is Execute writing the result over dst, a result of an
// earlier Execute or ExecuteInto of pr, whose buffer it reuses (a loop
// that runs a program many times then allocates no result), and returns
// dst. When dst is nil, of another dtype or layout, or Bool (which is
// computed aside, see execBool), it returns a new tensor as Execute does.
func (pr *Program) ExecuteInto(ctx context.Context, threads int, dst *tensor.Tensor, operands ...*tensor.Tensor) (*tensor.Tensor, error) {
	dt, err := pr.check(operands)
	if err != nil {
		return nil, err
	}
	if !pr.isResult(dst, dt) {
		return pr.Execute(ctx, threads, operands...)
	}
	switch dt {
	case tensor.Float32:
		return execInto[float32](ctx, pr, threads, dst, operands)
	case tensor.Float64:
		return execInto[float64](ctx, pr, threads, dst, operands)
	case tensor.Complex64:
		return execInto[complex64](ctx, pr, threads, dst, operands)
	case tensor.Complex128:
		return execInto[complex128](ctx, pr, threads, dst, operands)
	case tensor.Int32:
		return execInto[int32](ctx, pr, threads, dst, operands)
	case tensor.Int64:
		return execInto[int64](ctx, pr, threads, dst, operands)
	}
	return pr.Execute(ctx, threads, operands...)
}

// isResult reports whether t has the dtype dt (not Bool) and the shape,
// strides and offset of pr's results, as execTyped makes them.
func (pr *Program) isResult(t *tensor.Tensor, dt tensor.DType) bool {
	if t == nil || t.DType() != dt || dt == tensor.Bool || t.Offset() != 0 || !t.ShapeView().Equal(pr.plan.OutputShape) {
		return false
	}
	return t.IsContiguous() && slices.Equal(pr.prog.outStrides, tensor.RowMajorStrides(pr.plan.OutputShape)) ||
		slices.Equal(t.StridesView(), pr.prog.outStrides)
}

// execInto runs the program in element type T into dst (see ExecuteInto).
func execInto[T num](ctx context.Context, pr *Program, threads int, dst *tensor.Tensor, operands []*tensor.Tensor) (*tensor.Tensor, error) {
	outBuf, err := tensor.Buffer[T](dst)
	if n, _ := tensor.Shape(pr.plan.OutputShape).NumElements(); err != nil || len(outBuf) != n {
		return pr.Execute(ctx, threads, operands...) // a view of a bigger buffer
	}
	if pr.prog.zero {
		clear(outBuf)
		return dst, nil
	}
	if err := runTyped(ctx, pr, threads, operands, outBuf, false); err != nil {
		return nil, err
	}
	return dst, nil
}

// check validates the operands against the plan and returns their dtype.
func (pr *Program) check(operands []*tensor.Tensor) (tensor.DType, error) {
	p := pr.plan
	if len(operands) != len(p.InputShapes) {
		return 0, errf(einsum.ErrOperands, -1, "plan for %q takes %d operands, got %d", p.Equation, len(p.InputShapes), len(operands))
	}
	var dt tensor.DType
	for i, t := range operands {
		if t == nil {
			return 0, errf(einsum.ErrOperands, i, "operand %d is nil", i)
		}
		if i == 0 {
			dt = t.DType()
		} else if t.DType() != dt {
			return 0, errf(einsum.ErrDType, i, "operand %d is %v but operand 0 is %v", i, t.DType(), dt)
		}
		if !t.ShapeView().Equal(p.InputShapes[i]) {
			return 0, errf(einsum.ErrShape, i, "operand %d has shape %v, plan expects %v", i, t.Shape(), tensor.Shape(p.InputShapes[i]))
		}
	}
	return dt, nil
}

// execBool computes over booleans as over int64 counts of true index
// assignments, with every sum clamped back to 0 or 1 as soon as it is
// made (see logicalOp): a sum of products is then an OR of ANDs, and no
// count can wrap around to 0 (eight all-true vectors of 256 elements have
// 2^64 true assignments).
func (pr *Program) execBool(ctx context.Context, threads int, operands []*tensor.Tensor) (*tensor.Tensor, error) {
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
	r, err := execTyped[int64](ctx, pr, threads, tensor.Int64, conv, true)
	if err != nil {
		return nil, err
	}
	iv, _ := tensor.Values[int64](r) // logical order, whatever the layout
	bv := make([]bool, len(iv))
	for j, v := range iv {
		bv[j] = v != 0
	}
	return tensor.New(bv, pr.plan.OutputShape...)
}

// execTyped runs the program in element type T; logical clamps every sum
// to 0 or 1 (execBool).
func execTyped[T num](ctx context.Context, pr *Program, threads int, dt tensor.DType, operands []*tensor.Tensor, logical bool) (*tensor.Tensor, error) {
	p, prog := pr.plan, &pr.prog
	out, err := tensor.Zeros(dt, p.OutputShape...)
	if err != nil {
		return nil, err
	}
	if prog.zero {
		return out, nil
	}
	outBuf, err := tensor.Buffer[T](out)
	if err != nil {
		return nil, err
	}
	if !slices.Equal(prog.outStrides, tensor.RowMajorStrides(p.OutputShape)) && len(outBuf) > 1 {
		// The last step writes another axis order: return that view.
		if out, err = tensor.FromStrided(outBuf, p.OutputShape, prog.outStrides, 0); err != nil {
			return nil, err
		}
	}
	if err := runTyped(ctx, pr, threads, operands, outBuf, logical); err != nil {
		return nil, err
	}
	return out, nil
}

// runTyped runs the program in element type T, writing the result into
// outBuf, in a pooled workspace.
func runTyped[T num](ctx context.Context, pr *Program, threads int, operands []*tensor.Tensor, outBuf []T, logical bool) error {
	prog := &pr.prog
	pool := poolFor[T](&pr.pools)
	ws := pool.Get()
	if ws == nil {
		ws = &workspace[T]{
			slots: make([][]T, len(prog.slotCaps)),
			bufs:  make([][]T, len(prog.regs)),
			offs:  make([]int, len(prog.regs)),
		}
	}
	defer func() {
		ws.release(prog)
		pool.Put(ws)
	}()
	if err := ws.bind(prog, operands, outBuf); err != nil {
		return err
	}
	return ws.run(ctx, prog, threads, logical)
}

// workspacePools holds a Program's workspaces, one pool per element type.
// Each keeps one workspace through garbage collections (reuse.Pool.Put),
// whatever its size, for as long as the Program lives: making a large one
// again costs page faults that can take longer than the run (gm_queen5_5_3,
// 1.5 GB of intermediates, at GOMAXPROCS=2: 0.6 s with it kept, 1.4–5.5 s
// when the second processor's pool slot or the collector lost it and every
// run faulted its pages in afresh). The memory is what every run of the
// Program needs anyway; it goes with the Program (and its Contraction).
type workspacePools struct {
	f32  reuse.Pool[workspace[float32]]
	f64  reuse.Pool[workspace[float64]]
	c64  reuse.Pool[workspace[complex64]]
	c128 reuse.Pool[workspace[complex128]]
	i32  reuse.Pool[workspace[int32]]
	i64  reuse.Pool[workspace[int64]]
}

// poolFor returns the pool of T's workspaces.
func poolFor[T num](p *workspacePools) *reuse.Pool[workspace[T]] {
	var z T
	var x any
	switch any(z).(type) {
	case float32:
		x = &p.f32
	case float64:
		x = &p.f64
	case complex64:
		x = &p.c64
	case complex128:
		x = &p.c128
	case int32:
		x = &p.i32
	case int64:
		x = &p.i64
	}
	return x.(*reuse.Pool[workspace[T]])
}

// bind points every register at its buffer: the operands' (made
// contiguous), the workspace's slots, the output's.
func (ws *workspace[T]) bind(prog *program, operands []*tensor.Tensor, outBuf []T) error {
	for i := range prog.regs {
		r := &prog.regs[i]
		switch {
		case r.output:
			ws.bufs[i], ws.offs[i] = outBuf, 0
		case r.input >= 0:
			t := operands[r.input].Contiguous()
			b, err := tensor.Buffer[T](t)
			if err != nil {
				return errf(einsum.ErrDType, r.input, "operand %d: %v", r.input, err)
			}
			ws.bufs[i], ws.offs[i] = b, t.Offset()
		case r.slot >= 0:
			if ws.slots[r.slot] == nil {
				ws.slots[r.slot] = make([]T, prog.slotCaps[r.slot])
			}
			ws.bufs[i], ws.offs[i] = ws.slots[r.slot], r.at
		}
	}
	return nil
}

// release forgets the callers' buffers, so a pooled workspace does not
// keep them alive.
func (ws *workspace[T]) release(prog *program) {
	for i := range ws.bufs {
		if prog.regs[i].input >= 0 || prog.regs[i].output {
			ws.bufs[i] = nil
		}
	}
}

// run executes the ops in order, checking ctx every eight ops; logical
// clamps the result of every op that sums to 0 or 1.
func (ws *workspace[T]) run(ctx context.Context, prog *program, threads int, logical bool) error {
	gemmThreads := threads // 0 lets the gemm package choose
	if threads <= 0 {
		threads = gemm.Threads()
	}
	for i := range prog.ops {
		if ctx != nil && i&7 == 0 {
			if err := ctx.Err(); err != nil {
				e := errf(einsum.ErrCanceled, -1, "stopped before op %d of %d", i, len(prog.ops))
				e.Err = err
				return e
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
			if err := runGemm(gemmThreads, o, ws.bufs[o.a], ws.offs[o.a], ws.bufs[o.b], ws.offs[o.b], dst, do); err != nil {
				e := errf(einsum.ErrShape, -1, "internal: GEMM of op %d failed", i)
				e.Err = err
				return e
			}
		}
		if logical {
			logicalOp(o, dst, do)
		}
	}
	return nil
}

// logicalOp clamps what op o wrote at dst[do:] to 0 or 1, if o sums: an
// accumulating copy or a GEMM. Elementwise products of 0s and 1s are 0s
// and 1s already. Every value of a logical run is a count of true
// assignments, so clamping more than o wrote (the address range of a
// strided GEMM result) changes no truth value.
func logicalOp[T num](o *op, dst []T, do int) {
	lo, hi := 0, -1
	switch {
	case o.kind == opCopy && o.zero > 0:
		lo, hi = do, do+o.zero-1
	case o.kind == opGemm:
		shape := append(slices.Clone(o.batch), o.m, o.n)
		strides := append(slices.Clone(o.mc.bs), o.mc.rs, o.mc.cs)
		if slices.Contains(shape, 0) {
			return
		}
		lo, hi, _ = strided.AddressRange(shape, strides, do+o.mc.off)
	}
	for i := lo; i <= hi; i++ {
		if dst[i] != 0 {
			dst[i] = 1
		}
	}
}

// parallelElems is the size from which copies and products are split
// across goroutines.
const parallelElems = 1 << 18

// secondOperand returns the second operand of a product and its offset
// (none for a copy).
func secondOperand[T num](o *op, bufs [][]T, offs []int) ([]T, int) {
	if o.kind != opMul {
		return nil, 0
	}
	return bufs[o.b], offs[o.b]
}

// runOp runs a copy or product op on one thread. (A plain function, not a
// closure: a closure over the buffers escapes to the heap on every call.)
func runOp[T num](o *op, dst []T, do int, a []T, ao int, b []T, bo int) {
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

// elementOp runs a copy or product, splitting its outermost loop across
// goroutines when it is large (accumulating copies run serially). The loop
// is cut into chunksPerThread pieces per goroutine, which the calling
// goroutine and its helpers take as they come; the caller waits only for
// the pieces, not for the helpers, so a helper that another process keeps
// off the CPU costs at most the piece it holds (on a loaded machine the
// whole op may run on the caller, as if serial).
func elementOp[T num](threads int, o *op, dst []T, do int, a []T, ao int, bufs [][]T, offs []int) {
	// Assigned once, so the goroutines below capture a copy and the
	// serial path allocates nothing.
	b, bo := secondOperand(o, bufs, offs)
	n := 1
	for _, d := range o.shape {
		n *= d
	}
	outer := len(o.shape) - o.tabDims
	if threads <= 1 || n < parallelElems || o.zero > 0 || outer < 1 || o.shape[0] < 2 {
		runOp(o, dst, do, a, ao, b, bo)
		return
	}
	parts := min(threads, o.shape[0])
	chunks := min(o.shape[0], chunksPerThread*parts)
	var next atomic.Int64
	var done sync.WaitGroup
	done.Add(chunks)
	work := func() {
		for {
			c := int(next.Add(1)) - 1
			if c >= chunks {
				return
			}
			lo, hi := o.shape[0]*c/chunks, o.shape[0]*(c+1)/chunks
			sub := *o
			sub.shape = append([]int{hi - lo}, o.shape[1:]...)
			s2 := bo
			if o.kind == opMul {
				s2 += lo * o.ts[0]
			}
			runOp(&sub, dst, do+lo*o.ds[0], a, ao+lo*o.ss[0], b, s2)
			done.Done()
		}
	}
	for range parts - 1 {
		go work()
	}
	work()
	done.Wait()
}

// chunksPerThread is how many pieces per goroutine elementOp cuts a
// parallel op into.
const chunksPerThread = 4
