package cpu

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/goferro/goferro/tensor"
)

// refUnary is the reference of op on one element of dtype dt, or ok=false
// if op is not defined on dt.
func refUnary(op UnaryOp, dt tensor.DType, x complex128) (complex128, bool) {
	switch {
	case dt.IsFloat():
		v := real(x)
		switch op {
		case OpNeg:
			return complex(-v, 0), true
		case OpConj:
			return x, true
		case OpAbs:
			return complex(math.Abs(v), 0), true
		case OpExp:
			return complex(math.Exp(v), 0), true
		case OpLog:
			return complex(math.Log(v), 0), true
		case OpSqrt:
			return complex(math.Sqrt(v), 0), true
		}
	case dt.IsComplex():
		switch op {
		case OpNeg:
			return -x, true
		case OpConj:
			return cmplx.Conj(x), true
		case OpAbs:
			return complex(cmplx.Abs(x), 0), true
		case OpExp:
			return cmplx.Exp(x), true
		case OpLog:
			return cmplx.Log(x), true
		case OpSqrt:
			return cmplx.Sqrt(x), true
		}
	case dt.IsInt():
		v := int64(real(x))
		switch op {
		case OpNeg:
			return complex(float64(-v), 0), true
		case OpConj:
			return x, true
		case OpAbs:
			return complex(math.Abs(float64(v)), 0), true
		}
	}
	return 0, false
}

// refBinary is the reference of op on elements of dtype dt.
func refBinary(op BinaryOp, dt tensor.DType, x, y complex128) (complex128, bool) {
	switch {
	case dt.IsFloat():
		a, b := real(x), real(y)
		if dt == tensor.Float32 {
			// Work on the float32 values the kernel sees.
			a, b = float64(float32(a)), float64(float32(b))
		}
		switch op {
		case OpAdd:
			return complex(a+b, 0), true
		case OpSub:
			return complex(a-b, 0), true
		case OpMul:
			return complex(a*b, 0), true
		case OpDiv:
			return complex(a/b, 0), true
		case OpPow:
			return complex(math.Pow(a, b), 0), true
		case OpMax:
			return complex(math.Max(a, b), 0), true
		case OpMin:
			return complex(math.Min(a, b), 0), true
		}
	case dt.IsComplex():
		switch op {
		case OpAdd:
			return x + y, true
		case OpSub:
			return x - y, true
		case OpMul:
			return x * y, true
		case OpDiv:
			return x / y, true
		case OpPow:
			return cmplx.Pow(x, y), true
		}
	case dt.IsInt():
		a, b := int64(real(x)), int64(real(y))
		var v int64
		switch op {
		case OpAdd:
			v = a + b
		case OpSub:
			v = a - b
		case OpMul:
			v = a * b
		case OpDiv:
			if b != 0 {
				v = int64(math.Floor(float64(a) / float64(b))) // numpy's //
			}
		case OpPow:
			if b < 0 {
				return 0, false // an error (TestIntPowNegativeExponent)
			}
			v = int64(math.Pow(float64(a), float64(b)))
		case OpMax:
			v = max(a, b)
		case OpMin:
			v = min(a, b)
		default:
			return 0, false
		}
		return complex(float64(v), 0), true
	}
	return 0, false
}

func refCompare(op CompareOp, dt tensor.DType, x, y complex128) (bool, bool) {
	switch op {
	case OpEq:
		return x == y, true
	case OpNe:
		return x != y, true
	}
	if dt.IsComplex() || dt == tensor.Bool {
		return false, false
	}
	a, b := real(x), real(y)
	switch op {
	case OpLt:
		return a < b, true
	case OpLe:
		return a <= b, true
	case OpGt:
		return a > b, true
	case OpGe:
		return a >= b, true
	}
	return false, false
}

func b2c(b bool) complex128 {
	if b {
		return 1
	}
	return 0
}

// The operations of each kind. Their values are graph's op codes, which
// need not be consecutive.
var (
	unaryOpList   = []UnaryOp{OpNeg, OpConj, OpAbs, OpExp, OpLog, OpSqrt}
	binaryOpList  = []BinaryOp{OpAdd, OpSub, OpMul, OpDiv, OpPow, OpMax, OpMin}
	compareOpList = []CompareOp{OpEq, OpNe, OpLt, OpLe, OpGt, OpGe}
)

// defined reports whether op is defined on dt as the reference says (ok),
// and fails t when the kernel's err disagrees: an undefined op must fail
// with ErrDType, a defined one must not fail.
func defined(t *testing.T, op fmt.Stringer, dt tensor.DType, ok bool, err error) bool {
	t.Helper()
	if !ok {
		if !errors.Is(err, tensor.ErrDType) {
			t.Fatalf("%v on %v: err %v, want ErrDType", op, dt, err)
		}
		return false
	}
	if err != nil {
		t.Fatalf("%v on %v: %v", op, dt, err)
	}
	return true
}

func TestUnaryRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 1))
	for iter := 0; iter < 150; iter++ {
		for _, dt := range tensor.DTypes {
			shape := randShape(r, 4, 5)
			a := randTensor(t, r, dt, shape, 3)
			for _, op := range unaryOpList {
				got, err := Unary(op, a)
				if _, ok := refUnary(op, dt, 0); !defined(t, op, dt, ok, err) {
					continue
				}
				want := dt
				if op == OpAbs {
					want = dt.Real()
				}
				if got.DType() != want {
					t.Fatalf("%v on %v: dtype %v", op, dt, got.DType())
				}
				checkAgainst(t, op.String()+"/"+dt.String(), got, shape, tolerance(dt), func(idx []int) complex128 {
					v, _ := refUnary(op, dt, at(a, idx))
					return roundTo(want, v)
				})
			}
		}
	}
}

// randPair draws operands of dtype dt that broadcast together, with values
// up to scale, and their broadcast shape: a of a random shape and b of a
// partner shape, or (with swap, at random) the other way round.
func randPair(t *testing.T, r *rand.Rand, dt tensor.DType, scale float64, swap bool) (a, b *tensor.Tensor, out tensor.Shape) {
	shape := randShape(r, 4, 5)
	other := broadcastPartner(r, shape)
	if swap && r.IntN(2) == 0 {
		shape, other = other, shape
	}
	a = randTensor(t, r, dt, shape, scale)
	b = randTensor(t, r, dt, other, scale)
	out, _ = tensor.BroadcastShapes(shape, other)
	return a, b, out
}

func TestBinaryRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 1))
	for iter := 0; iter < 150; iter++ {
		for _, dt := range tensor.DTypes {
			a, b, out := randPair(t, r, dt, 4, true)
			for _, op := range binaryOpList {
				got, err := Binary(op, a, b)
				if op == OpPow && errors.Is(err, tensor.ErrDomain) {
					continue // a negative integer exponent: TestIntPowNegativeExponent
				}
				if _, ok := refBinary(op, dt, 1, 1); !defined(t, op, dt, ok, err) {
					continue
				}
				checkAgainst(t, op.String()+"/"+dt.String(), got, out, tolerance(dt), func(idx []int) complex128 {
					v, _ := refBinary(op, dt, at(a, idx), at(b, idx))
					return roundTo(dt, v)
				})
			}
		}
	}
}

func TestCompareRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 1))
	for iter := 0; iter < 150; iter++ {
		for _, dt := range tensor.DTypes {
			// Small integer-valued ranges make ties frequent.
			a, b, out := randPair(t, r, dt, 2, false)
			if dt.IsFloat() || dt.IsComplex() {
				a, _ = roundHalf(a)
				b, _ = roundHalf(b)
			}
			for _, op := range compareOpList {
				got, err := Compare(op, a, b)
				if _, ok := refCompare(op, dt, 0, 0); !defined(t, op, dt, ok, err) {
					continue
				}
				if got.DType() != tensor.Bool {
					t.Fatalf("%v: dtype %v", op, got.DType())
				}
				checkAgainst(t, op.String()+"/"+dt.String(), got, out, 0, func(idx []int) complex128 {
					v, _ := refCompare(op, dt, at(a, idx), at(b, idx))
					return b2c(v)
				})
			}
		}
	}
}

// roundHalf rounds values to multiples of 1/2 (via the kernels under test
// only for Convert of the rounded values), so comparisons see ties.
func roundHalf(a *tensor.Tensor) (*tensor.Tensor, error) {
	c := tensor.ZerosLike(a)
	shape := a.Shape()
	for i := 0; i < a.Len(); i++ {
		idx := tensor.Unravel(i, shape)
		v, _ := a.Complex128At(idx...)
		_ = c.SetComplex128(complex(math.Round(2*real(v))/2, math.Round(2*imag(v))/2), idx...)
	}
	return c, nil
}

func TestSelectRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 1))
	for iter := 0; iter < 200; iter++ {
		dt := tensor.DTypes[r.IntN(len(tensor.DTypes))]
		shape := randShape(r, 4, 5)
		c := randTensor(t, r, tensor.Bool, broadcastPartner(r, shape), 1)
		a := randTensor(t, r, dt, broadcastPartner(r, shape), 5)
		b := randTensor(t, r, dt, shape, 5)
		out, _ := tensor.BroadcastShapes(c.Shape(), a.Shape(), b.Shape())
		got, err := Select(c, a, b)
		if err != nil {
			t.Fatal(err)
		}
		checkAgainst(t, "select/"+dt.String(), got, out, 0, func(idx []int) complex128 {
			if at(c, idx) != 0 {
				return at(a, idx)
			}
			return at(b, idx)
		})
	}
}

func TestConvertRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 1))
	for iter := 0; iter < 40; iter++ {
		for _, from := range tensor.DTypes {
			shape := randShape(r, 4, 5)
			a := randTensor(t, r, from, shape, 50)
			for _, to := range tensor.DTypes {
				got, err := Convert(a, to)
				if err != nil {
					t.Fatalf("%v→%v: %v", from, to, err)
				}
				if got.DType() != to {
					t.Fatalf("%v→%v: dtype %v", from, to, got.DType())
				}
				// The tensor package's own conversion is the reference.
				ref, _ := tensor.Zeros(to, 1)
				checkAgainst(t, "convert "+from.String()+"→"+to.String(), got, shape, 0, func(idx []int) complex128 {
					_ = ref.SetComplex128(at(a, idx), 0)
					v, _ := ref.Complex128At(0)
					return v
				})
			}
		}
	}
}

// TestInto checks the ...Into variants on strided destinations against the
// allocating forms.
func TestInto(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 1))
	for iter := 0; iter < 100; iter++ {
		dt := numericDTypes[r.IntN(len(numericDTypes))]
		shape := randShape(r, 4, 5)
		a := randTensor(t, r, dt, shape, 3)
		b := randTensor(t, r, dt, broadcastPartner(r, shape), 3)
		dst := randView(t, r, dt, shape, 3)
		if err := BinaryInto(OpMul, dst, a, b); err != nil {
			t.Fatal(err)
		}
		want, _ := Mul(a, b)
		checkAgainst(t, "BinaryInto", dst, shape, 0, func(idx []int) complex128 { return at(want, idx) })

		if err := UnaryInto(OpNeg, dst, b); err != nil {
			t.Fatal(err)
		}
		checkAgainst(t, "UnaryInto", dst, shape, 0, func(idx []int) complex128 { return -at(b, idx) })

		bd := randView(t, r, tensor.Bool, shape, 1)
		if err := CompareInto(OpEq, bd, a, b); err != nil {
			t.Fatal(err)
		}
		checkAgainst(t, "CompareInto", bd, shape, 0, func(idx []int) complex128 { return b2c(at(a, idx) == at(b, idx)) })

		if err := SelectInto(dst, bd, a, b); err != nil {
			t.Fatal(err)
		}
		// Where a == b pick a, elsewhere b: b everywhere.
		checkAgainst(t, "SelectInto", dst, shape, 0, func(idx []int) complex128 { return at(b, idx) })

		if err := CopyInto(dst, b); err != nil {
			t.Fatal(err)
		}
		checkAgainst(t, "CopyInto", dst, shape, 0, func(idx []int) complex128 { return at(b, idx) })

		c128 := randView(t, r, tensor.Complex128, shape, 1)
		if err := ConvertInto(c128, a); err != nil {
			t.Fatal(err)
		}
		checkAgainst(t, "ConvertInto", c128, shape, 0, func(idx []int) complex128 { return at(a, idx) })

		// In place: dst = dst + dst.
		want, _ = Add(dst, dst)
		if err := BinaryInto(OpAdd, dst, dst, dst); err != nil {
			t.Fatal(err)
		}
		checkAgainst(t, "in place", dst, shape, 0, func(idx []int) complex128 { return at(want, idx) })
	}
}

func TestElementwiseSpecialValues(t *testing.T) {
	// Integer division floors (numpy's //) and gives 0 for a zero
	// divisor; MinInt / -1 wraps; see also TestIntDivFloors, TestIntPow.
	a, _ := tensor.New([]int32{7, -7, math.MinInt32, 2, -1, 1, 5}, 7)
	b, _ := tensor.New([]int32{0, 2, -1, -1, -3, -4, 0}, 7)
	q, err := Div(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := tensor.Values[int32](q); got[0] != 0 || got[1] != -4 || got[2] != math.MinInt32 || got[6] != 0 {
		t.Fatalf("int division: %v", got)
	}
	// NaN propagates through max/min; float division by zero is Inf.
	x, _ := tensor.New([]float64{math.NaN(), 1, 1}, 3)
	y, _ := tensor.New([]float64{0, math.NaN(), 0}, 3)
	m, _ := Maximum(x, y)
	if got, _ := tensor.Values[float64](m); !math.IsNaN(got[0]) || !math.IsNaN(got[1]) || got[2] != 1 {
		t.Fatalf("max with NaN: %v", got)
	}
	d, _ := Div(x, y)
	if got, _ := tensor.Values[float64](d); !math.IsInf(got[2], 1) {
		t.Fatalf("1/0: %v", got)
	}
	// Abs of complex has the real dtype.
	z, _ := tensor.New([]complex64{3 + 4i}, 1)
	az, _ := Abs(z)
	if az.DType() != tensor.Float32 {
		t.Fatalf("abs complex64 dtype %v", az.DType())
	}
	if got, _ := tensor.Values[float32](az); got[0] != 5 {
		t.Fatalf("abs: %v", got)
	}
}

func TestElementwiseScalarAndEmpty(t *testing.T) {
	s := tensor.Scalar(2.5)
	v, _ := tensor.New([]float64{1, 2, 3}, 3)
	got, err := Mul(s, v)
	if err != nil {
		t.Fatal(err)
	}
	if vals, _ := tensor.Values[float64](got); vals[2] != 7.5 || got.Rank() != 1 {
		t.Fatalf("scalar broadcast: %v", got)
	}
	ss, _ := Add(s, s)
	if ss.Rank() != 0 {
		t.Fatalf("rank-0 + rank-0 has rank %d", ss.Rank())
	}
	if x, _ := ss.Complex128At(); x != 5 {
		t.Fatalf("rank-0 add: %v", x)
	}
	e, _ := tensor.Zeros(tensor.Float64, 0, 3)
	r, err := Add(e, v)
	if err != nil || !r.Shape().Equal(tensor.Shape{0, 3}) {
		t.Fatalf("empty add: %v %v", r, err)
	}
	if _, err := Exp(e); err != nil {
		t.Fatal(err)
	}
}

func TestElementwiseErrors(t *testing.T) {
	f, _ := tensor.Zeros(tensor.Float64, 2, 3)
	f32, _ := tensor.Zeros(tensor.Float32, 2, 3)
	i, _ := tensor.Zeros(tensor.Int64, 2, 3)
	c, _ := tensor.Zeros(tensor.Complex128, 2, 3)
	bl, _ := tensor.Zeros(tensor.Bool, 2, 3)
	g, _ := tensor.Zeros(tensor.Float64, 4)
	checkErrors(t, []errCase{
		{"dtype mismatch", errOf(Add(f, f32)), tensor.ErrDType},
		{"exp int", errOf(Exp(i)), tensor.ErrDType},
		{"lt complex", errOf(Lt(c, c)), tensor.ErrDType},
		{"max complex", errOf(Maximum(c, c)), tensor.ErrDType},
		{"add bool", errOf(Add(bl, bl)), tensor.ErrDType},
		{"neg bool", errOf(Neg(bl)), tensor.ErrDType},
		{"unknown op", errOf(Binary(BinaryOp(99), f, f)), tensor.ErrDType},
		{"unknown unary", errOf(Unary(UnaryOp(0), f)), tensor.ErrDType},
		{"select cond dtype", errOf(Select(f, f, f)), tensor.ErrDType},
		{"select value dtypes", errOf(Select(bl, f, i)), tensor.ErrDType},
		{"no broadcast", errOf(Add(f, g)), tensor.ErrShape},
		{"nil", errOf(Add(nil, f)), tensor.ErrLayout},
		{"into shape", BinaryInto(OpAdd, g, f, f), tensor.ErrShape},
		{"into dtype", BinaryInto(OpAdd, i, f, f), tensor.ErrDType},
		{"compare into dtype", CompareInto(OpEq, f, f, f), tensor.ErrDType},
		{"unary into dtype", UnaryInto(OpAbs, c, c), tensor.ErrDType},
		{"convert invalid", errOf(Convert(f, tensor.Invalid)), tensor.ErrDType},
		{"copy dtype", CopyInto(f, i), tensor.ErrDType},
		{"copy shape", CopyInto(f, g), tensor.ErrShape},
		{"broadcast dst", CopyInto(mustBroadcast(t, g, 3, 4), g), tensor.ErrLayout},
	})
}

// errCase is the error of a call and the kind it must wrap.
type errCase struct {
	name string
	err  error
	kind error
}

// checkErrors checks that every error wraps its kind and is a
// *KernelError.
func checkErrors(t *testing.T, cases []errCase) {
	t.Helper()
	for _, tc := range cases {
		if !errors.Is(tc.err, tc.kind) {
			t.Errorf("%s: err %v, want %v", tc.name, tc.err, tc.kind)
		}
		var ke *KernelError
		if !errors.As(tc.err, &ke) {
			t.Errorf("%s: %T is not a *KernelError", tc.name, tc.err)
		}
	}
}

func errOf(_ *tensor.Tensor, err error) error { return err }

func mustBroadcast(t *testing.T, a *tensor.Tensor, shape ...int) *tensor.Tensor {
	b, err := a.BroadcastTo(shape...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLargeStridedOperands covers the path that first densifies operands
// read with a large innermost stride (big enough tensors only).
func TestLargeStridedOperands(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 1))
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Complex128, tensor.Int64} {
		a := randView(t, r, dt, tensor.Shape{100, 230}, 5)
		bp := randView(t, r, dt, tensor.Shape{230, 100}, 5)
		b := bp.T()
		sum, err := Add(a, b)
		if err != nil {
			t.Fatal(err)
		}
		checkAgainst(t, "add transposed "+dt.String(), sum, tensor.Shape{100, 230}, tolerance(dt), func(idx []int) complex128 {
			return roundTo(dt, at(a, idx)+at(b, idx))
		})
		c, _ := Compare(OpEq, b, b)
		if r, _ := Reduce(ReduceMin, mustConvert(t, c, tensor.Int32), nil, false); r == nil {
			t.Fatal("reduce failed")
		} else if v, _ := r.Complex128At(); v != 1 {
			t.Fatalf("b == b is not all true")
		}
		s, err := Select(c, b, a)
		if err != nil {
			t.Fatal(err)
		}
		checkAgainst(t, "select transposed", s, tensor.Shape{100, 230}, 0, func(idx []int) complex128 { return at(b, idx) })
	}
}

func mustConvert(t *testing.T, a *tensor.Tensor, dt tensor.DType) *tensor.Tensor {
	c, err := Convert(a, dt)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestConvenience checks that every wrapper calls the operation it names.
func TestConvenience(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 1))
	a := randTensor(t, r, tensor.Float64, tensor.Shape{3, 4}, 2)
	b := randTensor(t, r, tensor.Float64, tensor.Shape{4}, 2)
	pa, _ := Abs(a) // positive operands for log and sqrt
	same := func(what string, got *tensor.Tensor, err error, want *tensor.Tensor, werr error) {
		t.Helper()
		if err != nil || werr != nil {
			t.Fatalf("%s: %v / %v", what, err, werr)
		}
		if e := tensor.CheckClose(got, want, 0, 0); e != nil || got.DType() != want.DType() {
			t.Fatalf("%s: %v", what, e)
		}
	}
	bin := map[BinaryOp]func(a, b *tensor.Tensor) (*tensor.Tensor, error){
		OpAdd: Add, OpSub: Sub, OpMul: Mul, OpDiv: Div, OpPow: Pow, OpMax: Maximum, OpMin: Minimum,
	}
	for op, f := range bin {
		g, err := f(pa, b)
		w, werr := Binary(op, pa, b)
		same(op.String(), g, err, w, werr)
	}
	un := map[UnaryOp]func(a *tensor.Tensor) (*tensor.Tensor, error){
		OpNeg: Neg, OpConj: Conj, OpAbs: Abs, OpExp: Exp, OpLog: Log, OpSqrt: Sqrt,
	}
	for op, f := range un {
		g, err := f(pa)
		w, werr := Unary(op, pa)
		same(op.String(), g, err, w, werr)
	}
	cmp := map[CompareOp]func(a, b *tensor.Tensor) (*tensor.Tensor, error){
		OpEq: Eq, OpNe: Ne, OpLt: Lt, OpLe: Le, OpGt: Gt, OpGe: Ge,
	}
	for op, f := range cmp {
		g, err := f(a, b)
		w, werr := Compare(op, a, b)
		same(op.String(), g, err, w, werr)
	}
	red := map[ReduceOp]func(a *tensor.Tensor, axes ...int) (*tensor.Tensor, error){
		ReduceSum: Sum, ReduceProd: Prod, ReduceMax: Max, ReduceMin: Min, ReduceMean: Mean,
	}
	for op, f := range red {
		g, err := f(a, 1)
		w, werr := Reduce(op, a, []int{1}, false)
		same(op.String(), g, err, w, werr)
	}
	for _, s := range []fmtStringer{OpAdd, OpNeg, OpEq, ReduceSum, BinaryOp(99), UnaryOp(0), CompareOp(42), ReduceOp(9)} {
		if s.String() == "" {
			t.Fatalf("empty name for %#v", s)
		}
	}
}

type fmtStringer interface{ String() string }
