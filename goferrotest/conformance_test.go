package goferrotest_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/goferrotest"
)

var devices atomic.Int64

// TestDeviceConformance holds the fake Device, with a Copier as its
// routes, to the driver contract: the fakes the runtime's tests rely on
// behave as a real engine must.
func TestDeviceConformance(t *testing.T) {
	goferrotest.TestEngine(t, func(t *testing.T) goferrotest.Subject {
		id := driver.EngineID(fmt.Sprintf("fake.conf%d.v1", devices.Add(1)))
		d := goferrotest.NewDevice(id, goferrotest.WithFamilies(append(cpu.CoreFamilies, goferrotest.Families...)...))
		cp := goferrotest.NewCopier(d)
		return goferrotest.Subject{
			Engine: d.Engine(),
			Routes: []driver.Route{
				{Src: driver.StorageHost, Dst: d.DefaultStorage(), Provider: cp},
				{Src: d.DefaultStorage(), Dst: driver.StorageHost, Provider: cp},
			},
			Upload: d.Upload,
			Live:   func() int64 { return d.Stats().Live + cp.Stats().LiveHostCopies },
		}
	})
}

// TestQueuedDeviceConformance holds a WithQueue device, whose executor
// returns pending results filled a little later, to the same contract.
func TestQueuedDeviceConformance(t *testing.T) {
	goferrotest.TestEngine(t, func(t *testing.T) goferrotest.Subject {
		id := driver.EngineID(fmt.Sprintf("fake.conf%d.v1", devices.Add(1)))
		d := goferrotest.NewDevice(id, goferrotest.WithFamilies(append(cpu.CoreFamilies, goferrotest.Families...)...),
			goferrotest.WithQueue(func(context.Context, *driver.Call) error { time.Sleep(100 * time.Microsecond); return nil }))
		cp := goferrotest.NewCopier(d)
		return goferrotest.Subject{
			Engine: d.Engine(),
			Routes: []driver.Route{
				{Src: driver.StorageHost, Dst: d.DefaultStorage(), Provider: cp},
				{Src: d.DefaultStorage(), Dst: driver.StorageHost, Provider: cp},
			},
			Upload: d.Upload,
			Live:   func() int64 { return d.Stats().Live + cp.Stats().LiveHostCopies },
		}
	})
}
