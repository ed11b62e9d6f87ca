package goferro_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro"
)

// TestErrorMessages: every typed error names what failed.
func TestErrorMessages(t *testing.T) {
	cause := errors.New("the cause")
	cases := []struct {
		err  error
		want []string
	}{
		{&driver.IDError{What: "engine id", ID: "Bad", Reason: "uppercase"}, []string{"engine id", `"Bad"`, "uppercase"}},
		{&goferro.ConfigError{Kind: goferro.ErrProviderConflict, Src: "storage.a.v1", Dst: "storage.b.v1", Err: cause}, []string{"conflict", "storage.a.v1 -> storage.b.v1", "the cause"}},
		{&goferro.ConfigError{Kind: goferro.ErrDuplicateEngine, Engine: "cpu.default.v1", Msg: "again"}, []string{"duplicate", "cpu.default.v1", "again"}},
		{&driver.ContractError{Kind: driver.ErrIncompleteIngress, Engine: "fake.a.v1", Missing: []string{"Ingress.Resident"}}, []string{"fake.a.v1", "Ingress.Resident"}},
		{&goferro.Error{Kind: goferro.ErrMissingTransferProvider, Input: -1, Instruction: 3, Slot: 7, Class: "storage.b.v1", Available: []driver.StorageClass{"storage.a.v1"}},
			[]string{"missing transfer provider", "instruction 3", "slot 7", "storage.b.v1", "storage.a.v1"}},
		{&goferro.Error{Kind: goferro.ErrInputType, Input: 1, Instruction: -1, Slot: -1, Msg: "shape (2, 3)"}, []string{"input 1", "shape (2, 3)"}},
		{&goferro.Error{Kind: driver.ErrTransferDType, Instruction: 2, Slot: 4,
			From: driver.Location{Engine: "fake.a.v1", Event: 1, Storage: "storage.a.v1"}, To: driver.Location{Engine: "fake.b.v1", Event: 2, Storage: "storage.b.v1"}, Msg: "float32"},
			[]string{"dtype", "instruction 2", "slot 4", "fake.a.v1/event.1/storage.a.v1 -> fake.b.v1/event.2/storage.b.v1", "float32"}},
		{&goferro.Error{Kind: driver.ErrOutputResidencyMismatch, Instruction: 5, Input: -1, Output: 0, Engine: "fake.a.v1", Err: cause},
			[]string{"residency", "instruction 5", "output 0", "fake.a.v1", "the cause"}},
		{&goferro.Error{Kind: goferro.ErrInputMismatch, Instruction: -1, Input: 2, Output: -1}, []string{"input 2"}},
	}
	for _, c := range cases {
		msg := c.err.Error()
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%q does not mention %q", msg, w)
			}
		}
	}
	if !errors.Is(cases[1].err, cause) || !errors.Is(cases[1].err, goferro.ErrProviderConflict) {
		t.Error("ConfigError loses its kind or cause")
	}
	if !errors.Is(cases[0].err, driver.ErrInvalidID) || !errors.Is(cases[3].err, driver.ErrIncompleteIngress) {
		t.Error("IDError or ContractError loses its kind")
	}
}
