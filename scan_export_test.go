package gpu

// SetScanVariant selects the row-scan configuration (1 or 2) for tests and
// benchmarks and returns the previous choice.
func SetScanVariant(v int) int { return setScanVariant(v) }

// ScanConfig is the row-scan configuration (variant and tuning options).
type ScanConfig = scanConfig

// SetScanConfig selects the row-scan configuration for tests and benchmarks and
// returns the previous one.
func SetScanConfig(c ScanConfig) ScanConfig { return setScanConfig(c) }

// ScanConfigFromEnv is scanConfigFromEnv.
func ScanConfigFromEnv(getenv func(string) string) ScanConfig { return scanConfigFromEnv(getenv) }

// SetScanKeepStatus switches the streams' own scan statuses on or off (off: a zeroed
// pool buffer each scan, as before) and returns the previous setting.
func SetScanKeepStatus(on bool) bool { return scanKeepStatus.Swap(on) }

// SetCompactEagerMax sets the largest compaction output allocated before the count is
// known (0: never, two host waits) and returns the previous value.
func SetCompactEagerMax(n int64) int64 {
	old := compactEagerMax
	compactEagerMax = n
	return old
}

// SetReadPinned switches the pinned words of small reads back (readU64) on or off and
// returns the previous setting.
func SetReadPinned(on bool) bool {
	old := readPinned
	readPinned = on
	return old
}
