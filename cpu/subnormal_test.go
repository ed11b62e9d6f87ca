package cpu_test

import (
	"context"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/graph/ref"
	"github.com/goferro/goferro/tensor"
)

// prec is the working precision of the big.Float references: enough that
// rounding them to float64 is exact but for ties no input here meets.
const prec = 300

func bigOf(x float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(x) }

// bigAtanhSum returns 2·atanh(z) = 2·Σ z^(2k+1)/(2k+1) for |z| <= 1/3.
func bigAtanhSum(z *big.Float) *big.Float {
	sum := new(big.Float).SetPrec(prec)
	z2 := new(big.Float).SetPrec(prec).Mul(z, z)
	pow := new(big.Float).SetPrec(prec).Set(z)
	for k := int64(0); k < prec/3; k++ { // each term is 9 times smaller

		term := new(big.Float).SetPrec(prec).Quo(pow, new(big.Float).SetInt64(2*k+1))
		sum.Add(sum, term)
		pow.Mul(pow, z2)
	}
	return sum.Mul(sum, new(big.Float).SetInt64(2))
}

// bigLn returns ln x for x > 0: x = m·2^e with m in [0.5, 1), ln m = 2
// atanh((m-1)/(m+1)) and ln 2 = 2 atanh(1/3), by their series.
func bigLn(x *big.Float) *big.Float {
	m := new(big.Float).SetPrec(prec)
	e := x.MantExp(m)
	one := new(big.Float).SetInt64(1)
	z := new(big.Float).SetPrec(prec).Quo(new(big.Float).SetPrec(prec).Sub(m, one), new(big.Float).SetPrec(prec).Add(m, one))
	r := bigAtanhSum(z)
	return r.Add(r, new(big.Float).SetPrec(prec).Mul(bigLn2, new(big.Float).SetInt64(int64(e))))
}

// bigLn2 is ln 2 = 2 atanh(1/3).
var bigLn2 = bigAtanhSum(new(big.Float).SetPrec(prec).Quo(new(big.Float).SetInt64(1), new(big.Float).SetInt64(3)))

func f64(x *big.Float) float64 { f, _ := x.Float64(); return f }

// bigAbs returns |a + bi| = sqrt(a² + b²).
func bigAbs(a, b float64) *big.Float {
	s := new(big.Float).SetPrec(prec).Mul(bigOf(a), bigOf(a))
	s.Add(s, new(big.Float).SetPrec(prec).Mul(bigOf(b), bigOf(b)))
	return s.Sqrt(s)
}

// subnormalRef is the exact unary op on x, from math/big or an identity:
// exp of a subnormal rounds to 1, and exp(a+bi) to 1+bi; the phase of a
// complex number is unchanged by scaling both parts by 2^600 into the
// normal range.
func subnormalRef(op string, z complex128, isComplex bool) complex128 {
	a, b := real(z), imag(z)
	if !isComplex {
		switch op {
		case "neg":
			return complex(-a, 0)
		case "conj":
			return complex(a, 0)
		case "abs":
			return complex(math.Abs(a), 0)
		case "exp":
			return 1
		case "square":
			return complex(f64(new(big.Float).SetPrec(prec).Mul(bigOf(a), bigOf(a))), 0)
		case "reciprocal":
			return complex(f64(new(big.Float).SetPrec(prec).Quo(bigOf(1), bigOf(a))), 0)
		case "log":
			if a < 0 {
				return complex(math.NaN(), 0)
			}
			return complex(f64(bigLn(bigOf(a))), 0)
		case "sqrt":
			if a < 0 {
				return complex(math.NaN(), 0)
			}
			return complex(f64(new(big.Float).SetPrec(prec).Sqrt(bigOf(a))), 0)
		}
	}
	switch op {
	case "neg":
		return -z
	case "conj":
		return complex(a, -b)
	case "abs":
		return complex(f64(bigAbs(a, b)), 0)
	case "exp":
		return complex(1, b)
	case "square":
		// (a² - b²) + 2ab·i
		re := new(big.Float).SetPrec(prec).Mul(bigOf(a), bigOf(a))
		re.Sub(re, new(big.Float).SetPrec(prec).Mul(bigOf(b), bigOf(b)))
		im := new(big.Float).SetPrec(prec).Mul(bigOf(2*a), bigOf(b))
		return complex(f64(re), f64(im))
	case "reciprocal":
		// (a - bi) / (a² + b²)
		d := bigAbs(a, b)
		d.Mul(d, d)
		re := new(big.Float).SetPrec(prec).Quo(bigOf(a), d)
		im := new(big.Float).SetPrec(prec).Quo(bigOf(-b), d)
		return complex(f64(re), f64(im))
	case "log":
		return complex(f64(bigLn(bigAbs(a, b))), math.Atan2(b*0x1p600, a*0x1p600))
	case "sqrt":
		// sqrt((|z|+a)/2) + i·sign(b)·sqrt((|z|-a)/2).
		r := bigAbs(a, b)
		re := new(big.Float).SetPrec(prec).Add(r, bigOf(a))
		im := new(big.Float).SetPrec(prec).Sub(r, bigOf(a))
		half := new(big.Float).SetFloat64(0.5)
		re.Sqrt(re.Mul(re, half))
		im.Sqrt(im.Mul(im, half))
		return complex(f64(re), math.Copysign(f64(im), b))
	}
	panic("no reference")
}

// subnormals returns float64 (bits 64) or float32 (bits 32) subnormals
// across the whole range: for every mantissa length, the smallest and
// largest mantissa of that length and random ones, with both signs.
func subnormals(r *rand.Rand, bits int) []float64 {
	mant := 52
	if bits == 32 {
		mant = 23
	}
	var xs []float64
	for e := range mant {
		lo, hi := uint64(1)<<e, uint64(1)<<(e+1)
		ms := []uint64{lo, hi - 1}
		for range 6 {
			ms = append(ms, lo+r.Uint64N(hi-lo))
		}
		for _, m := range ms {
			x := math.Float64frombits(m)
			if bits == 32 {
				x = float64(math.Float32frombits(uint32(m)))
			}
			xs = append(xs, x, -x)
		}
	}
	return xs
}

// ulpsOff reports how many units in the last place of dtype dt (at the
// larger magnitude of want's parts) got is from want, part by part; NaN
// matches NaN.
func ulpsOff(got, want complex128, single bool) float64 {
	scale := max(math.Abs(real(want)), math.Abs(imag(want)))
	ulp := math.Nextafter(scale, math.Inf(1)) - scale
	if single {
		s := float32(scale)
		ulp = float64(math.Nextafter32(s, float32(math.Inf(1))) - s)
	}
	worst := 0.0
	for _, p := range [][2]float64{{real(got), real(want)}, {imag(got), imag(want)}} {
		g, w := p[0], p[1]
		switch {
		case math.IsNaN(w) || math.IsNaN(g):
			if math.IsNaN(w) != math.IsNaN(g) {
				return math.Inf(1)
			}
		case g != w:
			worst = max(worst, math.Abs(g-w)/ulp)
		}
	}
	return worst
}

// TestUnarySubnormals checks every unary op of every float and complex
// dtype over the whole subnormal range (real inputs, and complex inputs
// with subnormal or zero parts) against exact references, within one unit
// in the last place (four for complex reciprocals): the CPU kernels (cpu.Unary), the CPU engine (which
// runs square and reciprocal as products and quotients) and the reference
// semantics (graph/ref). Go's math.Log is wrong there on amd64
// (golang/go#56600: log(5e-324) was -709.09, not -744.44), and
// cmplx.Sqrt(5e-324i) is 0.
func TestUnarySubnormals(t *testing.T) {
	rt, err := goferro.NewRuntime(goferro.WithEngine(cpu.NewEngine()))
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(13, 2))
	ops := []struct {
		name string
		g    func(graph.Value) graph.Value
		op   cpu.UnaryOp // 0: not a cpu.UnaryOp
	}{
		{"neg", graph.Neg, cpu.OpNeg}, {"conj", graph.Conj, cpu.OpConj}, {"abs", graph.Abs, cpu.OpAbs},
		{"exp", graph.Exp, cpu.OpExp}, {"log", graph.Log, cpu.OpLog}, {"sqrt", graph.Sqrt, cpu.OpSqrt},
		{"square", graph.Square, 0}, {"reciprocal", graph.Reciprocal, 0},
	}
	for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32, tensor.Complex128, tensor.Complex64} {
		single := dt == tensor.Float32 || dt == tensor.Complex64
		bits := 64
		if single {
			bits = 32
		}
		xs := subnormals(r, bits)
		var zs []complex128
		if dt.IsComplex() {
			for i, x := range xs {
				zs = append(zs, complex(x, 0), complex(0, x), complex(x, xs[(i*7+3)%len(xs)]))
			}
		} else {
			for _, x := range xs {
				zs = append(zs, complex(x, 0))
			}
		}
		in, err := tensor.Zeros(dt, len(zs))
		if err != nil {
			t.Fatal(err)
		}
		for i, z := range zs {
			in.SetComplex128(z, i)
		}
		for _, o := range ops {
			b := graph.NewBuilder()
			p, err := graph.Compile(o.g(b.Input("x", dt, graph.Dims(len(zs)))))
			if err != nil {
				t.Fatal(err)
			}
			outs := map[string]*tensor.Tensor{}
			res, err := ref.Run(p, in)
			if err != nil {
				t.Fatal(err)
			}
			outs["graph/ref"] = res[0]
			if res, err = rt.RunTensors(context.Background(), p, []*tensor.Tensor{in}); err != nil {
				t.Fatal(err)
			}
			outs["CPU engine"] = res[0]
			if o.op != 0 {
				if outs["cpu.Unary"], err = cpu.Unary(o.op, in); err != nil {
					t.Fatal(err)
				}
			}
			want := make([]complex128, len(zs))
			for i, z := range zs {
				want[i] = subnormalRef(o.name, z, dt.IsComplex())
				if single {
					want[i] = complex(float64(float32(real(want[i]))), float64(float32(imag(want[i]))))
				}
			}
			tol := 1.0
			if o.name == "reciprocal" && dt.IsComplex() {
				// Smith's division (Go's, and numpy's, which gives the
				// same bits here) is good to a few units.
				tol = 4
			}
			for name, out := range outs {
				vals := out.Complex128Values()
				bad := 0
				for i, z := range zs {
					if u := ulpsOff(vals[i], want[i], single); u > tol {
						if bad++; bad <= 3 {
							t.Errorf("%s %v %s(%v) = %v, want %v (%.3g ulps)", name, dt, o.name, z, vals[i], want[i], u)
						}
					}
				}
				if bad > 3 {
					t.Errorf("%s %v %s: %d of %d wrong", name, dt, o.name, bad, len(zs))
				}
			}
		}
	}
}
