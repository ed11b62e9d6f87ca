package tensor_test

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/goferro/goferro/tensor"
)

func ExampleNew() {
	// New wraps the slice without copying it, row-major.
	x, err := tensor.New([]float64{1, 2, 3, 4, 5, 6}, 2, 3)
	if err != nil {
		panic(err)
	}
	fmt.Println(x.Shape(), x.DType(), x.Strides())
	fmt.Println(x)
	// Output:
	// (2, 3) float64 [3 1]
	// [[1 2 3]
	//  [4 5 6]]
}

func ExampleNew_error() {
	_, err := tensor.New([]float64{1, 2, 3}, 2, 2)
	fmt.Println(errors.Is(err, tensor.ErrShape))
	fmt.Println(err)
	// Output:
	// true
	// tensor.New: 3 elements do not fill shape (2, 2) (4 elements)
}

func ExampleTensor_Permute() {
	x, _ := tensor.Arange(tensor.Int32, 6)
	x, _ = x.Reshape(2, 3)
	// Axis i of the result is axis perm[i] of x: here, the transpose. It
	// is a view: only the strides change.
	y, _ := x.Permute(1, 0)
	fmt.Println(y.Shape(), y.Strides(), y.IsContiguous())
	fmt.Println(y)
	// Output:
	// (3, 2) [1 3] false
	// [[0 3]
	//  [1 4]
	//  [2 5]]
}

func ExampleTensor_Reshape() {
	x, _ := tensor.Arange(tensor.Float32, 12)
	// A contiguous tensor reshapes as a view; -1 is inferred.
	y, _ := x.Reshape(3, -1)
	y.SetComplex128(100, 0, 0)
	v, _ := x.Complex128At(0)
	fmt.Println(y.Shape(), real(v))
	// A transpose cannot be flattened without copying, so Reshape copies.
	z, _ := y.T().Reshape(12)
	z.SetComplex128(-1, 0)
	v, _ = x.Complex128At(0)
	fmt.Println(z, real(v))
	// Output:
	// (3, 4) 100
	// [-1 4 8 1 5 9 2 6 10 3 7 11] 100
}

func ExampleTensor_Slice() {
	x, _ := tensor.Arange(tensor.Int64, 10)
	a, _ := x.Slice(tensor.R(2, 5))                             // x[2:5]
	b, _ := x.Slice(tensor.Range{Full: true, Step: -3})         // x[::-3]
	c, _ := x.Slice(tensor.Range{Start: -2, Stop: 0, Step: -1}) // x[-2:0:-1]
	fmt.Println(a, b, c)
	// Output:
	// [2 3 4] [9 6 3 0] [8 7 6 5 4 3 2 1]
}

func ExampleTensor_BroadcastTo() {
	row, _ := tensor.New([]int32{1, 2, 3}, 3)
	// New axes and extent-1 axes get stride 0: nothing is copied.
	b, _ := row.BroadcastTo(2, 3)
	fmt.Println(b.Strides())
	fmt.Println(b)
	// Output:
	// [0 1]
	// [[1 2 3]
	//  [1 2 3]]
}

func ExampleTensor_Diagonal() {
	m, _ := tensor.Arange(tensor.Float64, 9)
	m, _ = m.Reshape(3, 3)
	d, _ := m.Diagonal(0, 1)
	fmt.Println(d, d.Strides())
	// Output:
	// [0 4 8] [4]
}

func ExampleTensor_Squeeze() {
	x, _ := tensor.Zeros(tensor.Bool, 1, 3, 1)
	s, _ := x.Squeeze()
	u, _ := s.Unsqueeze(-1)
	fmt.Println(s.Shape(), u.Shape())
	// Output:
	// (3,) (3, 1)
}

func ExampleCopyInto() {
	m, _ := tensor.Arange(tensor.Int32, 4)
	m, _ = m.Reshape(2, 2)
	// Source and destination may overlap: this transposes in place.
	_ = tensor.CopyInto(m, m.T())
	fmt.Println(m)
	// Output:
	// [[0 2]
	//  [1 3]]
}

func ExampleBroadcastShapes() {
	s, _ := tensor.BroadcastShapes(tensor.Shape{2, 1, 4}, tensor.Shape{3, 1})
	fmt.Println(s)
	_, err := tensor.BroadcastShapes(tensor.Shape{2}, tensor.Shape{3})
	fmt.Println(errors.Is(err, tensor.ErrShape))
	// Output:
	// (2, 3, 4)
	// true
}

func ExampleWriteNpy() {
	x, _ := tensor.New([]complex64{1, 2i, -3}, 3)
	var buf bytes.Buffer
	if err := tensor.WriteNpy(&buf, x); err != nil {
		panic(err)
	}
	b := buf.Bytes()
	// Magic, version 1.0, header length, then the header dict padded with
	// spaces so that the data starts at a multiple of 64 bytes.
	hlen := int(b[8]) | int(b[9])<<8
	fmt.Printf("%q %d.%d data at %d\n", b[:6], b[6], b[7], 10+hlen)
	fmt.Printf("%s\n%d bytes\n", bytes.TrimRight(b[10:10+hlen], " \n"), len(b))
	// Output:
	// "\x93NUMPY" 1.0 data at 128
	// {'descr': '<c8', 'fortran_order': False, 'shape': (3,), }
	// 152 bytes
}

func ExampleReadNpy() {
	x, _ := tensor.Arange(tensor.Float64, 6)
	x, _ = x.Reshape(2, 3)
	var buf bytes.Buffer
	_ = tensor.WriteNpy(&buf, x)
	_ = tensor.WriteNpy(&buf, x.T().Clone().T()) // Fortran order

	// Arrays written one after another read back in turn.
	for {
		y, err := tensor.ReadNpy(&buf)
		if errors.Is(err, tensor.ErrFormat) && buf.Len() == 0 {
			break // clean end of input (err also matches io.EOF)
		}
		if err != nil {
			panic(err)
		}
		fmt.Println(y.Shape(), y.Strides(), y.Complex128Values())
	}
	// Output:
	// (2, 3) [3 1] [(0+0i) (1+0i) (2+0i) (3+0i) (4+0i) (5+0i)]
	// (2, 3) [1 2] [(0+0i) (1+0i) (2+0i) (3+0i) (4+0i) (5+0i)]
}

func ExampleReadNpy_malformed() {
	_, err := tensor.ReadNpy(bytes.NewReader([]byte("\x93NUMPY\x01\x00\x10\x00{'descr': '<f8'")))
	fmt.Println(errors.Is(err, tensor.ErrFormat))
	var e *tensor.Error
	if errors.As(err, &e) {
		fmt.Println(e.Op, e.Kind)
	}
	// Output:
	// true
	// ReadNpy tensor: bad format
}

func ExampleRand() {
	// The generator is explicit: NewRNG(seed) gives the same stream on
	// every platform, and one generator shared by several calls gives
	// independent tensors.
	rng := tensor.NewRNG(1)
	x := tensor.Must(tensor.Rand(rng, tensor.Int64, 2, 3))
	y := tensor.Must(tensor.Rand(rng, tensor.Int64, 2, 3))
	again := tensor.Must(tensor.Rand(tensor.NewRNG(1), tensor.Int64, 2, 3))
	fmt.Println(x.Shape(), tensor.AllClose(x, again, 0, 0), tensor.AllClose(x, y, 0, 0))
	// Output:
	// (2, 3) true false
}

func ExampleRandn() {
	// Standard normal values; complex ones have E|z|² = 1.
	z := tensor.Must(tensor.Randn(tensor.NewRNG(2), tensor.Complex128, 100000))
	var power float64
	for _, v := range z.Complex128Values() {
		power += real(v)*real(v) + imag(v)*imag(v)
	}
	fmt.Printf("mean |z|² = %.2f\n", power/float64(z.Len()))
	// Output:
	// mean |z|² = 1.00
}

func ExampleMust() {
	// Must is for literals, where an error is a bug.
	x := tensor.Must(tensor.New([]float64{1, 2, 3, 4}, 2, 2))
	fmt.Println(x)
	defer func() { fmt.Println("panic:", recover()) }()
	tensor.Must(tensor.New([]float64{1, 2, 3}, 2, 2))
	// Output:
	// [[1 2]
	//  [3 4]]
	// panic: tensor.New: 3 elements do not fill shape (2, 2) (4 elements)
}

func ExampleTensor_Format() {
	x := tensor.Must(tensor.New([]float64{1.5, -22.25, 3, 0.125}, 2, 2))
	// %v prints elements as fmt does; the float verbs take a precision
	// and align columns, as numpy does.
	fmt.Printf("%v\n%.3f\n%.2e\n", x, x, x)
	// Over 1000 elements, only the edges of each long axis are printed.
	big := tensor.Must(tensor.Arange(tensor.Float64, 3000))
	big = tensor.Must(big.Reshape(30, 100))
	fmt.Printf("%.0f\n", big)
	// Output:
	// [[1.5 -22.25]
	//  [3 0.125]]
	// [[  1.500 -22.250]
	//  [  3.000   0.125]]
	// [[ 1.50e+00 -2.22e+01]
	//  [ 3.00e+00  1.25e-01]]
	// [[   0    1    2 ...   97   98   99]
	//  [ 100  101  102 ...  197  198  199]
	//  [ 200  201  202 ...  297  298  299]
	//  ...
	//  [2700 2701 2702 ... 2797 2798 2799]
	//  [2800 2801 2802 ... 2897 2898 2899]
	//  [2900 2901 2902 ... 2997 2998 2999]]
}

func ExampleWriteNpz() {
	// An .npz archive holds named arrays, as numpy.savez writes them;
	// numpy.load(file)["weights"] reads one back.
	arrays := map[string]*tensor.Tensor{
		"weights": tensor.Must(tensor.New([]float32{0.5, -1, 2, 4}, 2, 2)),
		"steps":   tensor.Scalar(int64(3)),
	}
	var buf bytes.Buffer
	if err := tensor.WriteNpzCompressed(&buf, arrays); err != nil {
		panic(err)
	}
	back, err := tensor.ReadNpz(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		panic(err)
	}
	fmt.Println(back["weights"], back["steps"])
	// Output:
	// [[0.5 -1]
	//  [2 4]] 3
}
