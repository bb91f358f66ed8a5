// Package dl calls C libraries loaded at run time (the CUDA driver, NCCL, cuBLAS), with
// or without cgo, from one table of entry points per library.
//
// A binding declares each entry point once, as a package variable of a Table, and
// writes one Go function per entry point that converts its arguments to C integers and
// pointers and calls it:
//
//	var (
//		api            dl.Table
//		cuCtxGetCurrent = api.Func("cuCtxGetCurrent")
//		cuCtxSetCurrent = api.Func("cuCtxSetCurrent")
//		cuStreamCreate  = api.Func("cuStreamCreate")
//		cuMemFree       = api.Func("cuMemFree_v2")
//		cur             = dl.Current{Get: cuCtxGetCurrent, Set: cuCtxSetCurrent}
//	)
//
//	func load() error {
//		lib, err := dl.Open("libcuda.so.1")
//		if err != nil {
//			return err
//		}
//		return api.Bind(lib)
//	}
//
//	func (c Context) StreamCreate(flags uint32) (Stream, error) {
//		var s Stream
//		r := cuStreamCreate.CallIn(&cur, uintptr(c), uintptr(unsafe.Pointer(&s)), uintptr(flags))
//		return s, check("cuStreamCreate", r)
//	}
//
// Adding an entry point is one line in the table and its Go function; the same code
// serves every build, so nothing can drift between a cgo binding and another.
//
// # Writing a binding
//
// backend/cuda/cu (the CUDA driver), nccl/internal/ncclapi (NCCL) and
// backend/cuda/cublas (cuBLAS: a library whose calls run in a CUDA context, through the
// driver's prologue) are the bindings to copy. A new one takes four pieces:
//
//   - The table: a dl.Table and one package variable per entry point, Func for those
//     the binding cannot work without (Bind fails, and Load reports the library too
//     old), Optional for later additions (check Func.Bound and return an error wrapping
//     ErrNotSupported).
//   - Load: once (sync.Once), dl.Open the library (an environment variable may name
//     it, as GPU_CUDA_LIBRARY and GPU_NCCL_LIBRARY do; the default is the versioned
//     soname, libcublas.so.13), then Table.Bind; dl.PathOf(f.Addr()) names the file
//     that was loaded.
//   - One Go function per entry point, converting its arguments as the rules below say
//     and the result register to an error (int32(r) != 0). A library whose calls need
//     the CUDA context current on the thread (cuBLAS's handle belongs to the context
//     current at cublasCreate_v2) calls through the driver's prologue:
//     f.CallIn(cu.Prologue(), uintptr(ctx), args...), one crossing as the driver's own
//     calls. A non-zero result is then the library's status or, when making ctx
//     current failed, the driver's CUresult: tell them apart on the error path only
//     (cublas's resultIn makes ctx current again and reports the driver's error if that
//     fails).
//   - Tests against a fake library: a C file in testdata with the real signatures,
//     recording what each function received, compiled by dltest.Build (the C compiler
//     run as a program, so the same tests check the cgo and the CGO_ENABLED=0 build),
//     and a test that every table entry has its Go function (cu's
//     TestEveryEntryPointHasItsFunction).
//
// # How a call reaches C
//
// Which mechanism a build uses is the constant Mechanism:
//
//   - "cgo" (cgo on, any Unix): a small C trampoline compiled by cgo. Libraries are
//     opened with the C library's dlopen.
//   - "purego" (CGO_ENABLED=0 on linux/amd64 and linux/arm64):
//     github.com/ebitengine/purego provides what cgo's runtime support would (its
//     fakecgo package: threads created with pthread_create, the thread-local storage C
//     libraries expect, runtime.cgocall), and dlopen/dlsym; the calls go through this
//     package's assembly trampoline (trampoline_amd64.s, trampoline_arm64.s), the C
//     trampoline's twin. The arm64 one is tested under qemu-user only (no arm64
//     machine here): run internal/dl's, cu's and ncclapi's tests on one before relying
//     on it.
//   - "" (anything else, or the build tag gpu_nodlopen): Open fails with an error
//     matching ErrUnavailable.
//
// In the first two, Call builds an argument block on the goroutine's stack and passes
// it to the trampoline through runtime.cgocall, the function cgo's own calls go through:
// it switches to the thread's system stack and marks the goroutine as in a system
// call, so a C function that blocks (cuStreamSynchronize, cuEventSynchronize) holds an
// OS thread but releases its P to other goroutines, exactly as a cgo call does. The
// trampoline optionally makes a context current first (Current, Func.CallIn: the CUDA
// driver's cuCtxGetCurrent/cuCtxSetCurrent check), then calls the function: one
// crossing, no allocation. Measured on an AMD EPYC with a trivial C function, a call
// costs about 35 ns either way, like a cgo call to a C wrapper, against about 105 ns
// through purego.SyscallN (which copies a 64-word block from a sync.Pool, and moves
// each variable whose address is an argument to the heap: an allocation) and several
// hundred through purego.RegisterLibFunc (reflection);
// BenchmarkCall measures them side by side. The H200's figures for the CUDA driver are
// in the README.
//
// # Rules for arguments
//
//   - Arguments are C integers and pointers, at most MaxArgs: no float or double by
//     value (none of our libraries takes one; cuBLAS takes its scalars by pointer).
//     Signed values are passed as their two's-complement bits (uintptr(int64(x))), C
//     int and unsigned as uintptr(uint32(x)); the callee reads the low bits.
//   - The result is the integer result register: int32(r) for a C int (CUresult,
//     ncclResult_t, cublasStatus_t), r for a pointer (GoString reads a C string).
//   - A struct passed by value goes as the C calling convention puts it: on amd64 a
//     struct larger than 16 bytes is copied onto the stack after the register
//     arguments (pass the six register slots, padded, then its words); on arm64 it is
//     passed as a pointer to a copy. ncclapi's ncclUniqueId (128 bytes) is the example.
//   - Convert a pointer to uintptr in the argument list of Call or CallIn itself, as in
//     uintptr(unsafe.Pointer(&v)), and call them directly, not through a helper.
//     Everything from Call down to the C function is nosplit, so the goroutine's stack
//     cannot move between the conversion and the C call: a stack variable may be
//     passed, and stays on the stack (no allocation). Addresses built into an array
//     first (cuLaunchKernel's kernelParams) follow the same rule: no function call
//     between taking them and Call, or only calls of //go:nosplit functions that call
//     nothing (ncclapi's initArgs). Heap memory never moves, but new and make may
//     place on the stack a value whose address is only converted to uintptr: treat
//     it as a stack variable.
//   - Memory the C function reads or writes must stay alive until Call returns (use
//     runtime.KeepAlive for Go memory reached only through a uintptr). Memory C keeps
//     after the call (an asynchronous copy's source, a name a library stores) must be
//     C memory, or Go memory kept alive and pinned (runtime.Pinner) for that long.
//   - Unlike cgo, nothing checks the cgo pointer rules at run time: an argument block
//     of pointers (cuLaunchKernel's kernelParams) may hold Go pointers as uintptrs, as
//     long as their targets stay alive.
//
// # Callbacks from C
//
// The package makes no callbacks from C into Go, and the libraries we bind don't need
// them: completion is signalled through memory and events (the runtime's waiters), not
// host-function callbacks (cuLaunchHostFunc). Without cgo, purego.NewCallback can make
// a C function pointer that calls Go, but with limits: at most 2000 callbacks per
// process, never freed; arguments and results of integer, pointer and (amd64, arm64)
// small struct types only; and a call costs tens of microseconds more than through
// cgo (96 us against 31 us for a cuLaunchHostFunc round trip on the H200). Signal
// through memory instead, as the runtime does.
//
// # What "static" means without cgo
//
// A CGO_ENABLED=0 build needs no C compiler, headers or toolkit, cross-compiles from
// any machine, and does not link libcuda, NCCL or cuBLAS: they are opened at run time.
// It is not a statically linked ELF file, though: loading a shared library needs the
// system's dynamic loader, so purego's fakecgo makes the binary import libc.so.6,
// libdl.so.2 and libpthread.so.0 (cgo_import_dynamic), and file(1) reports
// "dynamically linked, interpreter /lib64/ld-linux-x86-64.so.2". It runs on any glibc
// system, which every system with the NVIDIA driver is (libcuda.so.1 itself needs
// glibc): in containers, an image with glibc (distroless/base, debian-slim, ubuntu;
// not scratch, distroless/static or musl-based Alpine). Build with the tag gpu_nodlopen
// for a fully static binary without GPU support: Mechanism is then "" and only the CPU
// backend works.
package dl
