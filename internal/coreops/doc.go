// Package coreops holds one test and no code: a program that imports only
// the runtime (goferro), the CPU engine (cpu) and the compiler (graph),
// plus tensor, runs every core op and gets the right values. It proves
// that nothing is installed behind the user's back at start-up: the CPU
// engine reaches the reference semantics (graph/ref) by importing them.
package coreops
