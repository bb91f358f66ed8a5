package gpu

// SetScanVariant selects the row-scan configuration (1 or 2) for tests and
// benchmarks and returns the previous choice.
func SetScanVariant(v int) int { return setScanVariant(v) }
