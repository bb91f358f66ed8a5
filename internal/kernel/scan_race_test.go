//go:build race

package kernel

// simRace is set under the race detector: the simulator tests then run a few cases
// only (they check the simulator's own synchronization; the full sets run without it).
const simRace = true
