// Package backend defines what a backend provides to the runtime: devices, streams,
// events, memory, and kernel loading and launch. It plays the role database/sql/driver
// plays for database/sql: users import package gpu, and backends (backend/cuda,
// backend/cpu) implement these interfaces.
//
// A backend does no access tracking and no non-blocking waiting: package gpu does both
// on top of the primitives here (queries, blocking waits, event records and stream
// waits). Every method must be safe for concurrent use by many goroutines.
//
// Errors returned by backends wrap the sentinels in this package (ErrNoDevice,
// ErrOutOfMemory, ...) so that users can match them with errors.Is whatever the backend.
package backend

import (
	"errors"
	"time"
)

// Sentinel errors. Backend errors match one of these with errors.Is where it applies.
var (
	// ErrNoDevice: no driver, no device, or the backend cannot run on this machine.
	ErrNoDevice = errors.New("gpu: no device")
	// ErrOutOfMemory: an allocation failed for lack of memory.
	ErrOutOfMemory = errors.New("gpu: out of memory")
	// ErrInvalidValue: an argument was out of range or of the wrong kind.
	ErrInvalidValue = errors.New("gpu: invalid value")
	// ErrLaunchFailed: a kernel faulted (a trap, an illegal address, a failed launch).
	// On CUDA such an error is sticky: the device's context can no longer be used.
	ErrLaunchFailed = errors.New("gpu: kernel launch failed")
	// ErrNotSupported: the operation is not supported by this backend or device.
	ErrNotSupported = errors.New("gpu: not supported")
	// ErrClosed: the stream, event, buffer or device was already closed or freed.
	ErrClosed = errors.New("gpu: use after close")
)

// MemKind is a kind of memory.
type MemKind uint8

const (
	// DeviceMem is device memory, from the device's stream-ordered pool where the
	// backend has one (CUDA Driver API: cuMemAllocAsync).
	DeviceMem MemKind = iota
	// UnifiedMem is managed memory, addressable from the host and the device (CUDA
	// Driver API: cuMemAllocManaged; Metal's "shared" storage).
	UnifiedMem
	// PinnedMem is page-locked host memory mapped for the device (CUDA Driver API:
	// cuMemHostAlloc).
	PinnedMem
)

// String returns "device", "unified" or "pinned".
func (k MemKind) String() string {
	switch k {
	case DeviceMem:
		return "device"
	case UnifiedMem:
		return "unified"
	case PinnedMem:
		return "pinned"
	}
	return "memkind(?)"
}

// Info describes a device.
type Info struct {
	Backend            string // "cuda" or "cpu"
	Ordinal            int    // index among the backend's devices
	Name               string // e.g. "NVIDIA H200"
	ComputeMajor       int    // compute capability (0 on the CPU)
	ComputeMinor       int
	Multiprocessors    int   // streaming multiprocessors; worker goroutines on the CPU
	TotalMemory        int64 // bytes
	L2CacheBytes       int64
	WarpSize           int // 32 on CUDA; 1 on the CPU
	MaxThreadsPerBlock int
	MaxSharedPerBlock  int    // bytes of shared memory a block can opt in to
	DriverVersion      int    // CUDA driver version as 1000*major+10*minor; 0 on the CPU
	PCIBusID           string // "0000:19:00.0"; empty on the CPU
	// StagedHostCopies says that copies between the device and pageable host memory
	// are faster through pinned staging buffers than as the backend's own copies (true
	// on CUDA, whose driver stages pageable copies through small buffers on one thread).
	StagedHostCopies bool
	// MaxSharedPerMultiprocessor is the shared memory a multiprocessor holds for its
	// resident blocks, of which the driver reserves ReservedSharedPerBlock for each
	// block (bytes; 0 where the device doesn't say: the CPU, or a driver without the
	// attribute).
	MaxSharedPerMultiprocessor int
	ReservedSharedPerBlock     int
}

// Backend opens devices of one kind.
type Backend interface {
	// Name returns the backend's name, "cuda" or "cpu".
	Name() string
	// DeviceCount returns how many devices the backend has. It returns an error
	// wrapping ErrNoDevice if the backend cannot run here (no driver).
	DeviceCount() (int, error)
	// Open opens device ordinal. Opening a device twice returns two handles on the same
	// device (for CUDA, the same primary context).
	Open(ordinal int) (Device, error)
}

// Device is an open device.
type Device interface {
	Info() Info
	// NewStream creates a stream that does not synchronize with any other stream.
	NewStream() (Stream, error)
	// NewEvent creates an event; timing events can measure elapsed time.
	NewEvent(timing bool) (Event, error)
	// Alloc allocates size bytes of memory of the given kind. For DeviceMem, s orders
	// the allocation on that stream (stream-ordered pool); the memory may be used on s
	// at once and elsewhere after s's work so far. Errors wrap ErrOutOfMemory.
	Alloc(kind MemKind, size int64, s Stream) (Mem, error)
	// FreeNow releases memory at once. The caller guarantees no pending work uses it.
	FreeNow(m Mem) error
	// MemInfo returns the free and total device memory in bytes.
	MemInfo() (free, total int64, err error)
	// TrimPool returns unused pooled memory to the system, keeping at most keep bytes.
	TrimPool(keep int64) error
	// LoadModule loads a module from PTX text or a cubin image. Backends that cannot
	// load modules return an error wrapping ErrNotSupported.
	LoadModule(image []byte) (Module, error)
	// Builtin returns one of the backend's built-in kernels (see Builtins).
	Builtin(name string) (Function, error)
	// Synchronize blocks the calling thread until all work on the device is done.
	Synchronize() error
	// CanAccessPeer reports whether this device can address memory of peer.
	CanAccessPeer(peer Device) (bool, error)
	// EnablePeerAccess lets this device address memory of peer.
	EnablePeerAccess(peer Device) error
}

// Builtins lists the kernels every backend provides for tests and benchmarks.
//
//	empty            no parameters; does nothing
//	trap             no parameters; faults (a CUDA trap; an error on the CPU)
//	spin(u64 ns)     busy-waits ns nanoseconds (GPU clock) with one thread
//	fill_u32(u64 ptr, u32 value, u64 n)             ptr[i] = value for i < n
//	add_u32(u64 dst, u64 src, u32 value, u64 n)     dst[i] = src[i] + value
//	spin_copy_u32(u64 dst, u64 src, u64 n, u64 ns)  spins ns, then dst[i] = src[i]
var Builtins = []string{"empty", "trap", "spin", "fill_u32", "add_u32", "spin_copy_u32"}

// Stream is an ordered queue of device work.
type Stream interface {
	// Launch enqueues a kernel.
	Launch(f Function, cfg LaunchConfig, args []Arg) error
	// Memset sets n elements of width bytes (1, 2 or 4) at byte offset off of dst to
	// value.
	Memset(dst Mem, off int64, value uint32, width int, n int64) error
	// Copy copies n bytes between two memories (either may be any kind, and may belong
	// to another device of the same backend).
	Copy(dst Mem, dstOff int64, src Mem, srcOff int64, n int64) error
	// CopyFromHost enqueues a copy of src into dst at offset off. src must stay alive and
	// unmoved until the copy is complete: the caller pins it.
	CopyFromHost(dst Mem, off int64, src []byte) error
	// CopyToHost enqueues a copy of len(dst) bytes from src at offset off into dst, under
	// the same rule.
	CopyToHost(dst []byte, src Mem, off int64) error
	// Record records e: e completes when all work enqueued so far has completed.
	Record(e Event) error
	// WaitEvent makes later work on the stream wait until e completes.
	WaitEvent(e Event) error
	// Query reports whether all work enqueued so far has completed. An error from the
	// work (a fault) is returned as the error.
	Query() (bool, error)
	// Synchronize blocks the calling thread until the stream's work is done.
	Synchronize() error
	// FreeAsync frees device memory (DeviceMem) once the work enqueued so far is done.
	FreeAsync(m Mem) error
	// Destroy releases the stream; work already enqueued still completes.
	Destroy() error
}

// Copier2D is implemented by streams that copy a block of rows between two device
// memories in one call (CUDA Driver API: cuMemcpy2DAsync): height rows of width bytes,
// row r from byte srcOff + r*srcPitch of src to byte dstOff + r*dstPitch of dst. Package
// gpu uses it for Concatenate along an axis other than the first. A stream whose
// device can't (a driver without the entry point, memory of two devices, pitches the
// driver refuses) returns an error wrapping ErrNotSupported or ErrInvalidValue before
// enqueuing anything.
type Copier2D interface {
	Copy2D(dst Mem, dstOff, dstPitch int64, src Mem, srcOff, srcPitch int64, width, height int64) error
}

// StreamMemOps is implemented by streams that can make later work wait for a 32-bit
// word of pinned host memory in stream order (CUDA Driver API: stream memory
// operations, cuStreamWaitValue32_v2 with CU_STREAM_WAIT_VALUE_GEQ). Package gpu
// uses it for asynchronous copies between the device and pageable host memory: a
// goroutine fills or drains pinned staging buffers and releases the stream by writing
// the word (CUDA's own copies of pageable memory are synchronous).
type StreamMemOps interface {
	// MemOpsSupported reports whether WaitValue32 works on this stream's device.
	MemOpsSupported() bool
	// WaitValue32 makes work enqueued on the stream later wait until the 32-bit word at
	// byte offset off of m (pinned memory, 4-byte aligned) reaches v: until
	// int32(word-v) >= 0, a comparison that ignores wraparound. The host writes the
	// word with an atomic store.
	WaitValue32(m Mem, off int64, v uint32) error
}

// Event marks a point in a stream.
type Event interface {
	// Query reports whether the event has completed. An event never recorded counts as
	// completed. A fault in the work before it is returned as the error.
	Query() (bool, error)
	// Synchronize blocks the calling thread until the event completes, yielding the
	// CPU while it waits (CUDA: an event created with CU_EVENT_BLOCKING_SYNC).
	Synchronize() error
	// Elapsed returns the time from start to this event; both must be timing events,
	// recorded and complete.
	Elapsed(start Event) (time.Duration, error)
	// Destroy releases the event.
	Destroy() error
}

// Mem is an allocation.
type Mem interface {
	// Ptr returns the device address of the first byte (CUdeviceptr on CUDA; the host
	// address on the CPU backend, for information only).
	Ptr() uint64
	// Size returns the size in bytes.
	Size() int64
	// Kind returns the kind of memory.
	Kind() MemKind
	// Host returns the memory as a host slice when the host can address it (pinned and
	// unified memory; all memory on the CPU backend), else nil. Reading it while device
	// work writes it is a race: package gpu orders such accesses.
	Host() []byte
}

// Module is a loaded code module.
type Module interface {
	// Function looks up a kernel by name.
	Function(name string) (Function, error)
	// Unload releases the module.
	Unload() error
}

// Function is a kernel of a loaded module, or a built-in.
type Function interface {
	// Name returns the kernel's name.
	Name() string
}

// LaunchConfig is a kernel's launch geometry.
type LaunchConfig struct {
	Grid      [3]uint32 // blocks in x, y, z
	Block     [3]uint32 // threads per block in x, y, z
	SharedMem uint32    // dynamic shared memory in bytes
	// Programmatic lets the kernel be scheduled before the kernel ahead of it on the
	// stream completes (CUDA: programmatic dependent launch, cuLaunchKernelEx with
	// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION, compute capability 9.0+):
	// only for a kernel that waits for its predecessor (griddepcontrol.wait) before it
	// touches memory. Backends without it launch as usual, which is always correct.
	Programmatic bool
	// Cooperative guarantees that every block of the grid is resident at once, so
	// that blocks may wait for each other (grid-wide barriers), or fails the launch
	// (CUDA: cuLaunchKernelEx with CU_LAUNCH_ATTRIBUTE_COOPERATIVE; an error wrapping
	// ErrNotSupported on a driver without cuLaunchKernelEx or for a grid larger than
	// the device holds at once, CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE). The CPU
	// backend runs a kernel's Go code, for which it means nothing.
	Cooperative bool
}

// ArgKind says what an Arg holds.
type ArgKind uint8

const (
	// ArgScalar is a scalar of Size bytes (1, 2, 4 or 8) held in Val, or a larger
	// by-value parameter held in Blob.
	ArgScalar ArgKind = iota
	// ArgMem is the address of Mem plus Off.
	ArgMem
	// ArgPtr is a raw device address held in Val.
	ArgPtr
)

// Arg is one kernel argument.
type Arg struct {
	Kind ArgKind
	Size uint8  // bytes of a scalar in Val
	Val  uint64 // scalar bits (little-endian in the low Size bytes) or raw address
	Mem  Mem    // ArgMem
	Off  int64  // ArgMem: byte offset into Mem
	Blob []byte // ArgScalar larger than 8 bytes: the parameter's bytes
}
