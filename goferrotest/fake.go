package goferrotest

import (
	"slices"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/driver"
)

// NewFakeDevice returns a Device that runs every op family of the CPU
// engine (cpu.CoreFamilies) and this package's, computing with the
// reference kernels, so any program can be placed on it, and the runtime
// option that registers it together with a new Copier serving transfers
// between the host and each of its storage classes, in both directions:
//
//	d, install := goferrotest.NewFakeDevice("fake.gpu.v1")
//	rt, err := goferro.NewRuntime(goferro.WithEngine(cpu.NewEngine()), install)
//
// opts apply as for NewDevice (WithFamilies replaces the families). For
// a Copier whose faults or counters a test controls, or transfers between
// devices, build from NewDevice and NewCopier instead.
func NewFakeDevice(id driver.EngineID, opts ...Option) (*Device, goferro.Option) {
	fams := append(slices.Clone(cpu.CoreFamilies), Families...)
	d := NewDevice(id, append([]Option{WithFamilies(fams...)}, opts...)...)
	cp := NewCopier(d)
	var routes []driver.Route
	for _, c := range d.classes {
		routes = append(routes,
			driver.Route{Src: driver.StorageHost, Dst: c, Provider: cp},
			driver.Route{Src: c, Dst: driver.StorageHost, Provider: cp})
	}
	return d, func(c *goferro.Config) error {
		if err := c.AddEngine(d.Engine()); err != nil {
			return err
		}
		return goferro.WithRoutes(routes...)(c)
	}
}
