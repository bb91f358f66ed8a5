//go:build cgo

package cu

/*
#cgo linux LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef uintptr_t H;              // any opaque driver handle
typedef unsigned long long DPTR;  // CUdeviceptr

enum {
	P_cuInit, P_cuDriverGetVersion, P_cuDeviceGetCount, P_cuDeviceGet, P_cuDeviceGetName,
	P_cuDeviceGetAttribute, P_cuDeviceTotalMem, P_cuDeviceGetPCIBusId,
	P_cuDevicePrimaryCtxRetain, P_cuDevicePrimaryCtxRelease, P_cuDeviceCanAccessPeer,
	P_cuGetErrorName, P_cuGetErrorString, P_cuCtxGetCurrent, P_cuCtxSetCurrent,
	P_cuCtxSynchronize, P_cuCtxEnablePeerAccess,
	P_cuStreamCreate, P_cuStreamDestroy, P_cuStreamQuery, P_cuStreamSynchronize,
	P_cuStreamWaitEvent,
	P_cuEventCreate, P_cuEventDestroy, P_cuEventRecord, P_cuEventQuery, P_cuEventSynchronize,
	P_cuEventElapsedTime,
	P_cuMemAlloc, P_cuMemFree, P_cuMemAllocAsync, P_cuMemFreeAsync,
	P_cuDeviceGetDefaultMemPool, P_cuMemPoolSetAttribute, P_cuMemPoolGetAttribute, P_cuMemPoolTrimTo,
	P_cuMemPoolSetAccess,
	P_cuMemAllocManaged, P_cuMemHostAlloc, P_cuMemFreeHost, P_cuMemHostGetDevicePointer,
	P_cuMemGetInfo,
	P_cuMemcpyHtoDAsync, P_cuMemcpyDtoHAsync, P_cuMemcpyDtoDAsync, P_cuMemcpyAsync, P_cuMemcpyPeerAsync,
	P_cuMemsetD8Async, P_cuMemsetD16Async, P_cuMemsetD32Async,
	P_cuModuleLoadDataEx, P_cuModuleUnload, P_cuModuleGetFunction,
	P_cuFuncGetAttribute, P_cuFuncSetAttribute, P_cuLaunchKernel,
	P_cuOccupancyMaxActiveBlocksPerMultiprocessor,
	// Stream memory operations (sync branch: asynchronous pageable copies).
	P_cuStreamWaitValue32, P_cuStreamWriteValue32,
	P_COUNT
};

static const char* const gocu_names[P_COUNT][2] = {
	{"cuInit", 0}, {"cuDriverGetVersion", 0}, {"cuDeviceGetCount", 0}, {"cuDeviceGet", 0},
	{"cuDeviceGetName", 0}, {"cuDeviceGetAttribute", 0}, {"cuDeviceTotalMem_v2", 0},
	{"cuDeviceGetPCIBusId", 0}, {"cuDevicePrimaryCtxRetain", 0},
	{"cuDevicePrimaryCtxRelease_v2", 0}, {"cuDeviceCanAccessPeer", 0},
	{"cuGetErrorName", 0}, {"cuGetErrorString", 0}, {"cuCtxGetCurrent", 0}, {"cuCtxSetCurrent", 0},
	{"cuCtxSynchronize", 0}, {"cuCtxEnablePeerAccess", 0},
	{"cuStreamCreate", 0}, {"cuStreamDestroy_v2", 0}, {"cuStreamQuery", 0},
	{"cuStreamSynchronize", 0}, {"cuStreamWaitEvent", 0},
	{"cuEventCreate", 0}, {"cuEventDestroy_v2", 0}, {"cuEventRecord", 0}, {"cuEventQuery", 0},
	{"cuEventSynchronize", 0}, {"cuEventElapsedTime_v2", "cuEventElapsedTime"},
	{"cuMemAlloc_v2", 0}, {"cuMemFree_v2", 0}, {"cuMemAllocAsync", 0}, {"cuMemFreeAsync", 0},
	{"cuDeviceGetDefaultMemPool", 0}, {"cuMemPoolSetAttribute", 0}, {"cuMemPoolGetAttribute", 0},
	{"cuMemPoolTrimTo", 0}, {"cuMemPoolSetAccess", 0},
	{"cuMemAllocManaged", 0}, {"cuMemHostAlloc", 0}, {"cuMemFreeHost", 0},
	{"cuMemHostGetDevicePointer_v2", 0}, {"cuMemGetInfo_v2", 0},
	{"cuMemcpyHtoDAsync_v2", 0}, {"cuMemcpyDtoHAsync_v2", 0}, {"cuMemcpyDtoDAsync_v2", 0},
	{"cuMemcpyAsync", 0}, {"cuMemcpyPeerAsync", 0},
	{"cuMemsetD8Async", 0}, {"cuMemsetD16Async", 0}, {"cuMemsetD32Async", 0},
	{"cuModuleLoadDataEx", 0}, {"cuModuleUnload", 0}, {"cuModuleGetFunction", 0},
	{"cuFuncGetAttribute", 0}, {"cuFuncSetAttribute", 0}, {"cuLaunchKernel", 0},
	{"cuOccupancyMaxActiveBlocksPerMultiprocessor", 0},
	// Stream memory operations (sync branch): the _v2 entry points (CUDA 11.7+), else
	// the first ones (CUDA 8+).
	{"cuStreamWaitValue32_v2", "cuStreamWaitValue32"}, {"cuStreamWriteValue32_v2", "cuStreamWriteValue32"},
};

static void* gocu_fp[P_COUNT];
static void* gocu_lib;

// gocu_load opens the library and resolves every entry point. It returns 0, or 1 if
// the library can't be opened, or 2+i if entry point i is missing (err gets the text).
static int gocu_load(const char* path, char* err, int errlen) {
	gocu_lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!gocu_lib) {
		const char* e = dlerror();
		strncpy(err, e ? e : "dlopen failed", errlen - 1);
		err[errlen - 1] = 0;
		return 1;
	}
	for (int i = 0; i < P_COUNT; i++) {
		void* p = dlsym(gocu_lib, gocu_names[i][0]);
		if (!p && gocu_names[i][1]) p = dlsym(gocu_lib, gocu_names[i][1]);
		if (!p) {
			strncpy(err, gocu_names[i][0], errlen - 1);
			err[errlen - 1] = 0;
			return 2 + i;
		}
		gocu_fp[i] = p;
	}
	return 0;
}

#define FP(name, ...) ((CUresult (*)(__VA_ARGS__))gocu_fp[P_##name])

// ensure makes ctx current on this OS thread (CUDA Driver API: cuCtxGetCurrent,
// cuCtxSetCurrent); a thread-local read when it already is.
static inline CUresult ensure(H ctx) {
	void* cur = 0;
	CUresult r = FP(cuCtxGetCurrent, void**)(&cur);
	if (r) return r;
	if ((H)cur == ctx) return 0;
	return FP(cuCtxSetCurrent, void*)((void*)ctx);
}
#define ENSURE(ctx) do { CUresult _r = ensure(ctx); if (_r) return _r; } while (0)

static CUresult w_cuInit(unsigned flags) { return FP(cuInit, unsigned)(flags); }
static CUresult w_cuDriverGetVersion(int* v) { return FP(cuDriverGetVersion, int*)(v); }
static CUresult w_cuDeviceGetCount(int* n) { return FP(cuDeviceGetCount, int*)(n); }
static CUresult w_cuDeviceGet(int* d, int ord) { return FP(cuDeviceGet, int*, int)(d, ord); }
static CUresult w_cuDeviceGetName(char* s, int n, int d) { return FP(cuDeviceGetName, char*, int, int)(s, n, d); }
static CUresult w_cuDeviceGetAttribute(int* v, int a, int d) { return FP(cuDeviceGetAttribute, int*, int, int)(v, a, d); }
static CUresult w_cuDeviceTotalMem(size_t* v, int d) { return FP(cuDeviceTotalMem, size_t*, int)(v, d); }
static CUresult w_cuDeviceGetPCIBusId(char* s, int n, int d) { return FP(cuDeviceGetPCIBusId, char*, int, int)(s, n, d); }
static CUresult w_cuDevicePrimaryCtxRetain(H* c, int d) { return FP(cuDevicePrimaryCtxRetain, void**, int)((void**)c, d); }
static CUresult w_cuDevicePrimaryCtxRelease(int d) { return FP(cuDevicePrimaryCtxRelease, int)(d); }
static CUresult w_cuDeviceCanAccessPeer(int* v, int d, int p) { return FP(cuDeviceCanAccessPeer, int*, int, int)(v, d, p); }
static CUresult w_cuGetErrorName(CUresult r, const char** s) { return FP(cuGetErrorName, CUresult, const char**)(r, s); }
static CUresult w_cuGetErrorString(CUresult r, const char** s) { return FP(cuGetErrorString, CUresult, const char**)(r, s); }
static CUresult w_cuCtxGetCurrent(H* c) { return FP(cuCtxGetCurrent, void**)((void**)c); }
static CUresult w_cuCtxSetCurrent(H c) { return FP(cuCtxSetCurrent, void*)((void*)c); }
static CUresult w_cuCtxSynchronize(H ctx) { ENSURE(ctx); return FP(cuCtxSynchronize, void)(); }
static CUresult w_cuCtxEnablePeerAccess(H ctx, H peer) { ENSURE(ctx); return FP(cuCtxEnablePeerAccess, void*, unsigned)((void*)peer, 0); }

static CUresult w_cuStreamCreate(H ctx, H* s, unsigned flags) { ENSURE(ctx); return FP(cuStreamCreate, void**, unsigned)((void**)s, flags); }
static CUresult w_cuStreamDestroy(H ctx, H s) { ENSURE(ctx); return FP(cuStreamDestroy, void*)((void*)s); }
static CUresult w_cuStreamQuery(H ctx, H s) { ENSURE(ctx); return FP(cuStreamQuery, void*)((void*)s); }
static CUresult w_cuStreamSynchronize(H ctx, H s) { ENSURE(ctx); return FP(cuStreamSynchronize, void*)((void*)s); }
// Stream memory operations (sync branch).
static CUresult w_cuStreamWaitValue32(H ctx, H s, DPTR addr, unsigned v, unsigned flags) { ENSURE(ctx); return FP(cuStreamWaitValue32, void*, DPTR, unsigned, unsigned)((void*)s, addr, v, flags); }
static CUresult w_cuStreamWriteValue32(H ctx, H s, DPTR addr, unsigned v, unsigned flags) { ENSURE(ctx); return FP(cuStreamWriteValue32, void*, DPTR, unsigned, unsigned)((void*)s, addr, v, flags); }
static CUresult w_cuStreamWaitEvent(H ctx, H s, H e) { ENSURE(ctx); return FP(cuStreamWaitEvent, void*, void*, unsigned)((void*)s, (void*)e, 0); }

static CUresult w_cuEventCreate(H ctx, H* e, unsigned flags) { ENSURE(ctx); return FP(cuEventCreate, void**, unsigned)((void**)e, flags); }
static CUresult w_cuEventDestroy(H ctx, H e) { ENSURE(ctx); return FP(cuEventDestroy, void*)((void*)e); }
static CUresult w_cuEventRecord(H ctx, H e, H s) { ENSURE(ctx); return FP(cuEventRecord, void*, void*)((void*)e, (void*)s); }
static CUresult w_cuEventQuery(H ctx, H e) { ENSURE(ctx); return FP(cuEventQuery, void*)((void*)e); }
static CUresult w_cuEventSynchronize(H ctx, H e) { ENSURE(ctx); return FP(cuEventSynchronize, void*)((void*)e); }
static CUresult w_cuEventElapsedTime(H ctx, float* ms, H start, H end) { ENSURE(ctx); return FP(cuEventElapsedTime, float*, void*, void*)(ms, (void*)start, (void*)end); }

static CUresult w_cuMemAlloc(H ctx, DPTR* p, size_t n) { ENSURE(ctx); return FP(cuMemAlloc, DPTR*, size_t)(p, n); }
static CUresult w_cuMemFree(H ctx, DPTR p) { ENSURE(ctx); return FP(cuMemFree, DPTR)(p); }
static CUresult w_cuMemAllocAsync(H ctx, DPTR* p, size_t n, H s) { ENSURE(ctx); return FP(cuMemAllocAsync, DPTR*, size_t, void*)(p, n, (void*)s); }
static CUresult w_cuMemFreeAsync(H ctx, DPTR p, H s) { ENSURE(ctx); return FP(cuMemFreeAsync, DPTR, void*)(p, (void*)s); }
static CUresult w_cuDeviceGetDefaultMemPool(H* pool, int d) { return FP(cuDeviceGetDefaultMemPool, void**, int)((void**)pool, d); }
static CUresult w_cuMemPoolSetAttributeU64(H ctx, H pool, int attr, unsigned long long v) { ENSURE(ctx); return FP(cuMemPoolSetAttribute, void*, int, void*)((void*)pool, attr, &v); }
static CUresult w_cuMemPoolGetAttributeU64(H ctx, H pool, int attr, unsigned long long* v) { ENSURE(ctx); return FP(cuMemPoolGetAttribute, void*, int, void*)((void*)pool, attr, v); }
static CUresult w_cuMemPoolTrimTo(H ctx, H pool, size_t keep) { ENSURE(ctx); return FP(cuMemPoolTrimTo, void*, size_t)((void*)pool, keep); }
// CUmemAccessDesc: {CUmemLocation{type, id}, flags}; CU_MEM_LOCATION_TYPE_DEVICE = 1,
// CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 3.
typedef struct { int type; int id; int flags; } gocu_access_desc;
static CUresult w_cuMemPoolSetAccessDevice(H ctx, H pool, int dev) {
	ENSURE(ctx);
	gocu_access_desc d = {1, dev, 3};
	return FP(cuMemPoolSetAccess, void*, const gocu_access_desc*, size_t)((void*)pool, &d, 1);
}
static CUresult w_cuMemAllocManaged(H ctx, DPTR* p, size_t n) { ENSURE(ctx); return FP(cuMemAllocManaged, DPTR*, size_t, unsigned)(p, n, 1); }
static CUresult w_cuMemHostAlloc(H ctx, void** p, size_t n, unsigned flags) { ENSURE(ctx); return FP(cuMemHostAlloc, void**, size_t, unsigned)(p, n, flags); }
static CUresult w_cuMemFreeHost(H ctx, void* p) { ENSURE(ctx); return FP(cuMemFreeHost, void*)(p); }
static CUresult w_cuMemHostGetDevicePointer(H ctx, DPTR* d, void* p) { ENSURE(ctx); return FP(cuMemHostGetDevicePointer, DPTR*, void*, unsigned)(d, p, 0); }
static void* w_toHost(DPTR p) { return (void*)(uintptr_t)p; }
static CUresult w_noop(void) { return 0; }
static CUresult w_ensureOnly(H ctx) { ENSURE(ctx); return 0; }
static CUresult w_getCurrent(void) { void* c; return FP(cuCtxGetCurrent, void**)(&c); }
static CUresult w_cuMemGetInfo(H ctx, size_t* f, size_t* t) { ENSURE(ctx); return FP(cuMemGetInfo, size_t*, size_t*)(f, t); }

static CUresult w_cuMemcpyHtoDAsync(H ctx, DPTR dst, const void* src, size_t n, H s) { ENSURE(ctx); return FP(cuMemcpyHtoDAsync, DPTR, const void*, size_t, void*)(dst, src, n, (void*)s); }
static CUresult w_cuMemcpyDtoHAsync(H ctx, void* dst, DPTR src, size_t n, H s) { ENSURE(ctx); return FP(cuMemcpyDtoHAsync, void*, DPTR, size_t, void*)(dst, src, n, (void*)s); }
static CUresult w_cuMemcpyDtoDAsync(H ctx, DPTR dst, DPTR src, size_t n, H s) { ENSURE(ctx); return FP(cuMemcpyDtoDAsync, DPTR, DPTR, size_t, void*)(dst, src, n, (void*)s); }
static CUresult w_cuMemcpyAsync(H ctx, DPTR dst, DPTR src, size_t n, H s) { ENSURE(ctx); return FP(cuMemcpyAsync, DPTR, DPTR, size_t, void*)(dst, src, n, (void*)s); }
static CUresult w_cuMemcpyPeerAsync(H ctx, DPTR dst, H dctx, DPTR src, H sctx, size_t n, H s) { ENSURE(ctx); return FP(cuMemcpyPeerAsync, DPTR, void*, DPTR, void*, size_t, void*)(dst, (void*)dctx, src, (void*)sctx, n, (void*)s); }
static CUresult w_cuMemsetD8Async(H ctx, DPTR p, unsigned v, size_t n, H s) { ENSURE(ctx); return FP(cuMemsetD8Async, DPTR, unsigned char, size_t, void*)(p, (unsigned char)v, n, (void*)s); }
static CUresult w_cuMemsetD16Async(H ctx, DPTR p, unsigned v, size_t n, H s) { ENSURE(ctx); return FP(cuMemsetD16Async, DPTR, unsigned short, size_t, void*)(p, (unsigned short)v, n, (void*)s); }
static CUresult w_cuMemsetD32Async(H ctx, DPTR p, unsigned v, size_t n, H s) { ENSURE(ctx); return FP(cuMemsetD32Async, DPTR, unsigned, size_t, void*)(p, v, n, (void*)s); }

// w_cuModuleLoadData loads an image, capturing the JIT error log into log.
static CUresult w_cuModuleLoadData(H ctx, H* mod, const void* image, char* log, size_t loglen) {
	ENSURE(ctx);
	int opts[2] = {5, 6}; // CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES
	void* vals[2] = {log, (void*)(uintptr_t)loglen};
	return FP(cuModuleLoadDataEx, void**, const void*, unsigned, int*, void**)((void**)mod, image, 2, opts, vals);
}
static CUresult w_cuModuleUnload(H ctx, H m) { ENSURE(ctx); return FP(cuModuleUnload, void*)((void*)m); }
static CUresult w_cuModuleGetFunction(H ctx, H* f, H m, const char* name) { ENSURE(ctx); return FP(cuModuleGetFunction, void**, void*, const char*)((void**)f, (void*)m, name); }
static CUresult w_cuFuncGetAttribute(H ctx, int* v, int a, H f) { ENSURE(ctx); return FP(cuFuncGetAttribute, int*, int, void*)(v, a, (void*)f); }
static CUresult w_cuFuncSetAttribute(H ctx, H f, int a, int v) { ENSURE(ctx); return FP(cuFuncSetAttribute, void*, int, int)((void*)f, a, v); }
static CUresult w_cuOccupancy(H ctx, int* n, H f, int block, size_t smem) { ENSURE(ctx); return FP(cuOccupancyMaxActiveBlocksPerMultiprocessor, int*, void*, int, size_t)(n, (void*)f, block, smem); }

// w_cuLaunchKernel launches f with n parameters whose values are packed in blob at the
// byte offsets offs (CUDA Driver API: cuLaunchKernel, kernelParams).
static CUresult w_cuLaunchKernel(H ctx, H f, unsigned gx, unsigned gy, unsigned gz,
		unsigned bx, unsigned by, unsigned bz, unsigned smem, H s,
		unsigned char* blob, const int* offs, int n) {
	ENSURE(ctx);
	void* small[24];
	void** params = small;
	if (n > 24) {
		params = (void**)malloc(sizeof(void*) * n);
		if (!params) return 2;
	}
	for (int i = 0; i < n; i++) params[i] = blob + offs[i];
	CUresult r = FP(cuLaunchKernel, void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
		unsigned, void*, void**, void**)((void*)f, gx, gy, gz, bx, by, bz, smem, (void*)s,
		n ? params : 0, 0);
	if (params != small) free(params);
	return r;
}

// w_cuLaunchKernel0 launches a kernel without parameters.
static CUresult w_cuLaunchKernel0(H ctx, H f, unsigned gx, unsigned gy, unsigned gz,
		unsigned bx, unsigned by, unsigned bz, unsigned smem, H s) {
	ENSURE(ctx);
	return FP(cuLaunchKernel, void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
		unsigned, void*, void**, void**)((void*)f, gx, gy, gz, bx, by, bz, smem, (void*)s, 0, 0);
}

// w_rawLaunchLoop launches f n times without parameters, for the launch baseline.
static CUresult w_rawLaunchLoop(H ctx, H f, H s, int n) {
	ENSURE(ctx);
	for (int i = 0; i < n; i++) {
		CUresult r = FP(cuLaunchKernel, void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			unsigned, void*, void**, void**)((void*)f, 1, 1, 1, 1, 1, 1, 0, (void*)s, 0, 0);
		if (r) return r;
	}
	return 0;
}
*/
import "C"

import (
	"fmt"
	"os"
	"sync"
	"unsafe"

	"github.com/go-gpu/gpu/backend"
)

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

var (
	loadOnce sync.Once
	loadErr  error
	names    sync.Map // Result -> [2]string
)

// DefaultLibrary is the driver library opened when GPU_CUDA_LIBRARY is unset.
const DefaultLibrary = "libcuda.so.1"

// Load opens the driver library and calls cuInit once. Later calls return the first
// result. The error wraps backend.ErrNoDevice when there is no usable driver.
func Load() error {
	loadOnce.Do(func() {
		path := os.Getenv("GPU_CUDA_LIBRARY")
		if path == "" {
			path = DefaultLibrary
		}
		cpath := C.CString(path)
		defer C.free(unsafe.Pointer(cpath))
		var buf [512]C.char
		switch r := C.gocu_load(cpath, &buf[0], C.int(len(buf))); {
		case r == 1:
			loadErr = fmt.Errorf("cuda: no driver: %s: %w", C.GoString(&buf[0]), backend.ErrNoDevice)
			return
		case r > 1:
			loadErr = fmt.Errorf("cuda: driver %s lacks %s (driver too old): %w", path, C.GoString(&buf[0]), backend.ErrNoDevice)
			return
		}
		if err := check("cuInit", C.w_cuInit(0)); err != nil {
			loadErr = err
		}
	})
	return loadErr
}

func resultNames(r Result) (string, string) {
	if v, ok := names.Load(r); ok {
		n := v.([2]string)
		return n[0], n[1]
	}
	var name, msg *C.char
	n, m := fmt.Sprintf("CUDA_ERROR_%d", int(r)), "unknown error"
	if C.w_cuGetErrorName(C.CUresult(r), &name) == 0 && name != nil {
		n = C.GoString(name)
	}
	if C.w_cuGetErrorString(C.CUresult(r), &msg) == 0 && msg != nil {
		m = C.GoString(msg)
	}
	names.Store(r, [2]string{n, m})
	return n, m
}

// NewError returns the error for code r from entry point op.
func NewError(op string, r Result) *Error {
	n, m := resultNames(r)
	return &Error{Code: r, Name: n, Message: m, Op: op}
}

func check(op string, r C.CUresult) error {
	if r == 0 {
		return nil
	}
	return NewError(op, Result(r))
}

// checkReady maps CUDA_ERROR_NOT_READY to (false, nil).
func checkReady(op string, r C.CUresult) (bool, error) {
	switch Result(r) {
	case Success:
		return true, nil
	case ErrorNotReady:
		return false, nil
	}
	return false, NewError(op, Result(r))
}

func h(x uintptr) C.H { return C.H(x) }

// DriverVersion returns the driver's CUDA version as 1000*major + 10*minor.
func DriverVersion() (int, error) {
	var v C.int
	err := check("cuDriverGetVersion", C.w_cuDriverGetVersion(&v))
	return int(v), err
}

// DeviceCount returns the number of CUDA devices.
func DeviceCount() (int, error) {
	var n C.int
	err := check("cuDeviceGetCount", C.w_cuDeviceGetCount(&n))
	return int(n), err
}

// DeviceGet returns the device with the given ordinal.
func DeviceGet(ordinal int) (Device, error) {
	var d C.int
	err := check("cuDeviceGet", C.w_cuDeviceGet(&d, C.int(ordinal)))
	return Device(d), err
}

// Name returns the device's name.
func (d Device) Name() (string, error) {
	var buf [256]C.char
	if err := check("cuDeviceGetName", C.w_cuDeviceGetName(&buf[0], C.int(len(buf)), C.int(d))); err != nil {
		return "", err
	}
	return C.GoString(&buf[0]), nil
}

// PCIBusID returns the device's PCI bus id ("0000:19:00.0").
func (d Device) PCIBusID() (string, error) {
	var buf [64]C.char
	if err := check("cuDeviceGetPCIBusId", C.w_cuDeviceGetPCIBusId(&buf[0], C.int(len(buf)), C.int(d))); err != nil {
		return "", err
	}
	return C.GoString(&buf[0]), nil
}

// Attribute returns a device attribute (CUDA Driver API: cuDeviceGetAttribute).
func (d Device) Attribute(a DeviceAttribute) (int, error) {
	var v C.int
	err := check("cuDeviceGetAttribute", C.w_cuDeviceGetAttribute(&v, C.int(a), C.int(d)))
	return int(v), err
}

// TotalMem returns the device's memory in bytes.
func (d Device) TotalMem() (int64, error) {
	var v C.size_t
	err := check("cuDeviceTotalMem", C.w_cuDeviceTotalMem(&v, C.int(d)))
	return int64(v), err
}

// CanAccessPeer reports whether d can address memory on peer.
func (d Device) CanAccessPeer(peer Device) (bool, error) {
	var v C.int
	err := check("cuDeviceCanAccessPeer", C.w_cuDeviceCanAccessPeer(&v, C.int(d), C.int(peer)))
	return v != 0, err
}

// PrimaryCtxRetain retains the device's primary context.
func (d Device) PrimaryCtxRetain() (Context, error) {
	var c C.H
	err := check("cuDevicePrimaryCtxRetain", C.w_cuDevicePrimaryCtxRetain(&c, C.int(d)))
	return Context(c), err
}

// PrimaryCtxRelease releases the device's primary context.
func (d Device) PrimaryCtxRelease() error {
	return check("cuDevicePrimaryCtxRelease", C.w_cuDevicePrimaryCtxRelease(C.int(d)))
}

// DefaultMemPool returns the device's default memory pool.
func (d Device) DefaultMemPool() (MemPool, error) {
	var p C.H
	err := check("cuDeviceGetDefaultMemPool", C.w_cuDeviceGetDefaultMemPool(&p, C.int(d)))
	return MemPool(p), err
}

// CurrentContext returns the context current on the calling thread.
func CurrentContext() (Context, error) {
	var c C.H
	err := check("cuCtxGetCurrent", C.w_cuCtxGetCurrent(&c))
	return Context(c), err
}

// SetCurrent makes c current on the calling thread.
func (c Context) SetCurrent() error {
	return check("cuCtxSetCurrent", C.w_cuCtxSetCurrent(h(uintptr(c))))
}

// Synchronize blocks until all work in c is done (CUDA Driver API: cuCtxSynchronize).
func (c Context) Synchronize() error {
	return check("cuCtxSynchronize", C.w_cuCtxSynchronize(h(uintptr(c))))
}

// EnablePeerAccess lets c address memory of peer's context.
func (c Context) EnablePeerAccess(peer Context) error {
	r := C.w_cuCtxEnablePeerAccess(h(uintptr(c)), h(uintptr(peer)))
	if Result(r) == ErrorPeerAccessEnabled {
		return nil
	}
	return check("cuCtxEnablePeerAccess", r)
}

// StreamCreate creates a stream (flags: StreamNonBlocking).
func (c Context) StreamCreate(flags uint32) (Stream, error) {
	var s C.H
	err := check("cuStreamCreate", C.w_cuStreamCreate(h(uintptr(c)), &s, C.uint(flags)))
	return Stream(s), err
}

// StreamDestroy destroys s; its pending work still completes.
func (c Context) StreamDestroy(s Stream) error {
	return check("cuStreamDestroy", C.w_cuStreamDestroy(h(uintptr(c)), h(uintptr(s))))
}

// StreamQuery reports whether s is idle.
func (c Context) StreamQuery(s Stream) (bool, error) {
	return checkReady("cuStreamQuery", C.w_cuStreamQuery(h(uintptr(c)), h(uintptr(s))))
}

// StreamSynchronize blocks until s is idle.
func (c Context) StreamSynchronize(s Stream) error {
	return check("cuStreamSynchronize", C.w_cuStreamSynchronize(h(uintptr(c)), h(uintptr(s))))
}

// StreamWaitEvent makes later work on s wait for e.
func (c Context) StreamWaitEvent(s Stream, e Event) error {
	return check("cuStreamWaitEvent", C.w_cuStreamWaitEvent(h(uintptr(c)), h(uintptr(s)), h(uintptr(e))))
}

// StreamWaitValue32 makes later work on s wait for the 32-bit word at addr (flags:
// StreamWaitValueGEQ: until int32(*addr-v) >= 0) (CUDA Driver API:
// cuStreamWaitValue32_v2). Added by the sync branch.
func (c Context) StreamWaitValue32(s Stream, addr DevicePtr, v, flags uint32) error {
	return check("cuStreamWaitValue32", C.w_cuStreamWaitValue32(h(uintptr(c)), h(uintptr(s)), C.DPTR(addr), C.uint(v), C.uint(flags)))
}

// StreamWriteValue32 enqueues writing v into the 32-bit word at addr (CUDA Driver API:
// cuStreamWriteValue32_v2). Added by the sync branch.
func (c Context) StreamWriteValue32(s Stream, addr DevicePtr, v, flags uint32) error {
	return check("cuStreamWriteValue32", C.w_cuStreamWriteValue32(h(uintptr(c)), h(uintptr(s)), C.DPTR(addr), C.uint(v), C.uint(flags)))
}

// EventCreate creates an event (flags: EventBlockingSync, EventDisableTiming).
func (c Context) EventCreate(flags uint32) (Event, error) {
	var e C.H
	err := check("cuEventCreate", C.w_cuEventCreate(h(uintptr(c)), &e, C.uint(flags)))
	return Event(e), err
}

// EventDestroy destroys e.
func (c Context) EventDestroy(e Event) error {
	return check("cuEventDestroy", C.w_cuEventDestroy(h(uintptr(c)), h(uintptr(e))))
}

// EventRecord records e on s.
func (c Context) EventRecord(e Event, s Stream) error {
	return check("cuEventRecord", C.w_cuEventRecord(h(uintptr(c)), h(uintptr(e)), h(uintptr(s))))
}

// EventQuery reports whether e has completed.
func (c Context) EventQuery(e Event) (bool, error) {
	return checkReady("cuEventQuery", C.w_cuEventQuery(h(uintptr(c)), h(uintptr(e))))
}

// EventSynchronize blocks until e completes.
func (c Context) EventSynchronize(e Event) error {
	return check("cuEventSynchronize", C.w_cuEventSynchronize(h(uintptr(c)), h(uintptr(e))))
}

// EventElapsedTime returns the milliseconds between start and end.
func (c Context) EventElapsedTime(start, end Event) (float32, error) {
	var ms C.float
	err := check("cuEventElapsedTime", C.w_cuEventElapsedTime(h(uintptr(c)), &ms, h(uintptr(start)), h(uintptr(end))))
	return float32(ms), err
}

// MemAlloc allocates device memory synchronously.
func (c Context) MemAlloc(n int64) (DevicePtr, error) {
	var p C.DPTR
	err := check("cuMemAlloc", C.w_cuMemAlloc(h(uintptr(c)), &p, C.size_t(n)))
	return DevicePtr(p), err
}

// MemFree frees memory from MemAlloc or MemAllocManaged.
func (c Context) MemFree(p DevicePtr) error {
	return check("cuMemFree", C.w_cuMemFree(h(uintptr(c)), C.DPTR(p)))
}

// MemAllocAsync allocates device memory from the current pool, ordered on s.
func (c Context) MemAllocAsync(n int64, s Stream) (DevicePtr, error) {
	var p C.DPTR
	err := check("cuMemAllocAsync", C.w_cuMemAllocAsync(h(uintptr(c)), &p, C.size_t(n), h(uintptr(s))))
	return DevicePtr(p), err
}

// MemFreeAsync frees pool memory once s's work so far is done.
func (c Context) MemFreeAsync(p DevicePtr, s Stream) error {
	return check("cuMemFreeAsync", C.w_cuMemFreeAsync(h(uintptr(c)), C.DPTR(p), h(uintptr(s))))
}

// MemPoolSetAttribute sets a 64-bit pool attribute (MemPoolReleaseThreshold).
func (c Context) MemPoolSetAttribute(p MemPool, attr MemPoolAttribute, v uint64) error {
	return check("cuMemPoolSetAttribute", C.w_cuMemPoolSetAttributeU64(h(uintptr(c)), h(uintptr(p)), C.int(attr), C.ulonglong(v)))
}

// MemPoolGetAttribute reads a 64-bit pool attribute.
func (c Context) MemPoolGetAttribute(p MemPool, attr MemPoolAttribute) (uint64, error) {
	var v C.ulonglong
	err := check("cuMemPoolGetAttribute", C.w_cuMemPoolGetAttributeU64(h(uintptr(c)), h(uintptr(p)), C.int(attr), &v))
	return uint64(v), err
}

// MemPoolTrimTo releases unused pool memory down to keep bytes.
func (c Context) MemPoolTrimTo(p MemPool, keep int64) error {
	return check("cuMemPoolTrimTo", C.w_cuMemPoolTrimTo(h(uintptr(c)), h(uintptr(p)), C.size_t(keep)))
}

// MemPoolSetAccessDevice lets device dev read and write memory of pool p (CUDA Driver
// API: cuMemPoolSetAccess with CU_MEM_ACCESS_FLAGS_PROT_READWRITE). Peer access through
// cuCtxEnablePeerAccess doesn't cover stream-ordered pool allocations.
func (c Context) MemPoolSetAccessDevice(p MemPool, dev Device) error {
	return check("cuMemPoolSetAccess", C.w_cuMemPoolSetAccessDevice(h(uintptr(c)), h(uintptr(p)), C.int(dev)))
}

// MemAllocManaged allocates managed memory attached globally.
func (c Context) MemAllocManaged(n int64) (DevicePtr, error) {
	var p C.DPTR
	err := check("cuMemAllocManaged", C.w_cuMemAllocManaged(h(uintptr(c)), &p, C.size_t(n)))
	return DevicePtr(p), err
}

// MemHostAlloc allocates pinned host memory (flags: MemHostAllocPortable,
// MemHostAllocDeviceMap) and returns its host address.
func (c Context) MemHostAlloc(n int64, flags uint32) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	err := check("cuMemHostAlloc", C.w_cuMemHostAlloc(h(uintptr(c)), &p, C.size_t(n), C.uint(flags)))
	return p, err
}

// MemFreeHost frees pinned host memory.
func (c Context) MemFreeHost(p unsafe.Pointer) error {
	return check("cuMemFreeHost", C.w_cuMemFreeHost(h(uintptr(c)), p))
}

// MemHostGetDevicePointer returns the device address of pinned host memory.
func (c Context) MemHostGetDevicePointer(p unsafe.Pointer) (DevicePtr, error) {
	var d C.DPTR
	err := check("cuMemHostGetDevicePointer", C.w_cuMemHostGetDevicePointer(h(uintptr(c)), &d, p))
	return DevicePtr(d), err
}

// HostPointer returns managed or pinned memory's device address as a host pointer
// (they are equal under unified addressing).
func HostPointer(p DevicePtr) unsafe.Pointer { return C.w_toHost(C.DPTR(p)) }

// Noop makes an empty cgo call: the cost of crossing into C.
func Noop() { C.w_noop() }

// EnsureOnly makes c current if it is not, and does nothing else: the per-call cost of
// the context check every wrapper does.
func (c Context) EnsureOnly() error { return check("cuCtxSetCurrent", C.w_ensureOnly(h(uintptr(c)))) }

// GetCurrentRaw calls cuCtxGetCurrent and discards the result: the cost of one plain
// driver call.
func GetCurrentRaw() { C.w_getCurrent() }

// MemGetInfo returns free and total device memory in bytes.
func (c Context) MemGetInfo() (free, total int64, err error) {
	var f, t C.size_t
	err = check("cuMemGetInfo", C.w_cuMemGetInfo(h(uintptr(c)), &f, &t))
	return int64(f), int64(t), err
}

// MemcpyHtoDAsync copies n bytes from host address src. src must stay valid until
// the copy completes (the caller pins Go memory).
func (c Context) MemcpyHtoDAsync(dst DevicePtr, src unsafe.Pointer, n int64, s Stream) error {
	return check("cuMemcpyHtoDAsync", C.w_cuMemcpyHtoDAsync(h(uintptr(c)), C.DPTR(dst), src, C.size_t(n), h(uintptr(s))))
}

// MemcpyDtoHAsync copies n bytes to host address dst, under the same rule.
func (c Context) MemcpyDtoHAsync(dst unsafe.Pointer, src DevicePtr, n int64, s Stream) error {
	return check("cuMemcpyDtoHAsync", C.w_cuMemcpyDtoHAsync(h(uintptr(c)), dst, C.DPTR(src), C.size_t(n), h(uintptr(s))))
}

// MemcpyDtoDAsync copies n bytes between device addresses.
func (c Context) MemcpyDtoDAsync(dst, src DevicePtr, n int64, s Stream) error {
	return check("cuMemcpyDtoDAsync", C.w_cuMemcpyDtoDAsync(h(uintptr(c)), C.DPTR(dst), C.DPTR(src), C.size_t(n), h(uintptr(s))))
}

// MemcpyAsync copies n bytes between any two addresses of the unified address space.
func (c Context) MemcpyAsync(dst, src DevicePtr, n int64, s Stream) error {
	return check("cuMemcpyAsync", C.w_cuMemcpyAsync(h(uintptr(c)), C.DPTR(dst), C.DPTR(src), C.size_t(n), h(uintptr(s))))
}

// MemcpyPeerAsync copies n bytes between memory of two contexts.
func (c Context) MemcpyPeerAsync(dst DevicePtr, dstCtx Context, src DevicePtr, srcCtx Context, n int64, s Stream) error {
	return check("cuMemcpyPeerAsync", C.w_cuMemcpyPeerAsync(h(uintptr(c)), C.DPTR(dst), h(uintptr(dstCtx)), C.DPTR(src), h(uintptr(srcCtx)), C.size_t(n), h(uintptr(s))))
}

// MemsetAsync sets n elements of width bytes (1, 2 or 4) at p to v.
func (c Context) MemsetAsync(p DevicePtr, v uint32, width int, n int64, s Stream) error {
	switch width {
	case 1:
		return check("cuMemsetD8Async", C.w_cuMemsetD8Async(h(uintptr(c)), C.DPTR(p), C.uint(v), C.size_t(n), h(uintptr(s))))
	case 2:
		return check("cuMemsetD16Async", C.w_cuMemsetD16Async(h(uintptr(c)), C.DPTR(p), C.uint(v), C.size_t(n), h(uintptr(s))))
	case 4:
		return check("cuMemsetD32Async", C.w_cuMemsetD32Async(h(uintptr(c)), C.DPTR(p), C.uint(v), C.size_t(n), h(uintptr(s))))
	}
	return &Error{Code: ErrorInvalidValue, Name: "CUDA_ERROR_INVALID_VALUE", Message: fmt.Sprintf("memset width %d", width), Op: "cuMemsetAsync"}
}

// ModuleLoadData loads a module from PTX text (NUL-terminated) or a cubin/fatbin
// image. A compile error carries the JIT error log in Error.Detail.
func (c Context) ModuleLoadData(image []byte) (Module, error) {
	if len(image) == 0 {
		return 0, &Error{Code: ErrorInvalidImage, Name: "CUDA_ERROR_INVALID_IMAGE", Message: "empty image", Op: "cuModuleLoadDataEx"}
	}
	img := C.CBytes(image)
	defer C.free(img)
	logBuf := (*C.char)(C.calloc(8192, 1))
	defer C.free(unsafe.Pointer(logBuf))
	var m C.H
	r := C.w_cuModuleLoadData(h(uintptr(c)), &m, img, logBuf, 8192)
	if r != 0 {
		e := NewError("cuModuleLoadDataEx", Result(r))
		e.Detail = C.GoString(logBuf)
		return 0, e
	}
	return Module(m), nil
}

// ModuleUnload unloads m.
func (c Context) ModuleUnload(m Module) error {
	return check("cuModuleUnload", C.w_cuModuleUnload(h(uintptr(c)), h(uintptr(m))))
}

// ModuleGetFunction looks up a kernel.
func (c Context) ModuleGetFunction(m Module, name string) (Function, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var f C.H
	err := check("cuModuleGetFunction", C.w_cuModuleGetFunction(h(uintptr(c)), &f, h(uintptr(m)), cname))
	if e, ok := err.(*Error); ok {
		e.Detail = name
	}
	return Function(f), err
}

// FuncGetAttribute reads a kernel attribute.
func (c Context) FuncGetAttribute(f Function, a FuncAttribute) (int, error) {
	var v C.int
	err := check("cuFuncGetAttribute", C.w_cuFuncGetAttribute(h(uintptr(c)), &v, C.int(a), h(uintptr(f))))
	return int(v), err
}

// FuncSetAttribute sets a kernel attribute.
func (c Context) FuncSetAttribute(f Function, a FuncAttribute, v int) error {
	return check("cuFuncSetAttribute", C.w_cuFuncSetAttribute(h(uintptr(c)), h(uintptr(f)), C.int(a), C.int(v)))
}

// OccupancyMaxActiveBlocks returns how many blocks of the given size fit on one
// multiprocessor.
func (c Context) OccupancyMaxActiveBlocks(f Function, block int, dynSmem int) (int, error) {
	var n C.int
	err := check("cuOccupancyMaxActiveBlocksPerMultiprocessor", C.w_cuOccupancy(h(uintptr(c)), &n, h(uintptr(f)), C.int(block), C.size_t(dynSmem)))
	return int(n), err
}

// LaunchKernel launches f. The parameters' values are packed in blob, parameter i
// starting at byte offs[i]; blob and offs hold no Go pointers and are read during the
// call only.
func (c Context) LaunchKernel(f Function, grid, block [3]uint32, smem uint32, s Stream, blob []byte, offs []int32) error {
	if len(offs) == 0 {
		return check("cuLaunchKernel", C.w_cuLaunchKernel0(h(uintptr(c)), h(uintptr(f)),
			C.uint(grid[0]), C.uint(grid[1]), C.uint(grid[2]), C.uint(block[0]), C.uint(block[1]), C.uint(block[2]),
			C.uint(smem), h(uintptr(s))))
	}
	return check("cuLaunchKernel", C.w_cuLaunchKernel(h(uintptr(c)), h(uintptr(f)),
		C.uint(grid[0]), C.uint(grid[1]), C.uint(grid[2]), C.uint(block[0]), C.uint(block[1]), C.uint(block[2]),
		C.uint(smem), h(uintptr(s)), (*C.uchar)(unsafe.Pointer(&blob[0])), (*C.int)(unsafe.Pointer(&offs[0])), C.int(len(offs))))
}

// RawLaunchLoop launches f, a kernel without parameters, n times on s with a 1x1 grid,
// all in one cgo call: the baseline of the launch benchmark.
func (c Context) RawLaunchLoop(f Function, s Stream, n int) error {
	return check("cuLaunchKernel", C.w_rawLaunchLoop(h(uintptr(c)), h(uintptr(f)), h(uintptr(s)), C.int(n)))
}

// Available reports whether the package was built with cgo, so that Load can work.
const Available = true
