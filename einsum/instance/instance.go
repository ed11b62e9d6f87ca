// Package instance reads einsum benchmark instances (the JSON format of
// tensor4all/tenferro-benchmark, as in shared/einsum-instances) and builds
// seeded, scaled operands for them.
package instance

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/goferro/goferro/tensor"
)

// StoredPath is one of an instance's stored contraction paths.
type StoredPath struct {
	Path       [][]int `json:"path"`
	Log10Flops float64 `json:"log10_flops"`
	Log2Size   float64 `json:"log2_size"`
}

// Instance is one benchmark einsum.
type Instance struct {
	Name      string                `json:"name"`
	Format    string                `json:"format_string"`
	RowMajor  string                `json:"format_string_rowmajor"`
	Shapes    [][]int               `json:"shapes"`
	DType     string                `json:"dtype"`
	Paths     map[string]StoredPath `json:"paths"`
	NumTensor int                   `json:"num_tensors"`
}

// Equation returns the row-major equation (format_string_rowmajor when
// present, else format_string).
func (in *Instance) Equation() string {
	if in.RowMajor != "" {
		return in.RowMajor
	}
	return in.Format
}

// Load reads and checks one instance file.
func Load(file string) (*Instance, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var in Instance
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, fmt.Errorf("instance %s: %w: %v", file, tensor.ErrFormat, err)
	}
	if in.Format == "" || in.Shapes == nil {
		return nil, fmt.Errorf("instance %s: %w: not an einsum instance (no format_string or shapes)", file, tensor.ErrFormat)
	}
	if in.Name == "" {
		in.Name = strings.TrimSuffix(file, ".json")
	}
	return &in, nil
}

// LoadDir reads every instance file (*.json) in dir, in name order,
// except permutation_patterns.json, which holds no instance.
func LoadDir(dir string) ([]*Instance, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var out []*Instance
	for _, f := range files {
		if filepath.Base(f) == "permutation_patterns.json" {
			continue
		}
		in, err := Load(f)
		if err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	return out, nil
}

// ElemType returns the instance's dtype (float64 when unset).
func (in *Instance) ElemType() (tensor.DType, error) {
	if in.DType == "" {
		return tensor.Float64, nil
	}
	return tensor.ParseDType(in.DType)
}

// Inputs builds seeded uniform [0, 1) operands (both parts for complex),
// each multiplied by 1 / (0.5 · Π_l d_l^(1/c_l)) over its labels l, where
// c_l is the number of operands carrying l — the scaling of
// einsum-peers.py, which keeps the contracted value near 1.
func (in *Instance) Inputs(seed uint64) ([]*tensor.Tensor, error) {
	dt, err := in.ElemType()
	if err != nil {
		return nil, err
	}
	eq := in.Equation()
	lhs, _, _ := strings.Cut(eq, "->")
	terms := strings.Split(lhs, ",")
	if len(terms) != len(in.Shapes) {
		return nil, fmt.Errorf("instance %s: %w: %d terms for %d shapes", in.Name, tensor.ErrShape, len(terms), len(in.Shapes))
	}
	count := map[rune]int{}
	size := map[rune]int{}
	for i, t := range terms {
		rs := []rune(t)
		if len(rs) != len(in.Shapes[i]) {
			return nil, fmt.Errorf("instance %s: %w: term %d %q has rank %d, shape %v", in.Name, tensor.ErrShape, i, t, len(rs), in.Shapes[i])
		}
		for j, r := range rs {
			count[r]++
			size[r] = in.Shapes[i][j]
		}
	}
	out := make([]*tensor.Tensor, len(terms))
	for i, t := range terms {
		scale := 0.5
		for _, r := range t {
			scale *= math.Pow(float64(size[r]), 1/float64(count[r]))
		}
		x, err := tensor.Rand(tensor.NewRNG(seed*1000003+uint64(i)), dt, in.Shapes[i]...)
		if err != nil {
			return nil, err
		}
		scaleInPlace(x, 1/scale)
		out[i] = x
	}
	return out, nil
}

func scaleInPlace(x *tensor.Tensor, s float64) {
	switch b := x.Data().(type) {
	case []float32:
		for i := range b {
			b[i] *= float32(s)
		}
	case []float64:
		for i := range b {
			b[i] *= s
		}
	case []complex64:
		for i := range b {
			b[i] *= complex(float32(s), 0)
		}
	case []complex128:
		for i := range b {
			b[i] *= complex(s, 0)
		}
	}
}

// PathNames returns the stored strategy names in sorted order.
func (in *Instance) PathNames() []string {
	var n []string
	for k := range in.Paths {
		n = append(n, k)
	}
	slices.Sort(n)
	return n
}
