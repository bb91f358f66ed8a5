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
// shapes, operands' addresses and leading dimensions, scalars, types and engine), and
// the second time a product comes, captures cuBLAS's call into a CUDA graph (on a
// stream of its own, in relaxed mode: cuStreamBeginCapture_v2, cublas calls,
// cuStreamEndCapture, cuGraphInstantiateWithFlags) and launches that graph on the
// stream (cuGraphLaunch); later calls of the product launch it again. The graph holds
// the same kernels with the same arguments, the stream's workspace included, so its
// results are bit for bit those of the call, and it is ordered on the stream as the
// call's kernels were. The first call of a product, products of 2^32 or more
// floating-point operations (whose kernels outlast the host's work), products captured
// by the caller (Stream.BeginCapture: they go into the caller's graph), the tune
// engine (whose first call measures its candidates) and handles without a workspace
// are called directly. GPU_CUBLAS_REPLAY=0 turns replay off.

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

// replayable reports whether a product may be replayed.
func replayable(call *gemmCall, eng gemmEngine, wsSize int64) bool {
	flops := 2 * float64(call.m) * float64(call.n) * float64(call.k) * float64(call.batch)
	return blasEnv().replay && eng != engineTune && wsSize > 0 && flops < replayMaxFlops
}

// gemmReplayed enqueues key's product on s: through its graph once it has one, else
// by issue (which enqueues the call on the stream the handle is set to, passed to it
// for the cublasLt engine), capturing the graph at the second call. st.mu is held.
func (d *Device) gemmReplayed(s *Stream, st *blasStream, key replayKey, issue func(cu.Stream) error) error {
	r := &st.replay
	e := r.entry(key, func(x cu.GraphExec) { d.ctx.GraphExecDestroy(x) })
	if e.exec == 0 {
		if e.failed || e.seen < 1 {
			e.seen++
			return issue(s.h)
		}
		exec, err, issued := d.captureGemm(st, s, issue)
		if !issued {
			// The capture itself failed: call directly from now on.
			e.failed = true
			return issue(s.h)
		}
		if err != nil {
			// The call failed under capture, as it would have directly.
			e.failed = true
			return err
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
// graph; issued reports whether the call was made (false: the capture could not start,
// and nothing was enqueued anywhere). The handle is set back to s, with its workspace,
// whatever happens.
func (d *Device) captureGemm(st *blasStream, s *Stream, issue func(cu.Stream) error) (exec cu.GraphExec, err error, issued bool) {
	r := &st.replay
	if r.capture == 0 {
		c, err := d.ctx.StreamCreate(cu.StreamNonBlocking)
		if err != nil {
			return 0, err, false
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
		if e := setStream(s.h); e != nil && err == nil {
			err = e
		}
	}()
	if err := setStream(r.capture); err != nil {
		return 0, err, false
	}
	if err := d.ctx.StreamBeginCapture(r.capture, cu.StreamCaptureModeRelaxed); err != nil {
		return 0, err, false
	}
	callErr := issue(r.capture)
	g, endErr := d.ctx.StreamEndCapture(r.capture)
	if g != 0 {
		defer d.ctx.GraphDestroy(g)
	}
	switch {
	case callErr != nil:
		return 0, callErr, true
	case endErr != nil:
		return 0, endErr, false
	}
	exec, err = d.ctx.GraphInstantiate(g, 0)
	if err != nil {
		return 0, err, false
	}
	return exec, nil, true
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
