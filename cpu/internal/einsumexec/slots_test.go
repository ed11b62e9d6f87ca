package einsumexec

import (
	"os"
	"testing"

	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/einsum/instance"
)

// TestWorkspacePlacement lowers every einsum instance along its stored
// path and checks the workspace placement against a naive liveness walk:
// intermediates live at the same op never share memory, every one lies
// inside the workspace, and the workspace is at most 1.1× the most memory
// the intermediates hold at any one op (str_nw_mera_closed_120 needed
// 781 MiB of slots for 539 MiB live before placement by offsets).
func TestWorkspacePlacement(t *testing.T) {
	dir := "/work/shared/einsum-instances"
	if _, err := os.Stat(dir); err != nil {
		dir = "../../../../shared/einsum-instances"
	}
	ins, err := instance.LoadDir(dir)
	if err != nil {
		t.Skip("no instances:", err)
	}
	for _, in := range ins {
		p, err := einsum.NewPlan(in.Equation(), in.Shapes, einsum.WithPath(in.Paths["opt_flops"].Path))
		if err != nil {
			t.Fatal(err)
		}
		pr, err := Lower(p, true)
		if err != nil {
			t.Fatal(err)
		}
		prog := &pr.prog
		first := map[int]int{}
		end := map[int]int{}
		for i, o := range prog.ops {
			for _, x := range []int{o.dst, o.a, o.b} {
				if x < 0 || prog.regs[x].input >= 0 || prog.regs[x].output {
					continue
				}
				if _, ok := first[x]; !ok {
					first[x] = i
				}
				end[x] = i
			}
		}
		peak := 0
		for i := range prog.ops {
			var live []int
			held := 0
			for x := range first {
				if first[x] <= i && i <= end[x] {
					live = append(live, x)
					held += max(prog.regs[x].elems, 1)
				}
			}
			peak = max(peak, held)
			for a, x := range live {
				rx := &prog.regs[x]
				if rx.slot != 0 || rx.at < 0 || rx.at+max(rx.elems, 1) > prog.slotCaps[0] {
					t.Fatalf("%s: register %d at [%d, +%d) outside the workspace of %d", in.Name, x, rx.at, rx.elems, prog.slotCaps[0])
				}
				for _, y := range live[a+1:] {
					ry := &prog.regs[y]
					if rx.at < ry.at+max(ry.elems, 1) && ry.at < rx.at+max(rx.elems, 1) {
						t.Fatalf("%s: registers %d and %d, both live at op %d, overlap", in.Name, x, y, i)
					}
				}
			}
		}
		if w := pr.Workspace(); float64(w) > 1.1*float64(peak) {
			t.Errorf("%s: workspace of %d elements for at most %d live", in.Name, w, peak)
		}
	}
}
