package ncclapi

import (
	"fmt"
	"math"
)

// Comm is a communicator handle (NCCL API: ncclComm_t), an opaque pointer owned by NCCL.
// The zero value is NCCL_COMM_NULL.
type Comm uintptr

// UniqueIDBytes is the size of a UniqueID (NCCL API: NCCL_UNIQUE_ID_BYTES).
const UniqueIDBytes = 128

// UniqueID identifies a communicator clique while it is being created: rank 0 makes one
// with GetUniqueID and every rank passes the same bytes to CommInitRank (NCCL API:
// ncclUniqueId). It holds rank 0's bootstrap address; send it to the other ranks by any
// means (the rendezvous package does it over TCP).
type UniqueID [UniqueIDBytes]byte

// Result is an NCCL result code (NCCL API: ncclResult_t).
type Result int

// The NCCL result codes (NCCL API: ncclResult_t).
const (
	Success            Result = 0 // ncclSuccess
	UnhandledCudaError Result = 1 // ncclUnhandledCudaError: a call to a CUDA function failed
	SystemError        Result = 2 // ncclSystemError: a call to the system failed
	InternalError      Result = 3 // ncclInternalError: an internal check failed (NCCL bug or memory corruption)
	InvalidArgument    Result = 4 // ncclInvalidArgument: an argument has an invalid value
	InvalidUsage       Result = 5 // ncclInvalidUsage: the call is incorrect, usually a programming error
	RemoteError        Result = 6 // ncclRemoteError: possibly a network error or a remote process that exited
	InProgress         Result = 7 // ncclInProgress: the operation goes on in the background (non-blocking communicators)
	Timeout            Result = 8 // ncclTimeout: an operation timed out (newer NCCL releases; 2.28 does not return it)
)

// unavailableCode is the Error.Code of ErrUnavailable. It is not an NCCL result code.
const unavailableCode = -1

var resultNames = [...]string{
	Success:            "ncclSuccess",
	UnhandledCudaError: "ncclUnhandledCudaError",
	SystemError:        "ncclSystemError",
	InternalError:      "ncclInternalError",
	InvalidArgument:    "ncclInvalidArgument",
	InvalidUsage:       "ncclInvalidUsage",
	RemoteError:        "ncclRemoteError",
	InProgress:         "ncclInProgress",
	Timeout:            "ncclTimeout",
}

// String returns the C name of the code, such as "ncclInvalidArgument".
func (r Result) String() string {
	if r >= 0 && int(r) < len(resultNames) {
		return resultNames[r]
	}
	if r == unavailableCode {
		return "unavailable"
	}
	return fmt.Sprintf("ncclResult(%d)", int(r))
}

// Err returns nil for Success and otherwise an *Error with this code, matching the
// sentinel of the same code. Use it on the state returned by CommGetAsyncError.
func (r Result) Err() error {
	if r == Success {
		return nil
	}
	return &Error{Code: int(r), Name: r.String(), Op: "ncclCommGetAsyncError"}
}

// DataType is an NCCL element type (NCCL API: ncclDataType_t).
type DataType int

// The NCCL element types (NCCL API: ncclDataType_t). The FP8 types need NCCL 2.24 or
// later and a GPU that supports them.
const (
	Int8       DataType = 0  // ncclInt8, ncclChar
	Uint8      DataType = 1  // ncclUint8
	Int32      DataType = 2  // ncclInt32, ncclInt
	Uint32     DataType = 3  // ncclUint32
	Int64      DataType = 4  // ncclInt64
	Uint64     DataType = 5  // ncclUint64
	Float16    DataType = 6  // ncclFloat16, ncclHalf
	Float32    DataType = 7  // ncclFloat32, ncclFloat
	Float64    DataType = 8  // ncclFloat64, ncclDouble
	Bfloat16   DataType = 9  // ncclBfloat16
	Float8e4m3 DataType = 10 // ncclFloat8e4m3
	Float8e5m2 DataType = 11 // ncclFloat8e5m2
)

var dataTypeInfo = [...]struct {
	name string
	size int
}{
	Int8: {"ncclInt8", 1}, Uint8: {"ncclUint8", 1},
	Int32: {"ncclInt32", 4}, Uint32: {"ncclUint32", 4},
	Int64: {"ncclInt64", 8}, Uint64: {"ncclUint64", 8},
	Float16: {"ncclFloat16", 2}, Float32: {"ncclFloat32", 4}, Float64: {"ncclFloat64", 8},
	Bfloat16: {"ncclBfloat16", 2}, Float8e4m3: {"ncclFloat8e4m3", 1}, Float8e5m2: {"ncclFloat8e5m2", 1},
}

// Size returns the size of one element in bytes, or 0 for an unknown type.
func (t DataType) Size() int {
	if t >= 0 && int(t) < len(dataTypeInfo) {
		return dataTypeInfo[t].size
	}
	return 0
}

// String returns the C name of the type, such as "ncclFloat32".
func (t DataType) String() string {
	if t >= 0 && int(t) < len(dataTypeInfo) {
		return dataTypeInfo[t].name
	}
	return fmt.Sprintf("ncclDataType(%d)", int(t))
}

// RedOp is a reduction operator (NCCL API: ncclRedOp_t). Values from NumOps up are
// operators made by RedOpCreatePreMulSumHost or RedOpCreatePreMulSumDevice.
type RedOp int

// The built-in reduction operators (NCCL API: ncclRedOp_t).
const (
	Sum  RedOp = 0 // ncclSum
	Prod RedOp = 1 // ncclProd
	Max  RedOp = 2 // ncclMax
	Min  RedOp = 3 // ncclMin
	Avg  RedOp = 4 // ncclAvg (NCCL 2.10 and later)

	// NumOps is the number of built-in operators and the smallest value of a
	// user-created one (NCCL API: ncclNumOps).
	NumOps RedOp = 5
)

// String returns the C name of a built-in operator, such as "ncclSum".
func (o RedOp) String() string {
	switch o {
	case Sum:
		return "ncclSum"
	case Prod:
		return "ncclProd"
	case Max:
		return "ncclMax"
	case Min:
		return "ncclMin"
	case Avg:
		return "ncclAvg"
	}
	return fmt.Sprintf("ncclRedOp(%d)", int(o))
}

// ScalarResidence says where the scalar of a PreMulSum operator lives (NCCL API:
// ncclScalarResidence_t).
type ScalarResidence int

// Where a PreMulSum scalar lives (NCCL API: ncclScalarResidence_t).
const (
	// ScalarDevice: in device memory, read while each collective runs
	// (ncclScalarDevice).
	ScalarDevice ScalarResidence = 0
	// ScalarHostImmediate: in host memory, read before ncclRedOpCreatePreMulSum
	// returns (ncclScalarHostImmediate).
	ScalarHostImmediate ScalarResidence = 1
)

// ConfigUndef marks a Config field as unset, leaving NCCL's default (NCCL API:
// NCCL_CONFIG_UNDEF_INT, which is INT_MIN).
const ConfigUndef = math.MinInt32

// The CTA policies for Config.CTAPolicy (NCCL API: NCCL_CTA_POLICY_*).
const (
	CTAPolicyDefault    = 0x00 // NCCL_CTA_POLICY_DEFAULT
	CTAPolicyEfficiency = 0x01 // NCCL_CTA_POLICY_EFFICIENCY
	CTAPolicyZero       = 0x02 // NCCL_CTA_POLICY_ZERO
)

// The version and size written into the ncclConfig_t we pass: the layout of NCCL 2.28
// (struct ncclConfig_v22800). NCCL copies min(size, its own size) bytes and resets to
// their defaults the fields newer than the version, so this layout is accepted by NCCL
// 2.28 and by every later release (fields added after 2.28 keep their defaults); an
// older NCCL ignores the fields it does not know.
const (
	ConfigVersion = 22800 // NCCL_VERSION(2,28,0)
	ConfigSize    = 80    // sizeof(ncclConfig_v22800) on LP64
	configMagic   = 0xcafebeef
)

// Config is a communicator configuration (NCCL API: ncclConfig_t, initialised with
// NCCL_CONFIG_INITIALIZER). Start from DefaultConfig: every int field set to ConfigUndef
// and every string empty means "NCCL's default". The zero Config is not the default
// (zero is a meaningful value of several fields, Blocking among them).
//
// The fields are those of NCCL 2.28, in the order of ncclConfig_t.
type Config struct {
	// Blocking: 1 (default) makes communicator creation and collectives block; 0 makes
	// them return ErrInProgress-matching errors while they go on in the background (poll
	// CommGetAsyncError).
	Blocking int
	// CGAClusterSize: CUDA thread-block cluster size (Hopper and later).
	CGAClusterSize int
	// MinCTAs, MaxCTAs: bounds on the number of CTAs (channels) NCCL uses.
	MinCTAs, MaxCTAs int
	// NetName: the network module to use ("IB", "Socket", ...); empty for the default.
	// NCCL copies it.
	NetName string
	// SplitShare: 1 lets communicators made by CommSplit share resources with the parent.
	SplitShare int
	// TrafficClass: network traffic class (NCCL 2.25 and later).
	TrafficClass int
	// CommName: a name shown in NCCL's logs; empty for none. The C string is kept for
	// the life of the process, since NCCL may keep the pointer.
	CommName string
	// CollnetEnable: 1 enables CollNet (IB SHARP) for this communicator (2.27 and later).
	CollnetEnable int
	// CTAPolicy: CTAPolicyDefault, CTAPolicyEfficiency or CTAPolicyZero (2.27 and later).
	CTAPolicy int
	// ShrinkShare: 1 lets ncclCommShrink children share resources (2.27 and later).
	ShrinkShare int
	// NVLSCTAs: CTAs for NVLS algorithms (2.27 and later). NVLS is off on our machines.
	NVLSCTAs int
	// NChannelsPerNetPeer: channels per network peer (2.28 and later).
	NChannelsPerNetPeer int
	// NVLinkCentricSched: 1 enables NVLink-centric scheduling (2.28 and later).
	NVLinkCentricSched int
}

// DefaultConfig returns a Config with every field unset, as NCCL_CONFIG_INITIALIZER
// leaves it (NCCL API: NCCL_CONFIG_INITIALIZER).
func DefaultConfig() Config {
	return Config{
		Blocking: ConfigUndef, CGAClusterSize: ConfigUndef, MinCTAs: ConfigUndef, MaxCTAs: ConfigUndef,
		SplitShare: ConfigUndef, TrafficClass: ConfigUndef, CollnetEnable: ConfigUndef,
		CTAPolicy: ConfigUndef, ShrinkShare: ConfigUndef, NVLSCTAs: ConfigUndef,
		NChannelsPerNetPeer: ConfigUndef, NVLinkCentricSched: ConfigUndef,
	}
}

// SplitVersion decodes a version code from Version (NCCL API: NCCL_VERSION): 22803 is
// 2.28.3; codes below 10000 use the old scheme of releases up to 2.8 (2708 is 2.7.8).
func SplitVersion(code int) (major, minor, patch int) {
	if code >= 10000 {
		return code / 10000, code / 100 % 100, code % 100
	}
	return code / 1000, code / 100 % 10, code % 100
}

// Error is an error returned by NCCL or by the loader.
type Error struct {
	// Code is the NCCL result code (a Result), or -1 when the library or the entry
	// point is unavailable.
	Code int
	// Name is the C name of the code, such as "ncclInvalidArgument", or "unavailable".
	Name string
	// Message is NCCL's explanation (ncclGetLastError) or, for an unavailable library,
	// what was tried. It may be empty.
	Message string
	// Op is the NCCL entry point that failed, such as "ncclAllReduce".
	Op string
}

// Error formats the error as "nccl: Op: Name: Message".
func (e *Error) Error() string {
	s := "nccl: "
	if e.Op != "" {
		s += e.Op + ": "
	}
	s += e.Name
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Is reports whether target is an *Error with the same code, so that the sentinels
// match with errors.Is.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

func sentinel(r Result) *Error { return &Error{Code: int(r), Name: r.String()} }

// The sentinels, matched by code with errors.Is.
var (
	// ErrUnavailable: the NCCL library could not be loaded, the loaded library lacks
	// the entry point, or the build cannot load libraries (package internal/dl).
	ErrUnavailable = sentinel(unavailableCode)
	// ErrUnhandledCuda matches ncclUnhandledCudaError.
	ErrUnhandledCuda = sentinel(UnhandledCudaError)
	// ErrSystem matches ncclSystemError.
	ErrSystem = sentinel(SystemError)
	// ErrInternal matches ncclInternalError.
	ErrInternal = sentinel(InternalError)
	// ErrInvalidArgument matches ncclInvalidArgument.
	ErrInvalidArgument = sentinel(InvalidArgument)
	// ErrInvalidUsage matches ncclInvalidUsage.
	ErrInvalidUsage = sentinel(InvalidUsage)
	// ErrRemote matches ncclRemoteError.
	ErrRemote = sentinel(RemoteError)
	// ErrInProgress matches ncclInProgress: on a non-blocking communicator the call was
	// accepted and goes on in the background; poll CommGetAsyncError.
	ErrInProgress = sentinel(InProgress)
	// ErrTimeout matches ncclTimeout (NCCL releases after 2.28).
	ErrTimeout = sentinel(Timeout)
)

// unavailable returns an ErrUnavailable-matching error for op.
func unavailable(op, msg string) *Error {
	return &Error{Code: unavailableCode, Name: "unavailable", Message: msg, Op: op}
}
