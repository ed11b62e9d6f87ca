// Package errs holds the mechanics that the error types of goferro's
// packages share. Each package keeps its own exported error type and
// sentinel kinds, which callers branch on with errors.Is and errors.As;
// what the types have in common, unwrapping to the kind and the causes and
// joining the message from its parts, lives here once.
package errs

import "strings"

// Unwrap returns kind followed by each cause that is not nil. It is the
// Unwrap() []error of an error type that carries a sentinel kind, so that
// errors.Is and errors.As find the kind and every cause.
func Unwrap(kind error, causes ...error) []error {
	out := make([]error, 1, 1+len(causes))
	out[0] = kind
	for _, c := range causes {
		if c != nil {
			out = append(out, c)
		}
	}
	return out
}

// Message returns head, then ": " and msg unless msg is empty, then ": "
// and the text of each cause that is not nil.
func Message(head, msg string, causes ...error) string {
	var b strings.Builder
	b.WriteString(head)
	if msg != "" {
		b.WriteString(": ")
		b.WriteString(msg)
	}
	for _, c := range causes {
		if c != nil {
			b.WriteString(": ")
			b.WriteString(c.Error())
		}
	}
	return b.String()
}
