//go:build race

package linalg

// raceEnabled: under the race detector sync.Pool drops items at random,
// so allocation counts mean nothing, and its instrumentation slows some
// loops far more than others, so shares of CPU time mean nothing either.
const raceEnabled = true
