package gpu

// Tests and benchmarks switch one knob of a device's tuning at a time: each setter
// returns the previous value, so that defer Set(d, Set(d, v)) restores it.

// TuningFromEnv is tuningFromEnv.
func TuningFromEnv(getenv func(string) string) Tuning { return tuningFromEnv(getenv) }

// ScanConfig is the row-scan configuration.
type ScanConfig = ScanTuning

// ScanConfigFromEnv returns the row-scan configuration the environment gives.
func ScanConfigFromEnv(getenv func(string) string) ScanConfig { return tuningFromEnv(getenv).Scan }

// setKnob applies set to a copy of d's tuning, installs it and returns the old tuning.
func setKnob(d *Device, set func(*Tuning)) Tuning {
	t := d.Tuning()
	set(&t)
	old, err := d.SetTuning(t)
	if err != nil {
		panic(err)
	}
	return old
}

// SetReduceIndex64 forces 64-bit indexing in every CUDA reduction kernel on d.
func SetReduceIndex64(d *Device, on bool) bool {
	return setKnob(d, func(t *Tuning) { t.ReduceIndex64 = on }).ReduceIndex64
}

// SetReduceSplitMin sets d's Tuning.ReduceSplitMin.
func SetReduceSplitMin(d *Device, n int) int {
	return setKnob(d, func(t *Tuning) { t.ReduceSplitMin = n }).ReduceSplitMin
}

// SetReduceFuse sets d's Tuning.ReduceFuse.
func SetReduceFuse(d *Device, on bool) bool {
	return setKnob(d, func(t *Tuning) { t.ReduceFuse = on }).ReduceFuse
}

// SetScanConfig sets d's Tuning.Scan.
func SetScanConfig(d *Device, c ScanConfig) ScanConfig {
	return setKnob(d, func(t *Tuning) { t.Scan = c }).Scan
}

// SetScanVariant sets d's row-scan variant (1 or 2), keeping the other options.
func SetScanVariant(d *Device, v int) int {
	return setKnob(d, func(t *Tuning) { t.Scan.Variant = v }).Scan.Variant
}

// SetScanKeepStatus sets d's Tuning.ScanKeepStatus.
func SetScanKeepStatus(d *Device, on bool) bool {
	return setKnob(d, func(t *Tuning) { t.ScanKeepStatus = on }).ScanKeepStatus
}

// SetCompactEagerMax sets d's Tuning.CompactEagerMax.
func SetCompactEagerMax(d *Device, n int64) int64 {
	return setKnob(d, func(t *Tuning) { t.CompactEagerMax = n }).CompactEagerMax
}

// SetReadPinned sets d's Tuning.ReadPinned.
func SetReadPinned(d *Device, on bool) bool {
	return setKnob(d, func(t *Tuning) { t.ReadPinned = on }).ReadPinned
}

// SetPermuteVariant sets d's Tuning.PermuteVariant.
func SetPermuteVariant(d *Device, v int) int {
	return setKnob(d, func(t *Tuning) { t.PermuteVariant = v }).PermuteVariant
}

// RegCapEnv is regCapEnv (tuning.go), for TestRegCapEnv.
var RegCapEnv = regCapEnv
