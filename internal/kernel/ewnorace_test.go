//go:build !race

package kernel

const ewRace = false
