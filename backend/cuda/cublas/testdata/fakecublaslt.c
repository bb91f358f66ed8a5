// A fake libcublasLt for the tests of package cublas (lt.go): the entry points of its
// cuBLASLt table with cublasLt.h's own C prototypes (uint64_t, int64_t and size_t
// arguments as the real library declares them). Descriptors are small structs that
// remember what was set; cublasLtMatmulAlgoGetHeuristic returns requestedAlgoCount - 1
// results (at most 3): algorithm i has id 100+i, needs i MiB of workspace and reports
// i+0.5 waves, and a fourth slot with a failed state is never counted. cublasLtMatmul
// records everything it received (the descriptors' contents included) for
// fake_lt_last(); an algorithm id of 101 fails with CUBLAS_STATUS_NOT_SUPPORTED (15).

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int cublasStatus_t;

static char record[2048];
const char *fake_lt_last(void) { return record; }

typedef struct { int compute, scale, ta, tb; } desc_t;
typedef struct { int type; uint64_t rows, cols; int64_t ld; int batch; int64_t stride; } layout_t;
typedef struct { uint64_t ws; uint32_t align[4]; } pref_t;
typedef struct { uint64_t algo[8]; size_t workspaceSize; cublasStatus_t state; float wavesCount; int reserved[4]; } result_t;

cublasStatus_t cublasLtCreate(void **h) { *h = (void *)0x7000; return 0; }
cublasStatus_t cublasLtDestroy(void *h) { return h == (void *)0x7000 ? 0 : 7; }

cublasStatus_t cublasLtMatmulDescCreate(desc_t **d, int compute, int scale) {
	*d = calloc(1, sizeof **d);
	(*d)->compute = compute;
	(*d)->scale = scale;
	return 0;
}
cublasStatus_t cublasLtMatmulDescDestroy(desc_t *d) { free(d); return 0; }
cublasStatus_t cublasLtMatmulDescSetAttribute(desc_t *d, int attr, const void *buf, size_t size) {
	if (size != 4) return 7;
	if (attr == 3) d->ta = *(const int32_t *)buf;
	else if (attr == 4) d->tb = *(const int32_t *)buf;
	else return 7;
	return 0;
}

cublasStatus_t cublasLtMatrixLayoutCreate(layout_t **l, int type, uint64_t rows, uint64_t cols, int64_t ld) {
	*l = calloc(1, sizeof **l);
	**l = (layout_t){type, rows, cols, ld, 1, 0};
	return 0;
}
cublasStatus_t cublasLtMatrixLayoutDestroy(layout_t *l) { free(l); return 0; }
cublasStatus_t cublasLtMatrixLayoutSetAttribute(layout_t *l, int attr, const void *buf, size_t size) {
	if (attr == 5 && size == 4) l->batch = *(const int32_t *)buf;
	else if (attr == 6 && size == 8) l->stride = *(const int64_t *)buf;
	else return 7;
	return 0;
}

cublasStatus_t cublasLtMatmulPreferenceCreate(pref_t **p) { *p = calloc(1, sizeof **p); return 0; }
cublasStatus_t cublasLtMatmulPreferenceDestroy(pref_t *p) { free(p); return 0; }
cublasStatus_t cublasLtMatmulPreferenceSetAttribute(pref_t *p, int attr, const void *buf, size_t size) {
	if (attr == 1 && size == 8) p->ws = *(const uint64_t *)buf;
	else if (attr >= 5 && attr <= 8 && size == 4) p->align[attr - 5] = *(const uint32_t *)buf;
	else return 7;
	return 0;
}

static char heur[512];
cublasStatus_t cublasLtMatmulAlgoGetHeuristic(void *h, desc_t *d, layout_t *a, layout_t *b, layout_t *c, layout_t *dd,
		pref_t *p, int requested, result_t *res, int *returned) {
	if (h != (void *)0x7000 || c != dd || requested <= 0) return 7;
	snprintf(heur, sizeof heur, "requested=%d ws=%llu align=%u/%u/%u/%u", requested, (unsigned long long)p->ws,
		p->align[0], p->align[1], p->align[2], p->align[3]);
	int n = requested - 1 < 3 ? requested - 1 : 3;
	for (int i = 0; i < n; i++) {
		memset(&res[i], 0, sizeof res[i]);
		res[i].algo[0] = 100 + i;
		res[i].workspaceSize = (size_t)i << 20;
		res[i].wavesCount = i + 0.5f;
	}
	if (n < requested) {
		memset(&res[n], 0, sizeof res[n]);
		res[n].state = 15;
	}
	*returned = n < requested ? n + 1 : n;
	return n > 0 ? 0 : 15;
}

static void fmt_layout(char *buf, size_t n, const layout_t *l) {
	snprintf(buf, n, "%d:%llux%llu/%lld/b%d/s%lld", l->type, (unsigned long long)l->rows, (unsigned long long)l->cols,
		(long long)l->ld, l->batch, (long long)l->stride);
}

cublasStatus_t cublasLtMatmul(void *h, desc_t *d, const void *alpha, const void *A, layout_t *la, const void *B,
		layout_t *lb, const void *beta, const void *C, layout_t *lc, void *D, layout_t *ld, const result_t *algo,
		void *ws, size_t wsSize, void *stream) {
	char a[96], b[96], c[96], al[64], be[64];
	fmt_layout(a, sizeof a, la);
	fmt_layout(b, sizeof b, lb);
	fmt_layout(c, sizeof c, lc);
	if (d->scale == 1) {
		snprintf(al, sizeof al, "%.17g", *(const double *)alpha);
		snprintf(be, sizeof be, "%.17g", *(const double *)beta);
	} else {
		snprintf(al, sizeof al, "%.9g", (double)*(const float *)alpha);
		snprintf(be, sizeof be, "%.9g", (double)*(const float *)beta);
	}
	snprintf(record, sizeof record,
		"matmul compute=%d scale=%d ta=%d tb=%d alpha=%s A=%p[%s] B=%p[%s] beta=%s C=%p[%s] D=%s algo=%llu ws=%p/%zu stream=%p heur{%s}",
		d->compute, d->scale, d->ta, d->tb, al, A, a, B, b, be, C, c, (D == C && ld == lc) ? "C" : "other",
		(unsigned long long)algo->algo[0], ws, wsSize, stream, heur);
	return algo->algo[0] == 101 ? 15 : 0;
}
