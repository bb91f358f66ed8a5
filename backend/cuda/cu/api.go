package cu

import (
	"fmt"
	"os"
	"sync"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/internal/dl"
)

// The driver's entry points: this table is the one list, used by every build (cgo or
// not, see package dl). Each line is an entry point and the names it is exported under,
// the current versioned name first. Add an entry point with one line here and its Go
// function in cu.go; Load resolves them all, and a driver without one of them is
// reported as too old.
var (
	api dl.Table

	cuInit                     = api.Func("cuInit")
	cuDriverGetVersion         = api.Func("cuDriverGetVersion")
	cuDeviceGetCount           = api.Func("cuDeviceGetCount")
	cuDeviceGet                = api.Func("cuDeviceGet")
	cuDeviceGetName            = api.Func("cuDeviceGetName")
	cuDeviceGetAttribute       = api.Func("cuDeviceGetAttribute")
	cuDeviceTotalMem           = api.Func("cuDeviceTotalMem_v2")
	cuDeviceGetPCIBusId        = api.Func("cuDeviceGetPCIBusId")
	cuDevicePrimaryCtxRetain   = api.Func("cuDevicePrimaryCtxRetain")
	cuDevicePrimaryCtxRelease  = api.Func("cuDevicePrimaryCtxRelease_v2")
	cuDeviceCanAccessPeer      = api.Func("cuDeviceCanAccessPeer")
	cuDeviceGetDefaultMemPool  = api.Func("cuDeviceGetDefaultMemPool")
	cuGetErrorName             = api.Func("cuGetErrorName")
	cuGetErrorString           = api.Func("cuGetErrorString")
	cuCtxGetCurrent            = api.Func("cuCtxGetCurrent")
	cuCtxSetCurrent            = api.Func("cuCtxSetCurrent")
	cuCtxSynchronize           = api.Func("cuCtxSynchronize")
	cuCtxGetLimit              = api.Func("cuCtxGetLimit")
	cuCtxSetLimit              = api.Func("cuCtxSetLimit")
	cuCtxEnablePeerAccess      = api.Func("cuCtxEnablePeerAccess")
	cuStreamCreate             = api.Func("cuStreamCreate")
	cuStreamDestroy            = api.Func("cuStreamDestroy_v2")
	cuStreamQuery              = api.Func("cuStreamQuery")
	cuStreamSynchronize        = api.Func("cuStreamSynchronize")
	cuStreamWaitEvent          = api.Func("cuStreamWaitEvent")
	cuEventCreate              = api.Func("cuEventCreate")
	cuEventDestroy             = api.Func("cuEventDestroy_v2")
	cuEventRecord              = api.Func("cuEventRecord")
	cuEventQuery               = api.Func("cuEventQuery")
	cuEventSynchronize         = api.Func("cuEventSynchronize")
	cuEventElapsedTime         = api.Func("cuEventElapsedTime_v2", "cuEventElapsedTime")
	cuMemAlloc                 = api.Func("cuMemAlloc_v2")
	cuMemFree                  = api.Func("cuMemFree_v2")
	cuMemAllocAsync            = api.Func("cuMemAllocAsync")
	cuMemFreeAsync             = api.Func("cuMemFreeAsync")
	cuMemPoolSetAttribute      = api.Func("cuMemPoolSetAttribute")
	cuMemPoolGetAttribute      = api.Func("cuMemPoolGetAttribute")
	cuMemPoolTrimTo            = api.Func("cuMemPoolTrimTo")
	cuMemPoolSetAccess         = api.Func("cuMemPoolSetAccess")
	cuMemAllocManaged          = api.Func("cuMemAllocManaged")
	cuMemHostAlloc             = api.Func("cuMemHostAlloc")
	cuMemFreeHost              = api.Func("cuMemFreeHost")
	cuMemHostGetDevicePointer  = api.Func("cuMemHostGetDevicePointer_v2")
	cuMemGetInfo               = api.Func("cuMemGetInfo_v2")
	cuMemcpyHtoDAsync          = api.Func("cuMemcpyHtoDAsync_v2")
	cuMemcpyDtoHAsync          = api.Func("cuMemcpyDtoHAsync_v2")
	cuMemcpyDtoDAsync          = api.Func("cuMemcpyDtoDAsync_v2")
	cuMemcpyAsync              = api.Func("cuMemcpyAsync")
	cuMemcpyPeerAsync          = api.Func("cuMemcpyPeerAsync")
	cuMemsetD8Async            = api.Func("cuMemsetD8Async")
	cuMemsetD16Async           = api.Func("cuMemsetD16Async")
	cuMemsetD32Async           = api.Func("cuMemsetD32Async")
	cuModuleLoadDataEx         = api.Func("cuModuleLoadDataEx")
	cuModuleUnload             = api.Func("cuModuleUnload")
	cuModuleGetFunction        = api.Func("cuModuleGetFunction")
	cuFuncGetAttribute         = api.Func("cuFuncGetAttribute")
	cuFuncSetAttribute         = api.Func("cuFuncSetAttribute")
	cuLaunchKernel             = api.Func("cuLaunchKernel")
	cuOccupancyMaxActiveBlocks = api.Func("cuOccupancyMaxActiveBlocksPerMultiprocessor")
	// Stream memory operations: the _v2 entry points (CUDA 11.7+), else the first ones
	// (CUDA 8+).
	cuStreamWaitValue32  = api.Optional("cuStreamWaitValue32_v2", "cuStreamWaitValue32")
	cuStreamWriteValue32 = api.Optional("cuStreamWriteValue32_v2", "cuStreamWriteValue32")
	// Graphs through stream capture (CUDA 11.4+; the kernel node update 12.0+, the
	// capture info's _v3 12.3+), host functions (10.0+), a stream's context (9.2+).
	cuStreamBeginCapture           = api.Optional("cuStreamBeginCapture_v2")
	cuStreamEndCapture             = api.Optional("cuStreamEndCapture")
	cuStreamGetCaptureInfo3        = api.Optional("cuStreamGetCaptureInfo_v3")
	cuStreamGetCaptureInfo2        = api.Optional("cuStreamGetCaptureInfo_v2")
	cuGraphInstantiateWithFlags    = api.Optional("cuGraphInstantiateWithFlags")
	cuGraphLaunch                  = api.Optional("cuGraphLaunch")
	cuGraphExecDestroy             = api.Optional("cuGraphExecDestroy")
	cuGraphDestroy                 = api.Optional("cuGraphDestroy")
	cuGraphExecKernelNodeSetParams = api.Optional("cuGraphExecKernelNodeSetParams_v2")
	cuLaunchHostFunc               = api.Optional("cuLaunchHostFunc")
	cuLaunchKernelEx               = api.Optional("cuLaunchKernelEx") // (CUDA 12.0+)
	cuStreamGetCtx                 = api.Optional("cuStreamGetCtx")
	// A pitched 2-D copy (CUDA 3.2+; optional only so that test doubles may lack it).
	cuMemcpy2DAsync = api.Optional("cuMemcpy2DAsync_v2")

	// cur makes a context current on the calling thread before a call that needs one,
	// in the same crossing into C (a thread-local read when it already is).
	cur = dl.Current{Get: cuCtxGetCurrent, Set: cuCtxSetCurrent}
)

// DefaultLibrary is the driver library opened when GPU_CUDA_LIBRARY is unset.
const DefaultLibrary = "libcuda.so.1"

// Available reports whether this build can load the driver: built with cgo, or
// without it on linux/amd64 or linux/arm64 (see Binding).
const Available = dl.Available

// Binding names how this build calls the driver: "cgo", "purego" (CGO_ENABLED=0 on
// linux/amd64 or linux/arm64), or "" when it cannot (another platform without cgo, or
// the build tag gpu_nodlopen). See package internal/dl.
const Binding = dl.Mechanism

var (
	loadOnce sync.Once
	loadErr  error
	libPath  string
	names    sync.Map // Result -> [2]string
)

// Load opens the driver library and calls cuInit once. Later calls return the first
// result. The error wraps backend.ErrNoDevice when there is no usable driver. Every
// other function of the package needs a successful Load first.
func Load() error {
	loadOnce.Do(func() {
		path := os.Getenv("GPU_CUDA_LIBRARY")
		if path == "" {
			path = DefaultLibrary
		}
		if !Available {
			loadErr = fmt.Errorf("cuda: this build cannot load the driver (CGO_ENABLED=0 on a platform other than linux/amd64 and linux/arm64, or the tag gpu_nodlopen): %w", backend.ErrNoDevice)
			return
		}
		lib, err := dl.Open(path)
		if err != nil {
			loadErr = fmt.Errorf("cuda: no driver: %w: %w", err, backend.ErrNoDevice)
			return
		}
		if err := api.Bind(lib); err != nil {
			lib.Close()
			loadErr = fmt.Errorf("cuda: driver %s too old: %w: %w", path, err, backend.ErrNoDevice)
			return
		}
		libPath = dl.PathOf(cuInit.Addr())
		if err := check("cuInit", cuInit.Call(0)); err != nil {
			loadErr = err
		}
	})
	return loadErr
}

// Prologue returns the driver's current-context pair (cuCtxGetCurrent,
// cuCtxSetCurrent) for bindings of other CUDA libraries through package internal/dl:
// f.CallIn(cu.Prologue(), uintptr(ctx), args...) makes ctx current on the thread and
// calls f in one crossing into C, as this package's own calls do. Valid once Load has
// succeeded.
func Prologue() *dl.Current { return &cur }

// LibraryPath loads the driver if it is not loaded yet and returns the file it was
// loaded from (the full path of libcuda.so.1), or "" if it could not be opened.
func LibraryPath() string {
	_ = Load()
	return libPath
}
