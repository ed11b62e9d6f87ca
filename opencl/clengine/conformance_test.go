package clengine_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/opencl"
	"github.com/goferro/goferro/opencl/clengine"
	"github.com/goferro/goferro/tensor"
)

var conformanceIDs atomic.Int64

// TestConformance holds the OpenCL engine, with its host↔device and
// device↔device providers, to the driver contract: each subject is an
// engine of its own (a context: allocation domain, and a queue).
func TestConformance(t *testing.T) {
	devs, err := opencl.Devices()
	if err != nil || len(devs) == 0 {
		t.Skipf("no OpenCL device: %v", err)
	}
	goferrotest.TestEngine(t, func(t *testing.T) goferrotest.Subject {
		id := driver.EngineID(fmt.Sprintf("opencl.conf%d.v1", conformanceIDs.Add(1)))
		e, err := clengine.OpenAs(context.Background(), devs[0], id)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		dt := tensor.Float64
		if !devs[0].FP64 {
			dt = tensor.Float32
		}
		return goferrotest.Subject{
			Engine: e.Registration(),
			Routes: clengine.Providers(e),
			Upload: func(x *tensor.Tensor) (*driver.Buffer, error) {
				d, err := e.Upload(context.Background(), x)
				if err != nil {
					return nil, err
				}
				return e.Buffer(d), nil
			},
			Live:  func() int64 { return e.Context().Stats().Live },
			DType: dt,
		}
	})
}
