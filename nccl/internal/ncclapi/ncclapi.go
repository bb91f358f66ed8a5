package ncclapi

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/go-gpu/gpu/internal/dl"
)

// NCCL's entry points, with our own C signatures written from NCCL's documented API
// (nccl.h, NCCL 2.28), as the conversions of each function's arguments below: enums
// (ncclResult_t, ncclDataType_t, ncclRedOp_t, ncclScalarResidence_t) are int-sized and
// passed as C ints, communicators and streams as pointers, ncclUniqueId as a 128-byte
// struct by value (uniqueIDArgs), ncclConfig_t as a pointer to cConfig's layout. One
// table for every build (package internal/dl): with cgo or without. Only
// ncclGetVersion is required; a missing entry point makes its function return an error
// matching ErrUnavailable.
var (
	api dl.Table

	ncclGetVersion           = api.Optional("ncclGetVersion")
	ncclGetUniqueId          = api.Optional("ncclGetUniqueId")
	ncclCommInitRank         = api.Optional("ncclCommInitRank")
	ncclCommInitRankConfig   = api.Optional("ncclCommInitRankConfig")
	ncclCommInitAll          = api.Optional("ncclCommInitAll")
	ncclCommSplit            = api.Optional("ncclCommSplit")
	ncclCommFinalize         = api.Optional("ncclCommFinalize")
	ncclCommDestroy          = api.Optional("ncclCommDestroy")
	ncclCommAbort            = api.Optional("ncclCommAbort")
	ncclCommGetAsyncError    = api.Optional("ncclCommGetAsyncError")
	ncclCommCount            = api.Optional("ncclCommCount")
	ncclCommCuDevice         = api.Optional("ncclCommCuDevice")
	ncclCommUserRank         = api.Optional("ncclCommUserRank")
	ncclAllReduce            = api.Optional("ncclAllReduce")
	ncclBroadcast            = api.Optional("ncclBroadcast")
	ncclReduce               = api.Optional("ncclReduce")
	ncclAllGather            = api.Optional("ncclAllGather")
	ncclReduceScatter        = api.Optional("ncclReduceScatter")
	ncclSend                 = api.Optional("ncclSend")
	ncclRecv                 = api.Optional("ncclRecv")
	ncclGroupStart           = api.Optional("ncclGroupStart")
	ncclGroupEnd             = api.Optional("ncclGroupEnd")
	ncclRedOpCreatePreMulSum = api.Optional("ncclRedOpCreatePreMulSum")
	ncclRedOpDestroy         = api.Optional("ncclRedOpDestroy")
	ncclGetErrorString       = api.Optional("ncclGetErrorString")
	ncclGetLastError         = api.Optional("ncclGetLastError")
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
	// is loaded, so that NCCL's first getenv sees it. os.Setenv also sets the C
	// environment, with cgo and with purego's fakecgo alike (runtime: _cgo_setenv).
	if _, ok := os.LookupEnv("NCCL_NVLS_ENABLE"); !ok {
		os.Setenv("NCCL_NVLS_ENABLE", "0")
	}
	if !dl.Available {
		loadErr = unavailable("", noLoader)
		return
	}
	candidates := defaultLibraries
	from := ""
	if p := os.Getenv(envLibrary); p != "" {
		candidates = []string{p}
		from = envLibrary + "="
	}
	var tried []string
	for _, name := range candidates {
		lib, err := dl.Open(name)
		if err == nil && lib.Lookup("ncclGetVersion") == 0 {
			lib.Close()
			err = fmt.Errorf("%s: no symbol ncclGetVersion: not an NCCL library", name)
		}
		if err == nil {
			err = api.Bind(lib)
		}
		if err != nil {
			tried = append(tried, fmt.Sprintf("%s%s (%v)", from, name, err))
			continue
		}
		libPath = name
		if p := dl.PathOf(ncclGetVersion.Addr()); p != "" {
			libPath = p
		}
		return
	}
	loadErr = unavailable("", "cannot load the NCCL library: tried "+strings.Join(tried, "; "))
}

// noLoader is the message of a build that cannot load libraries.
const noLoader = "this build cannot load libraries (CGO_ENABLED=0 outside linux/amd64 and linux/arm64, or the tag gpu_nodlopen): NCCL cannot be loaded"

// at returns a copy of the loading error e naming op.
func (e *Error) at(op string) error {
	c := *e
	c.Op = op
	return &c
}

// result converts the result register of f's call to an error: nil for ncclSuccess,
// else an *Error with ncclGetLastError's text about comm.
func result(f *dl.Func, r uintptr, comm Comm) error {
	if int32(r) == 0 {
		return nil
	}
	return failure(f.Name(), Result(int32(r)), comm)
}

//go:noinline
func failure(op string, code Result, comm Comm) error {
	msg := ""
	if code != InProgress && ncclGetLastError.Bound() {
		msg = dl.GoString(ncclGetLastError.Call(uintptr(comm)))
	}
	if msg == "" && ncclGetErrorString.Bound() {
		msg = dl.GoString(ncclGetErrorString.Call(uintptr(uint32(code))))
	}
	return &Error{Code: int(code), Name: code.String(), Message: msg, Op: op}
}

// nosym returns the error of a call of an entry point the loaded library lacks.
//
//go:noinline
func nosym(f *dl.Func) error {
	return unavailable(f.Name(), fmt.Sprintf("%s has no symbol %s (NCCL too old?)", libPath, f.Name()))
}

// usable returns nil if f can be called, else the error to return.
func usable(f *dl.Func) error {
	if e := ready(); e != nil {
		return e.at(f.Name())
	}
	if !f.Bound() {
		return nosym(f)
	}
	return nil
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
	if err := usable(ncclGetVersion); err != nil {
		return 0, err
	}
	var v int32
	r := ncclGetVersion.Call(uintptr(unsafe.Pointer(&v)))
	return int(v), result(ncclGetVersion, r, 0)
}

// GetUniqueID returns a new unique ID for CommInitRank; call it on one rank and send the
// bytes to the others (NCCL API: ncclGetUniqueId).
func GetUniqueID() (UniqueID, error) {
	var id UniqueID
	if err := usable(ncclGetUniqueId); err != nil {
		return id, err
	}
	r := ncclGetUniqueId.Call(uintptr(unsafe.Pointer(&id)))
	return id, result(ncclGetUniqueId, r, 0)
}

// initArgs lays out in a the arguments of ncclCommInitRank(ncclComm_t *comm, int
// nranks, ncclUniqueId id, int rank[, ncclConfig_t *config]) for the C calling
// convention and returns their number; cfg is 0 for ncclCommInitRank. On amd64 (System
// V) a struct over 16 bytes is passed in memory: its 16 words are the first stack
// arguments, after the six register slots, which the integer arguments fill in order,
// skipping the struct. On arm64 (AAPCS64) the caller passes a pointer to a copy in its
// place (id, a copy on the caller's stack). It is nosplit and calls nothing, so that
// the addresses it is given may be of the caller's stack (package dl's rule).
//
//go:nosplit
func initArgs(a *[6 + UniqueIDBytes/8]uintptr, comm uintptr, nranks int, id *UniqueID, rank int, cfg uintptr) int {
	if runtime.GOARCH != "amd64" {
		a[0], a[1], a[2], a[3], a[4] = comm, uintptr(uint32(nranks)), uintptr(unsafe.Pointer(id)), uintptr(uint32(rank)), cfg
		return 5
	}
	a[0], a[1], a[2], a[3], a[4], a[5] = comm, uintptr(uint32(nranks)), uintptr(uint32(rank)), cfg, 0, 0
	for w := range UniqueIDBytes / 8 {
		var v uintptr
		for b := 7; b >= 0; b-- {
			v = v<<8 | uintptr(id[8*w+b])
		}
		a[6+w] = v
	}
	return len(a)
}

// CommInitRank creates the communicator of rank rank in a clique of nranks ranks on the
// calling OS thread's current CUDA device (see the package doc: lock the goroutine to
// its thread and make the device's context current first); every rank calls it with
// the same id, concurrently (NCCL API: ncclCommInitRank).
func CommInitRank(nranks int, id UniqueID, rank int) (Comm, error) {
	if err := usable(ncclCommInitRank); err != nil {
		return 0, err
	}
	var comm Comm
	var a [6 + UniqueIDBytes/8]uintptr
	n := initArgs(&a, uintptr(unsafe.Pointer(&comm)), nranks, &id, rank, 0)
	r := ncclCommInitRank.Call(a[:n]...)
	return comm, result(ncclCommInitRank, r, 0)
}

// CommInitRankConfig is CommInitRank with a configuration; nil means DefaultConfig()
// (NCCL API: ncclCommInitRankConfig, NCCL 2.14 and later). Like CommInitRank it uses
// the calling OS thread's current device. With cfg.Blocking == 0 it may return a valid Comm
// together with an error matching ErrInProgress: initialisation goes on in the
// background; poll CommGetAsyncError until it reports Success or a failure.
func CommInitRankConfig(nranks int, id UniqueID, rank int, cfg *Config) (Comm, error) {
	if err := usable(ncclCommInitRankConfig); err != nil {
		return 0, err
	}
	if cfg == nil {
		d := DefaultConfig()
		cfg = &d
	}
	c := newCConfig(cfg)
	var comm Comm
	var a [6 + UniqueIDBytes/8]uintptr
	n := initArgs(&a, uintptr(unsafe.Pointer(&comm)), nranks, &id, rank, uintptr(unsafe.Pointer(&c)))
	r := ncclCommInitRankConfig.Call(a[:n]...)
	return comm, result(ncclCommInitRankConfig, r, 0)
}

// CommInitAll creates a clique of ndev communicators in this process, one per device of
// devlist, or on devices 0 to ndev-1 if devlist is nil (NCCL API: ncclCommInitAll).
func CommInitAll(ndev int, devlist []int) ([]Comm, error) {
	const op = "ncclCommInitAll"
	if err := usable(ncclCommInitAll); err != nil {
		return nil, err
	}
	if devlist != nil && len(devlist) != ndev {
		return nil, &Error{Code: int(InvalidArgument), Name: InvalidArgument.String(), Op: op,
			Message: fmt.Sprintf("len(devlist) = %d, ndev = %d", len(devlist), ndev)}
	}
	if ndev <= 0 {
		return nil, result(ncclCommInitAll, ncclCommInitAll.Call(0, uintptr(uint32(ndev)), 0), 0)
	}
	comms := make([]Comm, ndev)
	var devs []int32
	if devlist != nil {
		devs = make([]int32, ndev)
		for i, v := range devlist {
			devs[i] = int32(v)
		}
	}
	r := ncclCommInitAll.Call(uintptr(unsafe.Pointer(&comms[0])), uintptr(uint32(ndev)), uintptr(unsafe.Pointer(unsafe.SliceData(devs))))
	runtime.KeepAlive(devs)
	if err := result(ncclCommInitAll, r, 0); err != nil {
		return nil, err
	}
	return comms, nil
}

// CommSplit creates communicators from comm's ranks: ranks with the same color form one,
// ordered by key; a color of -1 (NCCL_SPLIT_NOCOLOR) returns a zero Comm. cfg nil means
// the parent's configuration (NCCL API: ncclCommSplit, NCCL 2.18 and later).
func CommSplit(comm Comm, color, key int, cfg *Config) (Comm, error) {
	if err := usable(ncclCommSplit); err != nil {
		return 0, err
	}
	var out Comm
	var r uintptr
	if cfg == nil {
		r = ncclCommSplit.Call(uintptr(comm), uintptr(uint32(color)), uintptr(uint32(key)), uintptr(unsafe.Pointer(&out)), 0)
	} else {
		c := newCConfig(cfg)
		r = ncclCommSplit.Call(uintptr(comm), uintptr(uint32(color)), uintptr(uint32(key)), uintptr(unsafe.Pointer(&out)), uintptr(unsafe.Pointer(&c)))
	}
	return out, result(ncclCommSplit, r, comm)
}

// CommFinalize flushes the communicator's pending operations; on a non-blocking
// communicator it returns an ErrInProgress-matching error until CommGetAsyncError
// reports Success. Call CommDestroy afterwards (NCCL API: ncclCommFinalize).
func CommFinalize(comm Comm) error {
	if err := usable(ncclCommFinalize); err != nil {
		return err
	}
	return result(ncclCommFinalize, ncclCommFinalize.Call(uintptr(comm)), comm)
}

// CommDestroy frees the communicator's local resources (NCCL API: ncclCommDestroy).
func CommDestroy(comm Comm) error {
	if err := usable(ncclCommDestroy); err != nil {
		return err
	}
	return result(ncclCommDestroy, ncclCommDestroy.Call(uintptr(comm)), comm)
}

// CommAbort aborts the communicator's operations in flight and frees it; it may be called
// from another goroutine while a call on comm is blocked (NCCL API: ncclCommAbort).
func CommAbort(comm Comm) error {
	if err := usable(ncclCommAbort); err != nil {
		return err
	}
	return result(ncclCommAbort, ncclCommAbort.Call(uintptr(comm)), comm)
}

// CommGetAsyncError returns the communicator's asynchronous state: Success, InProgress
// while a non-blocking operation goes on, or the error that broke it (convert with
// Result.Err). The error is that of the query itself (NCCL API: ncclCommGetAsyncError).
func CommGetAsyncError(comm Comm) (Result, error) {
	if err := usable(ncclCommGetAsyncError); err != nil {
		return 0, err
	}
	var state int32
	r := ncclCommGetAsyncError.Call(uintptr(comm), uintptr(unsafe.Pointer(&state)))
	return Result(state), result(ncclCommGetAsyncError, r, comm)
}

// commInt calls one of the int-valued queries.
func commInt(f *dl.Func, comm Comm) (int, error) {
	if err := usable(f); err != nil {
		return 0, err
	}
	var v int32
	r := f.Call(uintptr(comm), uintptr(unsafe.Pointer(&v)))
	return int(v), result(f, r, comm)
}

// CommCount returns the number of ranks of the communicator (NCCL API: ncclCommCount).
func CommCount(comm Comm) (int, error) { return commInt(ncclCommCount, comm) }

// CommCuDevice returns the CUDA device of the communicator (NCCL API: ncclCommCuDevice).
func CommCuDevice(comm Comm) (int, error) { return commInt(ncclCommCuDevice, comm) }

// CommUserRank returns the rank of the caller in the communicator (NCCL API:
// ncclCommUserRank).
func CommUserRank(comm Comm) (int, error) { return commInt(ncclCommUserRank, comm) }

// AllReduce reduces count elements of send across all ranks with op and leaves the
// result in recv on every rank; send == recv works in place. It is enqueued on the CUDA
// stream (a CUstream, 0 for the legacy default stream) (NCCL API: ncclAllReduce).
func AllReduce(send, recv uintptr, count uint64, dt DataType, op RedOp, comm Comm, stream uintptr) error {
	if err := usable(ncclAllReduce); err != nil {
		return err
	}
	return result(ncclAllReduce, ncclAllReduce.Call(send, recv, uintptr(count), uintptr(uint32(dt)), uintptr(uint32(op)), uintptr(comm), stream), comm)
}

// Broadcast copies count elements of send on rank root to recv on every rank (NCCL API:
// ncclBroadcast).
func Broadcast(send, recv uintptr, count uint64, dt DataType, root int, comm Comm, stream uintptr) error {
	if err := usable(ncclBroadcast); err != nil {
		return err
	}
	return result(ncclBroadcast, ncclBroadcast.Call(send, recv, uintptr(count), uintptr(uint32(dt)), uintptr(uint32(root)), uintptr(comm), stream), comm)
}

// Reduce reduces count elements of send across all ranks with op into recv on rank root;
// recv may be 0 on the other ranks (NCCL API: ncclReduce).
func Reduce(send, recv uintptr, count uint64, dt DataType, op RedOp, root int, comm Comm, stream uintptr) error {
	if err := usable(ncclReduce); err != nil {
		return err
	}
	return result(ncclReduce, ncclReduce.Call(send, recv, uintptr(count), uintptr(uint32(dt)), uintptr(uint32(op)), uintptr(uint32(root)), uintptr(comm), stream), comm)
}

// AllGather gathers sendcount elements from every rank into recv, rank i's at offset
// i*sendcount (NCCL API: ncclAllGather).
func AllGather(send, recv uintptr, sendcount uint64, dt DataType, comm Comm, stream uintptr) error {
	if err := usable(ncclAllGather); err != nil {
		return err
	}
	return result(ncclAllGather, ncclAllGather.Call(send, recv, uintptr(sendcount), uintptr(uint32(dt)), uintptr(comm), stream), comm)
}

// ReduceScatter reduces nranks*recvcount elements of send with op and leaves block i of
// the result (recvcount elements) in recv on rank i (NCCL API: ncclReduceScatter).
func ReduceScatter(send, recv uintptr, recvcount uint64, dt DataType, op RedOp, comm Comm, stream uintptr) error {
	if err := usable(ncclReduceScatter); err != nil {
		return err
	}
	return result(ncclReduceScatter, ncclReduceScatter.Call(send, recv, uintptr(recvcount), uintptr(uint32(dt)), uintptr(uint32(op)), uintptr(comm), stream), comm)
}

// Send sends count elements of send to rank peer, which must call Recv; pair them inside
// GroupStart/GroupEnd to avoid deadlocks (NCCL API: ncclSend, NCCL 2.7 and later).
func Send(send uintptr, count uint64, dt DataType, peer int, comm Comm, stream uintptr) error {
	if err := usable(ncclSend); err != nil {
		return err
	}
	return result(ncclSend, ncclSend.Call(send, uintptr(count), uintptr(uint32(dt)), uintptr(uint32(peer)), uintptr(comm), stream), comm)
}

// Recv receives count elements from rank peer into recv (NCCL API: ncclRecv, NCCL 2.7
// and later).
func Recv(recv uintptr, count uint64, dt DataType, peer int, comm Comm, stream uintptr) error {
	if err := usable(ncclRecv); err != nil {
		return err
	}
	return result(ncclRecv, ncclRecv.Call(recv, uintptr(count), uintptr(uint32(dt)), uintptr(uint32(peer)), uintptr(comm), stream), comm)
}

// GroupStart starts a group: the following calls are only enqueued, and launched together
// by GroupEnd (NCCL API: ncclGroupStart). Groups nest. NCCL keeps the group in
// thread-local state: the whole group, GroupStart to GroupEnd, must run on one OS
// thread (runtime.LockOSThread).
func GroupStart() error {
	if err := usable(ncclGroupStart); err != nil {
		return err
	}
	return result(ncclGroupStart, ncclGroupStart.Call(), 0)
}

// GroupEnd ends a group and launches its operations; on non-blocking communicators it may
// return an ErrInProgress-matching error. Call it on the OS thread that called
// GroupStart (NCCL API: ncclGroupEnd).
func GroupEnd() error {
	if err := usable(ncclGroupEnd); err != nil {
		return err
	}
	return result(ncclGroupEnd, ncclGroupEnd.Call(), 0)
}

// RedOpCreatePreMulSumHost creates an operator that multiplies each input by a scalar
// before summing. The scalar, of type dt, is given by its bit pattern in the low bytes of
// bits (math.Float32bits for Float32, the float16 bits for Float16, ...) and read before
// the call returns (NCCL API: ncclRedOpCreatePreMulSum with ncclScalarHostImmediate,
// NCCL 2.11 and later).
func RedOpCreatePreMulSumHost(bits uint64, dt DataType, comm Comm) (RedOp, error) {
	if err := usable(ncclRedOpCreatePreMulSum); err != nil {
		return 0, err
	}
	// The scalar in a variable of its size, in the machine's byte order.
	var scalar [8]byte
	switch dt.Size() {
	case 1:
		scalar[0] = byte(bits)
	case 2:
		binary.NativeEndian.PutUint16(scalar[:], uint16(bits))
	case 4:
		binary.NativeEndian.PutUint32(scalar[:], uint32(bits))
	default:
		binary.NativeEndian.PutUint64(scalar[:], bits)
	}
	var op int32
	r := ncclRedOpCreatePreMulSum.Call(uintptr(unsafe.Pointer(&op)), uintptr(unsafe.Pointer(&scalar)), uintptr(uint32(dt)), uintptr(ScalarHostImmediate), uintptr(comm))
	return RedOp(op), result(ncclRedOpCreatePreMulSum, r, comm)
}

// RedOpCreatePreMulSumDevice creates an operator that multiplies each input by the scalar
// of type dt at device address scalar, read while each collective using the operator
// runs (NCCL API: ncclRedOpCreatePreMulSum with ncclScalarDevice, NCCL 2.11 and later).
func RedOpCreatePreMulSumDevice(scalar uintptr, dt DataType, comm Comm) (RedOp, error) {
	if err := usable(ncclRedOpCreatePreMulSum); err != nil {
		return 0, err
	}
	var op int32
	r := ncclRedOpCreatePreMulSum.Call(uintptr(unsafe.Pointer(&op)), scalar, uintptr(uint32(dt)), uintptr(ScalarDevice), uintptr(comm))
	return RedOp(op), result(ncclRedOpCreatePreMulSum, r, comm)
}

// RedOpDestroy destroys an operator made by RedOpCreatePreMulSumHost or
// RedOpCreatePreMulSumDevice on comm (NCCL API: ncclRedOpDestroy).
func RedOpDestroy(op RedOp, comm Comm) error {
	if err := usable(ncclRedOpDestroy); err != nil {
		return err
	}
	return result(ncclRedOpDestroy, ncclRedOpDestroy.Call(uintptr(uint32(op)), uintptr(comm)), comm)
}

// ErrorString returns NCCL's description of a result code, or the code's name if the
// library is unavailable (NCCL API: ncclGetErrorString).
func ErrorString(code Result) string {
	if ready() == nil && ncclGetErrorString.Bound() {
		if s := ncclGetErrorString.Call(uintptr(uint32(code))); s != 0 {
			return dl.GoString(s)
		}
	}
	return code.String()
}

// LastError returns NCCL's text about the last error, "" if there is none or the library
// is unavailable. NCCL keeps one buffer for the whole process; comm is passed through
// (NCCL API: ncclGetLastError, NCCL 2.13 and later).
func LastError(comm Comm) string {
	if ready() == nil && ncclGetLastError.Bound() {
		return dl.GoString(ncclGetLastError.Call(uintptr(comm)))
	}
	return ""
}

// cConfig is ncclConfig_t as of NCCL 2.28 (struct ncclConfig_v22800, 80 bytes on LP64):
// Go lays it out as C does (TestConfigLayout checks the offsets).
type cConfig struct {
	size                uintptr
	magic, version      uint32
	blocking            int32
	cgaClusterSize      int32
	minCTAs, maxCTAs    int32
	netName             uintptr // const char *
	splitShare          int32
	trafficClass        int32
	commName            uintptr // const char *
	collnetEnable       int32
	ctaPolicy           int32
	shrinkShare         int32
	nvlsCTAs            int32
	nChannelsPerNetPeer int32
	nvlinkCentricSched  int32
}

// newCConfig builds the C ncclConfig_t for cfg.
func newCConfig(cfg *Config) cConfig {
	return cConfig{
		size:                ConfigSize,
		magic:               configMagic,
		version:             ConfigVersion,
		blocking:            int32(cfg.Blocking),
		cgaClusterSize:      int32(cfg.CGAClusterSize),
		minCTAs:             int32(cfg.MinCTAs),
		maxCTAs:             int32(cfg.MaxCTAs),
		netName:             cstring(cfg.NetName),
		splitShare:          int32(cfg.SplitShare),
		trafficClass:        int32(cfg.TrafficClass),
		commName:            cstring(cfg.CommName),
		collnetEnable:       int32(cfg.CollnetEnable),
		ctaPolicy:           int32(cfg.CTAPolicy),
		shrinkShare:         int32(cfg.ShrinkShare),
		nvlsCTAs:            int32(cfg.NVLSCTAs),
		nChannelsPerNetPeer: int32(cfg.NChannelsPerNetPeer),
		nvlinkCentricSched:  int32(cfg.NVLinkCentricSched),
	}
}

// cstrings holds the NUL-terminated copies of configuration strings for the life of the
// process: NCCL may keep the pointers (commName) beyond the call, and there are few of
// them. Go never moves heap memory, and the map keeps it alive.
var cstrings struct {
	sync.Mutex
	m map[string][]byte
}

// cstring returns the address of a NUL-terminated copy of s that is never freed, or 0
// for "" (NCCL_CONFIG_UNDEF_PTR).
func cstring(s string) uintptr {
	if s == "" {
		return 0
	}
	cstrings.Lock()
	defer cstrings.Unlock()
	b, ok := cstrings.m[s]
	if !ok {
		if cstrings.m == nil {
			cstrings.m = make(map[string][]byte)
		}
		b = append([]byte(s), 0)
		cstrings.m[s] = b
	}
	return uintptr(unsafe.Pointer(&b[0]))
}
