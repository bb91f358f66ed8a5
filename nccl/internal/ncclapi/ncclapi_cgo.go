//go:build cgo && unix

package ncclapi

/*
#cgo linux LDFLAGS: -ldl

#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Our own prototypes, written from NCCL's documented API (nccl.h, NCCL 2.28). No NCCL
// header is used. Enums (ncclResult_t, ncclDataType_t, ncclRedOp_t,
// ncclScalarResidence_t) are int-sized enums and are passed as int; ncclComm_t and
// cudaStream_t are pointers.

typedef int gn_result; // ncclResult_t

typedef struct { char internal[128]; } gn_unique_id; // ncclUniqueId

// ncclConfig_t as of NCCL 2.28 (struct ncclConfig_v22800). Later releases append
// fields; NCCL copies min(size, sizeof its own struct) bytes.
typedef struct {
	size_t size;
	unsigned int magic;
	unsigned int version;
	int blocking;
	int cgaClusterSize;
	int minCTAs;
	int maxCTAs;
	const char *netName;
	int splitShare;
	int trafficClass;
	const char *commName;
	int collnetEnable;
	int CTAPolicy;
	int shrinkShare;
	int nvlsCTAs;
	int nChannelsPerNetPeer;
	int nvlinkCentricSched;
} gn_config;

_Static_assert(sizeof(gn_config) == 80, "ncclConfig_v22800 is 80 bytes on LP64");
_Static_assert(offsetof(gn_config, blocking) == 16, "ncclConfig_t.blocking");
_Static_assert(offsetof(gn_config, netName) == 32, "ncclConfig_t.netName");
_Static_assert(offsetof(gn_config, commName) == 48, "ncclConfig_t.commName");
_Static_assert(offsetof(gn_config, nvlinkCentricSched) == 76, "ncclConfig_t.nvlinkCentricSched");
_Static_assert(sizeof(gn_unique_id) == 128, "ncclUniqueId");

// The result of every wrapper: the NCCL code, ncclGetLastError's text on failure, and
// one output value (a communicator, a count, ...).
typedef struct {
	int code;
	const char *msg;
	uintptr_t val;
} gn_ret;

enum { GN_NOSYM = -1, GN_INPROGRESS = 7 };

static void *gn_lib;

static gn_result (*p_GetVersion)(int *);
static gn_result (*p_GetUniqueId)(gn_unique_id *);
static gn_result (*p_CommInitRank)(void **, int, gn_unique_id, int);
static gn_result (*p_CommInitRankConfig)(void **, int, gn_unique_id, int, gn_config *);
static gn_result (*p_CommInitAll)(void **, int, const int *);
static gn_result (*p_CommSplit)(void *, int, int, void **, gn_config *);
static gn_result (*p_CommFinalize)(void *);
static gn_result (*p_CommDestroy)(void *);
static gn_result (*p_CommAbort)(void *);
static gn_result (*p_CommGetAsyncError)(void *, gn_result *);
static gn_result (*p_CommCount)(void *, int *);
static gn_result (*p_CommCuDevice)(void *, int *);
static gn_result (*p_CommUserRank)(void *, int *);
static gn_result (*p_AllReduce)(const void *, void *, size_t, int, int, void *, void *);
static gn_result (*p_Broadcast)(const void *, void *, size_t, int, int, void *, void *);
static gn_result (*p_Reduce)(const void *, void *, size_t, int, int, int, void *, void *);
static gn_result (*p_AllGather)(const void *, void *, size_t, int, void *, void *);
static gn_result (*p_ReduceScatter)(const void *, void *, size_t, int, int, void *, void *);
static gn_result (*p_Send)(const void *, size_t, int, int, void *, void *);
static gn_result (*p_Recv)(void *, size_t, int, int, void *, void *);
static gn_result (*p_GroupStart)(void);
static gn_result (*p_GroupEnd)(void);
static gn_result (*p_RedOpCreatePreMulSum)(int *, void *, int, int, void *);
static gn_result (*p_RedOpDestroy)(int, void *);
static const char *(*p_GetErrorString)(gn_result);
static const char *(*p_GetLastError)(void *);

// gn_open opens path and resolves the entry points. It returns 0, or -1 with a message
// in err.
static int gn_open(const char *path, char *err, size_t errlen) {
	dlerror();
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		snprintf(err, errlen, "%s", e ? e : "dlopen failed");
		return -1;
	}
	if (dlsym(h, "ncclGetVersion") == NULL) {
		snprintf(err, errlen, "%s: no symbol ncclGetVersion: not an NCCL library", path);
		dlclose(h);
		return -1;
	}
#define GN_BIND(var, name) (*(void **)(&(var)) = dlsym(h, name))
	GN_BIND(p_GetVersion, "ncclGetVersion");
	GN_BIND(p_GetUniqueId, "ncclGetUniqueId");
	GN_BIND(p_CommInitRank, "ncclCommInitRank");
	GN_BIND(p_CommInitRankConfig, "ncclCommInitRankConfig");
	GN_BIND(p_CommInitAll, "ncclCommInitAll");
	GN_BIND(p_CommSplit, "ncclCommSplit");
	GN_BIND(p_CommFinalize, "ncclCommFinalize");
	GN_BIND(p_CommDestroy, "ncclCommDestroy");
	GN_BIND(p_CommAbort, "ncclCommAbort");
	GN_BIND(p_CommGetAsyncError, "ncclCommGetAsyncError");
	GN_BIND(p_CommCount, "ncclCommCount");
	GN_BIND(p_CommCuDevice, "ncclCommCuDevice");
	GN_BIND(p_CommUserRank, "ncclCommUserRank");
	GN_BIND(p_AllReduce, "ncclAllReduce");
	GN_BIND(p_Broadcast, "ncclBroadcast");
	GN_BIND(p_Reduce, "ncclReduce");
	GN_BIND(p_AllGather, "ncclAllGather");
	GN_BIND(p_ReduceScatter, "ncclReduceScatter");
	GN_BIND(p_Send, "ncclSend");
	GN_BIND(p_Recv, "ncclRecv");
	GN_BIND(p_GroupStart, "ncclGroupStart");
	GN_BIND(p_GroupEnd, "ncclGroupEnd");
	GN_BIND(p_RedOpCreatePreMulSum, "ncclRedOpCreatePreMulSum");
	GN_BIND(p_RedOpDestroy, "ncclRedOpDestroy");
	GN_BIND(p_GetErrorString, "ncclGetErrorString");
	GN_BIND(p_GetLastError, "ncclGetLastError");
#undef GN_BIND
	gn_lib = h;
	return 0;
}

// gn_path returns the file the library was loaded from, or NULL.
static const char *gn_path(void) {
	Dl_info info;
	if (p_GetVersion != NULL && dladdr(*(void **)(&p_GetVersion), &info) != 0) {
		return info.dli_fname;
	}
	return NULL;
}

static gn_ret gn_done(void *comm, int code, uintptr_t val) {
	gn_ret r = {code, NULL, val};
	if (code != 0 && code != GN_INPROGRESS && p_GetLastError != NULL) {
		r.msg = p_GetLastError(comm);
	}
	return r;
}

static const gn_ret gn_nosym = {GN_NOSYM, NULL, 0};

// GN_CALL calls fn(args...) and returns its gn_ret (no output value).
#define GN_CALL(fn, comm, ...)                        \
	do {                                              \
		if ((fn) == NULL) return gn_nosym;            \
		int c_ = (fn)(__VA_ARGS__);                   \
		if (c_ == 0) {                                \
			gn_ret ok_ = {0, NULL, 0};                \
			return ok_;                               \
		}                                             \
		return gn_done((void *)(comm), c_, 0);        \
	} while (0)

static gn_ret gn_GetVersion(void) {
	if (p_GetVersion == NULL) return gn_nosym;
	int v = 0;
	int c = p_GetVersion(&v);
	return gn_done(NULL, c, (uintptr_t)(unsigned)v);
}

static gn_ret gn_GetUniqueId(gn_unique_id *id) {
	GN_CALL(p_GetUniqueId, NULL, id);
}

static gn_ret gn_CommInitRank(int nranks, const gn_unique_id *id, int rank) {
	if (p_CommInitRank == NULL) return gn_nosym;
	void *comm = NULL;
	int c = p_CommInitRank(&comm, nranks, *id, rank);
	return gn_done(NULL, c, (uintptr_t)comm);
}

static gn_ret gn_CommInitRankConfig(int nranks, const gn_unique_id *id, int rank, gn_config *cfg) {
	if (p_CommInitRankConfig == NULL) return gn_nosym;
	void *comm = NULL;
	int c = p_CommInitRankConfig(&comm, nranks, *id, rank, cfg);
	return gn_done(NULL, c, (uintptr_t)comm);
}

static gn_ret gn_CommInitAll(uintptr_t *comms, int ndev, const int *devlist) {
	GN_CALL(p_CommInitAll, NULL, (void **)comms, ndev, devlist);
}

static gn_ret gn_CommSplit(uintptr_t comm, int color, int key, gn_config *cfg) {
	if (p_CommSplit == NULL) return gn_nosym;
	void *out = NULL;
	int c = p_CommSplit((void *)comm, color, key, &out, cfg);
	return gn_done((void *)comm, c, (uintptr_t)out);
}

static gn_ret gn_CommFinalize(uintptr_t comm) { GN_CALL(p_CommFinalize, comm, (void *)comm); }
static gn_ret gn_CommDestroy(uintptr_t comm) { GN_CALL(p_CommDestroy, comm, (void *)comm); }
static gn_ret gn_CommAbort(uintptr_t comm) { GN_CALL(p_CommAbort, comm, (void *)comm); }

static gn_ret gn_CommGetAsyncError(uintptr_t comm) {
	if (p_CommGetAsyncError == NULL) return gn_nosym;
	gn_result state = 0;
	int c = p_CommGetAsyncError((void *)comm, &state);
	return gn_done((void *)comm, c, (uintptr_t)(unsigned)state);
}

// gn_CommInt calls one of the int-valued queries (which = 0 Count, 1 CuDevice, 2 UserRank).
static gn_ret gn_CommInt(uintptr_t comm, int which) {
	gn_result (*fn)(void *, int *) = which == 0 ? p_CommCount : which == 1 ? p_CommCuDevice : p_CommUserRank;
	if (fn == NULL) return gn_nosym;
	int v = 0;
	int c = fn((void *)comm, &v);
	return gn_done((void *)comm, c, (uintptr_t)(unsigned)v);
}

static gn_ret gn_AllReduce(uintptr_t send, uintptr_t recv, uint64_t count, int dt, int op, uintptr_t comm, uintptr_t stream) {
	GN_CALL(p_AllReduce, comm, (const void *)send, (void *)recv, (size_t)count, dt, op, (void *)comm, (void *)stream);
}

static gn_ret gn_Broadcast(uintptr_t send, uintptr_t recv, uint64_t count, int dt, int root, uintptr_t comm, uintptr_t stream) {
	GN_CALL(p_Broadcast, comm, (const void *)send, (void *)recv, (size_t)count, dt, root, (void *)comm, (void *)stream);
}

static gn_ret gn_Reduce(uintptr_t send, uintptr_t recv, uint64_t count, int dt, int op, int root, uintptr_t comm, uintptr_t stream) {
	GN_CALL(p_Reduce, comm, (const void *)send, (void *)recv, (size_t)count, dt, op, root, (void *)comm, (void *)stream);
}

static gn_ret gn_AllGather(uintptr_t send, uintptr_t recv, uint64_t sendcount, int dt, uintptr_t comm, uintptr_t stream) {
	GN_CALL(p_AllGather, comm, (const void *)send, (void *)recv, (size_t)sendcount, dt, (void *)comm, (void *)stream);
}

static gn_ret gn_ReduceScatter(uintptr_t send, uintptr_t recv, uint64_t recvcount, int dt, int op, uintptr_t comm, uintptr_t stream) {
	GN_CALL(p_ReduceScatter, comm, (const void *)send, (void *)recv, (size_t)recvcount, dt, op, (void *)comm, (void *)stream);
}

static gn_ret gn_Send(uintptr_t send, uint64_t count, int dt, int peer, uintptr_t comm, uintptr_t stream) {
	GN_CALL(p_Send, comm, (const void *)send, (size_t)count, dt, peer, (void *)comm, (void *)stream);
}

static gn_ret gn_Recv(uintptr_t recv, uint64_t count, int dt, int peer, uintptr_t comm, uintptr_t stream) {
	GN_CALL(p_Recv, comm, (void *)recv, (size_t)count, dt, peer, (void *)comm, (void *)stream);
}

static gn_ret gn_GroupStart(void) { GN_CALL(p_GroupStart, NULL); }
static gn_ret gn_GroupEnd(void) { GN_CALL(p_GroupEnd, NULL); }

// gn_PreMulSum creates a PreMulSum operator. For the host-immediate residence the
// scalar is the low size bytes of bits, stored in a variable of that size (so the
// result does not depend on byte order); for the device residence, bits is the device
// address of the scalar.
static gn_ret gn_PreMulSum(uint64_t bits, int size, int dt, int residence, uintptr_t comm) {
	if (p_RedOpCreatePreMulSum == NULL) return gn_nosym;
	union { uint8_t u8; uint16_t u16; uint32_t u32; uint64_t u64; } s;
	void *scalar = &s;
	if (residence == 1) {
		switch (size) {
		case 1: s.u8 = (uint8_t)bits; break;
		case 2: s.u16 = (uint16_t)bits; break;
		case 4: s.u32 = (uint32_t)bits; break;
		default: s.u64 = bits; break;
		}
	} else {
		scalar = (void *)(uintptr_t)bits;
	}
	int op = 0;
	int c = p_RedOpCreatePreMulSum(&op, scalar, dt, residence, (void *)comm);
	return gn_done((void *)comm, c, (uintptr_t)(unsigned)op);
}

static gn_ret gn_RedOpDestroy(int op, uintptr_t comm) { GN_CALL(p_RedOpDestroy, comm, op, (void *)comm); }

static const char *gn_GetErrorString(int code) {
	return p_GetErrorString ? p_GetErrorString(code) : NULL;
}

static const char *gn_GetLastError(uintptr_t comm) {
	return p_GetLastError ? p_GetLastError((void *)comm) : NULL;
}
*/
import "C"

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"unsafe"
)

// envLibrary names the environment variable that overrides the library file.
const envLibrary = "GPU_NCCL_LIBRARY"

// defaultLibraries are tried in order when envLibrary is unset.
var defaultLibraries = []string{"libnccl.so.2", "libnccl.so"}

var (
	loadOnce sync.Once
	loadErr  *Error // nil once loaded
	libPath  string
)

// ready loads the library on first use and returns nil or the loading error.
func ready() *Error {
	loadOnce.Do(load)
	return loadErr
}

func load() {
	// NVLink multicast must stay off unless the user decided otherwise: set before NCCL
	// is loaded, so that NCCL's first getenv sees it. With cgo, os.Setenv also sets the
	// C environment.
	if _, ok := os.LookupEnv("NCCL_NVLS_ENABLE"); !ok {
		os.Setenv("NCCL_NVLS_ENABLE", "0")
	}
	candidates := defaultLibraries
	from := ""
	if p := os.Getenv(envLibrary); p != "" {
		candidates = []string{p}
		from = envLibrary + "="
	}
	errbuf := (*C.char)(C.malloc(1024))
	defer C.free(unsafe.Pointer(errbuf))
	var tried []string
	for _, name := range candidates {
		cname := C.CString(name)
		rc := C.gn_open(cname, errbuf, 1024)
		C.free(unsafe.Pointer(cname))
		if rc == 0 {
			libPath = name
			if p := C.gn_path(); p != nil {
				libPath = C.GoString(p)
			}
			return
		}
		tried = append(tried, fmt.Sprintf("%s%s (%s)", from, name, C.GoString(errbuf)))
	}
	loadErr = unavailable("", "cannot load the NCCL library: tried "+strings.Join(tried, "; "))
}

// at returns a copy of the loading error e naming op.
func (e *Error) at(op string) error {
	c := *e
	c.Op = op
	return &c
}

// result converts a wrapper's return to an error.
func result(op string, r C.gn_ret) error {
	if r.code == 0 {
		return nil
	}
	return failure(op, r)
}

//go:noinline
func failure(op string, r C.gn_ret) error {
	if r.code == C.GN_NOSYM {
		return unavailable(op, fmt.Sprintf("%s has no symbol %s (NCCL too old?)", libPath, op))
	}
	code := Result(r.code)
	msg := ""
	if r.msg != nil {
		msg = C.GoString(r.msg)
	}
	if msg == "" {
		if s := C.gn_GetErrorString(C.int(code)); s != nil {
			msg = C.GoString(s)
		}
	}
	return &Error{Code: int(code), Name: code.String(), Message: msg, Op: op}
}

// Load loads the NCCL library if it is not loaded yet and returns nil, or an error
// matching ErrUnavailable that names what was tried. Every other function loads the
// library on first use; Load only lets a program ask early.
func Load() error {
	if e := ready(); e != nil {
		return e.at("load")
	}
	return nil
}

// LibraryPath returns the file the NCCL library was loaded from, or "" if it is not
// loaded.
func LibraryPath() string {
	if ready() != nil {
		return ""
	}
	return libPath
}

// Version returns the version code of the loaded NCCL library, such as 22803 for
// 2.28.3 (see SplitVersion) (NCCL API: ncclGetVersion).
func Version() (int, error) {
	if e := ready(); e != nil {
		return 0, e.at("ncclGetVersion")
	}
	r := C.gn_GetVersion()
	return int(r.val), result("ncclGetVersion", r)
}

// GetUniqueID returns a new unique ID for CommInitRank; call it on one rank and send the
// bytes to the others (NCCL API: ncclGetUniqueId).
func GetUniqueID() (UniqueID, error) {
	var id UniqueID
	if e := ready(); e != nil {
		return id, e.at("ncclGetUniqueId")
	}
	err := result("ncclGetUniqueId", C.gn_GetUniqueId((*C.gn_unique_id)(unsafe.Pointer(&id))))
	return id, err
}

// CommInitRank creates the communicator of rank rank in a clique of nranks ranks on the
// calling OS thread's current CUDA device (see the package doc: lock the goroutine to
// its thread and make the device's context current first); every rank calls it with
// the same id, concurrently (NCCL API: ncclCommInitRank).
func CommInitRank(nranks int, id UniqueID, rank int) (Comm, error) {
	if e := ready(); e != nil {
		return 0, e.at("ncclCommInitRank")
	}
	r := C.gn_CommInitRank(C.int(nranks), (*C.gn_unique_id)(unsafe.Pointer(&id)), C.int(rank))
	return Comm(r.val), result("ncclCommInitRank", r)
}

// CommInitRankConfig is CommInitRank with a configuration; nil means DefaultConfig()
// (NCCL API: ncclCommInitRankConfig, NCCL 2.14 and later). Like CommInitRank it uses
// the calling OS thread's current device. With cfg.Blocking == 0 it may return a valid Comm
// together with an error matching ErrInProgress: initialisation goes on in the
// background; poll CommGetAsyncError until it reports Success or a failure.
func CommInitRankConfig(nranks int, id UniqueID, rank int, cfg *Config) (Comm, error) {
	if e := ready(); e != nil {
		return 0, e.at("ncclCommInitRankConfig")
	}
	if cfg == nil {
		d := DefaultConfig()
		cfg = &d
	}
	c := cConfig(cfg)
	r := C.gn_CommInitRankConfig(C.int(nranks), (*C.gn_unique_id)(unsafe.Pointer(&id)), C.int(rank), &c)
	return Comm(r.val), result("ncclCommInitRankConfig", r)
}

// CommInitAll creates a clique of ndev communicators in this process, one per device of
// devlist, or on devices 0 to ndev-1 if devlist is nil (NCCL API: ncclCommInitAll).
func CommInitAll(ndev int, devlist []int) ([]Comm, error) {
	const op = "ncclCommInitAll"
	if e := ready(); e != nil {
		return nil, e.at(op)
	}
	if devlist != nil && len(devlist) != ndev {
		return nil, &Error{Code: int(InvalidArgument), Name: InvalidArgument.String(), Op: op,
			Message: fmt.Sprintf("len(devlist) = %d, ndev = %d", len(devlist), ndev)}
	}
	if ndev <= 0 {
		r := C.gn_CommInitAll(nil, C.int(ndev), nil)
		return nil, result(op, r)
	}
	comms := make([]C.uintptr_t, ndev)
	var devs *C.int
	if devlist != nil {
		d := make([]C.int, ndev)
		for i, v := range devlist {
			d[i] = C.int(v)
		}
		devs = &d[0]
	}
	r := C.gn_CommInitAll(&comms[0], C.int(ndev), devs)
	if err := result(op, r); err != nil {
		return nil, err
	}
	out := make([]Comm, ndev)
	for i, c := range comms {
		out[i] = Comm(c)
	}
	return out, nil
}

// CommSplit creates communicators from comm's ranks: ranks with the same color form one,
// ordered by key; a color of -1 (NCCL_SPLIT_NOCOLOR) returns a zero Comm. cfg nil means
// the parent's configuration (NCCL API: ncclCommSplit, NCCL 2.18 and later).
func CommSplit(comm Comm, color, key int, cfg *Config) (Comm, error) {
	if e := ready(); e != nil {
		return 0, e.at("ncclCommSplit")
	}
	var r C.gn_ret
	if cfg == nil {
		r = C.gn_CommSplit(C.uintptr_t(comm), C.int(color), C.int(key), nil)
	} else {
		c := cConfig(cfg)
		r = C.gn_CommSplit(C.uintptr_t(comm), C.int(color), C.int(key), &c)
	}
	return Comm(r.val), result("ncclCommSplit", r)
}

// CommFinalize flushes the communicator's pending operations; on a non-blocking
// communicator it returns an ErrInProgress-matching error until CommGetAsyncError
// reports Success. Call CommDestroy afterwards (NCCL API: ncclCommFinalize).
func CommFinalize(comm Comm) error {
	if e := ready(); e != nil {
		return e.at("ncclCommFinalize")
	}
	return result("ncclCommFinalize", C.gn_CommFinalize(C.uintptr_t(comm)))
}

// CommDestroy frees the communicator's local resources (NCCL API: ncclCommDestroy).
func CommDestroy(comm Comm) error {
	if e := ready(); e != nil {
		return e.at("ncclCommDestroy")
	}
	return result("ncclCommDestroy", C.gn_CommDestroy(C.uintptr_t(comm)))
}

// CommAbort aborts the communicator's operations in flight and frees it; it may be called
// from another goroutine while a call on comm is blocked (NCCL API: ncclCommAbort).
func CommAbort(comm Comm) error {
	if e := ready(); e != nil {
		return e.at("ncclCommAbort")
	}
	return result("ncclCommAbort", C.gn_CommAbort(C.uintptr_t(comm)))
}

// CommGetAsyncError returns the communicator's asynchronous state: Success, InProgress
// while a non-blocking operation goes on, or the error that broke it (convert with
// Result.Err). The error is that of the query itself (NCCL API: ncclCommGetAsyncError).
func CommGetAsyncError(comm Comm) (Result, error) {
	if e := ready(); e != nil {
		return 0, e.at("ncclCommGetAsyncError")
	}
	r := C.gn_CommGetAsyncError(C.uintptr_t(comm))
	return Result(int32(r.val)), result("ncclCommGetAsyncError", r)
}

// CommCount returns the number of ranks of the communicator (NCCL API: ncclCommCount).
func CommCount(comm Comm) (int, error) {
	if e := ready(); e != nil {
		return 0, e.at("ncclCommCount")
	}
	r := C.gn_CommInt(C.uintptr_t(comm), 0)
	return int(int32(r.val)), result("ncclCommCount", r)
}

// CommCuDevice returns the CUDA device of the communicator (NCCL API: ncclCommCuDevice).
func CommCuDevice(comm Comm) (int, error) {
	if e := ready(); e != nil {
		return 0, e.at("ncclCommCuDevice")
	}
	r := C.gn_CommInt(C.uintptr_t(comm), 1)
	return int(int32(r.val)), result("ncclCommCuDevice", r)
}

// CommUserRank returns the rank of the caller in the communicator (NCCL API:
// ncclCommUserRank).
func CommUserRank(comm Comm) (int, error) {
	if e := ready(); e != nil {
		return 0, e.at("ncclCommUserRank")
	}
	r := C.gn_CommInt(C.uintptr_t(comm), 2)
	return int(int32(r.val)), result("ncclCommUserRank", r)
}

// AllReduce reduces count elements of send across all ranks with op and leaves the
// result in recv on every rank; send == recv works in place. It is enqueued on the CUDA
// stream (a CUstream, 0 for the legacy default stream) (NCCL API: ncclAllReduce).
func AllReduce(send, recv uintptr, count uint64, dt DataType, op RedOp, comm Comm, stream uintptr) error {
	if e := ready(); e != nil {
		return e.at("ncclAllReduce")
	}
	return result("ncclAllReduce", C.gn_AllReduce(C.uintptr_t(send), C.uintptr_t(recv), C.uint64_t(count),
		C.int(dt), C.int(op), C.uintptr_t(comm), C.uintptr_t(stream)))
}

// Broadcast copies count elements of send on rank root to recv on every rank (NCCL API:
// ncclBroadcast).
func Broadcast(send, recv uintptr, count uint64, dt DataType, root int, comm Comm, stream uintptr) error {
	if e := ready(); e != nil {
		return e.at("ncclBroadcast")
	}
	return result("ncclBroadcast", C.gn_Broadcast(C.uintptr_t(send), C.uintptr_t(recv), C.uint64_t(count),
		C.int(dt), C.int(root), C.uintptr_t(comm), C.uintptr_t(stream)))
}

// Reduce reduces count elements of send across all ranks with op into recv on rank root;
// recv may be 0 on the other ranks (NCCL API: ncclReduce).
func Reduce(send, recv uintptr, count uint64, dt DataType, op RedOp, root int, comm Comm, stream uintptr) error {
	if e := ready(); e != nil {
		return e.at("ncclReduce")
	}
	return result("ncclReduce", C.gn_Reduce(C.uintptr_t(send), C.uintptr_t(recv), C.uint64_t(count),
		C.int(dt), C.int(op), C.int(root), C.uintptr_t(comm), C.uintptr_t(stream)))
}

// AllGather gathers sendcount elements from every rank into recv, rank i's at offset
// i*sendcount (NCCL API: ncclAllGather).
func AllGather(send, recv uintptr, sendcount uint64, dt DataType, comm Comm, stream uintptr) error {
	if e := ready(); e != nil {
		return e.at("ncclAllGather")
	}
	return result("ncclAllGather", C.gn_AllGather(C.uintptr_t(send), C.uintptr_t(recv), C.uint64_t(sendcount),
		C.int(dt), C.uintptr_t(comm), C.uintptr_t(stream)))
}

// ReduceScatter reduces nranks*recvcount elements of send with op and leaves block i of
// the result (recvcount elements) in recv on rank i (NCCL API: ncclReduceScatter).
func ReduceScatter(send, recv uintptr, recvcount uint64, dt DataType, op RedOp, comm Comm, stream uintptr) error {
	if e := ready(); e != nil {
		return e.at("ncclReduceScatter")
	}
	return result("ncclReduceScatter", C.gn_ReduceScatter(C.uintptr_t(send), C.uintptr_t(recv), C.uint64_t(recvcount),
		C.int(dt), C.int(op), C.uintptr_t(comm), C.uintptr_t(stream)))
}

// Send sends count elements of send to rank peer, which must call Recv; pair them inside
// GroupStart/GroupEnd to avoid deadlocks (NCCL API: ncclSend, NCCL 2.7 and later).
func Send(send uintptr, count uint64, dt DataType, peer int, comm Comm, stream uintptr) error {
	if e := ready(); e != nil {
		return e.at("ncclSend")
	}
	return result("ncclSend", C.gn_Send(C.uintptr_t(send), C.uint64_t(count), C.int(dt), C.int(peer),
		C.uintptr_t(comm), C.uintptr_t(stream)))
}

// Recv receives count elements from rank peer into recv (NCCL API: ncclRecv, NCCL 2.7
// and later).
func Recv(recv uintptr, count uint64, dt DataType, peer int, comm Comm, stream uintptr) error {
	if e := ready(); e != nil {
		return e.at("ncclRecv")
	}
	return result("ncclRecv", C.gn_Recv(C.uintptr_t(recv), C.uint64_t(count), C.int(dt), C.int(peer),
		C.uintptr_t(comm), C.uintptr_t(stream)))
}

// GroupStart starts a group: the following calls are only enqueued, and launched together
// by GroupEnd (NCCL API: ncclGroupStart). Groups nest. NCCL keeps the group in
// thread-local state: the whole group, GroupStart to GroupEnd, must run on one OS
// thread (runtime.LockOSThread).
func GroupStart() error {
	if e := ready(); e != nil {
		return e.at("ncclGroupStart")
	}
	return result("ncclGroupStart", C.gn_GroupStart())
}

// GroupEnd ends a group and launches its operations; on non-blocking communicators it may
// return an ErrInProgress-matching error. Call it on the OS thread that called
// GroupStart (NCCL API: ncclGroupEnd).
func GroupEnd() error {
	if e := ready(); e != nil {
		return e.at("ncclGroupEnd")
	}
	return result("ncclGroupEnd", C.gn_GroupEnd())
}

// RedOpCreatePreMulSumHost creates an operator that multiplies each input by a scalar
// before summing. The scalar, of type dt, is given by its bit pattern in the low bytes of
// bits (math.Float32bits for Float32, the float16 bits for Float16, ...) and read before
// the call returns (NCCL API: ncclRedOpCreatePreMulSum with ncclScalarHostImmediate,
// NCCL 2.11 and later).
func RedOpCreatePreMulSumHost(bits uint64, dt DataType, comm Comm) (RedOp, error) {
	if e := ready(); e != nil {
		return 0, e.at("ncclRedOpCreatePreMulSum")
	}
	r := C.gn_PreMulSum(C.uint64_t(bits), C.int(dt.Size()), C.int(dt), C.int(ScalarHostImmediate), C.uintptr_t(comm))
	return RedOp(int32(r.val)), result("ncclRedOpCreatePreMulSum", r)
}

// RedOpCreatePreMulSumDevice creates an operator that multiplies each input by the scalar
// of type dt at device address scalar, read while each collective using the operator
// runs (NCCL API: ncclRedOpCreatePreMulSum with ncclScalarDevice, NCCL 2.11 and later).
func RedOpCreatePreMulSumDevice(scalar uintptr, dt DataType, comm Comm) (RedOp, error) {
	if e := ready(); e != nil {
		return 0, e.at("ncclRedOpCreatePreMulSum")
	}
	r := C.gn_PreMulSum(C.uint64_t(scalar), C.int(dt.Size()), C.int(dt), C.int(ScalarDevice), C.uintptr_t(comm))
	return RedOp(int32(r.val)), result("ncclRedOpCreatePreMulSum", r)
}

// RedOpDestroy destroys an operator made by RedOpCreatePreMulSumHost or
// RedOpCreatePreMulSumDevice on comm (NCCL API: ncclRedOpDestroy).
func RedOpDestroy(op RedOp, comm Comm) error {
	if e := ready(); e != nil {
		return e.at("ncclRedOpDestroy")
	}
	return result("ncclRedOpDestroy", C.gn_RedOpDestroy(C.int(op), C.uintptr_t(comm)))
}

// ErrorString returns NCCL's description of a result code, or the code's name if the
// library is unavailable (NCCL API: ncclGetErrorString).
func ErrorString(code Result) string {
	if ready() == nil {
		if s := C.gn_GetErrorString(C.int(code)); s != nil {
			return C.GoString(s)
		}
	}
	return code.String()
}

// LastError returns NCCL's text about the last error, "" if there is none or the library
// is unavailable. NCCL keeps one buffer for the whole process; comm is passed through
// (NCCL API: ncclGetLastError, NCCL 2.13 and later).
func LastError(comm Comm) string {
	if ready() == nil {
		if s := C.gn_GetLastError(C.uintptr_t(comm)); s != nil {
			return C.GoString(s)
		}
	}
	return ""
}

// cConfig builds the C ncclConfig_t for cfg.
func cConfig(cfg *Config) C.gn_config {
	var c C.gn_config
	c.size = C.size_t(unsafe.Sizeof(c))
	c.magic = configMagic
	c.version = ConfigVersion
	c.blocking = C.int(cfg.Blocking)
	c.cgaClusterSize = C.int(cfg.CGAClusterSize)
	c.minCTAs = C.int(cfg.MinCTAs)
	c.maxCTAs = C.int(cfg.MaxCTAs)
	c.netName = cstring(cfg.NetName)
	c.splitShare = C.int(cfg.SplitShare)
	c.trafficClass = C.int(cfg.TrafficClass)
	c.commName = cstring(cfg.CommName)
	c.collnetEnable = C.int(cfg.CollnetEnable)
	c.CTAPolicy = C.int(cfg.CTAPolicy)
	c.shrinkShare = C.int(cfg.ShrinkShare)
	c.nvlsCTAs = C.int(cfg.NVLSCTAs)
	c.nChannelsPerNetPeer = C.int(cfg.NChannelsPerNetPeer)
	c.nvlinkCentricSched = C.int(cfg.NVLinkCentricSched)
	return c
}

// cstrings holds the C copies of configuration strings for the life of the process:
// NCCL may keep the pointers (commName) beyond the call, and there are few of them.
var cstrings struct {
	sync.Mutex
	m map[string]*C.char
}

// cstring returns a C copy of s that is never freed, or nil for "" (NCCL_CONFIG_UNDEF_PTR).
func cstring(s string) *C.char {
	if s == "" {
		return nil
	}
	cstrings.Lock()
	defer cstrings.Unlock()
	if p, ok := cstrings.m[s]; ok {
		return p
	}
	if cstrings.m == nil {
		cstrings.m = make(map[string]*C.char)
	}
	p := C.CString(s)
	cstrings.m[s] = p
	return p
}
