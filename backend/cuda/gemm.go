package cuda

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cuda/cu"
	"github.com/go-gpu/gpu/backend/cuda/cublas"
	"github.com/go-gpu/gpu/dtype"
)

// blasMath is the handles' math mode: cuBLAS's default, except that the reductions of a
// product (split-K) stay in the compute type, float32 for the 16-bit formats, instead of
// rounding partial sums to float16 or bfloat16 (CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
// PyTorch allows them by default: allow_bf16_reduced_precision_reduction): the products
// are documented to accumulate in float32. (The large products' speed on the H200 is
// unchanged: bfloat16 4096^3 in 191 us, 720 TFLOP/s.)
const blasMath = cublas.DefaultMath | cublas.DisallowReducedPrecisionReduction

// Matrix products through cuBLAS (package cublas, loaded at run time).
//
// Each stream gets a handle of its own the first time it multiplies (cuBLAS wants one
// stream per handle at a time): its stream set once (cublasSetStream) and a workspace
// from the device's stream-ordered pool allocated on that stream (cublasSetWorkspace:
// 32 MiB on compute capability 9.0 and later, 4 MiB before, NVIDIA's recommended
// sizes), so that every kernel cuBLAS launches, and every use of the workspace, is
// ordered on our stream like our own kernels. Alpha and beta are passed from host memory
// (CUBLAS_POINTER_MODE_HOST). When the stream is destroyed its workspace is freed in
// stream order and the handle goes back to a per-device pool for the next stream
// (cublasDestroy would synchronize the whole device). Every handle is made in the
// device's primary context, and every cuBLAS call makes that context current on the
// calling thread in the same crossing into C (package cublas), so no goroutine needs
// locking to its thread. The same code serves the cgo and the CGO_ENABLED=0 builds.
//
// The row-major products of backend.Gemm become cuBLAS's column-major ones by computing
// C^T = op(B)^T op(A)^T: a row-major matrix with leading dimension ld is the column-major
// transpose with the same ld.

var _ backend.Gemmer = (*Device)(nil)

// blasDevice is a device's cuBLAS state.
type blasDevice struct {
	once sync.Once
	lib  string
	err  error
	mu   sync.Mutex
	free []cublas.Handle // handles of destroyed streams, for reuse
}

// blasStream is a stream's cuBLAS handle and workspace.
type blasStream struct {
	mu     sync.Mutex
	h      cublas.Handle
	ws     cu.DevicePtr
	wsSize int64
	replay gemmReplay // the graphs of repeated small products (gemm_replay.go)
	broken bool       // the handle could not be set back to its stream after a capture
}

var (
	blasDevices sync.Map // *Device -> *blasDevice
	blasStreams sync.Map // *Stream -> *blasStream
)

func (d *Device) blas() *blasDevice {
	v, _ := blasDevices.LoadOrStore(d, &blasDevice{})
	return v.(*blasDevice)
}

// GemmLibrary loads cuBLAS (once) and checks that it can make a handle on this device
// (a library newer than the driver cannot), and names it: "cuBLAS 13.1.0
// (/usr/local/cuda/lib64/libcublas.so.13, with libcublasLt.so.13)". Errors wrap
// backend.ErrNotSupported.
func (d *Device) GemmLibrary() (string, error) {
	b := d.blas()
	b.once.Do(func() {
		lib, err := cublas.Library()
		if err != nil {
			b.err = fmt.Errorf("cuda: %w: %w", err, backend.ErrNotSupported)
			return
		}
		h, err := cublas.Create(d.ctx)
		if err != nil {
			b.err = fmt.Errorf("cuda: %s cannot make a handle on %s: %w: %w", lib, d.info.Name, err, backend.ErrNotSupported)
			return
		}
		b.free = append(b.free, h)
		b.lib = lib
	})
	return b.lib, b.err
}

// workspaceBytes is the workspace a handle gets (GPU_CUBLAS_WORKSPACE, gemm_engine.go,
// overrides it).
func (d *Device) workspaceBytes() int64 {
	if ws := blasEnv().workspace; ws >= 0 {
		return ws
	}
	if d.info.ComputeMajor >= 9 {
		return 32 << 20
	}
	return 4 << 20
}

// streamHandle returns s's handle, making it on first use. A capturing stream's
// products (c, s's capture, loaded once by the caller, not nil) get the capture's own
// handle and workspace (captureHandle).
func (d *Device) streamHandle(s *Stream, c *capture) (*blasStream, error) {
	if c != nil {
		return d.captureHandle(s, c)
	}
	if v, ok := blasStreams.Load(s); ok {
		return v.(*blasStream), nil
	}
	b := d.blas()
	b.mu.Lock()
	var h cublas.Handle
	if n := len(b.free); n > 0 {
		h, b.free = b.free[n-1], b.free[:n-1]
	}
	b.mu.Unlock()
	if h.IsZero() {
		var err error
		if h, err = cublas.Create(d.ctx); err != nil {
			return nil, err
		}
	}
	bs := &blasStream{h: h}
	fail := func(err error) (*blasStream, error) {
		if bs.ws != 0 {
			d.ctx.MemFreeAsync(bs.ws, s.h)
		}
		b.mu.Lock()
		b.free = append(b.free, h)
		b.mu.Unlock()
		return nil, err
	}
	if err := h.SetStream(uintptr(s.h)); err != nil {
		return fail(err)
	}
	if err := h.SetPointerMode(cublas.PointerHost); err != nil {
		return fail(err)
	}
	if err := h.SetMathMode(blasMath); err != nil {
		return fail(err)
	}
	size := d.workspaceBytes()
	var err error
	switch {
	case size == 0:
	case d.pool != 0:
		bs.ws, err = d.ctx.MemAllocAsync(size, s.h)
	default:
		bs.ws, err = d.ctx.MemAlloc(size)
	}
	if err != nil {
		return fail(err)
	}
	bs.wsSize = size
	if err := h.SetWorkspace(uintptr(bs.ws), uint64(size)); err != nil {
		return fail(err)
	}
	if v, loaded := blasStreams.LoadOrStore(s, bs); loaded {
		fail(nil) // another goroutine made one first
		return v.(*blasStream), nil
	}
	return bs, nil
}

// captureHandle returns the handle of the products captured on s, making it at first
// use: a handle of the device's pool set to s, with a workspace of its own allocated
// outside the graph (cuMemAlloc, which relaxed capture allows; a pool allocation on s
// would become a node of the graph), so that the graph's products never share the
// stream's workspace with work on the stream or another launch. The graph releases them
// (Graph.Destroy, once its launches are done): the workspace freed, the handle back to
// the pool.
func (d *Device) captureHandle(s *Stream, c *capture) (*blasStream, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if bs, ok := c.blas.(*blasStream); ok {
		return bs, nil
	}
	b := d.blas()
	b.mu.Lock()
	var h cublas.Handle
	if n := len(b.free); n > 0 {
		h, b.free = b.free[n-1], b.free[:n-1]
	}
	b.mu.Unlock()
	if h.IsZero() {
		var err error
		if h, err = cublas.Create(d.ctx); err != nil {
			return nil, err
		}
	}
	bs := &blasStream{h: h}
	giveBack := func() {
		if bs.ws != 0 {
			d.ctx.MemFree(bs.ws)
		}
		b.mu.Lock()
		b.free = append(b.free, h)
		b.mu.Unlock()
	}
	var err error
	if err = h.SetStream(uintptr(s.h)); err == nil {
		if err = h.SetPointerMode(cublas.PointerHost); err == nil {
			err = h.SetMathMode(blasMath)
		}
	}
	if err == nil {
		size := d.workspaceBytes()
		if bs.ws, err = d.ctx.MemAlloc(size); err == nil {
			err = h.SetWorkspace(uintptr(bs.ws), uint64(size))
		}
	}
	if err != nil {
		giveBack()
		return nil, err
	}
	c.blas = bs
	c.release = append(c.release, giveBack)
	return bs, nil
}

// releaseBlas gives back s's handle and frees its workspace in stream order; called by
// Stream.Destroy before the stream goes.
func (s *Stream) releaseBlas() {
	v, ok := blasStreams.LoadAndDelete(s)
	if !ok {
		return
	}
	bs := v.(*blasStream)
	bs.mu.Lock()
	defer bs.mu.Unlock()
	d := s.d
	bs.release(s)
	b := d.blas()
	b.mu.Lock()
	b.free = append(b.free, bs.h)
	b.mu.Unlock()
}

// release destroys bs's graphs and frees its workspace in s's order (bs.mu is held);
// the handle is the caller's to pool or drop.
func (bs *blasStream) release(s *Stream) {
	d := s.d
	bs.replay.release(d.ctx)
	switch {
	case bs.ws == 0:
	case d.pool != 0:
		d.ctx.MemFreeAsync(bs.ws, s.h)
	default:
		d.syncDevice()
		d.ctx.MemFree(bs.ws)
	}
	bs.ws, bs.wsSize = 0, 0
}

// gemmCall is a backend.Gemm in cuBLAS's column-major terms.
type gemmCall struct {
	ta, tb      cublas.Operation
	m, n, k     int
	alpha, beta cublas.Scalar
	a, b, c     cublas.Matrix
	batch       int
	compute     cublas.ComputeType
}

// colMajor maps a row-major product onto cuBLAS: C^T = op(B)^T op(A)^T, so cuBLAS's A is
// our B (transposed as our B is) and its B our A. ptr gives each operand's address.
func colMajor(g *backend.Gemm, ptr func(o *backend.GemmOperand) uintptr) (gemmCall, error) {
	var dt cublas.DataType
	compute := cublas.Compute32F
	scalar := func(v float64) cublas.Scalar { return cublas.Scalar(math.Float32bits(float32(v))) }
	switch g.Type {
	case dtype.Float16:
		dt = cublas.R16F
	case dtype.BFloat16:
		dt = cublas.R16BF
	case dtype.Float32:
		dt = cublas.R32F
		if g.TF32 {
			compute = cublas.Compute32FFastTF32
		}
	case dtype.Float64:
		dt, compute = cublas.R64F, cublas.Compute64F
		scalar = func(v float64) cublas.Scalar { return cublas.Scalar(math.Float64bits(v)) }
	default:
		return gemmCall{}, fmt.Errorf("cuda: cuBLAS product of %v: %w", g.Type, backend.ErrNotSupported)
	}
	op := func(t bool) cublas.Operation {
		if t {
			return cublas.OpT
		}
		return cublas.OpN
	}
	mat := func(o *backend.GemmOperand) cublas.Matrix {
		return cublas.Matrix{Ptr: ptr(o), Type: dt, LD: o.LD, Stride: o.Stride}
	}
	return gemmCall{
		ta: op(g.TransB), tb: op(g.TransA),
		m: g.N, n: g.M, k: g.K,
		alpha: scalar(g.Alpha), beta: scalar(g.Beta),
		a: mat(&g.B), b: mat(&g.A), c: mat(&g.C),
		batch: g.Batch, compute: compute,
	}, nil
}

// Gemm enqueues g on s with cuBLAS (see backend.Gemmer).
func (d *Device) Gemm(bs backend.Stream, g *backend.Gemm) error {
	if err := g.Check(); err != nil {
		return fmt.Errorf("cuda: %w", err)
	}
	s, ok := bs.(*Stream)
	if !ok || s == nil || s.d != d {
		return fmt.Errorf("cuda: gemm on a stream of type %T that is not this device's: %w", bs, backend.ErrInvalidValue)
	}
	if _, err := d.GemmLibrary(); err != nil {
		return err
	}
	var bad error
	call, err := colMajor(g, func(o *backend.GemmOperand) uintptr {
		m, ok := o.Mem.(*Mem)
		if !ok || m.d != d {
			bad = fmt.Errorf("cuda: gemm operand of type %T is not memory of this device: %w", o.Mem, backend.ErrInvalidValue)
			return 0
		}
		return uintptr(m.ptr) + uintptr(o.Off)
	})
	if err != nil {
		return err
	}
	if bad != nil {
		return bad
	}
	capt := s.cap.Load()
	st, err := d.streamHandle(s, capt)
	if err != nil {
		return blasError(err)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	eng := blasEnv().engineFor(g.Type, g.TF32)
	issue := func(hs cu.Stream) error { return d.gemmIssue(s, st, hs, &call, eng, g.TF32) }
	// Replay on our own streams only: another library may be capturing an adopted
	// stream (or the stream an observed copy shares), where a graph launch would fail
	// and end its capture.
	if capt == nil && !s.foreign && replayable(&call, eng, st.wsSize, blasEnv().replay) {
		err := d.gemmReplayed(s, st, replayKey{call: call, eng: eng, tf32: g.TF32}, issue)
		if st.broken {
			d.dropBlas(s, st)
		}
		return blasError(err)
	}
	return blasError(issue(s.h))
}

// gemmIssue enqueues call through engine eng on hs, the stream st's handle is set to
// (s's, or the stream a replay captures on).
func (d *Device) gemmIssue(s *Stream, st *blasStream, hs cu.Stream, call *gemmCall, eng gemmEngine, tf32 bool) error {
	switch eng {
	case engineClassic:
		if call.batch == 1 && (call.a.Type == cublas.R32F || call.a.Type == cublas.R64F) {
			if tf32 {
				// cublasSgemm takes TF32 from the handle's math mode.
				if err := st.h.SetMathMode(cublas.TF32TensorOpMath | cublas.DisallowReducedPrecisionReduction); err != nil {
					return err
				}
				defer st.h.SetMathMode(blasMath)
			}
			err := st.h.Gemm(call.ta, call.tb, call.m, call.n, call.k, call.alpha, call.a, call.b, call.beta, call.c)
			if !errors.Is(err, cublas.ErrUnavailable) {
				return err
			}
		}
	case engineLt, engineTune:
		err := d.gemmLt(s, st, hs, call, eng == engineTune, uint64(st.wsSize))
		if !errors.Is(err, errFallBack) {
			return err
		}
	}
	if call.batch == 1 {
		return st.h.GemmEx(call.ta, call.tb, call.m, call.n, call.k, call.alpha, call.a, call.b, call.beta, call.c,
			call.compute, cublas.GemmDefault)
	}
	return st.h.GemmStridedBatchedEx(call.ta, call.tb, call.m, call.n, call.k, call.alpha, call.a, call.b, call.beta,
		call.c, call.batch, call.compute, cublas.GemmDefault)
}

// blasError adds the backend sentinel that matches a cuBLAS failure.
func blasError(err error) error {
	var sentinel error
	switch {
	case err == nil:
		return nil
	case errors.Is(err, cublas.ErrUnavailable), errors.Is(err, cublas.ErrNotSupported),
		errors.Is(err, cublas.ErrArchMismatch), errors.Is(err, cublas.ErrNotInitialized):
		sentinel = backend.ErrNotSupported
	case errors.Is(err, cublas.ErrInvalidValue):
		sentinel = backend.ErrInvalidValue
	case errors.Is(err, cublas.ErrAllocFailed):
		sentinel = backend.ErrOutOfMemory
	case errors.Is(err, cublas.ErrExecutionFailed):
		sentinel = backend.ErrLaunchFailed
	default:
		return fmt.Errorf("cuda: %w", err)
	}
	return fmt.Errorf("cuda: %w: %w", err, sentinel)
}
