package mpi

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"unsafe"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/tensor"
)

// ContractOption configures Contract.
type ContractOption func(*contractConfig)

type contractConfig struct {
	plan    []einsum.Option
	budget  int64
	threads int
}

// WithPlanOptions passes options to the planner (optimizer, path, memory
// limit: einsum.WithMemoryLimit slices the plan).
func WithPlanOptions(opts ...einsum.Option) ContractOption {
	return func(c *contractConfig) { c.plan = append(c.plan, opts...) }
}

// WithBudget plans so that each process's share needs at most bytes of
// memory, operands included (cpu.PlanWithin: the plan is sliced until it
// fits); 0 means no budget.
func WithBudget(bytes int64) ContractOption { return func(c *contractConfig) { c.budget = bytes } }

// WithThreads sets the goroutines each process contracts with (0:
// gemm.Threads()).
func WithThreads(n int) ContractOption { return func(c *contractConfig) { c.threads = n } }

// Contract evaluates the einsum equation eq over operands across the
// processes of c, every process passing the same operands: process 0
// plans (see WithPlanOptions and WithBudget) and sends the plan to the
// others, and Execute shares its slices out. Every process returns the
// result. A failure on one process is an error on every process: its own
// error there, an ErrRemote naming it on the others.
func Contract(ctx context.Context, c *Comm, eq string, operands []*tensor.Tensor, opts ...ContractOption) (*tensor.Tensor, error) {
	var cfg contractConfig
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	var p *einsum.Plan
	var err error
	if c.rank == 0 {
		p, err = plan(ctx, eq, operands, cfg)
	}
	p, berr := BcastPlan(ctx, c, p, 0)
	switch {
	case err != nil:
		return nil, err // process 0's own planning error
	case berr != nil:
		return nil, berr
	}
	x, err := cpu.NewContraction(p, cpu.WithThreads(cfg.threads))
	if err := c.agree(ctx, "Contract", err); err != nil {
		return nil, err
	}
	return Execute(ctx, c, x, operands...)
}

// BcastPlan sends the plan p of process root to every process and
// returns it there (root returns p): processes that plan on their own may
// find different plans (a search under a time budget, a memory budget that
// depends on what each machine has free), and Execute needs one. p is
// read on root only; a nil p there is an ErrArgument error on root and an
// ErrRemote on the others.
func BcastPlan(ctx context.Context, c *Comm, p *einsum.Plan, root int) (*einsum.Plan, error) {
	if err := c.checkRank("BcastPlan", root); err != nil {
		return nil, err
	}
	var b []byte
	var err error
	if c.rank == root {
		if p == nil {
			err = newErr("BcastPlan", ErrArgument, "nil plan")
		} else if b, err = json.Marshal(p); err != nil {
			err = &Error{Op: "BcastPlan", Kind: ErrArgument, Rank: -1, Msg: "encoding the plan", Err: err}
		}
	}
	b, berr := c.bcastBytes(ctx, "BcastPlan", b, err != nil, root)
	switch {
	case err != nil:
		return nil, err
	case berr != nil:
		return nil, berr
	case c.rank == root:
		return p, nil
	}
	q := new(einsum.Plan)
	if err := json.Unmarshal(b, q); err != nil {
		return nil, &Error{Op: "BcastPlan", Kind: ErrMismatch, Rank: -1, Msg: fmt.Sprintf("decoding the plan of process %d", root), Err: err}
	}
	return q, nil
}

// plan plans eq over the operands' shapes as cfg says.
func plan(ctx context.Context, eq string, operands []*tensor.Tensor, cfg contractConfig) (*einsum.Plan, error) {
	shapes := make([][]int, len(operands))
	for i, t := range operands {
		if t == nil {
			return nil, &einsum.Error{Kind: einsum.ErrOperands, Pos: -1, Operand: i, Msg: fmt.Sprintf("operand %d is nil", i)}
		}
		shapes[i] = t.Shape()
	}
	if cfg.budget > 0 && len(operands) > 0 {
		return cpu.PlanWithin(ctx, eq, shapes, operands[0].DType(), cfg.budget, cfg.threads, cfg.plan...)
	}
	return einsum.NewPlanContext(ctx, eq, shapes, cfg.plan...)
}

// Execute contracts operands with x across the processes of c: each
// process runs its share of x's slices (a contiguous range of about
// x.Slices()/c.Size() of them, see cpu.Contraction.ExecuteSlices), and the
// parts are summed (or, for bool, ored) into the result on every process.
// Every process must pass the same plan and operands: processes that
// disagree get an ErrMismatch error before any work. A failure on one
// process is an error on every process: its own error there, an ErrRemote
// naming it on the others. The processes that finish first wait for the
// others within ctx and the communicator's timeout (WithTimeout), which
// must therefore exceed the time one process's share may take longer than
// another's.
func Execute(ctx context.Context, c *Comm, x *cpu.Contraction, operands ...*tensor.Tensor) (*tensor.Tensor, error) {
	var err error
	if x == nil {
		err = newErr("Execute", ErrArgument, "nil contraction")
	}
	var sum uint32
	if err == nil {
		sum, err = fingerprint(x.Plan(), operands)
	}
	if err := c.agree(ctx, "Execute", err); err != nil {
		return nil, err
	}
	if err := c.same(ctx, "Execute", sum); err != nil {
		return nil, err
	}
	lo, hi := share(x.Slices(), c.size, c.rank)
	part, err := x.ExecuteSlices(ctx, lo, hi, operands...)
	if err := c.agree(ctx, "Execute", err); err != nil {
		return nil, err
	}
	if err := c.Allreduce(ctx, part, Sum); err != nil {
		return nil, err
	}
	return part, nil
}

// share returns the slices lo..hi-1 of count that process rank of size
// runs: contiguous ranges whose lengths differ by at most one.
func share(count, size, rank int) (lo, hi int) {
	return count * rank / size, count * (rank + 1) / size
}

// agree reports every process's local error to all of them: it returns
// err on the process where it happened, an ErrRemote naming the lowest
// failing process on the others, and nil when none failed.
func (c *Comm) agree(ctx context.Context, op string, err error) error {
	flag := []int32{int32(c.size)}
	if err != nil {
		flag[0] = int32(c.rank)
	}
	t, _ := tensor.New(flag, 1)
	if rerr := c.Allreduce(ctx, t, Min); rerr != nil {
		if err != nil {
			return err
		}
		return rerr
	}
	switch {
	case err != nil:
		return err
	case int(flag[0]) < c.size:
		e := newErr(op, ErrRemote, "process %d failed", flag[0])
		e.Rank = int(flag[0])
		return e
	}
	return nil
}

// same returns an ErrMismatch error on every process unless v is the same
// on all of them.
func (c *Comm) same(ctx context.Context, op string, v uint32) error {
	hi := []int64{int64(v), -int64(v)} // max of v and of -v: the max and the min
	t, _ := tensor.New(hi, 2)
	if err := c.Allreduce(ctx, t, Max); err != nil {
		return err
	}
	if hi[0] != int64(v) || -hi[1] != int64(v) {
		return newErr(op, ErrMismatch, "plans or operands differ between processes (fingerprints %#x to %#x)", -hi[1], hi[0])
	}
	return nil
}

// fingerprint is a checksum of the plan and the operands' dtypes, shapes
// and elements.
func fingerprint(p *einsum.Plan, operands []*tensor.Tensor) (uint32, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return 0, err
	}
	table := crc32.MakeTable(crc32.Castagnoli)
	sum := crc32.Checksum(b, table)
	for i, t := range operands {
		if t == nil {
			return 0, &einsum.Error{Kind: einsum.ErrOperands, Pos: -1, Operand: i, Msg: fmt.Sprintf("operand %d is nil", i)}
		}
		sum = crc32.Update(sum, table, fmt.Appendf(nil, "%v%v", t.DType(), t.ShapeView()))
		if t = t.Contiguous(); t == nil {
			return 0, newErr("Execute", ErrArgument, "cannot copy operand %d", i)
		}
		if t.Len() > 0 {
			p, n, err := elements("Execute", t)
			if err != nil {
				return 0, err
			}
			sum = crc32.Update(sum, table, unsafe.Slice((*byte)(p), n*t.DType().Size()))
		}
	}
	return sum, nil
}

// bcastBytes broadcasts b from root to every process and returns it there;
// failed on root sends nothing and gives the others an ErrRemote.
func (c *Comm) bcastBytes(ctx context.Context, op string, b []byte, failed bool, root int) ([]byte, error) {
	head := []int64{int64(len(b))}
	if failed {
		head[0] = -1
	}
	t, _ := tensor.New(head, 1)
	if err := c.Bcast(ctx, t, root); err != nil {
		return nil, err
	}
	if head[0] < 0 {
		if c.rank == root {
			return nil, nil
		}
		e := newErr(op, ErrRemote, "process %d failed", root)
		e.Rank = root
		return nil, e
	}
	words := make([]int64, (head[0]+7)/8)
	if c.rank == root {
		words = packBytes(b)
	}
	t, _ = tensor.New(words, len(words))
	if err := c.Bcast(ctx, t, root); err != nil {
		return nil, err
	}
	return unpackBytes(words, int(head[0])), nil
}
