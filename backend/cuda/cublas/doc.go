// Package cublas binds cuBLAS, NVIDIA's BLAS library, at run time: the few entry points
// the matrix products need (handles, streams, workspaces, cublasGemmEx and
// cublasGemmStridedBatchedEx), one Go function each, taking plain values (handles,
// device pointers and streams as uintptr) and returning Go errors with cuBLAS's status
// name. Package backend/cuda builds its matrix products on it.
//
// # Loading
//
// Nothing is linked at build time: no cuBLAS header, no toolkit, no -l flag. On first
// use the package opens the library with dlopen, once, and resolves the entry points
// with dlsym. It tries, in order, and stops at the first that opens:
//
//   - the file named by the environment variable GPU_CUBLAS_LIBRARY, if set and not
//     empty (then nothing else is tried);
//   - libcublas.so.13, then libcublas.so.12, through the dynamic loader's search path
//     (LD_LIBRARY_PATH, the ld.so cache);
//   - libcublas.so.13 and .12 in $CUDA_HOME/lib64, $CUDA_PATH/lib64 and
//     /usr/local/cuda/lib64;
//   - NVIDIA's pip wheels: nvidia/*/lib/libcublas.so.13 and .12 (nvidia/cu13/lib,
//     nvidia/cublas/lib) under the Python site-packages directories of $VIRTUAL_ENV,
//     $CONDA_PREFIX, $PYTHONPATH, ~/.local, /usr/local, /usr, /opt/conda and
//     /opt/*/.venv.
//
// A library opened by its path has libcublasLt (its GEMM engine, which it needs) opened
// first from the same directory, so that a toolkit or wheel directory that is not on
// the loader's path works. If nothing opens, every call returns an error matching
// ErrUnavailable that lists what was tried and why each failed. Library returns the
// path and version loaded (cublasGetProperty).
//
// # One table of entry points
//
// Entries lists every entry point with its C signature reduced to argument classes
// (handle, pointer, int, long long, size_t, and "by reference": a pointer to a scalar
// that the binding provides, for alpha, beta and outputs). The cgo binding is that
// table and one generic C caller, which passes every argument in a 64-bit slot (as the
// x86-64 and arm64 Linux ABIs pass integers and pointers); a binding without cgo
// (purego.SyscallN) can be driven by the same table. The C prototypes behind it are our
// own, written from the cuBLAS documentation (cublas_api.h, CUDA 12 and 13).
//
// # Threads and contexts
//
// cuBLAS works on the calling OS thread's current CUDA context: call Create, and every
// call on a handle, from a goroutine locked to its thread with the device's primary
// context current (backend/cuda does). A handle belongs to the device that was current
// when it was made; cuBLAS's rules allow one stream per handle at a time, which is how
// backend/cuda uses them (one handle per stream).
//
// Without cgo (CGO_ENABLED=0) the package builds with the same API and every call
// returns an error matching ErrUnavailable.
package cublas
