//go:build race

package clengine_test

// raceEnabled reports a -race build, under which the largest instances are
// left out (with a log line) to keep the run short.
const raceEnabled = true
