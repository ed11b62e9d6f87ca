package graph

import (
	"sort"

	"github.com/goferro/goferro/tensor"
)

// Elementwise unary ops. See UnaryOps for the dtype rules.

// Neg returns -x.
func Neg(x Value) Value { return apply1("neg", Attrs{}, x) }

// Abs returns |x| (the modulus for complex x, as a real value).
func Abs(x Value) Value { return apply1("abs", Attrs{}, x) }

// Exp returns e^x.
func Exp(x Value) Value { return apply1("exp", Attrs{}, x) }

// Log returns the natural logarithm of x.
func Log(x Value) Value { return apply1("log", Attrs{}, x) }

// Sqrt returns the square root of x.
func Sqrt(x Value) Value { return apply1("sqrt", Attrs{}, x) }

// Reciprocal returns 1/x.
func Reciprocal(x Value) Value { return apply1("reciprocal", Attrs{}, x) }

// Square returns x·x.
func Square(x Value) Value { return apply1("square", Attrs{}, x) }

// Conj returns the complex conjugate of x (x itself for real types).
func Conj(x Value) Value { return apply1("conj", Attrs{}, x) }

// Elementwise binary ops; operands broadcast (numpy rules, symbolic extents
// must match by name) and must have equal dtypes. See BinaryOps.

// Add returns x + y.
func Add(x, y Value) Value { return apply1("add", Attrs{}, x, y) }

// Sub returns x - y.
func Sub(x, y Value) Value { return apply1("sub", Attrs{}, x, y) }

// Mul returns x · y.
func Mul(x, y Value) Value { return apply1("mul", Attrs{}, x, y) }

// Div returns x / y (for integers numpy's floor division x // y, 0 for a
// zero divisor).
func Div(x, y Value) Value { return apply1("div", Attrs{}, x, y) }

// Pow returns x^y. Integer x to a negative integer y is an error wrapping
// tensor.ErrDomain when the program runs, as numpy raises.
func Pow(x, y Value) Value { return apply1("pow", Attrs{}, x, y) }

// Maximum returns the elementwise maximum of x and y.
func Maximum(x, y Value) Value { return apply1("max", Attrs{}, x, y) }

// Minimum returns the elementwise minimum of x and y.
func Minimum(x, y Value) Value { return apply1("min", Attrs{}, x, y) }

// Eq returns x == y as bool.
func Eq(x, y Value) Value { return apply1("eq", Attrs{}, x, y) }

// Ne returns x != y as bool.
func Ne(x, y Value) Value { return apply1("ne", Attrs{}, x, y) }

// Lt returns x < y as bool.
func Lt(x, y Value) Value { return apply1("lt", Attrs{}, x, y) }

// Le returns x <= y as bool.
func Le(x, y Value) Value { return apply1("le", Attrs{}, x, y) }

// Gt returns x > y as bool.
func Gt(x, y Value) Value { return apply1("gt", Attrs{}, x, y) }

// Ge returns x >= y as bool.
func Ge(x, y Value) Value { return apply1("ge", Attrs{}, x, y) }

// Select returns x where cond is true and y elsewhere; the three broadcast.
func Select(cond, x, y Value) Value { return apply1("select", Attrs{}, cond, x, y) }

// Convert returns x converted to dt. Complex to real keeps the real part;
// anything to bool is "!= 0"; float to integer truncates.
func Convert(x Value, dt tensor.DType) Value { return apply1("convert", Attrs{DType: dt}, x) }

// normAxes resolves negative axes against rank r, sorts them and rejects
// repeats and out-of-range axes.
func normAxes(op string, axes []int, r int) ([]int, error) {
	out := make([]int, len(axes))
	for i, a := range axes {
		if a < -r || a >= r {
			return nil, errorf(op, ErrAttr, "axis %d out of range for rank %d", a, r)
		}
		if a < 0 {
			a += r
		}
		out[i] = a
	}
	sort.Ints(out)
	for i := 1; i < len(out); i++ {
		if out[i] == out[i-1] {
			return nil, errorf(op, ErrAttr, "axis %d repeated in %v", out[i], axes)
		}
	}
	return out, nil
}

// fail1 records err on the builder of x and returns an errored Value.
func fail1(op string, err error, args ...Value) Value {
	b := builderOf(args...)
	if b == nil {
		return Value{}
	}
	for _, a := range args {
		if e := a.Err(); e != nil {
			return b.fail(op, e)
		}
	}
	return b.fail(op, err)
}

func reduce(op string, x Value, axes []int) Value {
	if x.Err() != nil {
		return apply1(op, Attrs{}, x)
	}
	if axes == nil {
		axes = make([]int, x.Rank())
		for i := range axes {
			axes[i] = i
		}
	}
	ax, err := normAxes(op, axes, x.Rank())
	if err != nil {
		return fail1(op, err, x)
	}
	if len(ax) == 0 {
		return x // nothing to reduce (a scalar, or an explicit empty list)
	}
	return apply1(op, Attrs{Axes: ax}, x)
}

// ReduceSum sums x over the given axes (negative counts from the end), which
// are removed; with no axes it sums over all of them. An explicit empty
// list (ReduceSum(x, []int{}...)) returns x itself.
func ReduceSum(x Value, axes ...int) Value { return reduce("reduce_sum", x, axes) }

// ReduceProd multiplies x over the given axes (all when none are given).
func ReduceProd(x Value, axes ...int) Value { return reduce("reduce_prod", x, axes) }

// ReduceMax takes the maximum of x over the given axes (all when none).
func ReduceMax(x Value, axes ...int) Value { return reduce("reduce_max", x, axes) }

// ReduceMin takes the minimum of x over the given axes (all when none).
func ReduceMin(x Value, axes ...int) Value { return reduce("reduce_min", x, axes) }

// Reshape returns x with a new shape holding the same elements in row-major
// order. One concrete extent may be -1 (Size(-1)) and is inferred; symbolic
// extents must be carried over (the same multiset of symbols).
func Reshape(x Value, shape Shape) Value {
	if x.Err() != nil {
		return apply1("reshape", Attrs{}, x)
	}
	s := shape.Clone()
	infer := -1
	for i, d := range s {
		if d.Sym == "" && d.Size == -1 {
			if infer >= 0 {
				return fail1("reshape", errorf("reshape", ErrShape, "more than one -1 in %v", shape), x)
			}
			infer = i
		}
	}
	if infer >= 0 {
		s[infer] = Size(1)
		pa, _ := volume(x.Type().Shape)
		pb, _ := volume(s)
		if pb == 0 || pa%pb != 0 {
			return fail1("reshape", errorf("reshape", ErrShape, "cannot infer -1 in %v from %v", shape, x.Type().Shape), x)
		}
		s[infer] = Size(pa / pb)
	}
	return apply1("reshape", Attrs{Shape: s}, x)
}

// Permute returns x with its axes reordered: result axis i is x's axis
// perm[i] (negative entries count from the end).
func Permute(x Value, perm ...int) Value {
	if x.Err() != nil {
		return apply1("permute", Attrs{}, x)
	}
	r := x.Rank()
	p := make([]int, len(perm))
	for i, a := range perm {
		if a < 0 {
			a += r
		}
		p[i] = a
	}
	return apply1("permute", Attrs{Perm: p}, x)
}

// Transpose reverses the axes of x (the matrix transpose for rank 2).
func Transpose(x Value) Value {
	r := x.Rank()
	p := make([]int, r)
	for i := range p {
		p[i] = r - 1 - i
	}
	return apply1("permute", Attrs{Perm: p}, x)
}

// BroadcastTo broadcasts x to shape under numpy rules (new leading axes,
// extent-1 axes stretched).
func BroadcastTo(x Value, shape Shape) Value {
	return apply1("broadcast", Attrs{Shape: shape.Clone()}, x)
}

// Slice selects ranges of x, numpy style: for each leading axis a
// tensor.Range (Start, Stop, Step >= 1; negative Start/Stop count from the
// end and are clamped; Full selects the whole axis). Axes beyond the ranges
// are taken whole. A symbolic axis can only be taken whole.
func Slice(x Value, ranges ...tensor.Range) Value {
	if x.Err() != nil {
		return apply1("slice", Attrs{}, x)
	}
	shape := x.Type().Shape
	r := len(shape)
	if len(ranges) > r {
		return fail1("slice", errorf("slice", ErrAttr, "%d ranges for rank %d", len(ranges), r), x)
	}
	a := Attrs{Start: make([]int, r), Limit: make([]int, r), Stride: make([]int, r)}
	for i, d := range shape {
		a.Limit[i], a.Stride[i] = -1, 1
		if i >= len(ranges) {
			continue
		}
		rg := ranges[i]
		step := rg.Step
		if step == 0 {
			step = 1
		}
		if step < 0 {
			return fail1("slice", errorf("slice", ErrAttr, "negative step %d at axis %d", step, i), x)
		}
		a.Stride[i] = step
		if rg.Full {
			continue
		}
		if d.Sym != "" {
			return fail1("slice", errorf("slice", ErrShape, "axis %d has symbolic extent %s and can only be taken whole", i, d.Sym), x)
		}
		n := d.Size
		start, stop := rg.Start, rg.Stop
		if start < 0 {
			start += n
		}
		if stop < 0 {
			stop += n
		}
		start, stop = min(max(start, 0), n), min(max(stop, 0), n)
		stop = max(stop, start)
		a.Start[i], a.Limit[i] = start, stop
	}
	for i, d := range shape {
		if d.Sym == "" && a.Limit[i] == -1 {
			a.Limit[i] = d.Size
		}
	}
	return apply1("slice", a, x)
}

// Concatenate joins xs along axis (negative counts from the end); all must
// share dtype, rank and the extents off the axis, and the axis must be
// concrete in every operand.
func Concatenate(axis int, xs ...Value) Value {
	if len(xs) > 0 && xs[0].Err() == nil && axis < 0 {
		axis += xs[0].Rank()
	}
	return apply1("concatenate", Attrs{Axis: axis}, xs...)
}

// Diagonal walks the given axes of x together (they must have equal
// extents): they are replaced by one axis placed where the first of them
// was, as tensor.Diagonal. Diagonal(x, 0, 1) of a matrix is its diagonal.
func Diagonal(x Value, axes ...int) Value {
	if x.Err() != nil {
		return apply1("diagonal", Attrs{}, x)
	}
	r := x.Rank()
	ax := make([]int, len(axes))
	for i, a := range axes {
		if a < 0 {
			a += r
		}
		ax[i] = a
	}
	return apply1("diagonal", Attrs{Axes: ax}, x)
}

// EmbedDiagonal is the inverse of Diagonal: the result has len(axes)-1 more
// axes than x; x's axis at position min(axes) is spread over the result
// axes listed (which all get its extent), off-diagonal elements are zero,
// and x's other axes fill the remaining result positions in order. So
// Diagonal(EmbedDiagonal(x, axes...), axes...) == x.
func EmbedDiagonal(x Value, axes ...int) Value {
	if x.Err() != nil {
		return apply1("embed_diagonal", Attrs{}, x)
	}
	r := x.Rank() + len(axes) - 1
	ax := make([]int, len(axes))
	for i, a := range axes {
		if a < 0 {
			a += r
		}
		ax[i] = a
	}
	return apply1("embed_diagonal", Attrs{Axes: ax}, x)
}

// DotDims are the batch and contracting dimensions of DotGeneral, paired by
// position between the two operands.
type DotDims struct {
	LhsBatch, RhsBatch       []int
	LhsContract, RhsContract []int
}

// DotGeneral is the batched contraction of numeric x and y (equal dtypes;
// integer products and sums wrap around): the dimensions
// LhsBatch[i] of x and RhsBatch[i] of y are batch dimensions (kept, paired),
// LhsContract[i] and RhsContract[i] are summed over, and the result has the
// batch dimensions first (in the order listed), then x's remaining
// dimensions, then y's, each in their original order.
func DotGeneral(x, y Value, d DotDims) Value {
	nz := func(xs []int) []int {
		if xs == nil {
			return []int{}
		}
		return append([]int{}, xs...)
	}
	return apply1("dot_general", Attrs{
		LhsBatch: nz(d.LhsBatch), RhsBatch: nz(d.RhsBatch),
		LhsContract: nz(d.LhsContract), RhsContract: nz(d.RhsContract),
	}, x, y)
}

// MatMul is the matrix product of rank-2 x and y, or the batched product
// over leading batch axes when both have the same rank r > 2.
func MatMul(x, y Value) Value {
	r := x.Rank()
	if x.Err() != nil || y.Err() != nil || r < 2 || y.Rank() != r {
		if x.Err() == nil && y.Err() == nil {
			return fail1("dot_general", errorf("dot_general", ErrShape, "MatMul of ranks %d and %d", r, y.Rank()), x, y)
		}
		return apply1("dot_general", Attrs{}, x, y)
	}
	var d DotDims
	for i := 0; i < r-2; i++ {
		d.LhsBatch = append(d.LhsBatch, i)
		d.RhsBatch = append(d.RhsBatch, i)
	}
	d.LhsContract, d.RhsContract = []int{r - 1}, []int{r - 2}
	return DotGeneral(x, y, d)
}

// Einsum traces an einsum contraction ("ij,jk->ik", implicit outputs and
// "..." allowed; see package einsum for the rules, numpy's). Operands of
// any dtypes promote to their tensor.ResultType, as in numpy; a bool
// einsum is logical (an OR of ANDs). Compile lowers it through the einsum
// planner into convert, dot_general and layout instructions (operands of
// another dtype are converted first, so the contractions see one dtype; a
// bool einsum computes in float64 and maps every sum back to 0 or 1).
func Einsum(equation string, xs ...Value) Value {
	return apply1("einsum", Attrs{Equation: equation}, xs...)
}

// EinsumPath is Einsum along a given contraction path, in opt_einsum's
// linear format ([[0,1],[0,1]]: each step removes the listed operands and
// appends their contraction), such as a stored benchmark path or one found
// once by einsum.OptimizeSearch. Compile reports an ErrAttr error when the
// path does not fit the equation.
func EinsumPath(equation string, path [][]int, xs ...Value) Value {
	if path == nil {
		path = [][]int{}
	}
	return apply1("einsum", Attrs{Equation: equation, EinsumPath: clonePath(path)}, xs...)
}

// EinsumWithin is EinsumPath (path may be nil) with no intermediate
// holding more than limit elements: Compile slices the contraction as
// einsum.WithMemoryLimit does, and lowers every slice into ordinary
// instructions — slices of the operands, the slice's contractions, and
// the adds and concatenations that combine the slices — so a runtime
// places the slices like any other work, on any engine, with explicit
// transfers. The operands' extents must be concrete. Compile reports an
// ErrAttr error wrapping einsum.ErrMemoryLimit when no slicing fits.
func EinsumWithin(equation string, path [][]int, limit float64, xs ...Value) Value {
	return apply1("einsum", Attrs{Equation: equation, EinsumPath: clonePath(path), EinsumLimit: limit}, xs...)
}

// clonePath copies a contraction path (nil stays nil: the planner chooses).
func clonePath(path [][]int) [][]int {
	if path == nil {
		return nil
	}
	p := make([][]int, len(path))
	for i, s := range path {
		p[i] = append([]int(nil), s...)
	}
	return p
}
