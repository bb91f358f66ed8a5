package ncclapi

import (
	"errors"
	"testing"
)

// The API, spelled out. There is one binding for every build (package internal/dl);
// TestBuildWithoutCgo runs the tests without cgo, and with the tag gpu_nodlopen.
var (
	_ func() error                                                              = Load
	_ func() string                                                             = LibraryPath
	_ func() (int, error)                                                       = Version
	_ func() (UniqueID, error)                                                  = GetUniqueID
	_ func(int, UniqueID, int) (Comm, error)                                    = CommInitRank
	_ func(int, UniqueID, int, *Config) (Comm, error)                           = CommInitRankConfig
	_ func(int, []int) ([]Comm, error)                                          = CommInitAll
	_ func(Comm, int, int, *Config) (Comm, error)                               = CommSplit
	_ func(Comm) error                                                          = CommFinalize
	_ func(Comm) error                                                          = CommDestroy
	_ func(Comm) error                                                          = CommAbort
	_ func(Comm) (Result, error)                                                = CommGetAsyncError
	_ func(Comm) (int, error)                                                   = CommCount
	_ func(Comm) (int, error)                                                   = CommCuDevice
	_ func(Comm) (int, error)                                                   = CommUserRank
	_ func(uintptr, uintptr, uint64, DataType, RedOp, Comm, uintptr) error      = AllReduce
	_ func(uintptr, uintptr, uint64, DataType, int, Comm, uintptr) error        = Broadcast
	_ func(uintptr, uintptr, uint64, DataType, RedOp, int, Comm, uintptr) error = Reduce
	_ func(uintptr, uintptr, uint64, DataType, Comm, uintptr) error             = AllGather
	_ func(uintptr, uintptr, uint64, DataType, RedOp, Comm, uintptr) error      = ReduceScatter
	_ func(uintptr, uint64, DataType, int, Comm, uintptr) error                 = Send
	_ func(uintptr, uint64, DataType, int, Comm, uintptr) error                 = Recv
	_ func() error                                                              = GroupStart
	_ func() error                                                              = GroupEnd
	_ func(uint64, DataType, Comm) (RedOp, error)                               = RedOpCreatePreMulSumHost
	_ func(uintptr, DataType, Comm) (RedOp, error)                              = RedOpCreatePreMulSumDevice
	_ func(RedOp, Comm) error                                                   = RedOpDestroy
	_ func(Result) string                                                       = ErrorString
	_ func(Comm) string                                                         = LastError
)

func TestErrorFormatAndIs(t *testing.T) {
	e := &Error{Code: 4, Name: "ncclInvalidArgument", Message: "bad count", Op: "ncclAllReduce"}
	if got, want := e.Error(), "nccl: ncclAllReduce: ncclInvalidArgument: bad count"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(e, ErrInvalidArgument) {
		t.Error("errors.Is(ErrInvalidArgument) = false")
	}
	if errors.Is(e, ErrInvalidUsage) || errors.Is(e, ErrUnavailable) {
		t.Error("matches a sentinel of another code")
	}
	sentinels := map[Result]error{
		UnhandledCudaError: ErrUnhandledCuda, SystemError: ErrSystem, InternalError: ErrInternal,
		InvalidArgument: ErrInvalidArgument, InvalidUsage: ErrInvalidUsage, RemoteError: ErrRemote,
		InProgress: ErrInProgress, Timeout: ErrTimeout,
	}
	for code, s := range sentinels {
		err := code.Err()
		if !errors.Is(err, s) {
			t.Errorf("%v.Err() does not match its sentinel", code)
		}
		if s.(*Error).Name != code.String() {
			t.Errorf("sentinel name %q, want %q", s.(*Error).Name, code.String())
		}
	}
	if Success.Err() != nil {
		t.Error("Success.Err() != nil")
	}
	if got := (&Error{Code: -1, Name: "unavailable"}).Error(); got != "nccl: unavailable" {
		t.Errorf("Error() without op and message = %q", got)
	}
}

func TestNames(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{Success.String(), "ncclSuccess"}, {Timeout.String(), "ncclTimeout"},
		{Result(42).String(), "ncclResult(42)"}, {Result(-1).String(), "unavailable"},
		{Float32.String(), "ncclFloat32"}, {Bfloat16.String(), "ncclBfloat16"},
		{DataType(99).String(), "ncclDataType(99)"},
		{Sum.String(), "ncclSum"}, {Avg.String(), "ncclAvg"}, {RedOp(7).String(), "ncclRedOp(7)"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	sizes := map[DataType]int{Int8: 1, Uint8: 1, Int32: 4, Uint32: 4, Int64: 8, Uint64: 8,
		Float16: 2, Float32: 4, Float64: 8, Bfloat16: 2, Float8e4m3: 1, Float8e5m2: 1, DataType(12): 0, DataType(-1): 0}
	for dt, want := range sizes {
		if got := dt.Size(); got != want {
			t.Errorf("%v.Size() = %d, want %d", dt, got, want)
		}
	}
}

func TestSplitVersion(t *testing.T) {
	for _, c := range []struct{ code, major, minor, patch int }{
		{22803, 2, 28, 3}, {21903, 2, 19, 3}, {2708, 2, 7, 8}, {30100, 3, 1, 0},
	} {
		a, b, p := SplitVersion(c.code)
		if a != c.major || b != c.minor || p != c.patch {
			t.Errorf("SplitVersion(%d) = %d.%d.%d", c.code, a, b, p)
		}
	}
}

func TestDefaultConfig(t *testing.T) {
	c := DefaultConfig()
	for name, v := range map[string]int{
		"Blocking": c.Blocking, "CGAClusterSize": c.CGAClusterSize, "MinCTAs": c.MinCTAs,
		"MaxCTAs": c.MaxCTAs, "SplitShare": c.SplitShare, "TrafficClass": c.TrafficClass,
		"CollnetEnable": c.CollnetEnable, "CTAPolicy": c.CTAPolicy, "ShrinkShare": c.ShrinkShare,
		"NVLSCTAs": c.NVLSCTAs, "NChannelsPerNetPeer": c.NChannelsPerNetPeer,
		"NVLinkCentricSched": c.NVLinkCentricSched,
	} {
		if v != ConfigUndef {
			t.Errorf("DefaultConfig().%s = %d, want ConfigUndef", name, v)
		}
	}
	if c.NetName != "" || c.CommName != "" {
		t.Error("DefaultConfig() strings not empty")
	}
}
