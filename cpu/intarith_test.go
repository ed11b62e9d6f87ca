package cpu_test

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/tensor"
)

// intOperands returns pairs of int64 values (edge cases and random ones)
// that fit in bits bits, as two tensors of dtype dt.
func intOperands(t *testing.T, dt tensor.DType, bits int) (x, y *tensor.Tensor, xs, ys []int64) {
	t.Helper()
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if bits == 32 {
		lo, hi = math.MinInt32, math.MaxInt32
	}
	edges := []int64{0, 1, -1, 2, -2, 3, -3, 7, -7, lo, lo + 1, hi, hi - 1}
	for _, a := range edges {
		for _, b := range edges {
			xs, ys = append(xs, a), append(ys, b)
		}
	}
	r := rand.New(rand.NewPCG(13, 11))
	for range 2000 {
		a, b := r.Int64(), r.Int64()>>r.IntN(64)
		if bits == 32 {
			a, b = int64(int32(a)), int64(int32(b))
		}
		xs, ys = append(xs, a), append(ys, b)
	}
	x, _ = cpu.Convert(mustTensor(t, xs), dt)
	y, _ = cpu.Convert(mustTensor(t, ys), dt)
	return x, y, xs, ys
}

func mustTensor(t *testing.T, v []int64) *tensor.Tensor {
	t.Helper()
	x, err := tensor.New(v, len(v))
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// TestIntDivFloors checks integer Div against numpy's floor division,
// defined exactly: q = x // y is the integer with y·q <= x < y·q + y (for
// y > 0; reversed for y < 0), computed without overflow in math/big; x // 0
// is 0, and MinInt // -1 wraps to MinInt, as in numpy.
func TestIntDivFloors(t *testing.T) {
	for _, c := range []struct {
		dt   tensor.DType
		bits int
	}{{tensor.Int32, 32}, {tensor.Int64, 64}} {
		x, y, xs, ys := intOperands(t, c.dt, c.bits)
		q, err := cpu.Div(x, y)
		if err != nil {
			t.Fatal(err)
		}
		q64, _ := cpu.Convert(q, tensor.Int64)
		got, _ := tensor.Values[int64](q64)
		for i, a := range xs {
			b := ys[i]
			var want int64
			switch {
			case b == 0:
				want = 0
			case b == -1 && a == -1<<(c.bits-1):
				want = a
			default:
				want = floorDiv(a, b)
			}
			if got[i] != want {
				t.Errorf("%v: %d // %d = %d, want %d", c.dt, a, b, got[i], want)
			}
		}
	}
	// numpy: np.array([-7, 7, -7, 7]) // np.array([2, -2, -2, 2]).
	x, _ := tensor.New([]int64{-7, 7, -7, 7}, 4)
	y, _ := tensor.New([]int64{2, -2, -2, 2}, 4)
	q, _ := cpu.Div(x, y)
	if got, _ := tensor.Values[int64](q); got[0] != -4 || got[1] != -4 || got[2] != 3 || got[3] != 3 {
		t.Errorf("[-7 7 -7 7] // [2 -2 -2 2] = %v, numpy [-4 -4 3 3]", got)
	}
}

// floorDiv finds q with y·q <= x < y·q + y (y > 0) or y·q >= x > y·q + y
// (y < 0) by testing the truncated quotient and the one below it.
func floorDiv(x, y int64) int64 {
	bx, by := big.NewInt(x), big.NewInt(y)
	t := new(big.Int).Quo(bx, by)
	for _, q := range []*big.Int{t, new(big.Int).Sub(t, big.NewInt(1))} {
		p := new(big.Int).Mul(by, q)
		next := new(big.Int).Add(p, by)
		if y > 0 && p.Cmp(bx) <= 0 && bx.Cmp(next) < 0 || y < 0 && p.Cmp(bx) >= 0 && bx.Cmp(next) > 0 {
			return q.Int64()
		}
	}
	panic("no floor quotient")
}

// TestIntPowNegativeExponent checks that integer Pow refuses negative
// exponents with tensor.ErrDomain (numpy raises "Integers to negative
// integer powers are not allowed"), also when only one element of a
// broadcast or strided exponent is negative, and computes the rest.
func TestIntPowNegativeExponent(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Int32, tensor.Int64} {
		x, _ := cpu.Convert(mustTensor(t, []int64{1, -1, 2, 3}), dt)
		bad, _ := cpu.Convert(mustTensor(t, []int64{0, 2, -1, 1, 5, 7}), dt)
		strided, _ := bad.Slice(tensor.Range{Start: 0, Stop: 4, Step: 1}) // (0 2 -1 1)
		if _, err := cpu.Pow(x, strided); !errors.Is(err, tensor.ErrDomain) {
			t.Errorf("%v: Pow with a negative exponent: %v, want ErrDomain", dt, err)
		}
		one, _ := bad.Slice(tensor.R(2, 3))
		if _, err := cpu.Pow(x, one); !errors.Is(err, tensor.ErrDomain) {
			t.Errorf("%v: Pow with a broadcast negative exponent: %v, want ErrDomain", dt, err)
		}
		dst, _ := tensor.Zeros(dt, 4)
		if err := cpu.BinaryInto(cpu.OpPow, dst, x, strided); !errors.Is(err, tensor.ErrDomain) {
			t.Errorf("%v: BinaryInto(pow) with a negative exponent: %v, want ErrDomain", dt, err)
		}
		every, _ := bad.Slice(tensor.Range{Start: 1, Stop: 6, Step: 2}) // (2 1 7)
		base, _ := x.Slice(tensor.R(1, 4))                              // (-1 2 3)
		p, err := cpu.Pow(base, every)
		if err != nil {
			t.Fatalf("%v: %v", dt, err)
		}
		p64, _ := cpu.Convert(p, tensor.Int64)
		if got, _ := tensor.Values[int64](p64); got[0] != 1 || got[1] != 2 || got[2] != 2187 {
			t.Errorf("%v: [-1 2 3] ** [2 1 7] = %v, want [1 2 2187]", dt, got)
		}
	}
}
