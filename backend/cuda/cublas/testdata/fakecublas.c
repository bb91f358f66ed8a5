// A fake libcublas for the tests of package cublas: the entry points of the binding's
// table with cuBLAS's own C prototypes (int, long long, size_t, float and double
// arguments as the real library declares them), so that the binding's generic caller
// is checked against what a C compiler does. Each call records its arguments, and
// fake_last() returns them formatted. Failures are injected by values: m == 0xBAD in a
// GEMM returns CUBLAS_STATUS_INVALID_VALUE (7); a mode of 99 returns 15
// (NOT_SUPPORTED); FAKE_CUBLAS_CREATE_FAIL in the environment makes cublasCreate fail
// with NOT_INITIALIZED (1). cublasGetStatusName returns "FAKE_<code>", so that a test
// can tell the library's names from the package's table.
//
// Each entry point that takes a handle, and cublasCreate, also records the CUDA context
// current on the calling thread, read from the fake driver (backend/cuda/cu's
// testdata/fakecuda.c, named by GPU_CUDA_LIBRARY and already loaded): fake_ctx()
// returns it, so that a test sees that every call ran in the handle's context. A call
// on a handle in another context than the one current at its cublasCreate fails with
// CUBLAS_STATUS_INTERNAL_ERROR (14), as a real handle would misbehave.

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int cublasStatus_t;
typedef struct fakeHandle *cublasHandle_t;

static char record[2048];
static int handles;

static uintptr_t ctx;

const char *fake_last(void) { return record; }

// fake_ctx returns the context current at the last call that records one (~0 when the
// fake driver is not loaded).
uintptr_t fake_ctx(void) { return ctx; }

// hctx holds each handle's context, by the handle's number.
static uintptr_t hctx[4096];

static uintptr_t *handle_ctx(cublasHandle_t h) {
	uintptr_t i = ((uintptr_t)h - 0x5000) / 16;
	return i < 4096 ? &hctx[i] : NULL;
}

// seen records the calling thread's current context and returns it.
static uintptr_t seen(void) {
	static int (*get)(void **);
	if (!get) {
		const char *drv = getenv("GPU_CUDA_LIBRARY");
		void *h = drv ? dlopen(drv, RTLD_NOW | RTLD_NOLOAD) : NULL;
		if (h) get = (int (*)(void **))dlsym(h, "cuCtxGetCurrent");
	}
	void *c = (void *)~(uintptr_t)0;
	if (get) get(&c);
	ctx = (uintptr_t)c;
	return ctx;
}

// wrong reports whether h is called in another context than its own (with the fake
// driver loaded).
static int wrong(cublasHandle_t h) {
	uintptr_t c = seen(), *p = handle_ctx(h);
	return c != ~(uintptr_t)0 && p != NULL && *p != c;
}

cublasStatus_t cublasCreate_v2(cublasHandle_t *h) {
	uintptr_t c = seen();
	if (getenv("FAKE_CUBLAS_CREATE_FAIL")) return 1;
	*h = (cublasHandle_t)(uintptr_t)(0x5000 + 16 * __atomic_add_fetch(&handles, 1, __ATOMIC_SEQ_CST));
	if (handle_ctx(*h)) *handle_ctx(*h) = c;
	snprintf(record, sizeof record, "create %p", (void *)*h);
	return 0;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t h) {
	if (wrong(h)) return 14;
	snprintf(record, sizeof record, "destroy %p", (void *)h);
	return 0;
}

cublasStatus_t cublasGetProperty(int type, int *value) {
	static const int v[] = {13, 1, 7};
	if (type < 0 || type > 2) return 7;
	*value = v[type];
	return 0;
}

cublasStatus_t cublasGetVersion_v2(cublasHandle_t h, int *version) {
	if (wrong(h)) return 14;
	*version = 130107;
	snprintf(record, sizeof record, "version %p", (void *)h);
	return 0;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t h, void *stream) {
	if (wrong(h)) return 14;
	snprintf(record, sizeof record, "stream %p %p", (void *)h, stream);
	return 0;
}

cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t h, void *ws, size_t size) {
	if (wrong(h)) return 14;
	snprintf(record, sizeof record, "workspace %p %p %zu", (void *)h, ws, size);
	return 0;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t h, int mode) {
	if (wrong(h)) return 14;
	snprintf(record, sizeof record, "math %p %d", (void *)h, mode);
	return mode == 99 ? 15 : 0;
}

cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t h, int mode) {
	if (wrong(h)) return 14;
	snprintf(record, sizeof record, "pointer %p %d", (void *)h, mode);
	return mode == 99 ? 15 : 0;
}

// scalar formats alpha or beta as the compute type reads it.
static void scalar(char *buf, size_t n, int compute, const void *p) {
	if (compute == 70 || compute == 71) snprintf(buf, n, "%.17g", *(const double *)p);
	else snprintf(buf, n, "%.9g", (double)*(const float *)p);
}

cublasStatus_t cublasGemmEx(cublasHandle_t h, int ta, int tb, int m, int n, int k,
		const void *alpha, const void *A, int at, int lda, const void *B, int bt, int ldb,
		const void *beta, void *C, int ct, int ldc, int compute, int algo) {
	if (wrong(h)) return 14;
	char a[64], b[64];
	scalar(a, sizeof a, compute, alpha);
	scalar(b, sizeof b, compute, beta);
	snprintf(record, sizeof record,
		"gemm %p ta=%d tb=%d m=%d n=%d k=%d alpha=%s A=%p/%d/%d B=%p/%d/%d beta=%s C=%p/%d/%d compute=%d algo=%d",
		(void *)h, ta, tb, m, n, k, a, A, at, lda, B, bt, ldb, b, C, ct, ldc, compute, algo);
	return m == 0xBAD ? 7 : 0;
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, int ta, int tb, int m, int n, int k,
		const void *alpha, const void *A, int at, int lda, long long sa,
		const void *B, int bt, int ldb, long long sb, const void *beta,
		void *C, int ct, int ldc, long long sc, int batch, int compute, int algo) {
	if (wrong(h)) return 14;
	char a[64], b[64];
	scalar(a, sizeof a, compute, alpha);
	scalar(b, sizeof b, compute, beta);
	snprintf(record, sizeof record,
		"batched %p ta=%d tb=%d m=%d n=%d k=%d alpha=%s A=%p/%d/%d/%lld B=%p/%d/%d/%lld beta=%s "
		"C=%p/%d/%d/%lld batch=%d compute=%d algo=%d",
		(void *)h, ta, tb, m, n, k, a, A, at, lda, sa, B, bt, ldb, sb, b, C, ct, ldc, sc, batch, compute, algo);
	return m == 0xBAD ? 7 : 0;
}

const char *cublasGetStatusName(cublasStatus_t s) {
	static char buf[32];
	snprintf(buf, sizeof buf, "FAKE_%d", s);
	return buf;
}

const char *cublasGetStatusString(cublasStatus_t s) {
	return s == 7 ? "an invalid value was passed" : "something else";
}
