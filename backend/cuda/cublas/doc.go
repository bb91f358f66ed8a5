// Package cublas binds cuBLAS, NVIDIA's BLAS library, at run time: the few entry points
// the matrix products need (handles, streams, workspaces, cublasGemmEx and
// cublasGemmStridedBatchedEx, cublasSgemm and cublasDgemm, and in lt.go cuBLASLt's
// descriptors, heuristic and cublasLtMatmul), one Go function each, taking plain values (handles,
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
// # One table of entry points, every build
//
// api.go declares every entry point once, as a table of package internal/dl, and
// cublas.go has one Go function per entry point converting its arguments, with our own
// C prototypes written from the cuBLAS documentation (cublas_api.h, CUDA 12 and 13). The
// same code serves the cgo build and the CGO_ENABLED=0 one (purego's runtime and
// internal/dl's trampoline, on linux/amd64 and linux/arm64): Binding says which. alpha
// and beta are passed by address from the calling goroutine's stack
// (CUBLAS_POINTER_MODE_HOST: cuBLAS reads them before the call returns), as
// internal/dl's rules allow. A build that cannot load libraries (another platform
// without cgo, or the tag gpu_nodlopen) returns an error matching ErrUnavailable from
// every call.
//
// # Threads and contexts
//
// cuBLAS works on the calling OS thread's current CUDA context: cublasCreate ties the
// handle to the device current then, and the library's launches go to the current
// context. A Handle records the context it was made in (Create's argument), and every
// call on it makes that context current in the same crossing into C (the driver's
// prologue, cu.Prologue), so any goroutine may call it, locked to its thread or not. A
// failure of that prologue (a destroyed context) is reported as the driver's error.
// cuBLAS's rules allow one stream per handle at a time, which is how backend/cuda uses
// them (one handle per stream).
package cublas
