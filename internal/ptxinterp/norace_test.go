//go:build !race

package ptxinterp

const iterScale = 1
