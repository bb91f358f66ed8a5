package cuda

import (
	"github.com/go-gpu/gpu/backend/cuda/cu"
)

// Replaying small products.
//
// cuBLAS spends longer on the host choosing and launching a small product than its
// kernels take: on the H200 (2026-12-02, scripts/probe-smallgemm.cu) a 512x1000 @
// 1000x512 float32 cublasSgemm call took 15-17 us of the host's time and its two
// kernels (the product split 6 ways along K, then their sum) 20.8 us back to back, so
// that a call plus a synchronize took 33-37 us from C++ against 24.4-25.3 us for the
// same two kernels launched as a CUDA graph. So a stream's handle remembers the small
// products it was asked for, each by everything its kernels depend on (the call's
// shapes, operands' addresses, leading dimensions and batch strides, scalars, types
// and engine), and the second time a product comes, captures cuBLAS's call into a
// CUDA graph (on a stream of its own, in relaxed mode: cuStreamBeginCapture_v2, the
// cuBLAS calls, cuStreamEndCapture, cuGraphInstantiateWithFlags) and launches that
// graph on the stream (cuGraphLaunch); later calls of the product launch it again. The
// graph holds the same kernels with the same arguments, the stream's workspace
// included, so its results are bit for bit those of the call, and it is ordered on the
// stream as the call's kernels were. A context-wide synchronize (Device.Synchronize)
// waits for a capture in progress to end (it would fail and end it).
//
// Called directly instead: the first call of a product; products of 2^32 or more
// floating-point operations (whose kernels outlast the host's work); products on a
// stream captured by Stream.BeginCapture (they go into the caller's graph) and on
// streams adopted from other code or shared by an observed copy (Stream.foreign: the
// other code may be capturing them, where a graph launch would fail); the tune engine
// (whose first call measures its candidates); handles without a workspace; and a
// product whose capture failed. GPU_CUBLAS_REPLAY=0 turns replay off.

// replayMaxFlops bounds the products replayed: 2*m*n*k*batch below it.
const replayMaxFlops = 1 << 32

// replayMaxEntries is the most products a stream's handle remembers; beyond it, the one
// used longest ago is forgotten (its graph destroyed).
const replayMaxEntries = 16

// replayKey identifies a product: everything its kernels depend on.
type replayKey struct {
	call gemmCall
	eng  gemmEngine
	tf32 bool
}

// replayEntry is a product a stream's handle was asked for.
type replayEntry struct {
	seen   int          // direct calls so far
	exec   cu.GraphExec // its graph, once captured
	failed bool         // its capture failed: always called directly
	used   uint64       // the cache's clock at its last call
}

// gemmReplay is a stream handle's products (guarded by the blasStream's mutex).
type gemmReplay struct {
	entries  map[replayKey]*replayEntry
	clock    uint64
	capture  cu.Stream // the stream captures run on, made at the first
	captures uint64    // graphs captured
	launches uint64    // graph launches
}

// entry returns key's entry, making it (and forgetting the entry used longest ago
// where the cache is full: destroy is called with its graph, if it had one).
func (r *gemmReplay) entry(key replayKey, destroy func(cu.GraphExec)) *replayEntry {
	r.clock++
	if e, ok := r.entries[key]; ok {
		e.used = r.clock
		return e
	}
	if r.entries == nil {
		r.entries = map[replayKey]*replayEntry{}
	}
	if len(r.entries) >= replayMaxEntries {
		var oldKey replayKey
		var old *replayEntry
		for k, e := range r.entries {
			if old == nil || e.used < old.used {
				oldKey, old = k, e
			}
		}
		delete(r.entries, oldKey)
		if old.exec != 0 {
			destroy(old.exec)
		}
	}
	e := &replayEntry{used: r.clock}
	r.entries[key] = e
	return e
}

// replayable reports whether a product may be replayed (on: GPU_CUBLAS_REPLAY).
func replayable(call *gemmCall, eng gemmEngine, wsSize int64, on bool) bool {
	flops := 2 * float64(call.m) * float64(call.n) * float64(call.k) * float64(call.batch)
	return on && eng != engineTune && wsSize > 0 && flops < replayMaxFlops
}

// gemmReplayed enqueues key's product on s: through its graph once it has one, else
// by issue (which enqueues the call on the stream the handle is set to, passed to it
// for the cublasLt engine), capturing the graph at the second call. A product that
// can't be captured is called directly from then on. st.mu is held.
func (d *Device) gemmReplayed(s *Stream, st *blasStream, key replayKey, issue func(cu.Stream) error) error {
	r := &st.replay
	e := r.entry(key, func(x cu.GraphExec) { d.ctx.GraphExecDestroy(x) })
	if e.exec == 0 {
		if e.failed || e.seen < 1 {
			e.seen++
			return issue(s.h)
		}
		exec, err := d.captureGemm(st, s, issue)
		if err != nil {
			e.failed = true
			if st.broken {
				return err
			}
			return issue(s.h)
		}
		e.exec = exec
		r.captures++
	}
	if err := d.ctx.GraphLaunch(e.exec, s.h); err != nil {
		return err
	}
	r.launches++
	return nil
}

// captureGemm captures issue on the handle's capture stream and instantiates the
// graph; on an error nothing was enqueued on s. The handle is set back to s, with its
// workspace, whatever happens; if that fails, st.broken is set (the caller drops the
// handle).
func (d *Device) captureGemm(st *blasStream, s *Stream, issue func(cu.Stream) error) (exec cu.GraphExec, err error) {
	r := &st.replay
	if r.capture == 0 {
		c, err := d.ctx.StreamCreate(cu.StreamNonBlocking)
		if err != nil {
			return 0, err
		}
		r.capture = c
	}
	// cublasSetStream resets the workspace: set it again after each.
	setStream := func(h cu.Stream) error {
		if err := st.h.SetStream(uintptr(h)); err != nil {
			return err
		}
		return st.h.SetWorkspace(uintptr(st.ws), uint64(st.wsSize))
	}
	defer func() {
		if e := setStream(s.h); e != nil {
			st.broken = true
			if exec != 0 {
				d.ctx.GraphExecDestroy(exec)
			}
			exec, err = 0, e
		}
	}()
	if err := setStream(r.capture); err != nil {
		return 0, err
	}
	// No context-wide synchronize while the capture is open (syncDevice).
	d.replayCaptures.RLock()
	if err := d.ctx.StreamBeginCapture(r.capture, cu.StreamCaptureModeRelaxed); err != nil {
		d.replayCaptures.RUnlock()
		return 0, err
	}
	callErr := issue(r.capture)
	g, endErr := d.ctx.StreamEndCapture(r.capture)
	d.replayCaptures.RUnlock()
	if g != 0 {
		defer d.ctx.GraphDestroy(g)
	}
	switch {
	case callErr != nil:
		return 0, callErr
	case endErr != nil:
		return 0, endErr
	}
	return d.ctx.GraphInstantiate(g, 0)
}

// dropBlas takes s's handle out of use after st.broken was set: forgotten by the
// stream (its next product makes a new one), never back in the device's pool (its
// stream may be wrong), its graphs destroyed and its workspace freed in stream order.
// st.mu is held.
func (d *Device) dropBlas(s *Stream, st *blasStream) {
	blasStreams.CompareAndDelete(s, st)
	st.release(s)
}

// release destroys the graphs and the capture stream (the stream's handle is going
// back to the pool). A graph still running completes first.
func (r *gemmReplay) release(ctx cu.Context) {
	for _, e := range r.entries {
		if e.exec != 0 {
			ctx.GraphExecDestroy(e.exec)
		}
	}
	r.entries = nil
	if r.capture != 0 {
		ctx.StreamDestroy(r.capture)
		r.capture = 0
	}
}

// GemmReplays returns how many graphs of small repeated products the device's live
// streams have captured, and how many times they launched them, for tests and
// diagnostics of the replay of repeated products (see gemm_replay.go).
func (d *Device) GemmReplays() (captures, launches uint64) {
	blasStreams.Range(func(k, v any) bool {
		if s := k.(*Stream); s.d == d {
			bs := v.(*blasStream)
			bs.mu.Lock()
			captures += bs.replay.captures
			launches += bs.replay.launches
			bs.mu.Unlock()
		}
		return true
	})
	return captures, launches
}
