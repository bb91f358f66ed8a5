//go:build race

package ptxinterp

// iterScale divides the random test iterations under the race detector, which slows
// the interpreter and the exact references about tenfold.
const iterScale = 8
