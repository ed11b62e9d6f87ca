package cpu

import (
	"context"
	"fmt"
	"slices"

	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/internal/sysmem"

	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/graph/ref"
	"github.com/goferro/goferro/linalg"
	"github.com/goferro/goferro/tensor"
)

// EngineID is the id of the CPU engine made by NewEngine.
const EngineID driver.EngineID = "cpu.default.v1"

// CoreFamilies are the op families the CPU engine runs by default.
var CoreFamilies = []string{
	graph.FamilyConstant, graph.FamilyElementwise, graph.FamilyReduce, graph.FamilyLayout, graph.FamilyDotGeneral,
}

// EngineOption configures NewEngine.
type EngineOption func(*engineConfig)

type engineConfig struct {
	id       driver.EngineID
	families []string
	memory   int64 // -1: the default
}

// WithEngineID sets the engine id (default EngineID).
func WithEngineID(id driver.EngineID) EngineOption { return func(c *engineConfig) { c.id = id } }

// WithFamilies adds op families the engine should run with their reference
// implementations (through graph/ref, which calls an extension family's
// Eval), for example extension families.
func WithFamilies(families ...string) EngineOption {
	return func(c *engineConfig) { c.families = append(c.families, families...) }
}

// WithMemory sets the engine's memory budget (driver.Engine.Memory) in
// bytes; 0 means none. By default it is DefaultMemory().
func WithMemory(bytes int64) EngineOption { return func(c *engineConfig) { c.memory = bytes } }

// DefaultMemory is the CPU engine's default memory budget: three quarters
// of what the process may still allocate (the host's available memory,
// bounded by its control group's limit), or 0 (no budget) where the
// system does not say.
func DefaultMemory() int64 {
	n, err := sysmem.Available()
	if err != nil {
		return 0
	}
	return n / 4 * 3
}

// NewEngine returns the registration of the CPU engine: host memory
// (driver.StorageHost in driver.HostDomain), the core op families and the
// factorisations (linalg.Family, which runs package linalg), and
// executors that call this package's kernels (GEMM for dot_general, the
// elementwise, reduction, permutation and conversion kernels) and the
// reference semantics (package graph/ref) for the ops without one. Register it
// with goferro.WithEngine(cpu.NewEngine()) like any other engine.
//
// The CPU engine owns host buffers: its residency check accepts buffers
// whose payload is a *tensor.Tensor placed at StorageHost in HostDomain
// with the "host" backend (what driver.HostBuffer makes), and its results
// are such buffers. Materializing a result returns its tensor without a
// copy.
func NewEngine(opts ...EngineOption) driver.Engine {
	c := engineConfig{id: EngineID, memory: -1}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.memory < 0 {
		c.memory = DefaultMemory()
	}
	fams := slices.Concat(CoreFamilies, []string{linalg.Family})
	for _, f := range c.families {
		if !slices.Contains(fams, f) {
			fams = append(fams, f)
		}
	}
	return driver.Engine{
		ID:             c.id,
		Backend:        "cpu",
		Domain:         driver.HostDomain,
		Storage:        []driver.StorageClass{driver.StorageHost},
		DefaultStorage: driver.StorageHost,
		Families:       fams,
		Memory:         c.memory,
		Executor:       driver.ExecutorFunc(execute),
		Ingress: driver.Ingress{
			Eligible: func(p driver.Placement, class driver.StorageClass) bool {
				return class == driver.StorageHost && p == hostPlacement
			},
			Accept: func(b *driver.Buffer, _ driver.StorageClass) error {
				t, ok := b.Tensor()
				if !ok {
					return fmt.Errorf("cpu: payload %T is not a host tensor", b.Payload())
				}
				if !b.Describes(t) {
					return fmt.Errorf("cpu: buffer metadata %v%v does not describe its tensor %v%v", b.DType(), b.Shape(), t.DType(), t.Shape())
				}
				return nil
			},
			Resident: resident,
		},
		Materializer: driver.MaterializerFunc(func(_ context.Context, b *driver.Buffer) (*tensor.Tensor, error) {
			t, ok := b.Tensor()
			if !ok || !resident(b) {
				return nil, fmt.Errorf("cpu: buffer is not host memory")
			}
			return t, nil
		}),
	}
}

var hostPlacement = driver.Placement{Class: driver.StorageHost, Domain: driver.HostDomain}

// resident reports whether b is host memory — made as such, not
// relabelled (driver.Buffer.HostMemory) — whose description is its
// tensor's: the engine measures the memory it owns rather than trusting
// the label.
func resident(b *driver.Buffer) bool {
	t, ok := b.Tensor()
	return ok && b.HostMemory() && b.Describes(t)
}

func execute(ctx context.Context, call *driver.Call) ([]*driver.Buffer, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// The operand list stays on the stack for the usual arities: kernel
	// does not keep it (reference copies it).
	var arr [4]*tensor.Tensor
	ins := arr[:0]
	for i, b := range call.Inputs {
		// The runtime checked residency when it published the operand;
		// this cheaper check (host memory by construction) keeps a
		// misplaced buffer from being read all the same.
		t, ok := b.Tensor()
		if !ok || !b.HostMemory() {
			return nil, fmt.Errorf("cpu: operand %d is not host memory", i)
		}
		ins = append(ins, t)
	}
	one, res, err := kernel(call, ins)
	if err != nil {
		return nil, err
	}
	if res == nil {
		res = []*tensor.Tensor{one} // does not escape: HostBuffers keeps the tensors, not the slice
	}
	return driver.HostBuffers(res...), nil
}

// reduceOf maps graph's reduction op codes to the reductions.
var reduceOf = [256]ReduceOp{
	graph.OpReduceSum: ReduceSum, graph.OpReduceProd: ReduceProd, graph.OpReduceMax: ReduceMax, graph.OpReduceMin: ReduceMin,
}

// kernel computes one instruction with this package's kernels, or with the
// reference semantics (package graph/ref) where there is no kernel for it.
// A single result comes back as one with many nil (the kernels' case,
// without a slice to allocate); the reference's results come back as many,
// never nil. kernel does not keep in.
func kernel(call *driver.Call, in []*tensor.Tensor) (one *tensor.Tensor, many []*tensor.Tensor, err error) {
	ins := call.Instruction
	sameShapes := func() bool {
		if len(call.Results) != 1 {
			return false
		}
		want := call.Results[0].Shape
		for _, t := range in {
			if !t.ShapeView().Equal(want) {
				return false
			}
		}
		return true
	}
	// The elementwise ops' codes are graph's (see UnaryOp).
	code := ins.Code
	kind := kernels[code].kind
	switch {
	case kind == opUnary && len(in) == 1:
		one, err = Unary(UnaryOp(code), in[0])
		return one, nil, err
	case kind == opBinary && len(in) == 2 && sameShapes():
		one, err = Binary(BinaryOp(code), in[0], in[1])
		return one, nil, err
	case kind == opCompare && len(in) == 2 && sameShapes():
		one, err = Compare(CompareOp(code), in[0], in[1])
		return one, nil, err
	case code == graph.OpSquare && len(in) == 1:
		one, err = Mul(in[0], in[0])
		return one, nil, err
	case code == graph.OpReciprocal && len(in) == 1:
		one, err = reciprocal(in[0])
		return one, nil, err
	case code == graph.OpConstant && ins.Attrs.Value != nil:
		return ins.Attrs.Value.Clone(), nil, nil
	case code == graph.OpSelect && len(in) == 3 && sameShapes():
		one, err = Select(in[0], in[1], in[2])
		return one, nil, err
	case code == graph.OpConvert && len(in) == 1:
		one, err = Convert(in[0], ins.Attrs.DType)
		return one, nil, err
	case code == graph.OpReshape && len(in) == 1 && len(call.Results) == 1:
		t, err := in[0].Reshape(call.Results[0].Shape...)
		if err != nil {
			return nil, nil, err
		}
		return t.Clone(), nil, nil
	case code == graph.OpBroadcast && len(in) == 1 && len(call.Results) == 1:
		t, err := in[0].BroadcastTo(call.Results[0].Shape...)
		if err != nil {
			return nil, nil, err
		}
		return t.Clone(), nil, nil
	case code == graph.OpPermute && len(in) == 1:
		one, err = Permute(in[0], ins.Attrs.Perm...)
		return one, nil, err
	case reduceOf[code] != 0 && len(in) == 1 && len(ins.Attrs.Axes) > 0:
		one, err = Reduce(reduceOf[code], in[0], ins.Attrs.Axes, false)
		return one, nil, err
	case code == graph.OpDotGeneral && len(in) == 2 && len(call.Results) == 1:
		if t, ok, err := dotGeneral(&ins.Attrs, in[0], in[1], call.Results[0].Shape); ok || err != nil {
			return t, nil, err
		}
	}
	many, err = ref.Kernel(call, slices.Clone(in))
	if many == nil && err == nil {
		many = []*tensor.Tensor{}
	}
	return nil, many, err
}

// reciprocal is 1/x.
func reciprocal(x *tensor.Tensor) (*tensor.Tensor, error) {
	ones, err := tensor.Ones(x.DType(), x.ShapeView()...)
	if err != nil {
		return nil, err
	}
	return Div(ones, x)
}
