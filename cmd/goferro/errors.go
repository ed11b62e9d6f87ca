package main

import (
	"errors"
	"flag"
	"io/fs"

	"github.com/goferro/goferro/tensor"
)

// inputErrors are the error kinds that mean the user's input was wrong (a
// file, an equation, a flag value) rather than that goferro failed.
var inputErrors = []error{
	flag.ErrHelp, fs.ErrNotExist, fs.ErrPermission,
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
