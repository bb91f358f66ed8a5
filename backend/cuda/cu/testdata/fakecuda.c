// A fake libcuda.so.1 for the tests of package cu: every entry point of the package's
// table with the CUDA driver's C signatures (cuda.h), each recording its call (the
// name, the calling thread's current context, the arguments as the C function received
// them) and answering from its arguments, so that the tests check what each Go function
// passes and how it reads the answer, with and without cgo. fake_last returns the last
// call of the calling thread, formatted.
//
// Failures are injected by argument values: the handle 0xBAD (a stream, an event, a
// module...) gives CUDA_ERROR_INVALID_HANDLE (400); a stream or event handle with bit
// 0x10 set is not ready (600); a module image starting with "bad" fails to compile
// (218) with a log; the function name "missing" is not found (500).

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef uint64_t U;

static __thread uintptr_t current;
static __thread char last[512];
static volatile int sets;

static void rec(const char *name, int n, const U *a) {
	int k = snprintf(last, sizeof last, "%s ctx=%#llx", name, (unsigned long long)current);
	for (int i = 0; i < n && k < (int)sizeof last; i++) {
		k += snprintf(last + k, sizeof last - k, " %#llx", (unsigned long long)a[i]);
	}
}

#define REC(name, ...)                                               \
	do {                                                             \
		U v_[] = {__VA_ARGS__};                                      \
		rec(name, (int)(sizeof(v_) / sizeof(v_[0])), v_);            \
	} while (0)
#define REC0(name) rec(name, 0, NULL)
#define P(x) ((U)(uintptr_t)(x))

const char *fake_last(void) { return last; }

// fake_sets returns the number of cuCtxSetCurrent calls and resets it.
int fake_sets(void) { return __sync_lock_test_and_set(&sets, 0); }

static int bad(uintptr_t h) { return h == 0xBAD; }

int cuInit(unsigned flags) { REC("cuInit", flags); return flags ? 1 : 0; }
int cuDriverGetVersion(int *v) { *v = 13000; return 0; }
int cuDeviceGetCount(int *n) { *n = 2; return 0; }

int cuDeviceGet(int *d, int ordinal) {
	REC("cuDeviceGet", (U)(int64_t)ordinal);
	if (ordinal < 0 || ordinal >= 2) return 101;
	*d = ordinal;
	return 0;
}

int cuDeviceGetName(char *s, int n, int d) {
	REC("cuDeviceGetName", (U)n, (U)d);
	snprintf(s, n, "Fake GPU %d", d);
	return 0;
}

int cuDeviceGetAttribute(int *v, int attr, int d) {
	REC("cuDeviceGetAttribute", (U)attr, (U)d);
	*v = attr * 10 + d;
	return 0;
}

int cuDeviceTotalMem_v2(size_t *v, int d) { *v = (80ull << 30) + d; return 0; }

int cuDeviceGetPCIBusId(char *s, int n, int d) {
	REC("cuDeviceGetPCIBusId", (U)n, (U)d);
	snprintf(s, n, "0000:%02x:00.0", 0x19 + d);
	return 0;
}

int cuDevicePrimaryCtxRetain(void **c, int d) { *c = (void *)(uintptr_t)(0xC0000 + d); return 0; }
int cuDevicePrimaryCtxRelease_v2(int d) { REC("cuDevicePrimaryCtxRelease", (U)d); return 0; }
int cuDeviceCanAccessPeer(int *v, int d, int p) { REC("cuDeviceCanAccessPeer", (U)d, (U)p); *v = d != p; return 0; }
int cuDeviceGetDefaultMemPool(void **p, int d) { *p = (void *)(uintptr_t)(0x9000 + d); return 0; }

static const struct { int code; const char *name, *msg; } errs[] = {
	{1, "CUDA_ERROR_INVALID_VALUE", "fake: invalid argument"},
	{101, "CUDA_ERROR_INVALID_DEVICE", "fake: invalid device ordinal"},
	{201, "CUDA_ERROR_INVALID_CONTEXT", "fake: invalid device context"},
	{218, "CUDA_ERROR_INVALID_PTX", "fake: a PTX JIT compilation failed"},
	{400, "CUDA_ERROR_INVALID_HANDLE", "fake: invalid resource handle"},
	{500, "CUDA_ERROR_NOT_FOUND", "fake: named symbol not found"},
	{700, "CUDA_ERROR_ILLEGAL_ADDRESS", "fake: an illegal memory access was encountered"},
	{704, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", "fake: peer access is already enabled"},
};

int cuGetErrorName(int r, const char **s) {
	for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++) {
		if (errs[i].code == r) {
			*s = errs[i].name;
			return 0;
		}
	}
	*s = NULL;
	return 1;
}

int cuGetErrorString(int r, const char **s) {
	for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++) {
		if (errs[i].code == r) {
			*s = errs[i].msg;
			return 0;
		}
	}
	*s = NULL;
	return 1;
}

int cuCtxGetCurrent(void **c) { *c = (void *)current; return 0; }

// cuCtxSetCurrent refuses the context 0xBAD (CUDA_ERROR_INVALID_CONTEXT).
int cuCtxSetCurrent(void *c) {
	__sync_fetch_and_add(&sets, 1);
	if (bad((uintptr_t)c)) return 201;
	current = (uintptr_t)c;
	return 0;
}

int cuCtxSynchronize(void) { REC0("cuCtxSynchronize"); return 0; }

static size_t fake_l2_fetch = 64;

int cuCtxGetLimit(size_t *v, int limit) {
	REC("cuCtxGetLimit", (U)limit);
	*v = limit == 5 ? fake_l2_fetch : 0;
	return 0;
}

int cuCtxSetLimit(int limit, size_t v) {
	REC("cuCtxSetLimit", (U)limit, (U)v);
	if (limit == 5) fake_l2_fetch = v;
	return 0;
}

static uintptr_t peers_enabled;

int cuCtxEnablePeerAccess(void *peer, unsigned flags) {
	REC("cuCtxEnablePeerAccess", P(peer), flags);
	if (peers_enabled == (uintptr_t)peer) return 704;
	peers_enabled = (uintptr_t)peer;
	return 0;
}

int cuStreamCreate(void **s, unsigned flags) { REC("cuStreamCreate", flags); *s = (void *)(uintptr_t)0x5000; return 0; }
int cuStreamDestroy_v2(void *s) { REC("cuStreamDestroy", P(s)); return bad((uintptr_t)s) ? 400 : 0; }

int cuStreamQuery(void *s) {
	REC("cuStreamQuery", P(s));
	if (bad((uintptr_t)s)) return 400;
	return ((uintptr_t)s & 0x10) ? 600 : 0;
}

// cuStreamSynchronize sleeps for the stream handle's value in microseconds when it is a
// multiple of 1000 (a "long kernel").
int cuStreamSynchronize(void *s) {
	REC("cuStreamSynchronize", P(s));
	if (bad((uintptr_t)s)) return 400;
	if ((uintptr_t)s % 1000 == 0) usleep((useconds_t)(uintptr_t)s);
	return 0;
}

int cuStreamWaitEvent(void *s, void *e, unsigned flags) { REC("cuStreamWaitEvent", P(s), P(e), flags); return 0; }
int cuStreamWaitValue32_v2(void *s, unsigned long long addr, unsigned v, unsigned flags) { REC("cuStreamWaitValue32", P(s), addr, v, flags); return 0; }
int cuStreamWriteValue32_v2(void *s, unsigned long long addr, unsigned v, unsigned flags) { REC("cuStreamWriteValue32", P(s), addr, v, flags); return 0; }
int cuEventCreate(void **e, unsigned flags) { REC("cuEventCreate", flags); *e = (void *)(uintptr_t)(0xE000 + flags); return 0; }
int cuEventDestroy_v2(void *e) { REC("cuEventDestroy", P(e)); return 0; }
int cuEventRecord(void *e, void *s) { REC("cuEventRecord", P(e), P(s)); return bad((uintptr_t)s) ? 400 : 0; }

int cuEventQuery(void *e) {
	REC("cuEventQuery", P(e));
	if (bad((uintptr_t)e)) return 400;
	return ((uintptr_t)e & 0x10) ? 600 : 0;
}

// cuEventSynchronize fails with CUDA_ERROR_ILLEGAL_ADDRESS for the event 0xFA17 (a
// faulting kernel).
int cuEventSynchronize(void *e) {
	REC("cuEventSynchronize", P(e));
	return (uintptr_t)e == 0xFA17 ? 700 : 0;
}

int cuEventElapsedTime_v2(float *ms, void *start, void *end) {
	REC("cuEventElapsedTime", P(start), P(end));
	*ms = 1.25f;
	return 0;
}

int cuMemAlloc_v2(U *p, size_t n) { REC("cuMemAlloc", (U)n); *p = 0xD0000000ull + n; return 0; }
int cuMemFree_v2(U p) { REC("cuMemFree", p); return 0; }
int cuMemAllocAsync(U *p, size_t n, void *s) { REC("cuMemAllocAsync", (U)n, P(s)); *p = 0xD1000000ull + n; return 0; }
int cuMemFreeAsync(U p, void *s) { REC("cuMemFreeAsync", p, P(s)); return 0; }

static U pool_attr[16];

int cuMemPoolSetAttribute(void *pool, int attr, void *v) {
	U x;
	memcpy(&x, v, sizeof x);
	REC("cuMemPoolSetAttribute", P(pool), (U)attr, x);
	pool_attr[attr & 15] = x;
	return 0;
}

int cuMemPoolGetAttribute(void *pool, int attr, void *v) {
	REC("cuMemPoolGetAttribute", P(pool), (U)attr);
	memcpy(v, &pool_attr[attr & 15], sizeof(U));
	return 0;
}

int cuMemPoolTrimTo(void *pool, size_t keep) { REC("cuMemPoolTrimTo", P(pool), (U)keep); return 0; }

// CUmemAccessDesc: {CUmemLocation {int type; int id}, int flags}.
int cuMemPoolSetAccess(void *pool, const int *desc, size_t count) {
	REC("cuMemPoolSetAccess", P(pool), (U)desc[0], (U)desc[1], (U)desc[2], (U)count);
	return 0;
}

int cuMemAllocManaged(U *p, size_t n, unsigned flags) {
	REC("cuMemAllocManaged", (U)n, flags);
	*p = P(calloc(1, n));
	return 0;
}

int cuMemHostAlloc(void **p, size_t n, unsigned flags) {
	REC("cuMemHostAlloc", (U)n, flags);
	*p = calloc(1, n);
	return 0;
}

int cuMemFreeHost(void *p) { REC("cuMemFreeHost", P(p)); free(p); return 0; }
int cuMemHostGetDevicePointer_v2(U *d, void *p, unsigned flags) { REC("cuMemHostGetDevicePointer", flags); *d = P(p); return 0; }
int cuMemGetInfo_v2(size_t *f, size_t *t) { *f = 1ull << 30; *t = 80ull << 30; return 0; }

static U sum(const unsigned char *p, size_t n) {
	U s = 0;
	for (size_t i = 0; i < n; i++) s = s * 31 + p[i];
	return s;
}

// The host side of a copy is real: cuMemcpyHtoDAsync records a checksum of the source
// bytes, cuMemcpyDtoHAsync fills the destination with the low byte of the device
// address.
int cuMemcpyHtoDAsync_v2(U dst, const void *src, size_t n, void *s) {
	REC("cuMemcpyHtoDAsync", dst, sum(src, n), (U)n, P(s));
	return 0;
}

int cuMemcpyDtoHAsync_v2(void *dst, U src, size_t n, void *s) {
	memset(dst, (int)(src & 0xFF), n);
	REC("cuMemcpyDtoHAsync", src, (U)n, P(s));
	return 0;
}

int cuMemcpyDtoDAsync_v2(U dst, U src, size_t n, void *s) { REC("cuMemcpyDtoDAsync", dst, src, (U)n, P(s)); return 0; }
// CUDA_MEMCPY2D: 16 fields of 8 bytes (the memory types padded); records the memory
// types, the device addresses, the pitches, the width and the height.
int cuMemcpy2DAsync_v2(const U *p, void *s) {
	REC("cuMemcpy2DAsync", p[2], p[4], p[6], p[9], p[11], p[13], p[14], p[15], P(s));
	return 0;
}
int cuMemcpyAsync(U dst, U src, size_t n, void *s) { REC("cuMemcpyAsync", dst, src, (U)n, P(s)); return 0; }

int cuMemcpyPeerAsync(U dst, void *dctx, U src, void *sctx, size_t n, void *s) {
	REC("cuMemcpyPeerAsync", dst, P(dctx), src, P(sctx), (U)n, P(s));
	return 0;
}

int cuMemsetD8Async(U p, unsigned char v, size_t n, void *s) { REC("cuMemsetD8Async", p, (U)v, (U)n, P(s)); return 0; }
int cuMemsetD16Async(U p, unsigned short v, size_t n, void *s) { REC("cuMemsetD16Async", p, (U)v, (U)n, P(s)); return 0; }
int cuMemsetD32Async(U p, unsigned v, size_t n, void *s) { REC("cuMemsetD32Async", p, (U)v, (U)n, P(s)); return 0; }

// cuModuleLoadDataEx "compiles" the image: the module handle is its length; an image
// starting with "bad" fails with a log written through the error log options.
int cuModuleLoadDataEx(void **m, const void *image, unsigned nopts, const int *opts, void **vals) {
	const char *text = image;
	REC("cuModuleLoadDataEx", (U)strlen(text), (U)nopts, (U)opts[0], (U)opts[1], P(vals[1]));
	if (strncmp(text, "bad", 3) == 0) {
		char *log = NULL;
		size_t size = 0;
		for (unsigned i = 0; i < nopts; i++) {
			if (opts[i] == 5) log = vals[i];
			if (opts[i] == 6) size = (size_t)(uintptr_t)vals[i];
		}
		if (log && size) snprintf(log, size, "fake ptxas: syntax error in line 1 of %.10s", text);
		return 218;
	}
	*m = (void *)(uintptr_t)strlen(text);
	return 0;
}

int cuModuleUnload(void *m) { REC("cuModuleUnload", P(m)); return bad((uintptr_t)m) ? 400 : 0; }

int cuModuleGetFunction(void **f, void *m, const char *name) {
	REC("cuModuleGetFunction", P(m), (U)strlen(name));
	if (strcmp(name, "missing") == 0) return 500;
	*f = (void *)(uintptr_t)(0xF0000 + sum((const unsigned char *)name, strlen(name)) % 0x10000);
	return 0;
}

int cuFuncGetAttribute(int *v, int attr, void *f) { REC("cuFuncGetAttribute", (U)attr, P(f)); *v = 32 + attr; return 0; }
int cuFuncSetAttribute(void *f, int attr, int v) { REC("cuFuncSetAttribute", P(f), (U)attr, (U)(int64_t)v); return 0; }

static volatile int launches;

// fake_launches returns the number of cuLaunchKernel calls and resets it.
int fake_launches(void) { return __sync_lock_test_and_set(&launches, 0); }

// cuLaunchKernel reads the parameters as the function handle says: f is their number,
// each an 8-byte value; it records sum((i+1)*value[i]).
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
		unsigned smem, void *s, void **params, void **extra) {
	U n = P(f), w = 0;
	__sync_fetch_and_add(&launches, 1);
	if (bad((uintptr_t)f)) return 400;
	for (U i = 0; params && i < n; i++) {
		U v;
		memcpy(&v, params[i], sizeof v);
		w += (i + 1) * v;
	}
	REC("cuLaunchKernel", n, gx, gy, gz, bx, by, bz, smem, P(s), w, P(extra));
	return 0;
}

int cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, void *f, int block, size_t smem) {
	REC("cuOccupancyMaxActiveBlocksPerMultiprocessor", P(f), (U)block, (U)smem);
	*n = 2048 / block;
	return 0;
}

// Graphs: capture on a stream handle with bit 0x20 set fails as invalidated (901);
// the graph of a stream s is 0x6000 + s's low 12 bits, its executable graph the graph +
// 0x100; the node a capture reports last is 0x7000 + the stream's captures so far.
static volatile int captured;

int cuStreamBeginCapture_v2(void *s, int mode) {
	REC("cuStreamBeginCapture", P(s), (U)mode);
	if (bad((uintptr_t)s)) return 400;
	captured = 0;
	return 0;
}

int cuStreamEndCapture(void *s, void **g) {
	REC("cuStreamEndCapture", P(s));
	if (bad((uintptr_t)s)) return 903;
	if ((uintptr_t)s & 0x20) {
		*g = NULL;
		return 901;
	}
	*g = (void *)(uintptr_t)(0x6000 + ((uintptr_t)s & 0xFFF));
	return 0;
}

static uintptr_t last_node;

static int capture_info(void *s, int *status, U *id, void **g, const void ***deps, size_t *n) {
	if (bad((uintptr_t)s)) return 400;
	*status = 1;
	*id = 42;
	*g = (void *)(uintptr_t)(0x6000 + ((uintptr_t)s & 0xFFF));
	last_node = 0x7000 + (uintptr_t)(++captured);
	*deps = (const void **)&last_node;
	*n = 1;
	return 0;
}

int cuStreamGetCaptureInfo_v3(void *s, int *status, U *id, void **g, const void ***deps, const void **edges, size_t *n) {
	REC("cuStreamGetCaptureInfo_v3", P(s));
	if (edges) *edges = NULL;
	return capture_info(s, status, id, g, deps, n);
}

int cuStreamGetCaptureInfo_v2(void *s, int *status, U *id, void **g, const void ***deps, size_t *n) {
	REC("cuStreamGetCaptureInfo_v2", P(s));
	return capture_info(s, status, id, g, deps, n);
}

int cuGraphInstantiateWithFlags(void **e, void *g, unsigned long long flags) {
	REC("cuGraphInstantiateWithFlags", P(g), (U)flags);
	if (bad((uintptr_t)g)) return 400;
	*e = (void *)((uintptr_t)g + 0x100);
	return 0;
}

int cuGraphLaunch(void *e, void *s) { REC("cuGraphLaunch", P(e), P(s)); return bad((uintptr_t)e) ? 400 : 0; }
int cuGraphExecDestroy(void *e) { REC("cuGraphExecDestroy", P(e)); return 0; }
int cuGraphDestroy(void *g) { REC("cuGraphDestroy", P(g)); return 0; }

// CUDA_KERNEL_NODE_PARAMS_v2.
typedef struct {
	void *func;
	unsigned gx, gy, gz, bx, by, bz, smem;
	void **params, **extra;
	void *kern, *ctx;
} kernel_node_params;

// cuGraphExecKernelNodeSetParams_v2 reads the parameters as cuLaunchKernel does.
int cuGraphExecKernelNodeSetParams_v2(void *e, void *node, const kernel_node_params *p) {
	U n = P(p->func), w = 0;
	for (U i = 0; p->params && i < n; i++) {
		U v;
		memcpy(&v, p->params[i], sizeof v);
		w += (i + 1) * v;
	}
	REC("cuGraphExecKernelNodeSetParams", P(e), P(node), n, p->gx, p->gy, p->gz, p->bx, p->by, p->bz, p->smem, w,
		P(p->extra), P(p->kern), P(p->ctx));
	return 0;
}

// cuLaunchHostFunc calls fn at once, on the calling thread.
int cuLaunchHostFunc(void *s, void (*fn)(void *), void *data) {
	REC("cuLaunchHostFunc", P(s), P(data));
	if (bad((uintptr_t)s)) return 400;
	fn(data);
	return 0;
}

// fake_hostfn is a host function for the tests: it adds 1 to the word at data.
void fake_hostfn(void *data) { __sync_fetch_and_add((int *)data, 1); }

int cuStreamGetCtx(void *s, void **c) {
	REC("cuStreamGetCtx", P(s));
	if (bad((uintptr_t)s)) return 400;
	*c = (void *)(((uintptr_t)s <= 2) ? current : 0xC0000 + ((uintptr_t)s & 1));
	return 0;
}
