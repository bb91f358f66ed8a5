//go:build race

package gpu_test

// raceEnabled: the race detector slows the PTX interpreter down several times, so the
// reduction tests run fewer interpreted cases under it.
const raceEnabled = true
