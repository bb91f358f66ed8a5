package gpu

// SortConfig is the sort kernels' tuning (items per thread, look-back window, segment
// size).
type SortConfig = sortConfig

// SetSortConfig selects the sort configuration for tests and benchmarks and returns the
// previous one.
func SetSortConfig(c SortConfig) SortConfig { return setSortConfig(c) }

// SortConfigFromEnv is sortConfigFromEnv.
func SortConfigFromEnv(getenv func(string) string) SortConfig { return sortConfigFromEnv(getenv) }
