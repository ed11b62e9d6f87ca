package errs

import (
	"errors"
	"slices"
	"testing"
)

func TestUnwrap(t *testing.T) {
	kind, a, b := errors.New("kind"), errors.New("a"), errors.New("b")
	for _, c := range []struct {
		causes []error
		want   []error
	}{
		{nil, []error{kind}},
		{[]error{nil}, []error{kind}},
		{[]error{a}, []error{kind, a}},
		{[]error{nil, b}, []error{kind, b}},
		{[]error{a, b}, []error{kind, a, b}},
	} {
		if got := Unwrap(kind, c.causes...); !slices.Equal(got, c.want) {
			t.Errorf("Unwrap(kind, %v) = %v, want %v", c.causes, got, c.want)
		}
	}
}

func TestMessage(t *testing.T) {
	a, b := errors.New("a"), errors.New("b")
	for _, c := range []struct {
		msg    string
		causes []error
		want   string
	}{
		{"", nil, "head"},
		{"msg", nil, "head: msg"},
		{"", []error{a}, "head: a"},
		{"msg", []error{a}, "head: msg: a"},
		{"msg", []error{nil, b}, "head: msg: b"},
		{"msg", []error{a, b}, "head: msg: a: b"},
	} {
		if got := Message("head", c.msg, c.causes...); got != c.want {
			t.Errorf("Message(head, %q, %v) = %q, want %q", c.msg, c.causes, got, c.want)
		}
	}
}
