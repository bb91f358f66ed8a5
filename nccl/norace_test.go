//go:build !race

package nccl

const raceEnabled = false
