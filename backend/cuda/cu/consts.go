package cu

// DeviceAttribute is a CUdevice_attribute.
type DeviceAttribute int32

// Device attributes (CUDA Driver API: CUdevice_attribute).
const (
	AttrMaxThreadsPerBlock       DeviceAttribute = 1
	AttrMaxSharedMemoryPerBlock  DeviceAttribute = 8
	AttrWarpSize                 DeviceAttribute = 10
	AttrClockRate                DeviceAttribute = 13
	AttrMultiprocessorCount      DeviceAttribute = 16
	AttrCanMapHostMemory         DeviceAttribute = 19
	AttrMemoryClockRate          DeviceAttribute = 36
	AttrGlobalMemoryBusWidth     DeviceAttribute = 37
	AttrL2CacheSize              DeviceAttribute = 38
	AttrMaxThreadsPerSM          DeviceAttribute = 39
	AttrUnifiedAddressing        DeviceAttribute = 41
	AttrComputeCapabilityMajor   DeviceAttribute = 75
	AttrComputeCapabilityMinor   DeviceAttribute = 76
	AttrManagedMemory            DeviceAttribute = 83
	AttrConcurrentManagedAccess  DeviceAttribute = 89
	AttrMaxSharedMemoryOptin     DeviceAttribute = 97
	AttrMaxSharedMemoryPerSM     DeviceAttribute = 81
	AttrReservedSharedMemory     DeviceAttribute = 111
	AttrMemoryPoolsSupported     DeviceAttribute = 115
	AttrMaxBlocksPerMultiprocess DeviceAttribute = 106
)

// FuncAttribute is a CUfunction_attribute.
type FuncAttribute int32

// Kernel attributes (CUDA Driver API: CUfunction_attribute).
const (
	FuncMaxThreadsPerBlock  FuncAttribute = 0
	FuncSharedSizeBytes     FuncAttribute = 1
	FuncLocalSizeBytes      FuncAttribute = 3
	FuncNumRegs             FuncAttribute = 4
	FuncMaxDynamicSharedMem FuncAttribute = 8
	// FuncPreferredSharedCarveout: the percent of the unified L1/shared memory a
	// multiprocessor gives shared memory for the kernel (a hint; -1: no preference).
	FuncPreferredSharedCarveout FuncAttribute = 9
)

// MemPoolAttribute is a CUmemPool_attribute.
type MemPoolAttribute int32

// Memory pool attributes (CUDA Driver API: CUmemPool_attribute).
const (
	MemPoolReleaseThreshold   MemPoolAttribute = 4
	MemPoolReservedMemCurrent MemPoolAttribute = 5
	MemPoolUsedMemCurrent     MemPoolAttribute = 7
)

// Flags (CUDA Driver API: CUstream_flags, CUevent_flags, cuMemHostAlloc).
const (
	StreamNonBlocking     uint32 = 0x1
	EventBlockingSync     uint32 = 0x1
	EventDisableTiming    uint32 = 0x2
	MemHostAllocPortable  uint32 = 0x1
	MemHostAllocDeviceMap uint32 = 0x2
)

// Stream memory operation flags (CUDA Driver API: CUstreamWaitValue_flags,
// CUstreamWriteValue_flags). Added by the sync branch.
const (
	StreamWaitValueGEQ      uint32 = 0x0 // until int32(*addr - value) >= 0 (cyclic)
	StreamWriteValueDefault uint32 = 0x0
)

// StreamCaptureModeRelaxed is the capture mode of cuStreamBeginCapture_v2 that lets any
// thread make any call while a stream captures (CUDA Driver API: CUstreamCaptureMode,
// CU_STREAM_CAPTURE_MODE_RELAXED): goroutines move between threads, so the global and
// thread-local modes' checks would trip on unrelated calls.
const StreamCaptureModeRelaxed uint32 = 2

// The special stream handles (CUDA Driver API: CU_STREAM_LEGACY, CU_STREAM_PER_THREAD);
// the null handle 0 is the legacy default stream too.
const (
	StreamLegacy    Stream = 0x1
	StreamPerThread Stream = 0x2
)
