package cli

import (
	"errors"
	"flag"
	"io"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		args []string
		want error
	}{
		{nil, nil}, {[]string{"-n", "3"}, nil}, {[]string{"-h"}, flag.ErrHelp},
		{[]string{"-bogus"}, ErrUsage}, {[]string{"-n", "x"}, ErrUsage}, {[]string{"extra"}, ErrUsage},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.Int("n", 1, "")
		if err := Parse(fs, c.args); !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("Parse(%q) = %v, want %v", c.args, err, c.want)
		}
	}
	err := Usagef("-n %d: want at least %d", 0, 1)
	if !errors.Is(err, ErrUsage) || err.Error() != "usage: -n 0: want at least 1" {
		t.Errorf("Usagef = %q", err)
	}
}
