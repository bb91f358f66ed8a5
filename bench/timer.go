package bench

import "time"

// Timer measures one sample: the time from Start to Stop of the work enqueued
// in between. The runtime implements it with device events (record an event at
// Start, another at Stop, wait for the second, return the elapsed time between
// them); HostTimer is the host-clock implementation.
//
// A Timer is used by one benchmark at a time, from one goroutine.
type Timer interface {
	// Start marks the beginning of a sample.
	Start() error
	// Stop marks the end of a sample, waits until the work in it has finished
	// and returns its duration.
	Stop() (time.Duration, error)
}

// SyncFunc waits until all work queued on the device has finished.
type SyncFunc func() error

// noSync is the SyncFunc of a run without a device.
func noSync() error { return nil }

// HostTimer times samples with the host's monotonic clock: Stop calls Sync and
// then reads the clock, so the time includes the wait for the device and the
// synchronization's own cost. It is the timer of Host-mode benchmarks, and of
// GPU-mode ones while no device timer is available.
type HostTimer struct {
	// Sync waits for the device; nil means nothing to wait for.
	Sync SyncFunc
	t0   time.Time
}

// NewHostTimer returns a host-clock timer that calls sync before reading the
// clock at Stop.
func NewHostTimer(sync SyncFunc) *HostTimer { return &HostTimer{Sync: sync} }

// Start reads the clock.
func (t *HostTimer) Start() error {
	t.t0 = time.Now()
	return nil
}

// Stop synchronizes and returns the time since Start.
func (t *HostTimer) Stop() (time.Duration, error) {
	if t.Sync != nil {
		if err := t.Sync(); err != nil {
			return 0, err
		}
	}
	return time.Since(t.t0), nil
}
