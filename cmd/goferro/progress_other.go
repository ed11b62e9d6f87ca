//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || solaris || aix)

package main

import "os"

// isTerminal reports false where there is no termios: progress is then
// printed as plain lines, which is always safe.
func isTerminal(*os.File) bool { return false }
