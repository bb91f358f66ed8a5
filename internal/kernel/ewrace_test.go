//go:build race

package kernel

// ewRace: the race detector slows the PTX interpreter about tenfold; the elementwise
// tests then run a sample of their cases (the full set runs without -race).
const ewRace = true
