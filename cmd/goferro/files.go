package main

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/goferro/goferro/tensor"
)

// loadNpy reads the .npy file that holds what (an operand, an input),
// saying in the error which file failed and what the command reads.
func loadNpy(what, file string) (*tensor.Tensor, error) {
	t, err := tensor.LoadNpy(file)
	switch {
	case err == nil:
		return t, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, &inputError{msg: fmt.Sprintf("%s: %s does not exist", what, file), err: err}
	case errors.Is(err, tensor.ErrFormat) || errors.Is(err, tensor.ErrDType):
		return nil, &inputError{err: fmt.Errorf("%s: %w (want an array written by numpy.save)", what, err)}
	}
	return nil, fmt.Errorf("%s: reading %s: %w", what, file, err)
}
