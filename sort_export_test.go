package gpu

import "github.com/go-gpu/gpu/internal/kernel"

// SortConfig is the sort kernels' tuning (items per thread, look-back window, segment
// size).
type SortConfig = sortConfig

// SetSortConfig selects the sort configuration for tests and benchmarks and returns the
// previous one.
func SetSortConfig(c SortConfig) SortConfig { return setSortConfig(c) }

// SetSortPassHook makes f see every radix sort's pass spec (nil: none) and returns a
// function that puts the previous hook back.
func SetSortPassHook(f func(*kernel.RadixPass)) (restore func()) {
	var p *func(*kernel.RadixPass)
	if f != nil {
		p = &f
	}
	old := sortPassHook.Swap(p)
	return func() { sortPassHook.Store(old) }
}

// SetSortFusedHook makes f see every fused sort's spec (nil: none) and returns a
// function that puts the previous hook back.
func SetSortFusedHook(f func(*kernel.RadixFused)) (restore func()) {
	var p *func(*kernel.RadixFused)
	if f != nil {
		p = &f
	}
	old := sortFusedHook.Swap(p)
	return func() { sortFusedHook.Store(old) }
}

// SortConfig.FullTiles's values.
const (
	SortFullNone   = sortFullNone
	SortFullLong   = sortFullLong
	SortFullAll    = sortFullAll
	SortFullNarrow = sortFullNarrow

	SortSectorsOff    = sortSectorsOff
	SortSectorsValues = sortSectorsValues
	SortSectorsAll    = sortSectorsAll
)

// SortConfigFromEnv is sortConfigFromEnv.
func SortConfigFromEnv(getenv func(string) string) SortConfig { return sortConfigFromEnv(getenv) }

// SetUniqueDenseMinN sets the fewest elements whose Unique tries the bitmap of their
// range and returns the previous value.
func SetUniqueDenseMinN(n int) int {
	old := uniqueDenseMinN
	uniqueDenseMinN = n
	return old
}
