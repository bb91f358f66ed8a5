//go:build race

package nccl

// raceEnabled: the race detector slows the element loops about twentyfold, so the
// large test sizes shrink under it.
const raceEnabled = true
