//go:build !race

package clengine_test

const raceEnabled = false
