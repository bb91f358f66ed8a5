// Package ncclapi binds NCCL, NVIDIA's collective communication library, at run time.
//
// It is the bottom layer of the NCCL support in this module: one Go function per NCCL
// entry point, taking plain values (device pointers and CUDA streams as uintptr, counts
// as uint64, enums as small integer types) and returning a Go error. The communicator
// API on the library's buffers and streams is built on top of it.
//
// # Loading
//
// Nothing is linked at build time: no NCCL headers, no -l flags, and no C compiler is
// needed: the calls go through package internal/dl, with cgo or, with CGO_ENABLED=0 on
// linux/amd64 and linux/arm64, through purego (the entry points are one table for both
// builds). On the first call the package opens the library with dlopen, once and
// thread-safely, and resolves each entry point with dlsym. It tries, in order:
//
//   - the file named by the environment variable GPU_NCCL_LIBRARY, if set and not empty
//     (then nothing else is tried);
//   - libnccl.so.2, then libnccl.so, through the dynamic linker's search path.
//
// If none opens, every call returns an error matching ErrUnavailable whose message
// names what was tried and why each failed. Only ncclGetVersion is required to be
// present; an entry point that the loaded library lacks (an older NCCL) makes its own
// wrapper return an error matching ErrUnavailable that names the symbol. Load forces the
// loading and reports the outcome; LibraryPath names the file that was loaded.
//
// The C prototypes are our own, written from NCCL's documented API (nccl.h): enums are
// passed as int, communicators and streams as pointers, ncclUniqueId as a 128-byte
// struct by value (as the C calling convention passes it: on the stack on amd64, as a
// pointer to a copy on arm64), and ncclConfig_t with the layout of NCCL 2.28 (see
// Config).
//
// # NVLink multicast stays off
//
// NVLink SHARP (NVLS, NVLink multicast) must never be enabled on our machines. Before
// NCCL is loaded the package sets NCCL_NVLS_ENABLE=0 in the process environment, unless
// the variable is already set (then the user's value is kept, whatever it is). NCCL
// reads its environment when it initialises, so the variable is in place before NCCL
// can see it. Set NCCL_NVLS_ENABLE yourself only on machines where multicast is known
// to be safe.
//
// # OS threads and the current device
//
// NCCL keeps two kinds of state per OS thread, and a goroutine may change OS threads
// between two calls:
//
//   - Group state: the calls between GroupStart and GroupEnd are collected in
//     thread-local lists, so a group must start and end on one OS thread. Call
//     runtime.LockOSThread before GroupStart and unlock after GroupEnd.
//   - The current CUDA device: CommInitRank and CommInitRankConfig create the
//     communicator on the calling thread's current device (NCCL calls cudaGetDevice,
//     which follows the driver context current on the thread). Lock the goroutine to
//     its thread, make the device's primary context current on it (cuCtxSetCurrent),
//     then call. Collectives take their device from the communicator, but NCCL
//     switches the thread's device while it launches and then switches back to what
//     it found: call them with the communicator's device current too, so that no
//     context is created or made current on another device. Their stream must
//     belong to the device's primary context (the one NCCL uses).
//
// # Errors
//
// Every call returns nil or an *Error: the NCCL result code, its name, the operation,
// and, for failures, the text of ncclGetLastError read right after the failure (a
// second call into C). NCCL keeps that text in one process-wide buffer that only its warnings
// write, so when several communicators fail at once, or a failure warns nothing, the
// message may describe another failure; the code and operation are always exact. The
// sentinels (ErrInvalidArgument, ErrInProgress, ...) match with errors.Is by code.
// ncclInProgress, returned by non-blocking communicators, is reported as an error that
// matches ErrInProgress: the operation was accepted and goes on in the background.
//
// # Cost of a call
//
// A call is one crossing into C through a function pointer (package internal/dl: about
// the cost of a cgo call, with or without cgo on amd64). On success nothing is
// allocated; the Go side adds a "library loaded?" check (an atomic load) and a "has the
// entry point?" check. Allocation happens only when building an error.
//
// Where the build cannot load libraries (CGO_ENABLED=0 outside linux/amd64 and
// linux/arm64, or the tag gpu_nodlopen) the package builds with the same API and every
// call returns an error matching ErrUnavailable.
package ncclapi
