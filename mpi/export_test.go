package mpi

// SetMaxCount sets the most elements one MPI call moves, so that tests
// send tensors in several calls; it returns the function that restores it.
func SetMaxCount(n int) (restore func()) {
	old := maxCount
	maxCount = n
	return func() { maxCount = old }
}

// Share is share, for tests.
var Share = share
