package cpu

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/goferro/goferro/cpu/internal/einsumexec"
	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/internal/prepcache"
	"github.com/goferro/goferro/tensor"
)

// Contract evaluates the einsum equation eq over operands on the CPU, e.g.
// Contract("ij,jk->ik", a, b), with the default path optimizer. It plans
// and lowers the contraction on the first call for eq and the operands'
// shapes and keeps small ones for later calls (see ContractContext);
// einsum.NewPlan and NewContraction hold a plan of any size.
func Contract(eq string, operands ...*tensor.Tensor) (*tensor.Tensor, error) {
	return ContractContext(context.Background(), eq, operands)
}

// ContractContext is Contract under a context and with planning options
// (path or optimizer, memory limit, search budget): the context ends a
// path search early (see einsum.NewPlanContext) and cancels execution
// between steps (see Contraction.Execute). Errors are *einsum.Error values.
//
// Without options, the Contraction it plans is kept for the next call
// with the same eq and operand shapes (the last 128 such pairs), unless
// its intermediates are large (more than 16384 elements: running it
// dwarfs planning, and a cache should not hold that memory) or ctx ended
// the path search early. A loop of small contractions, a tensor
// network's sweep, so plans and lowers each once.
func ContractContext(ctx context.Context, eq string, operands []*tensor.Tensor, opts ...einsum.Option) (*tensor.Tensor, error) {
	for i, t := range operands {
		if t == nil {
			return nil, &einsum.Error{Kind: einsum.ErrOperands, Pos: -1, Operand: i, Msg: fmt.Sprintf("operand %d is nil", i)}
		}
	}
	if len(opts) > 0 { // options are functions: no key tells them apart
		c, err := planContraction(ctx, eq, operands, opts)
		if err != nil {
			return nil, err
		}
		return c.Execute(ctx, operands...)
	}
	var buf [128]byte
	key := contractionKey(buf[:0], eq, operands)
	if c, ok := contractions.Get(key); ok {
		return c.Execute(ctx, operands...)
	}
	c, err := planContraction(ctx, eq, operands, nil)
	if err != nil {
		return nil, err
	}
	if c.prog != nil && c.prog.Workspace() <= cachedWorkspace && (ctx == nil || ctx.Err() == nil) {
		contractions.Put(string(key), c)
	}
	return c.Execute(ctx, operands...)
}

// planContraction plans eq for the operands' shapes and lowers the plan.
func planContraction(ctx context.Context, eq string, operands []*tensor.Tensor, opts []einsum.Option) (*Contraction, error) {
	shapes := make([][]int, len(operands))
	for i, t := range operands {
		shapes[i] = t.Shape()
	}
	p, err := einsum.NewPlanContext(ctx, eq, shapes, opts...)
	if err != nil {
		return nil, err
	}
	return NewContraction(p)
}

// contractions holds the Contractions ContractContext planned without
// options. Planning and lowering a small contraction cost 10–50 µs, ten
// times running it: Contract of ij,jk->ik over 8×8 matrices took 12.4 µs
// a call planning anew and 1.1 µs with the cache (BenchmarkContractSmall,
// AMD EPYC, one thread).
var contractions = prepcache.New[*Contraction](contractionCacheSize)

const (
	// contractionCacheSize is how many Contractions contractions holds.
	contractionCacheSize = 128
	// cachedWorkspace is the most intermediates, in elements, that a
	// kept Contraction may hold between calls (reuse.Pool keeps one
	// workspace per dtype): 256 KiB in complex128, 32 MiB over a full
	// cache.
	cachedWorkspace = 1 << 14
)

// contractionKey appends to buf the key of eq over the operands' shapes:
// eq's length, eq, and each shape after a ';' with its extents separated
// by ','. The length keeps any equation from reading as another's prefix.
func contractionKey(buf []byte, eq string, operands []*tensor.Tensor) []byte {
	buf = strconv.AppendInt(buf, int64(len(eq)), 10)
	buf = append(buf, ':')
	buf = append(buf, eq...)
	for _, t := range operands {
		buf = append(buf, ';')
		for i, d := range t.ShapeView() {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = strconv.AppendInt(buf, int64(d), 10)
		}
	}
	return buf
}

// Contraction is an einsum plan lowered to a CPU program of strided
// copies, elementwise products and batched strided GEMMs, with every
// intermediate laid out in memory so that GEMMs read and write in place
// wherever possible. Lowering happens once, in NewContraction; a
// Contraction is immutable and safe for concurrent Execute calls, which
// reuse pooled workspaces: between calls it holds the workspace of one (its
// intermediates, at most Memory bytes), which goes with it.
type Contraction struct {
	prog     *einsumexec.Program
	sliced   *slicedRun    // the plan runs in slices (einsum.Slicing), or nil
	segments *segmentedRun // the plan runs in parts (einsum.Segments), or nil
	threads  int
}

// ContractionOption configures NewContraction.
type ContractionOption func(*contractionConfig)

// contractionConfig holds the execution options.
type contractionConfig struct {
	threads   int
	anyLayout bool
}

// WithThreads sets the goroutines the GEMM steps and large copies use (0:
// gemm.Threads()).
func WithThreads(n int) ContractionOption {
	return func(c *contractionConfig) { c.threads = n }
}

// WithAnyOutputLayout lets Execute return the result as a strided tensor
// in whatever axis order the last step writes most cheaply (as torch.einsum
// and numpy.einsum may return views), saving a final permutation; by
// default results are row-major.
func WithAnyOutputLayout() ContractionOption {
	return func(c *contractionConfig) { c.anyLayout = true }
}

// NewContraction lowers plan p for the CPU. It fails only on a nil plan or
// an internal lowering error (an *einsum.Error).
func NewContraction(p *einsum.Plan, opts ...ContractionOption) (*Contraction, error) {
	if p == nil {
		return nil, errors.New("cpu.NewContraction: nil plan")
	}
	var cfg contractionConfig
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	c := &Contraction{threads: cfg.threads}
	var err error
	switch {
	case p.Segments != nil:
		c.segments, err = newSegmentedRun(p, cfg.threads, cfg.anyLayout)
	case p.Slicing != nil:
		c.sliced, err = newSlicedRun(p, cfg.anyLayout)
	default:
		c.prog, err = einsumexec.Lower(p, cfg.anyLayout)
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Plan returns the plan the contraction runs.
func (c *Contraction) Plan() *einsum.Plan {
	switch {
	case c.segments != nil:
		return c.segments.whole
	case c.sliced != nil:
		return c.sliced.whole
	}
	return c.prog.Plan()
}

// Execute contracts operands (which must have the plan's shapes) and
// returns a new tensor: row-major, or with WithAnyOutputLayout possibly a
// strided view of its own new buffer. Operands of different dtypes are
// first converted to their common dtype, tensor.ResultType, as
// numpy.einsum promotes them (float32 and float64 give float64, int64 and
// complex64 give complex128, bool and int32 give int32); the result has
// that dtype. ctx may be nil; when it is done between steps, Execute stops
// with an einsum.ErrCanceled error. Errors are *einsum.Error values
// (ErrOperands, ErrShape naming the operand, ErrDType).
//
// A sliced plan (einsum.Slicing) runs its slices on views of the operands,
// spread over the threads, each slice's intermediates within the plan's
// memory limit; slices over summed labels accumulate into one output
// buffer per thread. A segmented plan (einsum.Segments) runs its parts in
// order, each sliced or not, the results of earlier parts held until the
// part that reads them has run.
func (c *Contraction) Execute(ctx context.Context, operands ...*tensor.Tensor) (*tensor.Tensor, error) {
	operands, err := promote(operands)
	if err != nil {
		return nil, err
	}
	switch {
	case c.segments != nil:
		return c.segments.execute(ctx, operands)
	case c.sliced != nil:
		return c.sliced.execute(ctx, c.threads, 0, c.sliced.whole.Slicing.Count, operands)
	}
	return c.prog.Execute(ctx, c.threads, operands...)
}

// ExecuteInto is Execute reusing dst, a result of an earlier Execute or
// ExecuteInto of c, for the result: used as append is,
//
//	out, err = c.ExecuteInto(ctx, out, operands...)
//
// a loop that contracts new operands of the same shapes allocates no
// result and leaves the collector nothing to do (a fresh result costs Go
// its zeroing, and a collection and new pages once results add up; on an
// 8 MiB result these cost more than the contraction). The result, dst or
// a new tensor when dst cannot hold it (nil, another dtype, shape or
// layout, a view into a bigger buffer, or a sliced or segmented plan,
// which accumulates aside), is returned; dst's old values are lost when
// it is reused. Errors are Execute's.
func (c *Contraction) ExecuteInto(ctx context.Context, dst *tensor.Tensor, operands ...*tensor.Tensor) (*tensor.Tensor, error) {
	if c.segments != nil || c.sliced != nil {
		return c.Execute(ctx, operands...)
	}
	operands, err := promote(operands)
	if err != nil {
		return nil, err
	}
	return c.prog.ExecuteInto(ctx, c.threads, dst, operands...)
}

// promote converts the operands to their common dtype (tensor.ResultType)
// when they differ; those of that dtype already are passed as they are.
// Nil or invalid operands are left for the operand checks to report.
func promote(operands []*tensor.Tensor) ([]*tensor.Tensor, error) {
	var dt tensor.DType // promotion is associative: fold it, allocating nothing
	for i, t := range operands {
		switch {
		case t == nil:
			return operands, nil
		case i == 0:
			dt = t.DType()
		default:
			dt = tensor.ResultType(dt, t.DType())
		}
	}
	if !dt.Valid() {
		return operands, nil
	}
	var out []*tensor.Tensor
	for i, t := range operands {
		if t.DType() == dt {
			continue
		}
		if out == nil {
			out = slices.Clone(operands)
		}
		c, err := Convert(t, dt)
		if err != nil {
			return nil, &einsum.Error{Kind: einsum.ErrDType, Pos: -1, Operand: i, Msg: fmt.Sprintf("promoting operand %d from %v to %v", i, t.DType(), dt), Err: err}
		}
		out[i] = c
	}
	if out == nil {
		return operands, nil
	}
	return out, nil
}

// StepLayout is how a Contraction runs one step of its plan: the memory
// axis orders of the step's operands and result, its label groups in the
// order the GEMM walks them, and the number of layouts it copies.
type StepLayout = einsumexec.StepLayout

// Layouts describes how the contraction runs each step of its plan, in the
// order of the plan's Steps (of one slice's plan, for a sliced plan; for a
// segmented plan, those of every part in turn, as the part's Contraction
// describes them).
func (c *Contraction) Layouts() []StepLayout {
	switch {
	case c.segments != nil:
		var ls []StepLayout
		for _, part := range c.segments.parts {
			ls = append(ls, part.Layouts()...)
		}
		return ls
	case c.sliced != nil:
		return c.sliced.one.Layouts()
	}
	return c.prog.Layouts()
}
