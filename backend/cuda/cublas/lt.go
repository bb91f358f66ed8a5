package cublas

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/go-gpu/gpu/backend/cuda/cu"
	"github.com/go-gpu/gpu/internal/dl"
)

// cuBLASLt, cuBLAS's GEMM engine (libcublasLt, which libcublas itself loads): the
// entry points of a matrix product whose algorithm the caller chooses among those the
// library's heuristic proposes (cuBLAS API: cublasLtMatmulAlgoGetHeuristic,
// cublasLtMatmul), so that a product can be given the fastest of several measured
// candidates rather than the heuristic's first, as PyTorch's TunableOp does. The
// prototypes are our own, from cublasLt.h's documentation (CUDA 12 and 13). The table is
// optional as a whole: a libcublas without a libcublasLt beside it that has these
// symbols still serves GemmEx, and LtAvailable says whether this part can be used.

var (
	ltAPI dl.Table

	cublasLtCreate                       = ltAPI.Func("cublasLtCreate")
	cublasLtDestroy                      = ltAPI.Func("cublasLtDestroy")
	cublasLtMatmulDescCreate             = ltAPI.Func("cublasLtMatmulDescCreate")
	cublasLtMatmulDescDestroy            = ltAPI.Func("cublasLtMatmulDescDestroy")
	cublasLtMatmulDescSetAttribute       = ltAPI.Func("cublasLtMatmulDescSetAttribute")
	cublasLtMatrixLayoutCreate           = ltAPI.Func("cublasLtMatrixLayoutCreate")
	cublasLtMatrixLayoutDestroy          = ltAPI.Func("cublasLtMatrixLayoutDestroy")
	cublasLtMatrixLayoutSetAttribute     = ltAPI.Func("cublasLtMatrixLayoutSetAttribute")
	cublasLtMatmulPreferenceCreate       = ltAPI.Func("cublasLtMatmulPreferenceCreate")
	cublasLtMatmulPreferenceDestroy      = ltAPI.Func("cublasLtMatmulPreferenceDestroy")
	cublasLtMatmulPreferenceSetAttribute = ltAPI.Func("cublasLtMatmulPreferenceSetAttribute")
	cublasLtMatmulAlgoGetHeuristic       = ltAPI.Func("cublasLtMatmulAlgoGetHeuristic")
	cublasLtMatmul                       = ltAPI.Func("cublasLtMatmul")
)

// The attributes set (cublasLt.h's enums).
const (
	ltDescTransA          = 3 // CUBLASLT_MATMUL_DESC_TRANSA, int32
	ltDescTransB          = 4 // CUBLASLT_MATMUL_DESC_TRANSB, int32
	ltLayoutBatchCount    = 5 // CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, int32
	ltLayoutBatchStride   = 6 // CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, int64
	ltPrefMaxWorkspace    = 1 // CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, uint64
	ltPrefMinAlignA       = 5 // CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, uint32 (C: 7, D: 8)
	ltHeuristicResultSize = 96
)

// bindLt binds the cuBLASLt table in the library at name (already loaded by
// libcublas, or opened beside it); an error leaves Lt unavailable.
func bindLt(name string) error {
	l, err := dl.Open(name)
	if err != nil {
		return err
	}
	if err := ltAPI.Bind(l); err != nil {
		l.Close()
		return err
	}
	return nil
}

// LtAvailable reports whether the loaded library's cuBLASLt entry points are bound.
func LtAvailable() bool {
	return ready() == nil && lib.ltErr == nil
}

func ltUsable(f *dl.Func) error {
	if e := ready(); e != nil {
		c := *e
		c.Op = f.Name()
		return &c
	}
	if lib.ltErr != nil {
		return unavailable(f.Name(), "cuBLASLt: "+lib.ltErr.Error())
	}
	return nil
}

// LtHandle is a cuBLASLt handle (cuBLAS API: cublasLtHandle_t) and the CUDA context it
// was made in. It holds no stream: one handle serves every stream of its device.
type LtHandle struct {
	p   uintptr
	ctx cu.Context
}

// IsZero reports whether h is the zero LtHandle.
func (h LtHandle) IsZero() bool { return h.p == 0 }

// LtCreate makes a cuBLASLt handle in ctx (cuBLAS API: cublasLtCreate).
func LtCreate(ctx cu.Context) (LtHandle, error) {
	if err := ltUsable(cublasLtCreate); err != nil {
		return LtHandle{}, err
	}
	if ctx == 0 {
		return LtHandle{}, &Error{Status: StatusInvalidValue, Name: StatusInvalidValue.String(), Op: cublasLtCreate.Name(),
			Message: "no CUDA context (the zero cu.Context)"}
	}
	if err := cu.Load(); err != nil {
		return LtHandle{}, unavailable(cublasLtCreate.Name(), "the CUDA driver is not loaded: "+err.Error())
	}
	var p uintptr
	r := cublasLtCreate.CallIn(cu.Prologue(), uintptr(ctx), uintptr(unsafe.Pointer(&p)))
	if err := resultIn(cublasLtCreate, ctx, r); err != nil {
		return LtHandle{}, err
	}
	return LtHandle{p: p, ctx: ctx}, nil
}

// Destroy releases the handle (cuBLAS API: cublasLtDestroy).
func (h LtHandle) Destroy() error {
	if err := ltUsable(cublasLtDestroy); err != nil {
		return err
	}
	return resultIn(cublasLtDestroy, h.ctx, cublasLtDestroy.CallIn(cu.Prologue(), uintptr(h.ctx), h.p))
}

// LtProblem is one product in cuBLASLt's terms, column major as GemmEx's arguments:
// D = C = alpha*op(A)@op(B) + beta*C, op(A) m x k, op(B) k x n, batch products with the
// operands' Stride between matrices (batch 1: a single product).
type LtProblem struct {
	TransA, TransB Operation
	M, N, K        int
	A, B, C        Matrix // Ptr is ignored by Plan except for the alignment (LtPlan.Heuristics)
	Batch          int
	Compute        ComputeType
	Scale          DataType // the type of alpha and beta: R32F, or R64F for Compute64F
}

// LtPlan is a problem's descriptors (operation, layouts), made once and reused for
// every product of that shape; not safe for concurrent Destroy.
type LtPlan struct {
	h          LtHandle
	desc       uintptr
	la, lb, lc uintptr
}

// LtAlgo is one algorithm the heuristic proposed for a plan (cuBLAS API:
// cublasLtMatmulHeuristicResult_t, 96 bytes), with the workspace it needs.
type LtAlgo struct {
	raw [ltHeuristicResultSize / 8]uint64 // 8-byte aligned, as the C struct
}

// Workspace returns the bytes of workspace the algorithm needs.
func (a *LtAlgo) Workspace() uint64 { return a.raw[8] }

// state returns the result's cublasStatus_t.
func (a *LtAlgo) state() Status { return Status(int32(uint32(a.raw[9]))) }

// Waves returns the heuristic's estimate of the device utilization (1: the kernel
// fills the GPU once).
func (a *LtAlgo) Waves() float32 { return math.Float32frombits(uint32(a.raw[9] >> 32)) }

// ID returns the algorithm's identifier in its first 4 bytes (cublasLtMatmulAlgo_t's
// data, CUBLASLT_ALGO_CONFIG_ID), for logs.
func (a *LtAlgo) ID() int32 { return int32(uint32(a.raw[0])) }

// Plan makes the descriptors of p (cuBLAS API: cublasLtMatmulDescCreate,
// cublasLtMatrixLayoutCreate and their SetAttribute).
func (h LtHandle) Plan(p *LtProblem) (pl *LtPlan, err error) {
	if err := ltUsable(cublasLtMatmulDescCreate); err != nil {
		return nil, err
	}
	if h.p == 0 {
		return nil, &Error{Status: StatusNotInitialized, Name: StatusNotInitialized.String(), Op: cublasLtMatmulDescCreate.Name(),
			Message: "the zero LtHandle"}
	}
	pl = &LtPlan{h: h}
	defer func() {
		if err != nil {
			pl.Destroy()
			pl = nil
		}
	}()
	ctx := uintptr(h.ctx)
	r := cublasLtMatmulDescCreate.CallIn(cu.Prologue(), ctx, uintptr(unsafe.Pointer(&pl.desc)),
		uintptr(uint32(p.Compute)), uintptr(uint32(p.Scale)))
	if err := resultIn(cublasLtMatmulDescCreate, h.ctx, r); err != nil {
		return nil, err
	}
	for _, a := range []struct {
		attr uintptr
		v    int32
	}{{ltDescTransA, int32(p.TransA)}, {ltDescTransB, int32(p.TransB)}} {
		v := a.v
		r := cublasLtMatmulDescSetAttribute.CallIn(cu.Prologue(), ctx, pl.desc, a.attr, uintptr(unsafe.Pointer(&v)), 4)
		if err := resultIn(cublasLtMatmulDescSetAttribute, h.ctx, r); err != nil {
			return nil, err
		}
	}
	layout := func(dst *uintptr, m Matrix, rows, cols int, trans Operation) error {
		if trans == OpT {
			rows, cols = cols, rows
		}
		r := cublasLtMatrixLayoutCreate.CallIn(cu.Prologue(), ctx, uintptr(unsafe.Pointer(dst)), uintptr(uint32(m.Type)),
			uintptr(uint64(rows)), uintptr(uint64(cols)), uintptr(int64(m.LD)))
		if err := resultIn(cublasLtMatrixLayoutCreate, h.ctx, r); err != nil {
			return err
		}
		if p.Batch <= 1 {
			return nil
		}
		n := int32(p.Batch)
		r = cublasLtMatrixLayoutSetAttribute.CallIn(cu.Prologue(), ctx, *dst, ltLayoutBatchCount, uintptr(unsafe.Pointer(&n)), 4)
		if err := resultIn(cublasLtMatrixLayoutSetAttribute, h.ctx, r); err != nil {
			return err
		}
		st := m.Stride
		r = cublasLtMatrixLayoutSetAttribute.CallIn(cu.Prologue(), ctx, *dst, ltLayoutBatchStride, uintptr(unsafe.Pointer(&st)), 8)
		return resultIn(cublasLtMatrixLayoutSetAttribute, h.ctx, r)
	}
	if err := layout(&pl.la, p.A, p.M, p.K, p.TransA); err != nil {
		return nil, err
	}
	if err := layout(&pl.lb, p.B, p.K, p.N, p.TransB); err != nil {
		return nil, err
	}
	if err := layout(&pl.lc, p.C, p.M, p.N, OpN); err != nil {
		return nil, err
	}
	return pl, nil
}

// Destroy releases the plan's descriptors.
func (pl *LtPlan) Destroy() {
	if pl == nil {
		return
	}
	ctx := uintptr(pl.h.ctx)
	for _, l := range []*uintptr{&pl.la, &pl.lb, &pl.lc} {
		if *l != 0 {
			cublasLtMatrixLayoutDestroy.CallIn(cu.Prologue(), ctx, *l)
			*l = 0
		}
	}
	if pl.desc != 0 {
		cublasLtMatmulDescDestroy.CallIn(cu.Prologue(), ctx, pl.desc)
		pl.desc = 0
	}
}

// Alignment returns the largest power of two up to 256 that divides the address p,
// as the MIN_ALIGNMENT preferences take it.
func Alignment(p uintptr) uint32 {
	a := uint32(256)
	for a > 1 && p%uintptr(a) != 0 {
		a /= 2
	}
	return a
}

// Heuristics returns up to want algorithms for the plan, best first by the library's
// estimate, that need at most workspace bytes and accept operands aligned as
// alignA, alignB and alignC bytes (Alignment) (cuBLAS API: cublasLtMatmulPreferenceCreate,
// cublasLtMatmulAlgoGetHeuristic).
func (pl *LtPlan) Heuristics(want int, workspace uint64, alignA, alignB, alignC uint32) ([]LtAlgo, error) {
	if err := ltUsable(cublasLtMatmulAlgoGetHeuristic); err != nil {
		return nil, err
	}
	want = min(MaxLtAlgos, max(1, want))
	ctx := uintptr(pl.h.ctx)
	var pref uintptr
	r := cublasLtMatmulPreferenceCreate.CallIn(cu.Prologue(), ctx, uintptr(unsafe.Pointer(&pref)))
	if err := resultIn(cublasLtMatmulPreferenceCreate, pl.h.ctx, r); err != nil {
		return nil, err
	}
	defer cublasLtMatmulPreferenceDestroy.CallIn(cu.Prologue(), ctx, pref)
	ws := workspace
	r = cublasLtMatmulPreferenceSetAttribute.CallIn(cu.Prologue(), ctx, pref, ltPrefMaxWorkspace, uintptr(unsafe.Pointer(&ws)), 8)
	if err := resultIn(cublasLtMatmulPreferenceSetAttribute, pl.h.ctx, r); err != nil {
		return nil, err
	}
	for i, al := range []uint32{alignA, alignB, alignC, alignC} {
		v := al
		r = cublasLtMatmulPreferenceSetAttribute.CallIn(cu.Prologue(), ctx, pref, uintptr(ltPrefMinAlignA+i), uintptr(unsafe.Pointer(&v)), 4)
		if err := resultIn(cublasLtMatmulPreferenceSetAttribute, pl.h.ctx, r); err != nil {
			return nil, err
		}
	}
	var res [MaxLtAlgos]LtAlgo
	var n int32
	r = cublasLtMatmulAlgoGetHeuristic.CallIn(cu.Prologue(), ctx, pl.h.p, pl.desc, pl.la, pl.lb, pl.lc, pl.lc, pref,
		uintptr(uint32(int32(want))), uintptr(unsafe.Pointer(&res[0])), uintptr(unsafe.Pointer(&n)))
	if err := resultIn(cublasLtMatmulAlgoGetHeuristic, pl.h.ctx, r); err != nil {
		return nil, err
	}
	var out []LtAlgo
	for i := 0; i < int(n) && i < want; i++ {
		if res[i].state() == StatusSuccess {
			out = append(out, res[i])
		}
	}
	if len(out) == 0 {
		return nil, &Error{Status: StatusNotSupported, Name: StatusNotSupported.String(), Op: cublasLtMatmulAlgoGetHeuristic.Name(),
			Message: "no algorithm for this product"}
	}
	return out, nil
}

// MaxLtAlgos is the most algorithms Heuristics returns.
const MaxLtAlgos = 16

// Matmul enqueues the plan's product with algorithm algo on stream, C written in place
// (D = C), workspace bytes at ws (cuBLAS API: cublasLtMatmul); alpha and beta as
// GemmEx's (host memory).
func (pl *LtPlan) Matmul(alpha Scalar, a, b uintptr, beta Scalar, c uintptr, algo *LtAlgo, ws uintptr, wsSize uint64, stream uintptr) error {
	if err := ltUsable(cublasLtMatmul); err != nil {
		return err
	}
	if algo.Workspace() > wsSize {
		return &Error{Status: StatusInvalidValue, Name: StatusInvalidValue.String(), Op: cublasLtMatmul.Name(),
			Message: fmt.Sprintf("the algorithm needs %d bytes of workspace, %d given", algo.Workspace(), wsSize)}
	}
	r := cublasLtMatmul.CallIn(cu.Prologue(), uintptr(pl.h.ctx), pl.h.p, pl.desc,
		uintptr(unsafe.Pointer(&alpha)), a, pl.la, b, pl.lb,
		uintptr(unsafe.Pointer(&beta)), c, pl.lc, c, pl.lc,
		uintptr(unsafe.Pointer(&algo.raw[0])), ws, uintptr(wsSize), stream)
	return resultIn(cublasLtMatmul, pl.h.ctx, r)
}
