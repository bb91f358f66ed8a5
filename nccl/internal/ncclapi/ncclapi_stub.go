//go:build !cgo || !unix

package ncclapi

// This file gives the package its API when it is built without cgo (CGO_ENABLED=0) or
// for a system without dlopen: every call reports the library as unavailable.

const noCgo = "built without cgo (CGO_ENABLED=0) or for a system without dlopen: NCCL cannot be loaded"

func stub(op string) error { return unavailable(op, noCgo) }

// Load reports that NCCL cannot be loaded: the package was built without cgo.
func Load() error { return stub("load") }

// LibraryPath returns "": the package was built without cgo.
func LibraryPath() string { return "" }

// Version returns an error matching ErrUnavailable (NCCL API: ncclGetVersion).
func Version() (int, error) { return 0, stub("ncclGetVersion") }

// GetUniqueID returns an error matching ErrUnavailable (NCCL API: ncclGetUniqueId).
func GetUniqueID() (UniqueID, error) { return UniqueID{}, stub("ncclGetUniqueId") }

// CommInitRank returns an error matching ErrUnavailable (NCCL API: ncclCommInitRank).
func CommInitRank(nranks int, id UniqueID, rank int) (Comm, error) {
	return 0, stub("ncclCommInitRank")
}

// CommInitRankConfig returns an error matching ErrUnavailable (NCCL API:
// ncclCommInitRankConfig).
func CommInitRankConfig(nranks int, id UniqueID, rank int, cfg *Config) (Comm, error) {
	return 0, stub("ncclCommInitRankConfig")
}

// CommInitAll returns an error matching ErrUnavailable (NCCL API: ncclCommInitAll).
func CommInitAll(ndev int, devlist []int) ([]Comm, error) { return nil, stub("ncclCommInitAll") }

// CommSplit returns an error matching ErrUnavailable (NCCL API: ncclCommSplit).
func CommSplit(comm Comm, color, key int, cfg *Config) (Comm, error) {
	return 0, stub("ncclCommSplit")
}

// CommFinalize returns an error matching ErrUnavailable (NCCL API: ncclCommFinalize).
func CommFinalize(comm Comm) error { return stub("ncclCommFinalize") }

// CommDestroy returns an error matching ErrUnavailable (NCCL API: ncclCommDestroy).
func CommDestroy(comm Comm) error { return stub("ncclCommDestroy") }

// CommAbort returns an error matching ErrUnavailable (NCCL API: ncclCommAbort).
func CommAbort(comm Comm) error { return stub("ncclCommAbort") }

// CommGetAsyncError returns an error matching ErrUnavailable (NCCL API:
// ncclCommGetAsyncError).
func CommGetAsyncError(comm Comm) (Result, error) { return 0, stub("ncclCommGetAsyncError") }

// CommCount returns an error matching ErrUnavailable (NCCL API: ncclCommCount).
func CommCount(comm Comm) (int, error) { return 0, stub("ncclCommCount") }

// CommCuDevice returns an error matching ErrUnavailable (NCCL API: ncclCommCuDevice).
func CommCuDevice(comm Comm) (int, error) { return 0, stub("ncclCommCuDevice") }

// CommUserRank returns an error matching ErrUnavailable (NCCL API: ncclCommUserRank).
func CommUserRank(comm Comm) (int, error) { return 0, stub("ncclCommUserRank") }

// AllReduce returns an error matching ErrUnavailable (NCCL API: ncclAllReduce).
func AllReduce(send, recv uintptr, count uint64, dt DataType, op RedOp, comm Comm, stream uintptr) error {
	return stub("ncclAllReduce")
}

// Broadcast returns an error matching ErrUnavailable (NCCL API: ncclBroadcast).
func Broadcast(send, recv uintptr, count uint64, dt DataType, root int, comm Comm, stream uintptr) error {
	return stub("ncclBroadcast")
}

// Reduce returns an error matching ErrUnavailable (NCCL API: ncclReduce).
func Reduce(send, recv uintptr, count uint64, dt DataType, op RedOp, root int, comm Comm, stream uintptr) error {
	return stub("ncclReduce")
}

// AllGather returns an error matching ErrUnavailable (NCCL API: ncclAllGather).
func AllGather(send, recv uintptr, sendcount uint64, dt DataType, comm Comm, stream uintptr) error {
	return stub("ncclAllGather")
}

// ReduceScatter returns an error matching ErrUnavailable (NCCL API: ncclReduceScatter).
func ReduceScatter(send, recv uintptr, recvcount uint64, dt DataType, op RedOp, comm Comm, stream uintptr) error {
	return stub("ncclReduceScatter")
}

// Send returns an error matching ErrUnavailable (NCCL API: ncclSend).
func Send(send uintptr, count uint64, dt DataType, peer int, comm Comm, stream uintptr) error {
	return stub("ncclSend")
}

// Recv returns an error matching ErrUnavailable (NCCL API: ncclRecv).
func Recv(recv uintptr, count uint64, dt DataType, peer int, comm Comm, stream uintptr) error {
	return stub("ncclRecv")
}

// GroupStart returns an error matching ErrUnavailable (NCCL API: ncclGroupStart).
func GroupStart() error { return stub("ncclGroupStart") }

// GroupEnd returns an error matching ErrUnavailable (NCCL API: ncclGroupEnd).
func GroupEnd() error { return stub("ncclGroupEnd") }

// RedOpCreatePreMulSumHost returns an error matching ErrUnavailable (NCCL API:
// ncclRedOpCreatePreMulSum).
func RedOpCreatePreMulSumHost(bits uint64, dt DataType, comm Comm) (RedOp, error) {
	return 0, stub("ncclRedOpCreatePreMulSum")
}

// RedOpCreatePreMulSumDevice returns an error matching ErrUnavailable (NCCL API:
// ncclRedOpCreatePreMulSum).
func RedOpCreatePreMulSumDevice(scalar uintptr, dt DataType, comm Comm) (RedOp, error) {
	return 0, stub("ncclRedOpCreatePreMulSum")
}

// RedOpDestroy returns an error matching ErrUnavailable (NCCL API: ncclRedOpDestroy).
func RedOpDestroy(op RedOp, comm Comm) error { return stub("ncclRedOpDestroy") }

// ErrorString returns the code's name: without cgo NCCL's own text is not available
// (NCCL API: ncclGetErrorString).
func ErrorString(code Result) string { return code.String() }

// LastError returns "" (NCCL API: ncclGetLastError).
func LastError(comm Comm) string { return "" }
