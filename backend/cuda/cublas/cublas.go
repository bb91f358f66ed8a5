package cublas

import (
	"fmt"
	"unsafe"

	"github.com/go-gpu/gpu/backend/cuda/cu"
	"github.com/go-gpu/gpu/internal/dl"
)

// The Go function of each entry point of api.go's table. The C signatures are
// cublas_api.h's, written here as the conversions of the arguments (package internal/dl's
// rules): handles, pointers and size_t as uintptr, C int and the enums as
// uintptr(uint32(x)) (the callee reads the low 32 bits), long long as uintptr(int64(x)),
// out-parameters and alpha and beta as the address of a Go variable of the C type's
// size, converted in the argument list of Call or CallIn, so that they stay on the
// goroutine's stack.
//
// Every call on a handle runs in the handle's CUDA context: cuBLAS works on the context
// current on the calling thread (cublasCreate ties the handle to it, and the library's
// launches go to it), so each call makes the context current first, in the same crossing
// into C, with the driver's prologue (cu.Prologue, dl.Func.CallIn). A goroutine need
// not lock its thread.

// Handle is a cuBLAS handle (cuBLAS API: cublasHandle_t) and the CUDA context it belongs
// to, the one current when Create made it. The zero Handle is no handle: its methods
// return an error matching ErrNotInitialized, as cuBLAS does for a NULL handle.
type Handle struct {
	p   uintptr
	ctx cu.Context
}

// Ptr returns the cublasHandle_t, 0 for the zero Handle.
func (h Handle) Ptr() uintptr { return h.p }

// Context returns the CUDA context the handle belongs to.
func (h Handle) Context() cu.Context { return h.ctx }

// IsZero reports whether h is the zero Handle.
func (h Handle) IsZero() bool { return h.p == 0 }

// Create creates a handle in the CUDA context ctx (cuBLAS API: cublasCreate), which it
// makes current on the calling thread first; the driver (package cu) must be loaded.
// The handle allocates resources on the context's device: make few, and reuse them.
func Create(ctx cu.Context) (Handle, error) {
	if err := usable(cublasCreate); err != nil {
		return Handle{}, err
	}
	if ctx == 0 {
		return Handle{}, &Error{Status: StatusInvalidValue, Name: StatusInvalidValue.String(), Op: cublasCreate.Name(),
			Message: "no CUDA context (the zero cu.Context)"}
	}
	if err := cu.Load(); err != nil {
		return Handle{}, unavailable(cublasCreate.Name(), "the CUDA driver is not loaded: "+err.Error())
	}
	var p uintptr
	r := cublasCreate.CallIn(cu.Prologue(), uintptr(ctx), uintptr(unsafe.Pointer(&p)))
	if err := resultIn(cublasCreate, ctx, r); err != nil {
		return Handle{}, err
	}
	return Handle{p: p, ctx: ctx}, nil
}

// Destroy releases the handle's resources (cuBLAS API: cublasDestroy); cuBLAS waits for
// the whole device's work first (cudaDeviceSynchronize).
func (h Handle) Destroy() error {
	if err := h.usable(cublasDestroy); err != nil {
		return err
	}
	return resultIn(cublasDestroy, h.ctx, cublasDestroy.CallIn(cu.Prologue(), uintptr(h.ctx), h.p))
}

// LibraryVersion returns the version of the library behind h as 10000*major +
// 100*minor + patch (cuBLAS API: cublasGetVersion).
func (h Handle) LibraryVersion() (int, error) {
	if err := h.usable(cublasGetVersion); err != nil {
		return 0, err
	}
	var v int32
	r := cublasGetVersion.CallIn(cu.Prologue(), uintptr(h.ctx), h.p, uintptr(unsafe.Pointer(&v)))
	return int(v), resultIn(cublasGetVersion, h.ctx, r)
}

// SetStream makes h's later calls run on stream (a CUstream of h's context; cuBLAS API:
// cublasSetStream). It resets the workspace to cuBLAS's own pool: call SetWorkspace
// after it.
func (h Handle) SetStream(stream uintptr) error {
	if err := h.usable(cublasSetStream); err != nil {
		return err
	}
	return resultIn(cublasSetStream, h.ctx, cublasSetStream.CallIn(cu.Prologue(), uintptr(h.ctx), h.p, stream))
}

// SetWorkspace gives h size bytes of device memory at ptr (256-byte aligned) as its
// workspace on the current stream (cuBLAS API: cublasSetWorkspace).
func (h Handle) SetWorkspace(ptr uintptr, size uint64) error {
	if err := h.usable(cublasSetWorkspace); err != nil {
		return err
	}
	return resultIn(cublasSetWorkspace, h.ctx, cublasSetWorkspace.CallIn(cu.Prologue(), uintptr(h.ctx), h.p, ptr, uintptr(size)))
}

// SetMathMode sets h's math mode (cuBLAS API: cublasSetMathMode).
func (h Handle) SetMathMode(m Math) error {
	if err := h.usable(cublasSetMathMode); err != nil {
		return err
	}
	return resultIn(cublasSetMathMode, h.ctx, cublasSetMathMode.CallIn(cu.Prologue(), uintptr(h.ctx), h.p, uintptr(uint32(m))))
}

// SetPointerMode says where alpha and beta live (cuBLAS API: cublasSetPointerMode).
// GemmEx and GemmStridedBatchedEx pass them from host memory: keep PointerHost.
func (h Handle) SetPointerMode(m PointerMode) error {
	if err := h.usable(cublasSetPointerMode); err != nil {
		return err
	}
	return resultIn(cublasSetPointerMode, h.ctx, cublasSetPointerMode.CallIn(cu.Prologue(), uintptr(h.ctx), h.p, uintptr(uint32(m))))
}

// Matrix is a GEMM operand: a device pointer, its element type and leading dimension,
// and (for the batched call) the elements from one matrix to the next.
type Matrix struct {
	Ptr    uintptr
	Type   DataType
	LD     int
	Stride int64
}

// Scalar is alpha or beta: its bits in the low bytes, as the compute type reads it
// (math.Float32bits for Compute32F and the 32F_FAST types, math.Float64bits for
// Compute64F). The products pass its address, in host memory (PointerHost): a variable
// on the calling goroutine's stack, which cuBLAS reads before the call returns.
type Scalar uint64

// cint converts a Go int to the argument bits of a C int.
func cint(v int) uintptr { return uintptr(uint32(int32(v))) }

// GemmEx computes C = alpha*op(A)@op(B) + beta*C, column major, on h's stream (cuBLAS
// API: cublasGemmEx). The handle's pointer mode must be PointerHost.
func (h Handle) GemmEx(ta, tb Operation, m, n, k int, alpha Scalar, A, B Matrix, beta Scalar, C Matrix, ct ComputeType, algo GemmAlgo) error {
	if err := h.usable(cublasGemmEx); err != nil {
		return err
	}
	r := cublasGemmEx.CallIn(cu.Prologue(), uintptr(h.ctx), h.p, uintptr(uint32(ta)), uintptr(uint32(tb)),
		cint(m), cint(n), cint(k), uintptr(unsafe.Pointer(&alpha)),
		A.Ptr, uintptr(uint32(A.Type)), cint(A.LD),
		B.Ptr, uintptr(uint32(B.Type)), cint(B.LD),
		uintptr(unsafe.Pointer(&beta)),
		C.Ptr, uintptr(uint32(C.Type)), cint(C.LD),
		uintptr(uint32(ct)), uintptr(uint32(algo)))
	return resultIn(cublasGemmEx, h.ctx, r)
}

// GemmStridedBatchedEx computes batch products C_i = alpha*op(A_i)@op(B_i) + beta*C_i,
// matrix i of each operand Stride elements after matrix i-1, column major, on h's
// stream (cuBLAS API: cublasGemmStridedBatchedEx). The handle's pointer mode must be
// PointerHost.
func (h Handle) GemmStridedBatchedEx(ta, tb Operation, m, n, k int, alpha Scalar, A, B Matrix, beta Scalar, C Matrix, batch int, ct ComputeType, algo GemmAlgo) error {
	if err := h.usable(cublasGemmStridedBatchedEx); err != nil {
		return err
	}
	r := cublasGemmStridedBatchedEx.CallIn(cu.Prologue(), uintptr(h.ctx), h.p, uintptr(uint32(ta)), uintptr(uint32(tb)),
		cint(m), cint(n), cint(k), uintptr(unsafe.Pointer(&alpha)),
		A.Ptr, uintptr(uint32(A.Type)), cint(A.LD), uintptr(A.Stride),
		B.Ptr, uintptr(uint32(B.Type)), cint(B.LD), uintptr(B.Stride),
		uintptr(unsafe.Pointer(&beta)),
		C.Ptr, uintptr(uint32(C.Type)), cint(C.LD), uintptr(C.Stride),
		cint(batch), uintptr(uint32(ct)), uintptr(uint32(algo)))
	return resultIn(cublasGemmStridedBatchedEx, h.ctx, r)
}

// Gemm computes C = alpha*op(A)@op(B) + beta*C of float32 (R32F, the handle's math
// mode deciding about TF32) or float64 (R64F) matrices, column major, on h's stream, with
// the type's own routine (cuBLAS API: cublasSgemm, cublasDgemm), as PyTorch and CuPy call
// them; alpha and beta are a Scalar of the element type's bits. A, B and C must share the
// type. An error wrapping ErrNotSupported for another type or a library without the
// routine.
func (h Handle) Gemm(ta, tb Operation, m, n, k int, alpha Scalar, A, B Matrix, beta Scalar, C Matrix) error {
	f := cublasSgemm
	switch {
	case A.Type == R32F && B.Type == R32F && C.Type == R32F:
	case A.Type == R64F && B.Type == R64F && C.Type == R64F:
		f = cublasDgemm
	default:
		return &Error{Status: StatusNotSupported, Name: StatusNotSupported.String(), Op: "cublasSgemm/cublasDgemm",
			Message: fmt.Sprintf("matrices of types %d, %d, %d", A.Type, B.Type, C.Type)}
	}
	if err := h.usable(f); err != nil {
		return err
	}
	r := f.CallIn(cu.Prologue(), uintptr(h.ctx), h.p, uintptr(uint32(ta)), uintptr(uint32(tb)),
		cint(m), cint(n), cint(k), uintptr(unsafe.Pointer(&alpha)),
		A.Ptr, cint(A.LD), B.Ptr, cint(B.LD),
		uintptr(unsafe.Pointer(&beta)), C.Ptr, cint(C.LD))
	return resultIn(f, h.ctx, r)
}

// usable is usable (api.go) for a call on h: also an error for the zero Handle.
func (h Handle) usable(f *dl.Func) error {
	if err := usable(f); err != nil {
		return err
	}
	if h.p == 0 {
		return &Error{Status: StatusNotInitialized, Name: StatusNotInitialized.String(), Op: f.Name(),
			Message: "the zero Handle (no cublasCreate)"}
	}
	return nil
}

// resultIn converts the result register of f's call in ctx to an error. A non-zero
// result is either cuBLAS's status or the driver's, from the prologue that made ctx
// current (cuCtxSetCurrent refusing a destroyed context); the two share their small
// codes, so a failure tells them apart by making ctx current again, on the error path
// only.
func resultIn(f *dl.Func, ctx cu.Context, r uintptr) error {
	if int32(r) == 0 {
		return nil
	}
	if err := ctx.EnsureOnly(); err != nil {
		return fmt.Errorf("cublas: %s: making the handle's context %#x current: %w", f.Name(), uintptr(ctx), err)
	}
	return failure(f.Name(), Status(int32(r)))
}
