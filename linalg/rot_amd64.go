//go:build amd64 && !purego && !goferro_noasm

package linalg

import "golang.org/x/sys/cpu"

//go:noescape
func rotPanels(z *float64, panels, stride, n int, c, s *float64)

func init() {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		rotPanelsAsm = rotPanels
	}
}
