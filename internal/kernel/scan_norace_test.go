//go:build !race

package kernel

const simRace = false
