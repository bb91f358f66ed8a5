//go:build !((cgo && unix) || (!cgo && linux && (amd64 || arm64))) || gpu_nodlopen

package ncclapi

import (
	"errors"
	"strings"
	"testing"
)

func TestStubUnavailable(t *testing.T) {
	if err := Load(); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "cannot load libraries") {
		t.Fatalf("Load() = %v, want ErrUnavailable saying the build cannot load libraries", err)
	}
	if LibraryPath() != "" {
		t.Error("LibraryPath() != \"\"")
	}
	errs := map[string]error{}
	_, errs["ncclGetVersion"] = Version()
	_, errs["ncclGetUniqueId"] = GetUniqueID()
	_, errs["ncclCommInitRank"] = CommInitRank(2, UniqueID{}, 0)
	_, errs["ncclCommInitRankConfig"] = CommInitRankConfig(2, UniqueID{}, 0, nil)
	_, errs["ncclCommInitAll"] = CommInitAll(2, nil)
	_, errs["ncclCommSplit"] = CommSplit(0, 0, 0, nil)
	errs["ncclCommFinalize"] = CommFinalize(0)
	errs["ncclCommDestroy"] = CommDestroy(0)
	errs["ncclCommAbort"] = CommAbort(0)
	_, errs["ncclCommGetAsyncError"] = CommGetAsyncError(0)
	_, errs["ncclCommCount"] = CommCount(0)
	_, errs["ncclCommCuDevice"] = CommCuDevice(0)
	_, errs["ncclCommUserRank"] = CommUserRank(0)
	errs["ncclAllReduce"] = AllReduce(0, 0, 1, Float32, Sum, 0, 0)
	errs["ncclBroadcast"] = Broadcast(0, 0, 1, Float32, 0, 0, 0)
	errs["ncclReduce"] = Reduce(0, 0, 1, Float32, Sum, 0, 0, 0)
	errs["ncclAllGather"] = AllGather(0, 0, 1, Float32, 0, 0)
	errs["ncclReduceScatter"] = ReduceScatter(0, 0, 1, Float32, Sum, 0, 0)
	errs["ncclSend"] = Send(0, 1, Float32, 1, 0, 0)
	errs["ncclRecv"] = Recv(0, 1, Float32, 1, 0, 0)
	errs["ncclGroupStart"] = GroupStart()
	errs["ncclGroupEnd"] = GroupEnd()
	_, errs["ncclRedOpCreatePreMulSum"] = RedOpCreatePreMulSumHost(0, Float32, 0)
	errs["ncclRedOpDestroy"] = RedOpDestroy(NumOps, 0)
	for op, err := range errs {
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, ErrUnavailable) || e.Op != op {
			t.Errorf("%s: got %v, want ErrUnavailable with Op %s", op, err, op)
		}
	}
	if ErrorString(InvalidArgument) != "ncclInvalidArgument" || LastError(0) != "" {
		t.Error("ErrorString/LastError in a build that cannot load libraries")
	}
}
