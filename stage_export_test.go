package gpu

// ForceStaging makes d's plain host copies go through pinned staging chunks as on CUDA
// (on the CPU backend they copy directly), so that the staging runs in CI.
func ForceStaging(d *Device, on bool) { d.forceStaging = on }

// OwnsHost is Device.ownsHost: whether h starts in one of d's pinned or unified buffers.
func OwnsHost(d *Device, h []byte) bool { return d.ownsHost(h) }

// StageMin is the smallest staged copy.
const StageMin = stageMin
