package nccl

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cuda"
	"github.com/go-gpu/gpu/backend/cuda/cu"
	"github.com/go-gpu/gpu/nccl/internal/ncclapi"
	"github.com/go-gpu/gpu/nccl/rendezvous"
)

// The NCCL communicator. Every NCCL call is made on a locked OS thread with the
// communicator's device's primary context current (see package ncclapi: NCCL takes the
// current device from the thread, and keeps a group's state per thread).
//
// Communicators are non-blocking by default (ncclConfig_t.blocking = 0): creation goes
// on in the background and is polled with ncclCommGetAsyncError, so that a context can
// abort it; NCCL 2.28 then also runs each launch in a thread of its own and reports
// ncclInProgress until it is done, which a call polls for before it returns (the use of
// its buffers must be recorded after the kernel is on the stream).

// Timings of the failure handling.
var (
	heartbeatInterval = 250 * time.Millisecond // the rendezvous liveness check of FromEnv
	peerLostGrace     = 2 * time.Second        // in-flight collectives may finish after a peer left
	poisonTimeout     = 2 * time.Second        // wait for the trap kernel before aborting anyway
)

// cudaComm is one rank of an NCCL communicator.
type cudaComm struct {
	c        *Comm
	ctx      cu.Context // the device's primary context
	blocking bool
	noFault  bool
	siblings []*Comm // the other ranks of a NewGroup, aborted together

	// callMu serializes the calls that enqueue work: NCCL communicators are not safe
	// for concurrent calls.
	callMu sync.Mutex
	// mu guards h: calls hold it shared, abort, destroy hold it exclusively. abortReq
	// makes shared holders that poll (non-blocking calls in progress) let go.
	mu       sync.RWMutex
	h        ncclapi.Comm
	dead     bool // h was aborted or destroyed
	abortReq atomic.Bool

	// inflight holds, per stream, an event recorded after the communicator's latest
	// launch there; the watchdog runs while one is not complete.
	flMu     sync.Mutex
	inflight map[*gpu.Stream]*gpu.Event
	watching bool

	hb *heartbeat // FromEnv's rendezvous connection, or nil

	// trap and trapStream are made at creation, so that poison needs no module load or
	// stream creation while a kernel of the communicator is stuck (either can wait for
	// the device).
	trap       *gpu.Function
	trapStream *gpu.Stream
}

// prepareTrap loads the trap kernel and makes the stream poison launches it on.
func (cc *cudaComm) prepareTrap(d *gpu.Device) error {
	if cc.noFault {
		return nil
	}
	trap, err := d.Builtin("trap")
	if err != nil {
		return err
	}
	s, err := d.NewStream()
	if err != nil {
		return err
	}
	cc.trap, cc.trapStream = trap, s
	return nil
}

// onDevice runs f on a locked OS thread with ctx current.
func onDevice(ctx cu.Context, f func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := ctx.EnsureOnly(); err != nil {
		return err
	}
	return f()
}

func cudaDevice(d *gpu.Device) (*cuda.Device, error) {
	bd, ok := d.BackendDevice().(*cuda.Device)
	if !ok {
		return nil, fmt.Errorf("nccl: %v is not a device of package backend/cuda: %w", d, gpu.ErrInvalidValue)
	}
	return bd, nil
}

func (o options) config() ncclapi.Config {
	cfg := ncclapi.DefaultConfig()
	cfg.Blocking = 0
	if o.blocking {
		cfg.Blocking = 1
	}
	cfg.CommName = o.name
	return cfg
}

func inProgress(err error) bool { return errors.Is(err, ncclapi.ErrInProgress) }

// pollInit waits until none of hs is in progress, under ctx.
func pollInit(ctx context.Context, hs []ncclapi.Comm) error {
	delay := 50 * time.Microsecond
	for {
		busy := false
		for _, h := range hs {
			r, err := ncclapi.CommGetAsyncError(h)
			if err != nil {
				return err
			}
			switch r {
			case ncclapi.Success:
			case ncclapi.InProgress:
				busy = true
			default:
				return fmt.Errorf("%w: %s", r.Err(), ncclapi.LastError(h))
			}
		}
		if !busy {
			return nil
		}
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return context.Cause(ctx)
		}
		delay = min(2*delay, 10*time.Millisecond)
	}
}

// abortHandle aborts a communicator (NCCL API: ncclCommAbort) on a locked thread with
// ctx current, or at least tried: a faulted context must not keep it alive.
func abortHandle(ctx cu.Context, h ncclapi.Comm) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ctx.EnsureOnly()
	ncclapi.CommAbort(h)
}

// abortHandles aborts communicators whose creation failed.
func abortHandles(ctxs []cu.Context, hs []ncclapi.Comm) {
	for i, h := range hs {
		if h != 0 {
			abortHandle(ctxs[i], h)
		}
	}
}

// initHandles creates the communicators of ranks[i] on ctxs[i], in one NCCL group when
// there are several, and waits under ctx until they are ready.
func initHandles(ctx context.Context, ctxs []cu.Context, id UniqueID, ranks []int, world int, o options) ([]ncclapi.Comm, error) {
	cfg := o.config()
	create := func() ([]ncclapi.Comm, error) {
		hs := make([]ncclapi.Comm, len(ranks))
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		grouped := len(ranks) > 1
		if grouped {
			if err := ncclapi.GroupStart(); err != nil {
				return nil, err
			}
		}
		var first error
		for i, r := range ranks {
			if err := ctxs[i].EnsureOnly(); err != nil {
				first = err
				break
			}
			h, err := ncclapi.CommInitRankConfig(world, ncclapi.UniqueID(id), r, &cfg)
			hs[i] = h
			if err != nil && !inProgress(err) {
				first = err
				break
			}
		}
		if grouped {
			if err := ncclapi.GroupEnd(); err != nil && !inProgress(err) && first == nil {
				first = err
			}
		}
		if first != nil {
			for i, h := range hs {
				if h != 0 {
					ctxs[i].EnsureOnly()
					ncclapi.CommAbort(h)
				}
			}
			return nil, first
		}
		return hs, nil
	}
	if !o.blocking {
		hs, err := create()
		if err != nil {
			return nil, err
		}
		if err := pollInit(ctx, hs); err != nil {
			abortHandles(ctxs, hs)
			return nil, err
		}
		return hs, nil
	}
	// Blocking: create on a goroutine of its own; if ctx ends first, give up waiting
	// and destroy the communicators when (if) the creation ends.
	type result struct {
		hs  []ncclapi.Comm
		err error
	}
	ch := make(chan result, 1)
	go func() {
		hs, err := create()
		ch <- result{hs, err}
	}()
	select {
	case r := <-ch:
		return r.hs, r.err
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.err == nil {
				abortHandles(ctxs, r.hs)
			}
		}()
		return nil, context.Cause(ctx)
	}
}

// newCUDAGroup makes the ranks of devs in one process.
func newCUDAGroup(ctx context.Context, devs []*gpu.Device, o options) ([]*Comm, error) {
	if err := ncclapi.Load(); err != nil {
		return nil, fmt.Errorf("nccl: NewGroup: %w", err)
	}
	ctxs := make([]cu.Context, len(devs))
	ranks := make([]int, len(devs))
	for i, d := range devs {
		bd, err := cudaDevice(d)
		if err != nil {
			return nil, err
		}
		ctxs[i], ranks[i] = bd.Context(), i
	}
	nid, err := ncclapi.GetUniqueID()
	if err != nil {
		return nil, fmt.Errorf("nccl: NewGroup: %w", err)
	}
	hs, err := initHandles(ctx, ctxs, UniqueID(nid), ranks, len(devs), o)
	if err != nil {
		return nil, fmt.Errorf("nccl: NewGroup of %d devices: %w", len(devs), err)
	}
	comms := make([]*Comm, len(devs))
	for i, d := range devs {
		cc := &cudaComm{ctx: ctxs[i], h: hs[i], blocking: o.blocking, noFault: o.noFault, inflight: map[*gpu.Stream]*gpu.Event{}}
		if err := cc.prepareTrap(d); err != nil {
			return nil, fmt.Errorf("nccl: NewGroup: %w", err)
		}
		comms[i] = newComm(d, i, len(devs), cc)
		cc.c = comms[i]
	}
	for i, c := range comms {
		c.be.(*cudaComm).siblings = slices.Delete(slices.Clone(comms), i, i+1)
	}
	for _, c := range comms {
		c.watchContext(ctx)
	}
	return comms, nil
}

// newCUDAComm makes one rank of a communicator of world ranks. g, if not nil, is the
// rendezvous group of FromEnv, which the communicator keeps as a liveness check.
func newCUDAComm(ctx context.Context, dev *gpu.Device, id UniqueID, rank, world int, o options, g *rendezvous.Group) (*Comm, error) {
	var hb *heartbeat
	initCtx := ctx
	if g != nil {
		if world > 1 {
			ictx, cancel := context.WithCancelCause(ctx)
			defer cancel(nil)
			hb = startHeartbeat(g, func(err error) {
				cancel(fmt.Errorf("nccl: rank %d: the job's other ranks failed during the creation: %w", rank, err))
			})
			initCtx = ictx
		} else {
			g.Close()
		}
	}
	fail := func(err error) (*Comm, error) {
		if hb != nil {
			hb.stop()
		}
		return nil, fmt.Errorf("nccl: NewComm: rank %d of %d on %v: %w", rank, world, dev, err)
	}
	if err := ncclapi.Load(); err != nil {
		return fail(err)
	}
	bd, err := cudaDevice(dev)
	if err != nil {
		return fail(err)
	}
	hs, err := initHandles(initCtx, []cu.Context{bd.Context()}, id, []int{rank}, world, o)
	if err != nil {
		return fail(err)
	}
	cc := &cudaComm{ctx: bd.Context(), h: hs[0], blocking: o.blocking, noFault: o.noFault, inflight: map[*gpu.Stream]*gpu.Event{}}
	if err := cc.prepareTrap(dev); err != nil {
		return fail(err)
	}
	c := newComm(dev, rank, world, cc)
	cc.c = c
	if hb != nil {
		cc.hb = hb
		hb.setLost(cc.peerLost)
	}
	c.watchContext(ctx)
	return c, nil
}

// bufUse is one buffer of a launch: the Access scope it gets.
type bufUse struct {
	s    *gpu.Stream
	buf  *gpu.Buffer
	mode gpu.AccessMode
	mem  backend.Mem
	off  int64
}

// bufRef locates a call's buffer: its use and the byte offset from that use's start.
type bufRef struct {
	use   int // -1: no buffer
	delta int64
}

// planUses merges the buffers of ops into one use per allocation.
func planUses(ops []*op) ([]bufUse, [][2]bufRef, error) {
	var uses []bufUse
	refs := make([][2]bufRef, len(ops))
	for i, o := range ops {
		for j, b := range []struct {
			buf  *gpu.Buffer
			mode gpu.AccessMode
		}{{o.send, gpu.Read}, {o.recv, gpu.Write}} {
			refs[i][j] = bufRef{use: -1}
			if b.buf == nil {
				continue
			}
			mem, off := b.buf.BackendMem()
			k := slices.IndexFunc(uses, func(u bufUse) bool { return u.mem == mem })
			if k < 0 {
				uses = append(uses, bufUse{s: o.s, buf: b.buf, mode: b.mode, mem: mem, off: off})
				k = len(uses) - 1
			} else if uses[k].s != o.s {
				return nil, nil, fmt.Errorf("nccl: a group uses one buffer on %v and on %v (one stream per buffer): %w", uses[k].s, o.s, gpu.ErrInvalidValue)
			}
			uses[k].mode |= b.mode
			refs[i][j] = bufRef{use: k, delta: off - uses[k].off}
		}
	}
	// Nested scopes hold their buffers' locks: open them in one global order (by
	// address) so that two launches sharing buffers can't deadlock.
	order := make([]int, len(uses))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(uses[a].mem.Ptr(), uses[b].mem.Ptr()) })
	where := make([]int, len(uses))
	sorted := make([]bufUse, len(uses))
	for to, from := range order {
		sorted[to] = uses[from]
		where[from] = to
	}
	for i := range refs {
		for j := range refs[i] {
			if refs[i][j].use >= 0 {
				refs[i][j].use = where[refs[i][j].use]
			}
		}
	}
	return sorted, refs, nil
}

// withAccess opens the Access scopes of uses[i:], nested, and runs f inside the
// innermost one: every buffer is ordered before f's work and its use recorded after.
func withAccess(uses []bufUse, i int, ptrs []gpu.DevicePtr, f func() error) error {
	if i == len(uses) {
		return f()
	}
	u := uses[i]
	return u.buf.Access(u.s, u.mode, func(p gpu.DevicePtr) error {
		ptrs[i] = p
		return withAccess(uses, i+1, ptrs, f)
	})
}

// launch enqueues ops (of one or several communicators) as one NCCL group.
func (cc *cudaComm) launch(ops []*op) error {
	var ccs []*cudaComm
	for _, o := range ops {
		x, ok := o.c.be.(*cudaComm)
		if !ok {
			return fmt.Errorf("nccl: a CUDA group with a call on %v: %w", o.c, gpu.ErrInvalidValue)
		}
		if !slices.Contains(ccs, x) {
			ccs = append(ccs, x)
		}
	}
	slices.SortFunc(ccs, func(a, b *cudaComm) int { return int(a.c.id) - int(b.c.id) })
	uses, refs, err := planUses(ops)
	if err != nil {
		return err
	}
	for _, x := range ccs {
		x.callMu.Lock()
	}
	defer func() {
		for _, x := range ccs {
			x.callMu.Unlock()
		}
	}()
	for i, x := range ccs {
		x.mu.RLock()
		if x.dead || x.abortReq.Load() {
			for _, y := range ccs[:i+1] {
				y.mu.RUnlock()
			}
			if err := x.c.Err(); err != nil {
				return err
			}
			return fmt.Errorf("nccl: %v: %w", x.c, ErrClosed)
		}
	}
	ptrs := make([]gpu.DevicePtr, len(uses))
	err = withAccess(uses, 0, ptrs, func() error { return issue(ops, ccs, refs, ptrs) })
	for _, x := range ccs {
		x.mu.RUnlock()
	}
	seen := map[[2]any]bool{}
	for _, o := range ops {
		x := o.c.be.(*cudaComm)
		if k := [2]any{x, o.s}; !seen[k] {
			seen[k] = true
			x.markInflight(o.s)
		}
	}
	if err != nil {
		// Errors other than bad arguments leave the communicator in doubt: abort it.
		if !errors.Is(err, ncclapi.ErrInvalidArgument) && !errors.Is(err, ncclapi.ErrInvalidUsage) && !errors.Is(err, ErrAborted) {
			for _, x := range ccs {
				x.c.fail(err)
			}
		}
		return err
	}
	return nil
}

// issue makes the NCCL calls of ops on a locked thread, inside the buffers' scopes.
func issue(ops []*op, ccs []*cudaComm, refs [][2]bufRef, ptrs []gpu.DevicePtr) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ptr := func(r bufRef) uintptr {
		if r.use < 0 {
			return 0
		}
		return uintptr(int64(ptrs[r.use]) + r.delta)
	}
	grouped := len(ops) > 1
	if grouped {
		if err := ncclapi.GroupStart(); err != nil {
			return err
		}
	}
	var first error
	for i, o := range ops {
		x := o.c.be.(*cudaComm)
		if err := x.ctx.EnsureOnly(); err != nil {
			first = err
			break
		}
		bs, ok := o.s.BackendStream().(*cuda.Stream)
		if !ok {
			first = fmt.Errorf("nccl: %v is not a CUDA stream: %w", o.s, gpu.ErrInvalidValue)
			break
		}
		st := uintptr(bs.Handle())
		send, recv := ptr(refs[i][0]), ptr(refs[i][1])
		dt, _ := ncclType(o.t)
		n := uint64(o.count)
		var err error
		switch o.kind {
		case opAllReduce:
			err = ncclapi.AllReduce(send, recv, n, dt, o.red.redOp(), x.h, st)
		case opBroadcast:
			err = ncclapi.Broadcast(send, recv, n, dt, o.peer, x.h, st)
		case opReduce:
			err = ncclapi.Reduce(send, recv, n, dt, o.red.redOp(), o.peer, x.h, st)
		case opAllGather:
			err = ncclapi.AllGather(send, recv, n, dt, x.h, st)
		case opReduceScatter:
			err = ncclapi.ReduceScatter(send, recv, n, dt, o.red.redOp(), x.h, st)
		case opSend:
			err = ncclapi.Send(send, n, dt, o.peer, x.h, st)
		case opRecv:
			err = ncclapi.Recv(recv, n, dt, o.peer, x.h, st)
		}
		if err != nil && !inProgress(err) {
			first = fmt.Errorf("nccl: %v: %s: %w", o.c, o.describe(), err)
			break
		}
	}
	if grouped {
		if err := ncclapi.GroupEnd(); err != nil && !inProgress(err) && first == nil {
			first = fmt.Errorf("nccl: a group of %d calls: %w", len(ops), err)
		}
	}
	// A non-blocking communicator launches in the background: wait until the kernels
	// are on their streams (or it fails), so that the uses are recorded after them.
	if err := settle(ccs); err != nil && first == nil {
		first = err
	}
	return first
}

// settle polls the non-blocking communicators of ccs until no operation of theirs is
// in progress. The caller holds their mu shared; an abort request on any of them makes
// it give up.
func settle(ccs []*cudaComm) error {
	delay := 10 * time.Microsecond
	for i := 0; ; i++ {
		busy := false
		for _, x := range ccs {
			if x.blocking {
				continue
			}
			r, err := ncclapi.CommGetAsyncError(x.h)
			if err != nil {
				return err
			}
			switch r {
			case ncclapi.Success:
			case ncclapi.InProgress:
				busy = true
			default:
				return fmt.Errorf("nccl: %v: %w: %s", x.c, r.Err(), ncclapi.LastError(x.h))
			}
		}
		if !busy {
			return nil
		}
		for _, x := range ccs {
			if x.abortReq.Load() {
				if err := x.c.Err(); err != nil {
					return err
				}
				return fmt.Errorf("nccl: %v: %w", x.c, ErrAborted)
			}
		}
		if i < 64 {
			runtime.Gosched()
			continue
		}
		time.Sleep(delay)
		delay = min(2*delay, time.Millisecond)
	}
}

// markInflight records the communicator's latest launch on s and starts the watchdog.
func (cc *cudaComm) markInflight(s *gpu.Stream) {
	cc.flMu.Lock()
	defer cc.flMu.Unlock()
	ev := cc.inflight[s]
	if ev == nil {
		var err error
		if ev, err = cc.c.dev.NewEvent(gpu.DisableTiming); err != nil {
			return
		}
		cc.inflight[s] = ev
	}
	if err := s.Record(ev); err != nil {
		return
	}
	if !cc.watching {
		cc.watching = true
		go cc.watch()
	}
}

// inflightStreams returns the streams with a launch of the communicator not yet
// complete, dropping the others from the map. The caller holds flMu.
func (cc *cudaComm) inflightStreams() []*gpu.Stream {
	var out []*gpu.Stream
	for s, ev := range cc.inflight {
		done, err := ev.Query()
		if !done && err == nil {
			out = append(out, s)
			continue
		}
		ev.Close()
		delete(cc.inflight, s)
	}
	return out
}

func (cc *cudaComm) anyInflight() bool {
	cc.flMu.Lock()
	defer cc.flMu.Unlock()
	return len(cc.inflightStreams()) > 0
}

// watch is the watchdog: while launches are in flight it polls the communicator's
// asynchronous error (NCCL API: ncclCommGetAsyncError) every millisecond at first,
// backing off to every 50 ms, and aborts the communicator on an error.
func (cc *cudaComm) watch() {
	delay := time.Millisecond
	for {
		time.Sleep(delay)
		delay = min(2*delay, 50*time.Millisecond)
		cc.mu.RLock()
		if cc.dead {
			cc.mu.RUnlock()
			cc.flMu.Lock()
			cc.watching = false
			cc.flMu.Unlock()
			return
		}
		r, err := ncclapi.CommGetAsyncError(cc.h)
		bad := err == nil && r != ncclapi.Success && r != ncclapi.InProgress
		msg := ""
		if bad {
			msg = ncclapi.LastError(cc.h)
		}
		cc.mu.RUnlock()
		if bad {
			cc.flMu.Lock()
			cc.watching = false
			cc.flMu.Unlock()
			cc.c.fail(fmt.Errorf("nccl: %v: asynchronous error: %w: %s", cc.c, r.Err(), msg))
			return
		}
		cc.flMu.Lock()
		if len(cc.inflightStreams()) == 0 {
			cc.watching = false
			cc.flMu.Unlock()
			return
		}
		cc.flMu.Unlock()
	}
}

// abort aborts the communicator (NCCL API: ncclCommAbort). With launches in flight
// (and without KeepDeviceOnAbort) it first faults the device with the trap kernel, so
// that every wait on their work, parked ones included, returns an error.
func (cc *cudaComm) abort(cause error) {
	cc.abortReq.Store(true)
	cc.flMu.Lock()
	pending := len(cc.inflightStreams()) > 0
	cc.flMu.Unlock()
	if pending && !cc.noFault {
		cc.poison()
	}
	cc.mu.Lock()
	if !cc.dead {
		abortHandle(cc.ctx, cc.h)
		cc.dead = true
	}
	cc.mu.Unlock()
	if cc.hb != nil {
		go cc.hb.stop() // tells the other processes; not on this goroutine, which may be the heartbeat's
	}
	for _, s := range cc.siblings {
		s.fail(fmt.Errorf("nccl: %v of the same group failed: %w", cc.c, cause))
	}
}

// poison launches the trap kernel on a stream of its own (both made at creation) and
// waits (briefly) for the fault.
func (cc *cudaComm) poison() {
	trap, s := cc.trap, cc.trapStream
	if trap == nil || s == nil {
		return
	}
	if err := s.Launch(trap, gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 1}}); err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), poisonTimeout)
	defer cancel()
	s.Synchronize(ctx)
}

// close finalizes and destroys the communicator (NCCL API: ncclCommFinalize,
// ncclCommDestroy).
func (cc *cudaComm) close() error {
	if cc.hb != nil {
		cc.hb.stop()
	}
	if cc.trapStream != nil {
		defer cc.trapStream.Close()
	}
	cc.callMu.Lock()
	cc.mu.RLock()
	if cc.dead {
		cc.mu.RUnlock()
		cc.callMu.Unlock()
		return nil
	}
	err := onDevice(cc.ctx, func() error { return ncclapi.CommFinalize(cc.h) })
	if inProgress(err) {
		err = settle([]*cudaComm{cc})
	}
	cc.mu.RUnlock()
	cc.callMu.Unlock()
	cc.mu.Lock()
	if !cc.dead {
		if err != nil {
			abortHandle(cc.ctx, cc.h)
		} else if derr := onDevice(cc.ctx, func() error { return ncclapi.CommDestroy(cc.h) }); derr != nil && !inProgress(derr) {
			err = derr
		}
		cc.dead = true
	}
	cc.mu.Unlock()
	cc.flMu.Lock()
	for s, ev := range cc.inflight {
		ev.Close()
		delete(cc.inflight, s)
	}
	cc.flMu.Unlock()
	if err != nil && cc.c.Err() != nil {
		return nil // aborted meanwhile: Err tells why
	}
	if err != nil {
		return fmt.Errorf("nccl: closing %v: %w", cc.c, err)
	}
	return nil
}

// peerLost handles the loss of the rendezvous connection. Launches in flight may
// still complete (the peer may have closed after its last collective): they get a
// grace period; if they are still in flight after it, they wait for a rank that is
// gone, and the communicator is aborted. Otherwise later calls fail, but the
// communicator is left for Close to finalize: aborting it could disturb the peer's own
// orderly Close.
func (cc *cudaComm) peerLost(err error) {
	cause := fmt.Errorf("nccl: %v: lost the job's other ranks: %w", cc.c, err)
	deadline := time.Now().Add(peerLostGrace)
	for time.Now().Before(deadline) && cc.anyInflight() && !cc.hb.stopping() {
		time.Sleep(10 * time.Millisecond)
	}
	if cc.hb.stopping() {
		return
	}
	if cc.anyInflight() {
		cc.c.fail(cause)
		return
	}
	cc.c.setErr(cause)
}

// heartbeat keeps FromEnv's rendezvous group as a liveness check: every rank enters a
// barrier every heartbeatInterval; a rank that exits or leaves breaks the barrier of
// the others, which then run lost.
type heartbeat struct {
	g      *rendezvous.Group
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
	mu     sync.Mutex
	lost   func(error)
	err    error // the failure, once it happened
}

func startHeartbeat(g *rendezvous.Group, lost func(error)) *heartbeat {
	h := &heartbeat{g: g, done: make(chan struct{}), lost: lost}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	go h.run()
	return h
}

func (h *heartbeat) run() {
	defer close(h.done)
	for {
		err := h.g.Barrier(h.ctx)
		if err != nil {
			if h.ctx.Err() == nil {
				h.mu.Lock()
				h.err = err
				lost := h.lost
				h.mu.Unlock()
				lost(err)
			}
			return
		}
		t := time.NewTimer(heartbeatInterval)
		select {
		case <-t.C:
		case <-h.ctx.Done():
			t.Stop()
			return
		}
	}
}

// setLost replaces the failure handler; if the failure already happened, f runs too.
func (h *heartbeat) setLost(f func(error)) {
	h.mu.Lock()
	h.lost = f
	err := h.err
	h.mu.Unlock()
	if err != nil {
		go f(err)
	}
}

func (h *heartbeat) stopping() bool { return h.ctx.Err() != nil }

// stop ends the heartbeat and leaves the group, which the other ranks notice.
func (h *heartbeat) stop() {
	h.once.Do(func() {
		h.cancel()
		<-h.done
		h.g.Close()
	})
}
