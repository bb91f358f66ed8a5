//go:build race

package gpu_test

// scRace is set when the race detector is on: the tests then run the largest sizes
// for a few types only.
const scRace = true
