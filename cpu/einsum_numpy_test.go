package cpu_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/graph/ref"
	"github.com/goferro/goferro/tensor"
)

const numpyScript = `
import json, sys
import numpy as np
if hasattr(np, "_set_promotion_state"):
    # numpy 1.x promotes 0-d operands by value; goferro follows numpy 2
    # (NEP 50), which promotes every operand by its dtype.
    np._set_promotion_state("weak")
cases = json.load(sys.stdin)
res = []
for c in cases:
    ops = []
    for shape, dt, re, im in zip(c["shapes"], c["dtypes"], c["re"], c["im"]):
        a = np.array(re, dtype=np.float64)
        if dt.startswith("complex"):
            a = a + 1j * np.array(im, dtype=np.float64)
        ops.append(a.reshape(tuple(shape or ())).astype(dt))
    try:
        r = np.asarray(np.einsum(c["eq"], *ops))
        res.append({"shape": list(r.shape), "dtype": str(r.dtype), "re": r.real.astype(np.float64).ravel().tolist(),
                    "im": (r.imag.astype(np.float64).ravel().tolist() if np.iscomplexobj(r) else [])})
    except Exception as e:
        res.append({"error": str(e)})
json.dump(res, sys.stdout)
`

type npCase struct {
	Eq     string      `json:"eq"`
	Shapes [][]int     `json:"shapes"`
	DTypes []string    `json:"dtypes"`
	Re     [][]float64 `json:"re"`
	Im     [][]float64 `json:"im"`
}

type npResult struct {
	Shape []int     `json:"shape"`
	DType string    `json:"dtype"`
	Re    []float64 `json:"re"`
	Im    []float64 `json:"im"`
	Error string    `json:"error"`
}

// broadcastNamed gives a few named labels of c extent 1 in one operand,
// which numpy (and torch) broadcast against the label's extent elsewhere;
// a label repeated in the operand (a diagonal) gets extent 1 on all its
// axes there. Operands with an ellipsis keep their extents.
func broadcastNamed(r *rand.Rand, c *genCase) {
	e, err := einsum.Parse(c.eq)
	if err != nil {
		return
	}
	for i, t := range e.Inputs {
		if t.Ellipsis >= 0 || i >= len(c.shapes) || len(t.Labels) != len(c.shapes[i]) {
			continue
		}
		for _, l := range t.Labels {
			if r.IntN(4) != 0 {
				continue
			}
			c.shapes[i] = slices.Clone(c.shapes[i])
			for ax, x := range t.Labels {
				if x == l {
					c.shapes[i][ax] = 1
				}
			}
		}
	}
}

// numpyEdgeCases are the ellipsis and broadcasting rules where goferro
// once differed from numpy.einsum: an ellipsis an explicit output leaves
// out (numpy refuses, even for extent-1 axes), an output ellipsis with
// none in the inputs (it stands for no axes), and diagonals that broadcast
// from extent 1 (but not within their operand).
var numpyEdgeCases = []struct {
	eq     string
	shapes [][]int
}{
	{"...i->i", [][]int{{2, 3}}},
	{"...i->i", [][]int{{1, 3}}},
	{"...i->i", [][]int{{3}}},
	{"i...->", [][]int{{3, 2}}},
	{"...i,...i->i", [][]int{{3}, {2, 3}}},
	{"i,...->i", [][]int{{2}, {3}}},
	{"i->...", [][]int{{3}}},
	{"i,j->...", [][]int{{2}, {3}}},
	{"i,j->j...i", [][]int{{2}, {3}}},
	{"ii,i", [][]int{{1, 1}, {3}}},
	{"ii,i->i", [][]int{{1, 1}, {3}}},
	{"ii,ii->i", [][]int{{1, 1}, {3, 3}}},
	{"iij,ij->ij", [][]int{{1, 1, 2}, {3, 2}}},
	{"iji,j->ij", [][]int{{1, 2, 1}, {2}}},
	{"ii->i", [][]int{{1, 3}}},
	{"ii,i->i", [][]int{{1, 3}, {3}}},
}

// TestAgainstNumpy compares planning, CPU execution and graph.Einsum's
// lowering with numpy.einsum on seeded random equations, over one or mixed
// dtypes, when /usr/bin/python3 with numpy is available: results, result
// dtypes, and which cases are errors.
func TestAgainstNumpy(t *testing.T) {
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	if err := exec.Command(py, "-c", "import numpy").Run(); err != nil {
		t.Skip("numpy not importable")
	}
	r := rand.New(rand.NewPCG(7, 11))
	n := 400
	if testing.Short() {
		n = 100
	}
	var cases []npCase
	var gens []genCase
	var ops [][]*tensor.Tensor
	add := func(c genCase, dts []tensor.DType) {
		nc := npCase{Eq: c.eq, Shapes: c.shapes}
		var os []*tensor.Tensor
		for k, s := range c.shapes {
			x := randOperand(t, r, dts[k], s)
			v := x.Complex128Values()
			re, im := make([]float64, len(v)), make([]float64, len(v))
			for i, z := range v {
				re[i], im[i] = real(z), imag(z)
			}
			nc.DTypes = append(nc.DTypes, dts[k].String())
			nc.Re, nc.Im = append(nc.Re, re), append(nc.Im, im)
			os = append(os, x)
		}
		cases, gens, ops = append(cases, nc), append(gens, c), append(ops, os)
	}
	for _, ec := range numpyEdgeCases {
		add(genCase{eq: ec.eq, shapes: ec.shapes, desc: "edge case"}, slices.Repeat([]tensor.DType{tensor.Float64}, len(ec.shapes)))
	}
	for len(cases) < n {
		c := genEquation(r, true)
		// An explicit output without "..." is an error when an input's
		// ellipsis stands for axes; with "..." but no input ellipsis, it
		// stands for none.
		if lhs, out, ok := strings.Cut(c.eq, "->"); ok && strings.Contains(lhs, "...") && r.IntN(6) == 0 {
			c.eq = lhs + "->" + strings.Replace(out, "...", "", 1)
		} else if ok && !strings.Contains(lhs, "...") && r.IntN(8) == 0 {
			c.eq += "..."
		}
		if r.IntN(3) == 0 {
			broadcastNamed(r, &c)
		}
		// One dtype for all operands, or (a third of the cases) one each,
		// which numpy promotes to their np.result_type.
		dts := make([]tensor.DType, len(c.shapes))
		for k := range dts {
			dts[k] = tensor.DTypes[r.IntN(len(tensor.DTypes))]
			if k > 0 && r.IntN(3) > 0 {
				dts[k] = dts[0]
			}
		}
		add(c, dts)
	}
	in, _ := json.Marshal(cases)
	cmd := exec.Command(py, "-c", numpyScript)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	outb, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, stderr.String())
	}
	var res []npResult
	if err := json.Unmarshal(outb, &res); err != nil {
		t.Fatal(err)
	}
	compared := 0
	for i, c := range cases {
		var want *tensor.Tensor
		if res[i].Error == "" {
			vals := make([]complex128, len(res[i].Re))
			for j := range vals {
				vals[j] = complex(res[i].Re[j], 0)
				if len(res[i].Im) > 0 {
					vals[j] += complex(0, res[i].Im[j])
				}
			}
			if want, err = tensor.New(vals, res[i].Shape...); err != nil {
				t.Fatal(err)
			}
		}
		// cpu's executor, and graph.Einsum's lowering run by the
		// reference interpreter.
		for _, run := range []struct {
			name string
			f    func() (*tensor.Tensor, error)
		}{
			{"Contract", func() (*tensor.Tensor, error) { return contract(gens[i], ops[i]) }},
			{"graph.Einsum", func() (*tensor.Tensor, error) { return graphEinsum(c.Eq, ops[i]) }},
		} {
			got, err := run.f()
			switch {
			case want == nil && err == nil:
				t.Errorf("%q shapes %v dtypes %v: numpy fails (%s) but %s succeeds", c.Eq, c.Shapes, c.DTypes, res[i].Error, run.name)
			case want == nil:
			case err != nil:
				t.Errorf("%q shapes %v dtypes %v (%s): %s: %v", c.Eq, c.Shapes, c.DTypes, gens[i].desc, run.name, err)
			case got.DType().String() != res[i].DType:
				t.Errorf("%q shapes %v dtypes %v: %s gives %v, numpy %s", c.Eq, c.Shapes, c.DTypes, run.name, got.DType(), res[i].DType)
			default:
				rtol, atol := tolFor(got.DType())
				if err := tensor.CheckClose(got, want, rtol, atol); err != nil {
					t.Errorf("%q shapes %v dtypes %v (%s): %s: %v", c.Eq, c.Shapes, c.DTypes, gens[i].desc, run.name, err)
				}
			}
		}
		if want != nil {
			compared++
		}
	}
	t.Logf("compared %d of %d equations with numpy (the others fail in both)", compared, len(cases))
}

// graphEinsum compiles graph.Einsum over inputs of the operands' types and
// runs the program with the reference interpreter.
func graphEinsum(eq string, ops []*tensor.Tensor) (*tensor.Tensor, error) {
	b := graph.NewBuilder()
	xs := make([]graph.Value, len(ops))
	for i, t := range ops {
		xs[i] = b.Input(fmt.Sprint("x", i), t.DType(), graph.FromTensorShape(t.Shape()))
	}
	p, err := graph.Compile(graph.Einsum(eq, xs...))
	if err != nil {
		return nil, err
	}
	res, err := ref.Run(p, ops...)
	if err != nil {
		return nil, err
	}
	return res[0], nil
}
