package driver_test

import (
	"errors"
	"testing"

	"github.com/goferro/goferro/driver"
)

// TestValidateID: ids are dotted lowercase words of at most 128 bytes;
// anything else is an *IDError of kind ErrInvalidID naming the id.
func TestValidateID(t *testing.T) {
	good := []string{"cpu.default.v1", "storage.host.v1", "storage.opencl.device.v1", "a.b", "x1.y_2.z-3"}
	bad := []string{"", "cpu", "Cpu.default", "cpu..v1", ".cpu.v1", "cpu.v1.", "cpu.default v1", "1cpu.v1", "cpu._x", "cpu.-x", "cpü.v1",
		"a." + string(make([]byte, 200))}
	for _, s := range good {
		if err := driver.ValidateID("engine id", s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	for _, s := range bad {
		err := driver.ValidateID("engine id", s)
		var ie *driver.IDError
		if !errors.As(err, &ie) || !errors.Is(err, driver.ErrInvalidID) || ie.ID != s {
			t.Errorf("%q: error %v, want an IDError", s, err)
		}
	}
}
