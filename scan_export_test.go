package gpu

// SetScanVariant selects the row-scan configuration (1, 2 or 3) for tests and
// benchmarks and returns the previous choice.
func SetScanVariant(v int) int { return setScanVariant(v) }

// SetScanPipeline sets the pipelined variant's items per thread, stages and blocks
// per multiprocessor (0 keeps a value) and returns the previous ones.
func SetScanPipeline(items, stages, blocks int) (int, int, int) {
	return setScanPipeline(items, stages, blocks)
}
