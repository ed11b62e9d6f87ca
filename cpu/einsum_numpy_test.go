package cpu_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/tensor"
)

const numpyScript = `
import json, sys
import numpy as np
cases = json.load(sys.stdin)
res = []
for c in cases:
    ops = []
    for shape, re, im in zip(c["shapes"], c["re"], c["im"]):
        a = np.array(re, dtype=np.float64)
        if c["dtype"].startswith("complex"):
            a = a + 1j * np.array(im, dtype=np.float64)
        ops.append(a.reshape(tuple(shape or ())).astype(c["dtype"]))
    try:
        r = np.asarray(np.einsum(c["eq"], *ops))
        res.append({"shape": list(r.shape), "re": r.real.astype(np.float64).ravel().tolist(),
                    "im": (r.imag.astype(np.float64).ravel().tolist() if np.iscomplexobj(r) else [])})
    except Exception as e:
        res.append({"error": str(e)})
json.dump(res, sys.stdout)
`

type npCase struct {
	Eq     string      `json:"eq"`
	Shapes [][]int     `json:"shapes"`
	DType  string      `json:"dtype"`
	Re     [][]float64 `json:"re"`
	Im     [][]float64 `json:"im"`
}

type npResult struct {
	Shape []int     `json:"shape"`
	Re    []float64 `json:"re"`
	Im    []float64 `json:"im"`
	Error string    `json:"error"`
}

// broadcastNamed gives a few named axes of c extent 1, which numpy (and
// torch) broadcast against the label's extent elsewhere. Repeated labels
// (diagonals) and operands with an ellipsis keep their extents.
func broadcastNamed(r *rand.Rand, c *genCase) {
	e, err := einsum.Parse(c.eq)
	if err != nil {
		return
	}
	for i, t := range e.Inputs {
		if t.Ellipsis >= 0 || i >= len(c.shapes) || len(t.Labels) != len(c.shapes[i]) {
			continue
		}
		for ax, l := range t.Labels {
			n := 0
			for _, x := range t.Labels {
				if x == l {
					n++
				}
			}
			if n == 1 && r.IntN(4) == 0 {
				c.shapes[i] = slices.Clone(c.shapes[i])
				c.shapes[i][ax] = 1
			}
		}
	}
}

// TestAgainstNumpy compares planning and CPU execution with numpy.einsum on seeded random
// equations when /usr/bin/python3 with numpy is available.
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
	dts := []tensor.DType{tensor.Float64, tensor.Complex128, tensor.Float32, tensor.Complex64, tensor.Int64}
	var cases []npCase
	var gens []genCase
	var ops [][]*tensor.Tensor
	for len(cases) < n {
		c := genEquation(r, true)
		if lhs, out, ok := strings.Cut(c.eq, "->"); ok && strings.Contains(lhs, "...") && !strings.Contains(out, "...") {
			c.eq += "..." // numpy needs the ellipsis in an explicit output
		}
		if r.IntN(3) == 0 {
			broadcastNamed(r, &c)
		}
		dt := dts[r.IntN(len(dts))]
		nc := npCase{Eq: c.eq, Shapes: c.shapes, DType: dt.String()}
		var os []*tensor.Tensor
		for _, s := range c.shapes {
			x := randOperand(t, r, dt, s)
			v := x.Complex128Values()
			re, im := make([]float64, len(v)), make([]float64, len(v))
			for i, z := range v {
				re[i], im[i] = real(z), imag(z)
			}
			nc.Re, nc.Im = append(nc.Re, re), append(nc.Im, im)
			os = append(os, x)
		}
		cases, gens, ops = append(cases, nc), append(gens, c), append(ops, os)
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
		got, err := contract(gens[i], ops[i])
		if res[i].Error != "" {
			if err == nil {
				t.Errorf("%q shapes %v: numpy fails (%s) but Contract succeeds", c.Eq, c.Shapes, res[i].Error)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q shapes %v (%s): %v", c.Eq, c.Shapes, gens[i].desc, err)
			continue
		}
		vals := make([]complex128, len(res[i].Re))
		for j := range vals {
			vals[j] = complex(res[i].Re[j], 0)
			if len(res[i].Im) > 0 {
				vals[j] += complex(0, res[i].Im[j])
			}
		}
		want, err := tensor.New(vals, res[i].Shape...)
		if err != nil {
			t.Fatal(err)
		}
		dt, _ := tensor.ParseDType(c.DType)
		rtol, atol := tolFor(dt)
		if err := tensor.CheckClose(got, want, rtol, atol); err != nil {
			t.Errorf("%q shapes %v %s (%s): %v", c.Eq, c.Shapes, c.DType, gens[i].desc, err)
		}
		compared++
	}
	t.Logf("compared %d of %d equations with numpy", compared, len(cases))
}
