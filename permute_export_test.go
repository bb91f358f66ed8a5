package gpu

// SetPermuteVariant selects the tiled permute kernel (1 or 2) for tests and
// benchmarks and returns the previous choice.
func SetPermuteVariant(v int) int { return setPermuteVariant(v) }
