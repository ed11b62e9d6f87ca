package path_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/einsum/instance"
	"github.com/goferro/goferro/einsum/path"
	"path/filepath"
)

func TestTune(t *testing.T) {
	if os.Getenv("TUNE") == "" {
		t.Skip()
	}
	files, _ := filepath.Glob("/work/shared/einsum-instances/[glst]*.json")
	for _, f := range files {
		in, _ := instance.Load(f)
		p, _ := einsum.NewPlan(in.Equation(), in.Shapes, einsum.WithPath(in.Paths["opt_flops"].Path))
		var net path.Network
		net.Sizes = p.Sizes
		net.Output = p.Output
		for _, pr := range p.Prep {
			net.Inputs = append(net.Inputs, pr.Labels)
		}
		line := fmt.Sprintf("%-40s %.2f |", in.Name[:min(40, len(in.Name))], p.Log10Flops())
		for _, w := range [][2]float64{{1, -1}, {1, 1.0 / 64}, {1, 1}, {0.5, -1}, {0, 1}, {2, 1.0 / 64}} {
			pp, err := path.Greedy(net, path.Options{MemoryWeight: w[0], FlopWeight: w[1]})
			if err != nil {
				line += " err"
				continue
			}
			c, _ := path.Evaluate(net, pp)
			line += fmt.Sprintf(" %.2f", c.Log10Flops())
		}
		t0 := time.Now()
		pp, _ := path.RandomGreedy(context.Background(), net, path.Options{Trials: 64, Time: 2 * time.Second})
		c, _ := path.Evaluate(net, pp)
		line += fmt.Sprintf(" | rg %.2f/%.1f (%v)", c.Log10Flops(), c.Log2Size(), time.Since(t0).Round(time.Millisecond))
		fmt.Println(line)
	}
}
