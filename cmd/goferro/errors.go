package main

import (
	"errors"
	"io/fs"
	"regexp"
	"strings"

	"github.com/goferro/goferro/tensor"
)

// inputErrors are the error kinds that mean the user's input was wrong (a
// file, an equation, a flag value) rather than that goferro failed.
var inputErrors = []error{
	fs.ErrNotExist, fs.ErrPermission,
	tensor.ErrShape, tensor.ErrDType, tensor.ErrFormat, tensor.ErrIndex, tensor.ErrLayout,
}

func isInputError(err error) bool {
	var ie *inputError
	if errors.As(err, &ie) {
		return true
	}
	for _, kind := range inputErrors {
		if errors.Is(err, kind) {
			return true
		}
	}
	return false
}

// goHead matches the heads that name Go functions in the library's error
// messages ("tensor.ReadNpy: ", "graph: UnmarshalJSON: "): the convention
// for programmers, which tells a user of the command nothing.
var goHead = regexp.MustCompile(`\b([a-z]+\.|[a-z]+: )[A-Z][A-Za-z0-9]*: `)

// userMessage is err's message as the command line shows it after
// "goferro CMD: ": on one line, without heads that name Go functions and
// without a head that repeats the command's name.
func userMessage(cmd string, err error) string {
	msg := goHead.ReplaceAllString(err.Error(), "")
	msg = strings.TrimPrefix(msg, cmd+": ")
	return strings.Join(strings.Fields(msg), " ")
}
