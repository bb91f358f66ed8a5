// Package cu binds the CUDA driver API at run time.
//
// The driver library (libcuda.so.1) is opened with dlopen on first use and each entry
// point is resolved with dlsym; calls go through cgo to C function pointers, with
// prototypes of our own: no CUDA headers, toolkit or -lcuda are needed to build, and a
// program runs wherever the NVIDIA driver is installed. Measured on an H200, a call
// this way costs about 36 ns, against 98 to 561 ns through purego.
//
// Every call that needs a context takes one and makes it current on the calling OS
// thread first, inside the same cgo call (a thread-local read when it already is), so a
// goroutine may call from whichever thread it runs on.
//
// Without cgo (CGO_ENABLED=0) the package builds but Load reports that no driver is
// available. The environment variable GPU_CUDA_LIBRARY overrides the library's path.
//
// This is the low-level layer of the CUDA backend: users of the library go through
// package gpu. Handles are plain integers that name driver objects; the package does no
// lifetime management.
package cu
