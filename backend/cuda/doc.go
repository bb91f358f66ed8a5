// Package cuda is the CUDA backend: NVIDIA GPUs through the CUDA driver API, bound at
// run time by package cu (no toolkit at build time).
//
// Each device uses its primary context. Streams are created non-blocking, so they never
// synchronize with the legacy default stream. Events are created with
// CU_EVENT_BLOCKING_SYNC, so that a thread blocked in Event.Synchronize sleeps rather
// than spins. Device memory comes from the device's default memory pool
// (cuMemAllocAsync), whose release threshold is set to keep freed memory for reuse.
//
// The backend works with and without cgo (see package cu's Binding); where the build
// cannot load the driver (CGO_ENABLED=0 outside linux/amd64 and linux/arm64, or the tag
// gpu_nodlopen), it builds but reports no device.
package cuda

// Backend is the CUDA backend.
type Backend struct{}

// Name returns "cuda".
func (Backend) Name() string { return "cuda" }
