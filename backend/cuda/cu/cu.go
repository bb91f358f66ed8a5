package cu

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/internal/dl"
)

// The Go function of each entry point of api.go's table. The C signatures are the CUDA
// Driver API's (cuda.h), written here as the conversions of the arguments: handles and
// sizes as uintptr, C int and unsigned as uintptr(uint32(x)) (the callee reads the low
// bits), out-parameters as the address of a Go variable of the C type's size, converted
// in the argument list of Call or CallIn (package dl's rules). Calls that need a context
// make it current in the same crossing (CallIn).

// Handle types. Each names a driver object; the zero value is the null handle (for
// Stream, the legacy default stream).
type (
	Context  uintptr // CUcontext
	Stream   uintptr // CUstream
	Event    uintptr // CUevent
	Module   uintptr // CUmodule
	Function uintptr // CUfunction
	MemPool  uintptr // CUmemoryPool
	Device   int32   // CUdevice
)

// DevicePtr is a device address (CUdeviceptr).
type DevicePtr uint64

func resultNames(r Result) (string, string) {
	if v, ok := names.Load(r); ok {
		n := v.([2]string)
		return n[0], n[1]
	}
	n, m := fmt.Sprintf("CUDA_ERROR_%d", int(r)), "unknown error"
	var name, msg uintptr
	if cuGetErrorName.Bound() && int32(cuGetErrorName.Call(uintptr(uint32(r)), uintptr(unsafe.Pointer(&name)))) == 0 && name != 0 {
		n = dl.GoString(name)
	}
	if cuGetErrorString.Bound() && int32(cuGetErrorString.Call(uintptr(uint32(r)), uintptr(unsafe.Pointer(&msg)))) == 0 && msg != 0 {
		m = dl.GoString(msg)
	}
	names.Store(r, [2]string{n, m})
	return n, m
}

// NewError returns the error for code r from entry point op.
func NewError(op string, r Result) *Error {
	n, m := resultNames(r)
	return &Error{Code: r, Name: n, Message: m, Op: op}
}

// check converts a call's result register, a CUresult, to an error.
func check(op string, r uintptr) error {
	if int32(r) == 0 {
		return nil
	}
	return NewError(op, Result(int32(r)))
}

// checkReady maps CUDA_ERROR_NOT_READY to (false, nil).
func checkReady(op string, r uintptr) (bool, error) {
	switch Result(int32(r)) {
	case Success:
		return true, nil
	case ErrorNotReady:
		return false, nil
	}
	return false, NewError(op, Result(int32(r)))
}

// cstring returns the NUL-terminated prefix of b as a string.
func cstring(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// DriverVersion returns the driver's CUDA version as 1000*major + 10*minor.
func DriverVersion() (int, error) {
	var v int32
	err := check("cuDriverGetVersion", cuDriverGetVersion.Call(uintptr(unsafe.Pointer(&v))))
	return int(v), err
}

// DeviceCount returns the number of CUDA devices.
func DeviceCount() (int, error) {
	var n int32
	err := check("cuDeviceGetCount", cuDeviceGetCount.Call(uintptr(unsafe.Pointer(&n))))
	return int(n), err
}

// DeviceGet returns the device with the given ordinal.
func DeviceGet(ordinal int) (Device, error) {
	var d Device
	err := check("cuDeviceGet", cuDeviceGet.Call(uintptr(unsafe.Pointer(&d)), uintptr(uint32(ordinal))))
	return d, err
}

// Name returns the device's name.
func (d Device) Name() (string, error) {
	var buf [256]byte
	if err := check("cuDeviceGetName", cuDeviceGetName.Call(uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), uintptr(d))); err != nil {
		return "", err
	}
	return cstring(buf[:]), nil
}

// PCIBusID returns the device's PCI bus id ("0000:19:00.0").
func (d Device) PCIBusID() (string, error) {
	var buf [64]byte
	if err := check("cuDeviceGetPCIBusId", cuDeviceGetPCIBusId.Call(uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), uintptr(d))); err != nil {
		return "", err
	}
	return cstring(buf[:]), nil
}

// Attribute returns a device attribute (CUDA Driver API: cuDeviceGetAttribute).
func (d Device) Attribute(a DeviceAttribute) (int, error) {
	var v int32
	err := check("cuDeviceGetAttribute", cuDeviceGetAttribute.Call(uintptr(unsafe.Pointer(&v)), uintptr(a), uintptr(d)))
	return int(v), err
}

// TotalMem returns the device's memory in bytes.
func (d Device) TotalMem() (int64, error) {
	var v uint64
	err := check("cuDeviceTotalMem", cuDeviceTotalMem.Call(uintptr(unsafe.Pointer(&v)), uintptr(d)))
	return int64(v), err
}

// CanAccessPeer reports whether d can address memory on peer.
func (d Device) CanAccessPeer(peer Device) (bool, error) {
	var v int32
	err := check("cuDeviceCanAccessPeer", cuDeviceCanAccessPeer.Call(uintptr(unsafe.Pointer(&v)), uintptr(d), uintptr(peer)))
	return v != 0, err
}

// PrimaryCtxRetain retains the device's primary context.
func (d Device) PrimaryCtxRetain() (Context, error) {
	var c Context
	err := check("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain.Call(uintptr(unsafe.Pointer(&c)), uintptr(d)))
	return c, err
}

// PrimaryCtxRelease releases the device's primary context.
func (d Device) PrimaryCtxRelease() error {
	return check("cuDevicePrimaryCtxRelease", cuDevicePrimaryCtxRelease.Call(uintptr(d)))
}

// DefaultMemPool returns the device's default memory pool.
func (d Device) DefaultMemPool() (MemPool, error) {
	var p MemPool
	err := check("cuDeviceGetDefaultMemPool", cuDeviceGetDefaultMemPool.Call(uintptr(unsafe.Pointer(&p)), uintptr(d)))
	return p, err
}

// CurrentContext returns the context current on the calling thread.
func CurrentContext() (Context, error) {
	var c Context
	err := check("cuCtxGetCurrent", cuCtxGetCurrent.Call(uintptr(unsafe.Pointer(&c))))
	return c, err
}

// SetCurrent makes c current on the calling thread.
func (c Context) SetCurrent() error {
	return check("cuCtxSetCurrent", cuCtxSetCurrent.Call(uintptr(c)))
}

// Synchronize blocks until all work in c is done (CUDA Driver API: cuCtxSynchronize).
func (c Context) Synchronize() error {
	return check("cuCtxSynchronize", cuCtxSynchronize.CallIn(&cur, uintptr(c)))
}

// Limit is a context limit (CUDA Driver API: CUlimit).
type Limit int32

// LimitMaxL2FetchGranularity is CU_LIMIT_MAX_L2_FETCH_GRANULARITY: the most bytes the
// L2 cache fetches from DRAM for one miss (0 to 128, a hint).
const LimitMaxL2FetchGranularity Limit = 0x05

// Limit returns c's value of the limit l (CUDA Driver API: cuCtxGetLimit).
func (c Context) Limit(l Limit) (int64, error) {
	var v uint64
	err := check("cuCtxGetLimit", cuCtxGetLimit.CallIn(&cur, uintptr(c), uintptr(unsafe.Pointer(&v)), uintptr(l)))
	return int64(v), err
}

// SetLimit sets c's limit l to v (CUDA Driver API: cuCtxSetLimit).
func (c Context) SetLimit(l Limit, v int64) error {
	return check("cuCtxSetLimit", cuCtxSetLimit.CallIn(&cur, uintptr(c), uintptr(l), uintptr(v)))
}

// EnablePeerAccess lets c address memory of peer's context.
func (c Context) EnablePeerAccess(peer Context) error {
	r := cuCtxEnablePeerAccess.CallIn(&cur, uintptr(c), uintptr(peer), 0)
	if Result(int32(r)) == ErrorPeerAccessEnabled {
		return nil
	}
	return check("cuCtxEnablePeerAccess", r)
}

// StreamCreate creates a stream (flags: StreamNonBlocking).
func (c Context) StreamCreate(flags uint32) (Stream, error) {
	var s Stream
	err := check("cuStreamCreate", cuStreamCreate.CallIn(&cur, uintptr(c), uintptr(unsafe.Pointer(&s)), uintptr(flags)))
	return s, err
}

// StreamDestroy destroys s; its pending work still completes.
func (c Context) StreamDestroy(s Stream) error {
	return check("cuStreamDestroy", cuStreamDestroy.CallIn(&cur, uintptr(c), uintptr(s)))
}

// StreamQuery reports whether s is idle.
func (c Context) StreamQuery(s Stream) (bool, error) {
	return checkReady("cuStreamQuery", cuStreamQuery.CallIn(&cur, uintptr(c), uintptr(s)))
}

// StreamSynchronize blocks until s is idle.
func (c Context) StreamSynchronize(s Stream) error {
	return check("cuStreamSynchronize", cuStreamSynchronize.CallIn(&cur, uintptr(c), uintptr(s)))
}

// StreamWaitEvent makes later work on s wait for e.
func (c Context) StreamWaitEvent(s Stream, e Event) error {
	return check("cuStreamWaitEvent", cuStreamWaitEvent.CallIn(&cur, uintptr(c), uintptr(s), uintptr(e), 0))
}

// StreamWaitValue32 makes later work on s wait for the 32-bit word at addr (flags:
// StreamWaitValueGEQ: until int32(*addr-v) >= 0) (CUDA Driver API:
// cuStreamWaitValue32_v2). A driver without it gives an error wrapping
// backend.ErrNotSupported.
func (c Context) StreamWaitValue32(s Stream, addr DevicePtr, v, flags uint32) error {
	if !cuStreamWaitValue32.Bound() {
		return fmt.Errorf("cuda: cuStreamWaitValue32: %w", backend.ErrNotSupported)
	}
	return check("cuStreamWaitValue32", cuStreamWaitValue32.CallIn(&cur, uintptr(c), uintptr(s), uintptr(addr), uintptr(v), uintptr(flags)))
}

// StreamWriteValue32 enqueues writing v into the 32-bit word at addr (CUDA Driver API:
// cuStreamWriteValue32_v2). A driver without it gives an error wrapping
// backend.ErrNotSupported.
func (c Context) StreamWriteValue32(s Stream, addr DevicePtr, v, flags uint32) error {
	if !cuStreamWriteValue32.Bound() {
		return fmt.Errorf("cuda: cuStreamWriteValue32: %w", backend.ErrNotSupported)
	}
	return check("cuStreamWriteValue32", cuStreamWriteValue32.CallIn(&cur, uintptr(c), uintptr(s), uintptr(addr), uintptr(v), uintptr(flags)))
}

// EventCreate creates an event (flags: EventBlockingSync, EventDisableTiming).
func (c Context) EventCreate(flags uint32) (Event, error) {
	var e Event
	err := check("cuEventCreate", cuEventCreate.CallIn(&cur, uintptr(c), uintptr(unsafe.Pointer(&e)), uintptr(flags)))
	return e, err
}

// EventDestroy destroys e.
func (c Context) EventDestroy(e Event) error {
	return check("cuEventDestroy", cuEventDestroy.CallIn(&cur, uintptr(c), uintptr(e)))
}

// EventRecord records e on s.
func (c Context) EventRecord(e Event, s Stream) error {
	return check("cuEventRecord", cuEventRecord.CallIn(&cur, uintptr(c), uintptr(e), uintptr(s)))
}

// EventQuery reports whether e has completed.
func (c Context) EventQuery(e Event) (bool, error) {
	return checkReady("cuEventQuery", cuEventQuery.CallIn(&cur, uintptr(c), uintptr(e)))
}

// EventSynchronize blocks until e completes.
func (c Context) EventSynchronize(e Event) error {
	return check("cuEventSynchronize", cuEventSynchronize.CallIn(&cur, uintptr(c), uintptr(e)))
}

// EventElapsedTime returns the milliseconds between start and end.
func (c Context) EventElapsedTime(start, end Event) (float32, error) {
	var ms float32
	err := check("cuEventElapsedTime", cuEventElapsedTime.CallIn(&cur, uintptr(c), uintptr(unsafe.Pointer(&ms)), uintptr(start), uintptr(end)))
	return ms, err
}

// MemAlloc allocates device memory synchronously.
func (c Context) MemAlloc(n int64) (DevicePtr, error) {
	var p DevicePtr
	err := check("cuMemAlloc", cuMemAlloc.CallIn(&cur, uintptr(c), uintptr(unsafe.Pointer(&p)), uintptr(n)))
	return p, err
}

// MemFree frees memory from MemAlloc or MemAllocManaged.
func (c Context) MemFree(p DevicePtr) error {
	return check("cuMemFree", cuMemFree.CallIn(&cur, uintptr(c), uintptr(p)))
}

// MemAllocAsync allocates device memory from the current pool, ordered on s.
func (c Context) MemAllocAsync(n int64, s Stream) (DevicePtr, error) {
	var p DevicePtr
	err := check("cuMemAllocAsync", cuMemAllocAsync.CallIn(&cur, uintptr(c), uintptr(unsafe.Pointer(&p)), uintptr(n), uintptr(s)))
	return p, err
}

// MemFreeAsync frees pool memory once s's work so far is done.
func (c Context) MemFreeAsync(p DevicePtr, s Stream) error {
	return check("cuMemFreeAsync", cuMemFreeAsync.CallIn(&cur, uintptr(c), uintptr(p), uintptr(s)))
}

// MemPoolSetAttribute sets a 64-bit pool attribute (MemPoolReleaseThreshold).
func (c Context) MemPoolSetAttribute(p MemPool, attr MemPoolAttribute, v uint64) error {
	return check("cuMemPoolSetAttribute", cuMemPoolSetAttribute.CallIn(&cur, uintptr(c), uintptr(p), uintptr(attr), uintptr(unsafe.Pointer(&v))))
}

// MemPoolGetAttribute reads a 64-bit pool attribute.
func (c Context) MemPoolGetAttribute(p MemPool, attr MemPoolAttribute) (uint64, error) {
	var v uint64
	err := check("cuMemPoolGetAttribute", cuMemPoolGetAttribute.CallIn(&cur, uintptr(c), uintptr(p), uintptr(attr), uintptr(unsafe.Pointer(&v))))
	return v, err
}

// MemPoolTrimTo releases unused pool memory down to keep bytes.
func (c Context) MemPoolTrimTo(p MemPool, keep int64) error {
	return check("cuMemPoolTrimTo", cuMemPoolTrimTo.CallIn(&cur, uintptr(c), uintptr(p), uintptr(keep)))
}

// memAccessDesc is CUmemAccessDesc: a CUmemLocation {type, id} and the access flags.
type memAccessDesc struct {
	locType, id, flags int32
}

// MemPoolSetAccessDevice lets device dev read and write memory of pool p (CUDA Driver
// API: cuMemPoolSetAccess with CU_MEM_LOCATION_TYPE_DEVICE and
// CU_MEM_ACCESS_FLAGS_PROT_READWRITE). Peer access through cuCtxEnablePeerAccess doesn't
// cover stream-ordered pool allocations.
func (c Context) MemPoolSetAccessDevice(p MemPool, dev Device) error {
	d := memAccessDesc{locType: 1, id: int32(dev), flags: 3}
	return check("cuMemPoolSetAccess", cuMemPoolSetAccess.CallIn(&cur, uintptr(c), uintptr(p), uintptr(unsafe.Pointer(&d)), 1))
}

// MemAllocManaged allocates managed memory attached globally.
func (c Context) MemAllocManaged(n int64) (DevicePtr, error) {
	var p DevicePtr
	err := check("cuMemAllocManaged", cuMemAllocManaged.CallIn(&cur, uintptr(c), uintptr(unsafe.Pointer(&p)), uintptr(n), 1))
	return p, err
}

// MemHostAlloc allocates pinned host memory (flags: MemHostAllocPortable,
// MemHostAllocDeviceMap) and returns its host address.
func (c Context) MemHostAlloc(n int64, flags uint32) (unsafe.Pointer, error) {
	var p uintptr
	err := check("cuMemHostAlloc", cuMemHostAlloc.CallIn(&cur, uintptr(c), uintptr(unsafe.Pointer(&p)), uintptr(n), uintptr(flags)))
	return dl.Pointer(p), err
}

// MemFreeHost frees pinned host memory.
func (c Context) MemFreeHost(p unsafe.Pointer) error {
	return check("cuMemFreeHost", cuMemFreeHost.CallIn(&cur, uintptr(c), uintptr(p)))
}

// MemHostGetDevicePointer returns the device address of pinned host memory.
func (c Context) MemHostGetDevicePointer(p unsafe.Pointer) (DevicePtr, error) {
	var d DevicePtr
	err := check("cuMemHostGetDevicePointer", cuMemHostGetDevicePointer.CallIn(&cur, uintptr(c), uintptr(unsafe.Pointer(&d)), uintptr(p), 0))
	return d, err
}

// HostPointer returns managed or pinned memory's device address as a host pointer
// (they are equal under unified addressing).
func HostPointer(p DevicePtr) unsafe.Pointer { return dl.Pointer(uintptr(p)) }

// Noop makes an empty call into C: the cost of crossing into C and back with this
// build's binding (Binding).
func Noop() { dl.Noop() }

// EnsureOnly makes c current on the calling thread if it is not, and does nothing
// else: the per-call cost of the context check every wrapper does. Lock the goroutine
// to its thread for c to stay current for later calls (NCCL's).
func (c Context) EnsureOnly() error { return check("cuCtxSetCurrent", cur.Make(uintptr(c))) }

// GetCurrentRaw calls cuCtxGetCurrent and discards the result: the cost of one plain
// driver call.
func GetCurrentRaw() {
	var c uintptr
	cuCtxGetCurrent.Call(uintptr(unsafe.Pointer(&c)))
}

// MemGetInfo returns free and total device memory in bytes.
func (c Context) MemGetInfo() (free, total int64, err error) {
	var f, t uint64
	err = check("cuMemGetInfo", cuMemGetInfo.CallIn(&cur, uintptr(c), uintptr(unsafe.Pointer(&f)), uintptr(unsafe.Pointer(&t))))
	return int64(f), int64(t), err
}

// MemcpyHtoDAsync copies n bytes from host address src. src must stay valid until
// the copy completes (the caller pins Go memory).
func (c Context) MemcpyHtoDAsync(dst DevicePtr, src unsafe.Pointer, n int64, s Stream) error {
	return check("cuMemcpyHtoDAsync", cuMemcpyHtoDAsync.CallIn(&cur, uintptr(c), uintptr(dst), uintptr(src), uintptr(n), uintptr(s)))
}

// MemcpyDtoHAsync copies n bytes to host address dst, under the same rule.
func (c Context) MemcpyDtoHAsync(dst unsafe.Pointer, src DevicePtr, n int64, s Stream) error {
	return check("cuMemcpyDtoHAsync", cuMemcpyDtoHAsync.CallIn(&cur, uintptr(c), uintptr(dst), uintptr(src), uintptr(n), uintptr(s)))
}

// MemcpyDtoDAsync copies n bytes between device addresses.
func (c Context) MemcpyDtoDAsync(dst, src DevicePtr, n int64, s Stream) error {
	return check("cuMemcpyDtoDAsync", cuMemcpyDtoDAsync.CallIn(&cur, uintptr(c), uintptr(dst), uintptr(src), uintptr(n), uintptr(s)))
}

// memcpy2D is the driver's CUDA_MEMCPY2D (cuda.h): every field is 8 bytes wide on a
// 64-bit host (the memory types, 4-byte enums, are followed by 4 bytes of padding).
type memcpy2D struct {
	srcXInBytes, srcY uint64
	srcMemoryType     uint64 // CUmemorytype in the low 4 bytes
	srcHost           uintptr
	srcDevice         DevicePtr
	srcArray          uintptr
	srcPitch          uint64
	dstXInBytes, dstY uint64
	dstMemoryType     uint64
	dstHost           uintptr
	dstDevice         DevicePtr
	dstArray          uintptr
	dstPitch          uint64
	widthInBytes      uint64
	height            uint64
}

// memoryTypeDevice is CU_MEMORYTYPE_DEVICE.
const memoryTypeDevice = 2

// Memcpy2DDtoDAsync copies height rows of width bytes between device addresses: row r
// from src + r*srcPitch to dst + r*dstPitch (cuMemcpy2DAsync with device memory on
// both sides). Pitches must be at least width; the driver may ask more of them
// (CUDA_ERROR_INVALID_VALUE). A driver without the entry point gives an error wrapping
// backend.ErrNotSupported.
func (c Context) Memcpy2DDtoDAsync(dst DevicePtr, dstPitch int64, src DevicePtr, srcPitch int64, width, height int64, s Stream) error {
	if !cuMemcpy2DAsync.Bound() {
		return notSupported(cuMemcpy2DAsync)
	}
	p := memcpy2D{
		srcMemoryType: memoryTypeDevice, srcDevice: src, srcPitch: uint64(srcPitch),
		dstMemoryType: memoryTypeDevice, dstDevice: dst, dstPitch: uint64(dstPitch),
		widthInBytes: uint64(width), height: uint64(height),
	}
	// No function is called between taking p's address and the call (package dl's rule).
	return check("cuMemcpy2DAsync", cuMemcpy2DAsync.CallIn(&cur, uintptr(c), uintptr(unsafe.Pointer(&p)), uintptr(s)))
}

// MemcpyAsync copies n bytes between any two addresses of the unified address space.
func (c Context) MemcpyAsync(dst, src DevicePtr, n int64, s Stream) error {
	return check("cuMemcpyAsync", cuMemcpyAsync.CallIn(&cur, uintptr(c), uintptr(dst), uintptr(src), uintptr(n), uintptr(s)))
}

// MemcpyPeerAsync copies n bytes between memory of two contexts.
func (c Context) MemcpyPeerAsync(dst DevicePtr, dstCtx Context, src DevicePtr, srcCtx Context, n int64, s Stream) error {
	return check("cuMemcpyPeerAsync", cuMemcpyPeerAsync.CallIn(&cur, uintptr(c), uintptr(dst), uintptr(dstCtx), uintptr(src), uintptr(srcCtx), uintptr(n), uintptr(s)))
}

// MemsetAsync sets n elements of width bytes (1, 2 or 4) at p to v.
func (c Context) MemsetAsync(p DevicePtr, v uint32, width int, n int64, s Stream) error {
	switch width {
	case 1:
		return check("cuMemsetD8Async", cuMemsetD8Async.CallIn(&cur, uintptr(c), uintptr(p), uintptr(uint8(v)), uintptr(n), uintptr(s)))
	case 2:
		return check("cuMemsetD16Async", cuMemsetD16Async.CallIn(&cur, uintptr(c), uintptr(p), uintptr(uint16(v)), uintptr(n), uintptr(s)))
	case 4:
		return check("cuMemsetD32Async", cuMemsetD32Async.CallIn(&cur, uintptr(c), uintptr(p), uintptr(v), uintptr(n), uintptr(s)))
	}
	return &Error{Code: ErrorInvalidValue, Name: "CUDA_ERROR_INVALID_VALUE", Message: fmt.Sprintf("memset width %d", width), Op: "cuMemsetAsync"}
}

// The JIT options of ModuleLoadData (CUDA Driver API: CUjit_option).
const (
	jitErrorLogBuffer          = 5
	jitErrorLogBufferSizeBytes = 6
	jitLogSize                 = 8192
)

// ModuleLoadData loads a module from PTX text (NUL-terminated) or a cubin/fatbin
// image. A compile error carries the JIT error log in Error.Detail.
func (c Context) ModuleLoadData(image []byte) (Module, error) {
	if len(image) == 0 {
		return 0, &Error{Code: ErrorInvalidImage, Name: "CUDA_ERROR_INVALID_IMAGE", Message: "empty image", Op: "cuModuleLoadDataEx"}
	}
	logBuf := make([]byte, jitLogSize)
	opts := [2]int32{jitErrorLogBuffer, jitErrorLogBufferSizeBytes}
	vals := [2]uintptr{uintptr(unsafe.Pointer(&logBuf[0])), jitLogSize}
	var m Module
	r := cuModuleLoadDataEx.CallIn(&cur, uintptr(c), uintptr(unsafe.Pointer(&m)), uintptr(unsafe.Pointer(&image[0])),
		2, uintptr(unsafe.Pointer(&opts[0])), uintptr(unsafe.Pointer(&vals[0])))
	runtime.KeepAlive(logBuf)
	runtime.KeepAlive(image)
	if int32(r) != 0 {
		e := NewError("cuModuleLoadDataEx", Result(int32(r)))
		e.Detail = cstring(logBuf)
		return 0, e
	}
	return m, nil
}

// ModuleUnload unloads m.
func (c Context) ModuleUnload(m Module) error {
	return check("cuModuleUnload", cuModuleUnload.CallIn(&cur, uintptr(c), uintptr(m)))
}

// ModuleGetFunction looks up a kernel.
func (c Context) ModuleGetFunction(m Module, name string) (Function, error) {
	cname := append([]byte(name), 0)
	var f Function
	err := check("cuModuleGetFunction", cuModuleGetFunction.CallIn(&cur, uintptr(c), uintptr(unsafe.Pointer(&f)), uintptr(m), uintptr(unsafe.Pointer(&cname[0]))))
	if e, ok := err.(*Error); ok {
		e.Detail = name
	}
	return f, err
}

// FuncGetAttribute reads a kernel attribute.
func (c Context) FuncGetAttribute(f Function, a FuncAttribute) (int, error) {
	var v int32
	err := check("cuFuncGetAttribute", cuFuncGetAttribute.CallIn(&cur, uintptr(c), uintptr(unsafe.Pointer(&v)), uintptr(a), uintptr(f)))
	return int(v), err
}

// FuncSetAttribute sets a kernel attribute.
func (c Context) FuncSetAttribute(f Function, a FuncAttribute, v int) error {
	return check("cuFuncSetAttribute", cuFuncSetAttribute.CallIn(&cur, uintptr(c), uintptr(f), uintptr(a), uintptr(uint32(v))))
}

// OccupancyMaxActiveBlocks returns how many blocks of the given size fit on one
// multiprocessor.
func (c Context) OccupancyMaxActiveBlocks(f Function, block int, dynSmem int) (int, error) {
	var n int32
	err := check("cuOccupancyMaxActiveBlocksPerMultiprocessor", cuOccupancyMaxActiveBlocks.CallIn(&cur, uintptr(c), uintptr(unsafe.Pointer(&n)), uintptr(f), uintptr(uint32(block)), uintptr(dynSmem)))
	return int(n), err
}

// maxStackParams is the most kernel parameters whose address array LaunchKernel keeps
// on the stack.
const maxStackParams = 24

// LaunchKernel launches f. The parameters' values are packed in blob, parameter i
// starting at byte offs[i]; blob and offs are read during the call only.
func (c Context) LaunchKernel(f Function, grid, block [3]uint32, smem uint32, s Stream, blob []byte, offs []int32) error {
	if len(offs) == 0 {
		return check("cuLaunchKernel", cuLaunchKernel.CallIn(&cur, uintptr(c), uintptr(f),
			uintptr(grid[0]), uintptr(grid[1]), uintptr(grid[2]), uintptr(block[0]), uintptr(block[1]), uintptr(block[2]),
			uintptr(smem), uintptr(s), 0, 0))
	}
	// kernelParams: the address of each parameter's value in blob. No function is called
	// between taking blob's address and the call (package dl's rule), so blob may be on
	// the stack.
	var small [maxStackParams]uintptr
	params := small[:]
	if len(offs) > len(small) {
		params = make([]uintptr, len(offs))
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(blob)))
	for i, o := range offs {
		params[i] = base + uintptr(o)
	}
	r := cuLaunchKernel.CallIn(&cur, uintptr(c), uintptr(f),
		uintptr(grid[0]), uintptr(grid[1]), uintptr(grid[2]), uintptr(block[0]), uintptr(block[1]), uintptr(block[2]),
		uintptr(smem), uintptr(s), uintptr(unsafe.Pointer(&params[0])), 0)
	runtime.KeepAlive(blob)
	return check("cuLaunchKernel", r)
}

// LaunchAttributeProgrammaticStreamSerialization is the launch attribute that lets a
// kernel start before the kernel ahead of it on the stream has completed, once every
// block of that one has executed griddepcontrol.launch_dependents (or completed): the
// kernel itself waits for its predecessor's results with griddepcontrol.wait
// (programmatic dependent launch, compute capability 9.0+; a graph captured from such
// launches keeps them as programmatic edges). Value: a non-zero int32 (CUDA Driver API:
// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION, CUlaunchAttributeValue::
// programmaticStreamSerializationAllowed).
const LaunchAttributeProgrammaticStreamSerialization uint32 = 6

// LaunchAttributeCooperative is the launch attribute that makes every block of the
// grid resident at once (a cooperative launch, as cuLaunchCooperativeKernel), or fails
// the launch with CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE. Value: a non-zero int32
// (CUDA Driver API: CU_LAUNCH_ATTRIBUTE_COOPERATIVE, CUlaunchAttributeValue::cooperative).
const LaunchAttributeCooperative uint32 = 2

// LaunchAttribute is one attribute of LaunchKernelEx, laid out as CUlaunchAttribute:
// the attribute's id, then its value (CUlaunchAttributeValue, a union of 64 bytes;
// an int32 value is Value[0]'s low 32 bits).
type LaunchAttribute struct {
	ID    uint32
	_     uint32
	Value [8]uint64
}

// launchConfig is CUlaunchConfig.
type launchConfig struct {
	grid, block [3]uint32
	smem        uint32
	_           uint32
	stream      uintptr
	attrs       uintptr
	numAttrs    uint32
	_           uint32
}

// LaunchKernelEx launches f as LaunchKernel does, with launch attributes (CUDA Driver
// API: cuLaunchKernelEx, CUDA 12.0+; an error wrapping backend.ErrNotSupported on an
// older driver). attrs, blob and offs are read during the call only.
func (c Context) LaunchKernelEx(f Function, grid, block [3]uint32, smem uint32, s Stream, blob []byte, offs []int32, attrs []LaunchAttribute) error {
	if !cuLaunchKernelEx.Bound() {
		return notSupported(cuLaunchKernelEx)
	}
	cfg := launchConfig{grid: grid, block: block, smem: smem, stream: uintptr(s), numAttrs: uint32(len(attrs))}
	if len(attrs) > 0 {
		cfg.attrs = uintptr(unsafe.Pointer(&attrs[0]))
	}
	var small [maxStackParams]uintptr
	params := small[:0]
	if len(offs) > len(small) {
		params = make([]uintptr, 0, len(offs))
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(blob)))
	for _, o := range offs {
		params = append(params, base+uintptr(o))
	}
	var pp uintptr
	if len(params) > 0 {
		pp = uintptr(unsafe.Pointer(&params[0]))
	}
	// (No function is called between taking the addresses and the call: package dl's
	// rule, so that all of them may be on the stack.)
	r := cuLaunchKernelEx.CallIn(&cur, uintptr(c), uintptr(unsafe.Pointer(&cfg)), uintptr(f), pp, 0)
	runtime.KeepAlive(blob)
	runtime.KeepAlive(attrs)
	runtime.KeepAlive(params)
	return check("cuLaunchKernelEx", r)
}

// RawLaunchLoop launches f, a kernel without parameters, n times on s with a 1x1 grid,
// all in one crossing into C: the baseline of the launch benchmark.
func (c Context) RawLaunchLoop(f Function, s Stream, n int) error {
	if n <= 0 {
		return nil
	}
	return check("cuLaunchKernel", cuLaunchKernel.CallInRepeat(n, &cur, uintptr(c), uintptr(f), 1, 1, 1, 1, 1, 1, 0, uintptr(s), 0, 0))
}

// Graph and GraphExec name a graph and an executable graph (CUgraph, CUgraphExec);
// GraphNode one of a graph's nodes (CUgraphNode).
type (
	Graph     uintptr
	GraphExec uintptr
	GraphNode uintptr
)

// notSupported is the error of an optional entry point the driver lacks.
func notSupported(f *dl.Func) error {
	return fmt.Errorf("cuda: the driver has no %s: %w", f.Name(), backend.ErrNotSupported)
}

// StreamBeginCapture starts capturing the work enqueued on s into a graph (CUDA Driver
// API: cuStreamBeginCapture_v2; mode: StreamCaptureModeRelaxed).
func (c Context) StreamBeginCapture(s Stream, mode uint32) error {
	if !cuStreamBeginCapture.Bound() {
		return notSupported(cuStreamBeginCapture)
	}
	return check("cuStreamBeginCapture", cuStreamBeginCapture.CallIn(&cur, uintptr(c), uintptr(s), uintptr(mode)))
}

// StreamEndCapture ends s's capture and returns the graph (CUDA Driver API:
// cuStreamEndCapture). A capture invalidated by an earlier error returns that error
// (CUDA_ERROR_STREAM_CAPTURE_INVALIDATED) and the graph, if the driver gave one.
func (c Context) StreamEndCapture(s Stream) (Graph, error) {
	if !cuStreamEndCapture.Bound() {
		return 0, notSupported(cuStreamEndCapture)
	}
	var g Graph
	err := check("cuStreamEndCapture", cuStreamEndCapture.CallIn(&cur, uintptr(c), uintptr(s), uintptr(unsafe.Pointer(&g))))
	return g, err
}

// StreamLastCaptured returns the node the next work captured on s would depend on:
// the node just captured, such as a kernel launch (CUDA Driver API:
// cuStreamGetCaptureInfo_v3, else _v2). It is an error wrapping
// backend.ErrInvalidValue if s is not capturing or the capture has no single last
// node.
func (c Context) StreamLastCaptured(s Stream) (GraphNode, error) {
	var status int32
	var id uint64
	var g Graph
	var deps uintptr
	var n uintptr
	var r uintptr
	switch {
	case cuStreamGetCaptureInfo3.Bound():
		var edges uintptr
		r = cuStreamGetCaptureInfo3.CallIn(&cur, uintptr(c), uintptr(s), uintptr(unsafe.Pointer(&status)),
			uintptr(unsafe.Pointer(&id)), uintptr(unsafe.Pointer(&g)), uintptr(unsafe.Pointer(&deps)),
			uintptr(unsafe.Pointer(&edges)), uintptr(unsafe.Pointer(&n)))
	case cuStreamGetCaptureInfo2.Bound():
		r = cuStreamGetCaptureInfo2.CallIn(&cur, uintptr(c), uintptr(s), uintptr(unsafe.Pointer(&status)),
			uintptr(unsafe.Pointer(&id)), uintptr(unsafe.Pointer(&g)), uintptr(unsafe.Pointer(&deps)),
			uintptr(unsafe.Pointer(&n)))
	default:
		return 0, notSupported(cuStreamGetCaptureInfo3)
	}
	if err := check("cuStreamGetCaptureInfo", r); err != nil {
		return 0, err
	}
	if status != 1 || n != 1 || deps == 0 {
		return 0, &Error{Code: ErrorInvalidValue, Name: "CUDA_ERROR_INVALID_VALUE",
			Message: fmt.Sprintf("capture status %d with %d last nodes", status, n), Op: "cuStreamGetCaptureInfo"}
	}
	return *(*GraphNode)(dl.Pointer(deps)), nil
}

// GraphInstantiate makes an executable graph of g (CUDA Driver API:
// cuGraphInstantiateWithFlags).
func (c Context) GraphInstantiate(g Graph, flags uint64) (GraphExec, error) {
	if !cuGraphInstantiateWithFlags.Bound() {
		return 0, notSupported(cuGraphInstantiateWithFlags)
	}
	var e GraphExec
	err := check("cuGraphInstantiateWithFlags", cuGraphInstantiateWithFlags.CallIn(&cur, uintptr(c), uintptr(unsafe.Pointer(&e)), uintptr(g), uintptr(flags)))
	return e, err
}

// GraphLaunch enqueues a launch of e on s (CUDA Driver API: cuGraphLaunch): it runs
// after s's earlier work and after e's earlier launches.
func (c Context) GraphLaunch(e GraphExec, s Stream) error {
	if !cuGraphLaunch.Bound() {
		return notSupported(cuGraphLaunch)
	}
	return check("cuGraphLaunch", cuGraphLaunch.CallIn(&cur, uintptr(c), uintptr(e), uintptr(s)))
}

// GraphExecDestroy destroys e; a launch in flight completes first (CUDA Driver API:
// cuGraphExecDestroy).
func (c Context) GraphExecDestroy(e GraphExec) error {
	if !cuGraphExecDestroy.Bound() {
		return notSupported(cuGraphExecDestroy)
	}
	return check("cuGraphExecDestroy", cuGraphExecDestroy.CallIn(&cur, uintptr(c), uintptr(e)))
}

// GraphDestroy destroys g (CUDA Driver API: cuGraphDestroy).
func (c Context) GraphDestroy(g Graph) error {
	if !cuGraphDestroy.Bound() {
		return notSupported(cuGraphDestroy)
	}
	return check("cuGraphDestroy", cuGraphDestroy.CallIn(&cur, uintptr(c), uintptr(g)))
}

// kernelNodeParams is CUDA_KERNEL_NODE_PARAMS_v2 (the same layout on every 64-bit
// platform: 72 bytes).
type kernelNodeParams struct {
	fn          uintptr
	grid, block [3]uint32
	smem        uint32
	params      uintptr // void **kernelParams
	extra       uintptr
	kern        uintptr // CUkernel: none
	ctx         uintptr // CUcontext: none (the function's)
}

// GraphExecKernelNodeSetParams changes the kernel, geometry and parameters of kernel
// node n of e's graph for e's later launches (CUDA Driver API:
// cuGraphExecKernelNodeSetParams_v2); the parameters are packed as LaunchKernel's.
func (c Context) GraphExecKernelNodeSetParams(e GraphExec, n GraphNode, f Function, grid, block [3]uint32, smem uint32, blob []byte, offs []int32) error {
	if !cuGraphExecKernelNodeSetParams.Bound() {
		return notSupported(cuGraphExecKernelNodeSetParams)
	}
	var small [maxStackParams]uintptr
	params := small[:]
	if len(offs) > len(small) {
		params = make([]uintptr, len(offs))
	}
	var p kernelNodeParams
	p.fn, p.grid, p.block, p.smem = uintptr(f), grid, block, smem
	// As in LaunchKernel: nothing is called between taking the addresses of blob,
	// params and p and the call.
	if len(offs) > 0 {
		base := uintptr(unsafe.Pointer(unsafe.SliceData(blob)))
		for i, o := range offs {
			params[i] = base + uintptr(o)
		}
		p.params = uintptr(unsafe.Pointer(&params[0]))
	}
	r := cuGraphExecKernelNodeSetParams.CallIn(&cur, uintptr(c), uintptr(e), uintptr(n), uintptr(unsafe.Pointer(&p)))
	runtime.KeepAlive(blob)
	runtime.KeepAlive(params)
	return check("cuGraphExecKernelNodeSetParams", r)
}

// LaunchHostFunc enqueues a call of the C function fn(userData) on s (CUDA Driver API:
// cuLaunchHostFunc): the driver calls it on a thread of its own once s's earlier work
// is done, and s's later work waits for it to return. fn must not call the CUDA API.
func (c Context) LaunchHostFunc(s Stream, fn, userData uintptr) error {
	if !cuLaunchHostFunc.Bound() {
		return notSupported(cuLaunchHostFunc)
	}
	return check("cuLaunchHostFunc", cuLaunchHostFunc.CallIn(&cur, uintptr(c), uintptr(s), fn, userData))
}

// StreamContext returns the context s belongs to (CUDA Driver API: cuStreamGetCtx);
// for the special handles (0, StreamLegacy, StreamPerThread), the context current on
// the thread, which the call makes c.
func (c Context) StreamContext(s Stream) (Context, error) {
	if !cuStreamGetCtx.Bound() {
		return 0, notSupported(cuStreamGetCtx)
	}
	var sc Context
	err := check("cuStreamGetCtx", cuStreamGetCtx.CallIn(&cur, uintptr(c), uintptr(s), uintptr(unsafe.Pointer(&sc))))
	return sc, err
}
