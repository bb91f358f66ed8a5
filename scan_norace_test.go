//go:build !race

package gpu_test

const scRace = false
