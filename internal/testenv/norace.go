//go:build !race

package testenv

// Race reports whether the race detector is on: it slows the simulators and the
// element loops five to twenty times, so tests run fewer or smaller cases under it.
const Race = false
