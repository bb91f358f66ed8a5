// A fake libnccl for the tests of package ncclapi: it implements most entry points
// with NCCL's C ABI, records the arguments of the last call, and lets the tests read
// them back through ncclGetErrorString with codes the real library does not use:
//
//   ncclGetErrorString(1000)  the last call and its arguments, formatted
//   ncclGetErrorString(1001)  NCCL_NVLS_ENABLE as it was when the library was loaded
//
// Failures are injected by argument values: count 0xBAD in a collective returns
// ncclInvalidArgument; ncclCommCount on the communicator 0xE000+k returns code k;
// nranks 0 in ncclCommInitRank returns ncclInvalidArgument. ncclCommSplit is left out
// on purpose, to test a missing entry point.
//
// The ncclConfig_t is read at raw byte offsets taken from NCCL 2.28's nccl.h, not
// through a struct, so that the test checks the layout the package writes.

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { char internal[128]; } uid_t128;

static char nvls_at_load[64];
static char last_error[256];
static char record[1024];

// The last call, stored raw (formatting happens only when a test asks).
static struct {
	const char *op;
	uint64_t a[8];
	int n;
} last;

#define REC(name, ...)                                                     \
	do {                                                                   \
		uint64_t v_[] = {__VA_ARGS__};                                     \
		last.op = name;                                                    \
		last.n = (int)(sizeof(v_) / sizeof(v_[0]));                        \
		for (int i_ = 0; i_ < last.n; i_++) last.a[i_] = v_[i_];           \
	} while (0)

__attribute__((constructor)) static void fake_init(void) {
	const char *v = getenv("NCCL_NVLS_ENABLE");
	snprintf(nvls_at_load, sizeof nvls_at_load, "%s", v ? v : "<unset>");
}

static int fail(int code, const char *msg) {
	snprintf(last_error, sizeof last_error, "%s", msg);
	return code;
}

int ncclGetVersion(int *v) {
	*v = 22803;
	return 0;
}

int ncclGetUniqueId(uid_t128 *id) {
	for (int i = 0; i < 128; i++) id->internal[i] = (char)(i * 7 + 3);
	return 0;
}

static uint64_t id_sum(const uid_t128 *id) {
	uint64_t s = 0;
	for (int i = 0; i < 128; i++) s = s * 31 + (unsigned char)id->internal[i];
	return s;
}

int ncclCommInitRank(void **comm, int nranks, uid_t128 id, int rank) {
	REC("ncclCommInitRank", (uint64_t)nranks, (uint64_t)rank, id_sum(&id));
	if (nranks == 0) return fail(4, "fake: nranks is 0");
	*comm = (void *)(uintptr_t)0xC0FFEE00;
	return 0;
}

static int async_countdown;
static char config_record[512];

static int rd_int(const void *p, size_t off) {
	int v;
	memcpy(&v, (const char *)p + off, sizeof v);
	return v;
}

static const char *rd_str(const void *p, size_t off) {
	const char *s;
	memcpy(&s, (const char *)p + off, sizeof s);
	return s ? s : "(null)";
}

int ncclCommInitRankConfig(void **comm, int nranks, uid_t128 id, int rank, void *cfg) {
	size_t size;
	unsigned magic, version;
	memcpy(&size, cfg, sizeof size);
	memcpy(&magic, (char *)cfg + 8, sizeof magic);
	memcpy(&version, (char *)cfg + 12, sizeof version);
	snprintf(config_record, sizeof config_record,
	         "size=%zu magic=%#x version=%u blocking=%d cga=%d minCTAs=%d maxCTAs=%d netName=%s "
	         "splitShare=%d trafficClass=%d commName=%s collnet=%d ctaPolicy=%d shrinkShare=%d "
	         "nvlsCTAs=%d nChannelsPerNetPeer=%d nvlinkCentricSched=%d",
	         size, magic, version, rd_int(cfg, 16), rd_int(cfg, 20), rd_int(cfg, 24), rd_int(cfg, 28),
	         rd_str(cfg, 32), rd_int(cfg, 40), rd_int(cfg, 44), rd_str(cfg, 48), rd_int(cfg, 56),
	         rd_int(cfg, 60), rd_int(cfg, 64), rd_int(cfg, 68), rd_int(cfg, 72), rd_int(cfg, 76));
	REC("ncclCommInitRankConfig", (uint64_t)nranks, (uint64_t)rank, id_sum(&id));
	if (magic != 0xcafebeef) return fail(4, "fake: config not initialized");
	if (rd_int(cfg, 16) == 0) { // non-blocking
		*comm = (void *)(uintptr_t)0xC0FFEE01;
		async_countdown = 2;
		return 7;
	}
	*comm = (void *)(uintptr_t)0xC0FFEE02;
	return 0;
}

int ncclCommInitAll(void **comms, int ndev, const int *devlist) {
	REC("ncclCommInitAll", (uint64_t)ndev, devlist ? (uint64_t)devlist[ndev - 1] : 0xFFFF);
	for (int i = 0; i < ndev; i++) comms[i] = (void *)(uintptr_t)(0x1000 + (devlist ? devlist[i] : i));
	return 0;
}

int ncclCommGetAsyncError(void *comm, int *state) {
	REC("ncclCommGetAsyncError", (uint64_t)(uintptr_t)comm);
	if (async_countdown > 0) {
		async_countdown--;
		*state = 7;
	} else {
		*state = 0;
	}
	return 0;
}

int ncclCommFinalize(void *comm) { REC("ncclCommFinalize", (uint64_t)(uintptr_t)comm); return 0; }
int ncclCommDestroy(void *comm) { REC("ncclCommDestroy", (uint64_t)(uintptr_t)comm); return 0; }
int ncclCommAbort(void *comm) { REC("ncclCommAbort", (uint64_t)(uintptr_t)comm); return 0; }

int ncclCommCount(void *comm, int *count) {
	uintptr_t c = (uintptr_t)comm;
	if ((c & ~(uintptr_t)0xFF) == 0xE000) {
		char msg[64];
		snprintf(msg, sizeof msg, "fake: injected code %d", (int)(c & 0xFF));
		return fail((int)(c & 0xFF), msg);
	}
	*count = 4;
	return 0;
}

int ncclCommCuDevice(void *comm, int *dev) { (void)comm; *dev = 3; return 0; }
int ncclCommUserRank(void *comm, int *rank) { (void)comm; *rank = 2; return 0; }

#define U(x) ((uint64_t)(uintptr_t)(x))

int ncclAllReduce(const void *s, void *r, size_t n, int dt, int op, void *comm, void *stream) {
	REC("ncclAllReduce", U(s), U(r), (uint64_t)n, (uint64_t)dt, (uint64_t)op, U(comm), U(stream));
	if (n == 0xBAD) return fail(4, "fake: count 0xbad rejected");
	return 0;
}

int ncclBroadcast(const void *s, void *r, size_t n, int dt, int root, void *comm, void *stream) {
	REC("ncclBroadcast", U(s), U(r), (uint64_t)n, (uint64_t)dt, (uint64_t)root, U(comm), U(stream));
	return 0;
}

int ncclReduce(const void *s, void *r, size_t n, int dt, int op, int root, void *comm, void *stream) {
	REC("ncclReduce", U(s), U(r), (uint64_t)n, (uint64_t)dt, (uint64_t)op, (uint64_t)root, U(comm), U(stream));
	return 0;
}

int ncclAllGather(const void *s, void *r, size_t n, int dt, void *comm, void *stream) {
	REC("ncclAllGather", U(s), U(r), (uint64_t)n, (uint64_t)dt, U(comm), U(stream));
	return 0;
}

int ncclReduceScatter(const void *s, void *r, size_t n, int dt, int op, void *comm, void *stream) {
	REC("ncclReduceScatter", U(s), U(r), (uint64_t)n, (uint64_t)dt, (uint64_t)op, U(comm), U(stream));
	return 0;
}

int ncclSend(const void *s, size_t n, int dt, int peer, void *comm, void *stream) {
	REC("ncclSend", U(s), (uint64_t)n, (uint64_t)dt, (uint64_t)peer, U(comm), U(stream));
	return 0;
}

int ncclRecv(void *r, size_t n, int dt, int peer, void *comm, void *stream) {
	REC("ncclRecv", U(r), (uint64_t)n, (uint64_t)dt, (uint64_t)peer, U(comm), U(stream));
	return 0;
}

static int group_depth;

int ncclGroupStart(void) {
	group_depth++;
	return 0;
}

int ncclGroupEnd(void) {
	if (group_depth == 0) return fail(5, "fake: ncclGroupEnd without ncclGroupStart");
	group_depth--;
	return 0;
}

int ncclRedOpCreatePreMulSum(int *op, void *scalar, int dt, int residence, void *comm) {
	uint64_t bits = 0;
	if (residence == 1) {
		switch (dt) {
		case 0: case 1: case 10: case 11: { uint8_t v; memcpy(&v, scalar, 1); bits = v; break; }
		case 6: case 9: { uint16_t v; memcpy(&v, scalar, 2); bits = v; break; }
		case 2: case 3: case 7: { uint32_t v; memcpy(&v, scalar, 4); bits = v; break; }
		default: { uint64_t v; memcpy(&v, scalar, 8); bits = v; break; }
		}
	} else {
		bits = U(scalar);
	}
	REC("ncclRedOpCreatePreMulSum", bits, (uint64_t)dt, (uint64_t)residence, U(comm));
	*op = 5 + residence;
	return 0;
}

int ncclRedOpDestroy(int op, void *comm) {
	REC("ncclRedOpDestroy", (uint64_t)op, U(comm));
	return 0;
}

const char *ncclGetErrorString(int code) {
	switch (code) {
	case 0: return "fake: no error";
	case 1: return "fake: unhandled cuda error";
	case 2: return "fake: unhandled system error";
	case 3: return "fake: internal error";
	case 4: return "fake: invalid argument";
	case 5: return "fake: invalid usage";
	case 6: return "fake: remote process exited or there was a network error";
	case 7: return "fake: NCCL operation in progress";
	case 8: return "fake: timeout";
	case 1000: {
		int k = snprintf(record, sizeof record, "%s", last.op ? last.op : "none");
		for (int i = 0; i < last.n && k < (int)sizeof record; i++) {
			k += snprintf(record + k, sizeof record - k, " %#llx", (unsigned long long)last.a[i]);
		}
		return record;
	}
	case 1001: return nvls_at_load;
	case 1002: return config_record;
	}
	return "fake: unknown result code";
}

const char *ncclGetLastError(void *comm) {
	(void)comm;
	return last_error;
}
