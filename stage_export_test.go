package gpu

// ForceStaging makes d's plain host copies go through pinned staging chunks as on CUDA
// (on the CPU backend they copy directly), so that the staging runs in CI.
func ForceStaging(d *Device, on bool) { d.forceStaging = on }

// OwnsHost is Device.ownsHost: whether h starts in one of d's pinned or unified buffers.
func OwnsHost(d *Device, h []byte) bool { return d.ownsHost(h) }

// StageMin is a copy size that the staging splits into full chunks (8 MiB).
const StageMin = 8 << 20

// HostCopyN is hostCopyN: src into dst over parts goroutines.
func HostCopyN(dst, src []byte, parts int) { hostCopyN(dst, src, parts) }

// SetStaging sets the staging chunk size (0: by copy size, up to 8 MiB), the least
// bytes per goroutine of a host copy and the most goroutines; it returns a function
// that restores the defaults, dropping kept chunks of another size.
func SetStaging(d *Device, chunk, part, parts int) func() {
	d.stagePool.flush()
	stageChunkFixed, hostCopyPart, hostCopyMaxParts = chunk, part, parts
	return func() {
		d.stagePool.flush()
		stageChunkFixed, hostCopyPart, hostCopyMaxParts = 0, 64<<10, 8
	}
}

// SetAsyncStaging turns the streams' staging rings for asynchronous copies of pageable
// memory on or off (off: the backend's own copy) and returns the old setting.
func SetAsyncStaging(on bool) bool {
	old := asyncStaging
	asyncStaging = on
	return old
}

// SetStageChunkMax sets the largest staging buffer (the staging rings' slots too) and
// returns a function restoring it, dropping kept buffers.
func SetStageChunkMax(d *Device, n int) func() {
	d.stagePool.flush()
	old := stageChunkMax
	stageChunkMax = n
	return func() {
		d.stagePool.flush()
		stageChunkMax = old
	}
}

// SharedUse reports whether a launch on s reading x and writing y would record an event
// (the allocations count as in use on several streams), without launching anything.
func SharedUse(s *Stream, y, x *Buffer) (bool, error) {
	var small [4]*allocation
	t, err := s.trackBegin([]use{y.use(Write), x.use(Read)}, small[:0])
	if err != nil {
		return false, err
	}
	shared := t.anyShared
	unlockAll(t.as)
	s.unhold()
	return shared, nil
}
