// Package cu binds the CUDA driver API at run time.
//
// The driver library (libcuda.so.1) is opened with dlopen on first use (Load) and each
// entry point is resolved with dlsym; the calls go through package internal/dl, with
// or without cgo: no CUDA headers, toolkit or -lcuda are needed to build, and a program
// runs wherever the NVIDIA driver is installed. The entry points are listed once, in
// api.go's table, and every build uses the same Go functions (cu.go); only the
// crossing into C differs (Binding):
//
//   - "cgo" (CGO_ENABLED=1, the default where a C compiler is present): a C
//     trampoline built by cgo. About 36 ns a call on the H200's host.
//   - "purego" (CGO_ENABLED=0 on linux/amd64 and linux/arm64): no C compiler at all;
//     purego's runtime support and an assembly trampoline, as cheap as the cgo call
//     (see internal/dl's BenchmarkCall and the README for the H200's figures).
//   - "" (CGO_ENABLED=0 on other platforms, or the tag gpu_nodlopen): Load reports
//     that no driver is available.
//
// In every binding a call that blocks in the driver (cuStreamSynchronize,
// cuEventSynchronize) releases its P, as a cgo call does.
//
// Every call that needs a context takes one and makes it current on the calling OS
// thread first, in the same crossing into C (a thread-local read when it already is),
// so a goroutine may call from whichever thread it runs on.
//
// The environment variable GPU_CUDA_LIBRARY overrides the library's path.
//
// This is the low-level layer of the CUDA backend: users of the library go through
// package gpu. Handles are plain integers that name driver objects; the package does no
// lifetime management.
package cu
