package gpu

// SortConfig is the sort kernels' tuning (items per thread, look-back window, segment
// size).
type SortConfig = sortConfig

// SetSortConfig selects the sort configuration for tests and benchmarks and returns the
// previous one.
func SetSortConfig(c SortConfig) SortConfig { return setSortConfig(c) }

// SortConfigFromEnv is sortConfigFromEnv.
func SortConfigFromEnv(getenv func(string) string) SortConfig { return sortConfigFromEnv(getenv) }

// SetUniqueDenseMinN sets the fewest elements whose Unique tries the bitmap of their
// range and returns the previous value.
func SetUniqueDenseMinN(n int) int {
	old := uniqueDenseMinN
	uniqueDenseMinN = n
	return old
}
