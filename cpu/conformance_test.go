package cpu_test

import (
	"testing"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/tensor"
)

// TestConformance holds the CPU engine to the driver contract. Its memory
// is host memory, so it has no transfer routes.
func TestConformance(t *testing.T) {
	goferrotest.TestEngine(t, func(t *testing.T) goferrotest.Subject {
		return goferrotest.Subject{
			Engine: cpu.NewEngine(cpu.WithFamilies(goferrotest.Families...)),
			Upload: func(x *tensor.Tensor) (*driver.Buffer, error) { return driver.HostBuffer(x.Clone(), nil), nil },
		}
	})
}
