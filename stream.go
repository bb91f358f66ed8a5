package gpu

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/go-gpu/gpu/backend"
)

// Stream is an ordered queue of device work (CUDA: a stream created non-blocking).
// Work on one stream runs in order; work on different streams may overlap unless
// ordered by events or, for buffers, by the automatic tracking. A Stream is safe for
// concurrent use.
//
// A nil *Stream is never valid: every operation given one, as receiver or argument,
// returns an error wrapping ErrInvalidValue (Device, BackendStream and String, which
// return no error, return nil, nil and "<nil stream>").
type Stream struct {
	dev *Device
	be  backend.Stream
	id  uint64

	// seq counts the tracked operations enqueued; it orders buffer uses for lazily
	// recorded events.
	seq atomic.Uint64
	// pend counts every operation enqueued; idleAt is its value when the stream was last
	// seen idle. Equal (and no handle handed out), the stream has nothing pending.
	pend, idleAt atomic.Uint64
	external     atomic.Bool
	// observed is the stream BackendStream hands out while the race checker is on
	// (race.go), made at first use.
	observed atomic.Pointer[backend.Stream]

	*streamCore
}

// streamCore is the part of a stream its cleanup needs.
type streamCore struct {
	dev       *Device
	be        backend.Stream
	mu        sync.Mutex
	closed    bool   // no new work is accepted
	holds     int    // operations between hold and unhold (using be)
	finishing bool   // Close's backend part has started (closed and no holds)
	destroyed bool   // the backend stream is gone; last covers all its work
	last      *pev   // the latest internal event recorded on the stream
	lastSeq   uint64 // the seq it covers
	// done is the stream's highest operation count (Stream.seq) known complete: an
	// event recorded by eventAfter seen complete, or the stream seen idle, advances it
	// (settle). Uses up to it need no waiting: the tracking drops them (track.go).
	done atomic.Uint64
	// blocks are the small device blocks freed on the stream and kept for reuse on it,
	// by class (blockCache; guarded by mu).
	blocks [cacheClasses][]backend.Mem
	// ring stages the stream's asynchronous copies of pageable memory (ring.go), made at
	// first use, retired by Close or destroy.
	ring atomic.Pointer[hostRing]
	// scratchPool is the stream's clean scratch (scratch.go), freed on the stream by
	// Close or destroy.
	scratchPool scratchPool
	// cap is the capture in progress on the stream (graph.go), or nil; set and cleared
	// under mu, around the backend's BeginCapture and EndCapture, so that the runtime's
	// own work enqueued under mu (frees, event records) sees which side it is on.
	cap atomic.Pointer[capture]
	// switching is set while a capture begins or ends (exclusive): new holds wait on
	// switchCond until it is clear, so that no operation straddles the switch.
	// switched: exclusive holds the stream (no other hold left); until then the
	// stream's own host function may still take holds (hold).
	switching  bool
	switched   bool
	switchCond *sync.Cond
	// hostFns are the goroutines running the stream's host functions now (hostfunc.go),
	// one entry per function: a function run in place inside another, or two run in
	// place at once by two goroutines, are both there. fault is the error of a host
	// function that failed, which faults the stream.
	hostFns goroutineSet
	fault   atomic.Pointer[error]
	// scopes are the goroutines inside Access scopes open on the stream (trackedScope):
	// BeginCapture and EndCapture, which wait for the stream's holds, refuse a caller
	// inside one of them.
	scopes goroutineSet
}

// goroutineSet is a set of goroutines by scope id (enterScope), a goroutine once per
// entry; its own mutex ranks after the stream's mu.
type goroutineSet struct {
	n   atomic.Int32 // the entries, read without mu on the fast paths
	mu  sync.Mutex
	ids []int64
}

// add and remove enter and take out one entry of the goroutine of scope id g.
func (gs *goroutineSet) add(g int64) {
	gs.mu.Lock()
	gs.ids = append(gs.ids, g)
	gs.n.Add(1)
	gs.mu.Unlock()
}

func (gs *goroutineSet) remove(g int64) {
	gs.mu.Lock()
	if i := slices.Index(gs.ids, g); i >= 0 {
		gs.ids = slices.Delete(gs.ids, i, i+1)
		gs.n.Add(-1)
	}
	gs.mu.Unlock()
}

// hasMe reports whether the calling goroutine has an entry (checked locked to its
// thread, as heldByMe).
func (gs *goroutineSet) hasMe() bool {
	if gs.n.Load() == 0 {
		return false
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	gs.mu.Lock()
	defer gs.mu.Unlock()
	return slices.Contains(gs.ids, scopeID())
}

// inOwnScope returns an error wrapping ErrInScope if the calling goroutine is inside an
// Access scope on the stream: what would wait for the stream's holds (what) would wait
// for that scope.
func (c *streamCore) inOwnScope(what string) error {
	if c.scopes.hasMe() {
		return fmt.Errorf("gpu: %s inside an Access scope on the same stream, which it would wait for: %w", what, ErrInScope)
	}
	return nil
}

// aheadOfSwitch reports whether the calling goroutine's hold may go ahead of a switch
// still waiting for the stream's holds: it runs one of the stream's host functions, or
// it is inside an Access scope on the stream.
func (c *streamCore) aheadOfSwitch() bool { return c.scopes.hasMe() || c.hostFns.hasMe() }

// destroy is the backstop for a stream dropped without Close: its cleanup, or the
// first device wait that finds it collected (liveStreams), whichever comes first.
func (c *streamCore) destroy() {
	c.abortCapture()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.destroyed {
		c.closed, c.destroyed = true, true
		for _, m := range c.dev.cache.take(c) {
			c.be.FreeAsync(m)
		}
		c.scratchPool.freeAll(c.be)
		// Its work still runs: device waits wait for it, as for a closed stream's.
		if ev, err := c.dev.getEvent(); err == nil {
			if c.be.Record(ev.be) == nil {
				if r := c.ring.Load(); r != nil {
					r.close(ev.retain())
				}
				c.dev.addTail(ev)
			} else {
				ev.release()
			}
		}
		c.be.Destroy()
	}
	c.last.release()
	c.last = nil
}

// NewStream creates a stream.
func (d *Device) NewStream() (*Stream, error) {
	if d.isNil() {
		return nil, errNilDevice
	}
	bs, err := d.be.NewStream()
	if err != nil {
		return nil, err
	}
	return d.wrapStream(bs), nil
}

// errNilStream is the error of a nil *Stream given to an operation.
var errNilStream = fmt.Errorf("gpu: nil stream: %w", ErrInvalidValue)

// errZeroStream is the error of a Stream that no Device made (a zero Stream{}).
var errZeroStream = fmt.Errorf("gpu: zero stream (not made by Device.NewStream): %w", ErrInvalidValue)

// nilStream returns an error wrapping ErrInvalidValue if s is nil or a zero Stream
// (nonNil's counterpart for streams), for operations that use s before reaching s.hold.
func nilStream(s *Stream) error {
	switch {
	case s == nil:
		return errNilStream
	case s.streamCore == nil:
		return errZeroStream
	}
	return nil
}

// Device returns the stream's device (nil for a nil or zero stream).
func (s *Stream) Device() *Device {
	if s == nil || s.streamCore == nil {
		return nil
	}
	return s.dev
}

// BackendStream returns the backend's stream, for packages that extend the runtime
// (nil for a nil or zero stream). Work enqueued through it is invisible to the runtime's
// bookkeeping, so from then on waits on this stream and on the device always ask the
// driver.
func (s *Stream) BackendStream() backend.Stream {
	if s == nil || s.streamCore == nil {
		return nil
	}
	s.external.Store(true)
	s.dev.setExternal()
	if r := s.dev.race.Load(); r != nil {
		return s.observedStream(r)
	}
	return s.be
}

// enqueued counts an operation just enqueued on s.
func (s *Stream) enqueued() {
	s.pend.Add(1)
	s.dev.pend.Add(1)
}

// idle reports whether nothing was enqueued on s since it was last seen idle.
func (s *Stream) idle() bool { return s.pend.Load() == s.idleAt.Load() && !s.external.Load() }

// String returns "stream 3 on cuda:0" ("<nil stream>" for a nil stream, "<zero stream>"
// for a zero Stream).
func (s *Stream) String() string {
	if s == nil {
		return "<nil stream>"
	}
	if s.streamCore == nil {
		return "<zero stream>"
	}
	return fmt.Sprintf("stream %d on %s:%d", s.id, s.dev.info.Backend, s.dev.info.Ordinal)
}

// hold returns the error of an operation on s (s is nil or closed), or else keeps s's
// backend stream alive until the matching unhold: every operation that uses the
// backend stream (enqueues work on it, queries or synchronizes it) holds s, directly or
// through trackBegin, so that a Close from another goroutine meanwhile destroys the
// backend stream only after the operation (and records its last event after the
// operation's work). Those that use s before (its device, to pick a kernel) check
// nilStream(s) first.
func (s *Stream) hold() error {
	if err := nilStream(s); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// While a switch waits for the holds to end, one of them may be a wait for the
	// stream's running host function (Synchronize), or an Access scope's own hold: the
	// function's and the scope's operations on the stream go ahead of the switch rather
	// than wait for it (a deadlock).
	for s.switching && (s.switched || !s.aheadOfSwitch()) {
		s.switchCond.Wait()
	}
	if s.closed {
		return fmt.Errorf("gpu: %v: %w", s, ErrClosed)
	}
	if p := s.fault.Load(); p != nil {
		return *p
	}
	s.holds++
	return nil
}

// exclusive waits until no operation holds s and keeps new ones waiting until
// endExclusive, holding s itself meanwhile (BeginCapture, EndCapture).
func (s *Stream) exclusive() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.switchCond == nil {
		s.switchCond = sync.NewCond(&s.mu)
	}
	for s.switching {
		s.switchCond.Wait()
	}
	if s.closed {
		return fmt.Errorf("gpu: %v: %w", s, ErrClosed)
	}
	s.switching = true
	for s.holds > 0 {
		s.switchCond.Wait()
	}
	s.switched = true
	s.holds++
	return nil
}

// endExclusive ends what exclusive began.
func (s *Stream) endExclusive() {
	s.mu.Lock()
	s.switching, s.switched = false, false
	s.switchCond.Broadcast()
	s.mu.Unlock()
	s.unhold()
}

// holdBackend is hold for the runtime's own work on s (freeing its cached blocks): it
// succeeds on a closed stream too, until the Close's backend part has started, and
// reports whether it did; it fails on a stream that captures a graph (the work would be
// captured).
func (s *Stream) holdBackend() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finishing || s.cap.Load() != nil {
		return false
	}
	s.holds++
	return true
}

// unhold ends a hold; the last one of a closed stream finishes its Close.
func (s *Stream) unhold() {
	s.mu.Lock()
	s.holds--
	if s.switching && s.holds == 0 {
		s.switchCond.Broadcast() // exclusive waits for it
	}
	fin := s.closed && s.holds == 0 && !s.finishing && !s.switching
	if fin {
		s.finishing = true
	}
	s.mu.Unlock()
	if fin {
		s.finishClose() // its error has no caller left to take it: the stream is gone either way
	}
}

// Close destroys the stream. Work already enqueued still completes, and buffers it used
// stay ordered after it; later use of the stream returns an error wrapping ErrClosed.
// Operations running on the stream in other goroutines meanwhile complete first: the
// backend stream is destroyed after the last of them. Closing the default stream, or a
// nil one, is an error. Close is idempotent.
func (s *Stream) Close() error {
	if err := nilStream(s); err != nil {
		return err
	}
	if s == s.dev.def {
		return fmt.Errorf("gpu: closing the default stream: %w", ErrInvalidValue)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true // no new work from here on
	fin := s.holds == 0 && !s.switching
	if fin {
		s.finishing = true
	}
	s.mu.Unlock()
	if !fin {
		return nil // the last operation still holding s finishes the Close
	}
	return s.finishClose()
}

// finishClose is Close's backend part, once s is closed and nothing holds it: it flushes
// s's cached blocks, records a last event after all its work, and destroys it.
func (s *Stream) finishClose() error {
	s.abortCapture() // a capture left open ends with the stream, its graph dropped
	s.scratchPool.freeAll(s.be)
	s.dev.cache.flush(s.dev, s, true)
	s.mu.Lock()
	defer s.mu.Unlock()
	// Record a last event so that buffer uses on this stream, and its work for device
	// waits, can still be waited for.
	busy := !s.idle()
	if cur := s.seq.Load(); s.last == nil || s.lastSeq < cur || busy {
		ev, err := s.dev.getEvent()
		if err != nil {
			return err
		}
		if err := s.be.Record(ev.be); err != nil {
			ev.release()
			return err
		}
		ev.done, ev.cover, ev.sid = &s.done, cur, s.id
		s.last.release()
		s.last, s.lastSeq = ev, cur
	}
	s.destroyed = true
	if r := s.ring.Load(); r != nil {
		r.close(s.last.retain())
	}
	// The tail first: a device wait lists the live streams, then the tails, so a
	// stream gone from the one must already be in the other.
	if busy {
		s.dev.addTail(s.last.retain())
	}
	s.dev.stMu.Lock()
	delete(s.dev.streams, s.id)
	s.dev.stMu.Unlock()
	return s.be.Destroy()
}

// eventAfter returns an event (with a reference for the caller) that completes after
// every tracked operation up to seq on s: the latest recorded one if it covers seq,
// else a new one recorded now.
func (s *Stream) eventAfter(seq uint64) (*pev, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last != nil && (s.lastSeq >= seq || s.destroyed || s.cap.Load() != nil) {
		// (A capturing stream's last event, recorded as the capture began, covers all
		// its work that runs: what it enqueues meanwhile goes into the graph.)
		return s.last.retain(), nil
	}
	ev, err := s.dev.getEvent()
	if err != nil {
		return nil, err
	}
	cur := s.seq.Load()
	if err := s.be.Record(ev.be); err != nil {
		ev.release()
		return nil, err
	}
	s.enqueued()
	ev.done, ev.cover, ev.sid = &s.done, cur, s.id
	s.last.release()
	s.last, s.lastSeq = ev.retain(), cur
	return ev, nil
}

// recordNow records an event covering everything enqueued on s so far.
func (s *Stream) recordNow() (*pev, error) { return s.eventAfter(s.seq.Load() + 1<<62) }

// Query reports whether all work enqueued on the stream so far has completed. A fault
// in that work is returned as the error.
func (s *Stream) Query() (bool, error) {
	if err := s.hold(); err != nil {
		return false, err
	}
	defer s.unhold()
	if err := s.notCapturing("Query"); err != nil {
		return false, err
	}
	if s.idle() {
		return true, s.dev.Err()
	}
	p, c := s.pend.Load(), s.seq.Load()
	done, err := s.be.Query()
	if done && err == nil {
		advance(&s.idleAt, p)
		advance(&s.done, c)
	}
	return done, err
}

// Synchronize waits until all work enqueued on the stream so far has completed, without
// pinning an OS thread (unless the policy is WaitBlock). It returns ctx.Err() if ctx
// ends first (the work goes on), and the error of a fault in the work. It also returns,
// once, the errors of indices out of range found by raise-mode operations in that work
// (ErrIndexOutOfRange).
func (s *Stream) Synchronize(ctx context.Context, policy ...WaitPolicy) (err error) {
	if err := nilContext(ctx); err != nil {
		return err
	}
	if err := nilStream(s); err != nil {
		return err
	}
	// No defers, and an idle stream needs no hold of its backend stream (nothing is
	// waited for): the idle path is one look under the lock (gpubench's sync/stream).
	p := s.pend.Load()
	idle := false
	if s.idle() {
		if idle, err = s.openIdle(); err != nil {
			return err
		}
	}
	if idle {
		err = s.synchronize(ctx, policy, true)
	} else {
		if err := s.hold(); err != nil {
			return err
		}
		err = s.synchronize(ctx, policy, false)
	}
	if err == nil {
		err = s.dev.takeRaceReports() // the race checker's (race.go)
	}
	if err == nil && s.dev.checks.n.Load() != 0 {
		err = s.syncReportChecks(p) // failures kernels found on the device (launchcheck.go)
	}
	if !idle {
		s.unhold()
	}
	return err
}

// openIdle returns hold's error for s (closed, or faulted), else whether s is idle, all
// seen under s's lock (false while a capture begins or ends).
func (s *Stream) openIdle() (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false, fmt.Errorf("gpu: %v: %w", s, ErrClosed)
	}
	if p := s.fault.Load(); p != nil {
		return false, *p
	}
	return !s.switching && s.idle(), nil
}

// synchronize is Synchronize's wait, on a held stream, or on one openIdle found idle.
func (s *Stream) synchronize(ctx context.Context, policy []WaitPolicy, idle bool) error {
	if err := s.notCapturing("Synchronize"); err != nil {
		return err
	}
	if err := s.inOwnHostFunc("Synchronize"); err != nil {
		return err
	}
	pol, err := s.dev.pickPolicy(policy)
	if err != nil {
		return err
	}
	if idle || s.idle() {
		// As every wait (and Device.Synchronize's idle path): an ended ctx is its error.
		if err := ctx.Err(); err != nil {
			return err
		}
		return s.dev.Err()
	}
	p, c := s.pend.Load(), s.seq.Load()
	err = s.dev.wait(ctx, streamWait{s}, pol)
	if err == nil {
		advance(&s.idleAt, p)
		advance(&s.done, c)
		if f := s.fault.Load(); f != nil {
			return *f // a host function that failed meanwhile
		}
	}
	return err
}

type streamWait struct{ s *Stream }

func (w streamWait) query() (bool, error) { return w.s.be.Query() }
func (w streamWait) block() error         { return w.s.be.Synchronize() }
func (w streamWait) park() ([]*pev, error) {
	ev, err := w.s.recordNow()
	if err != nil {
		return nil, err
	}
	return []*pev{ev}, nil
}

// Record records e on the stream: e completes when the work enqueued so far has.
func (s *Stream) Record(e *Event) error {
	return s.eventOp("Record", e, backend.Stream.Record)
}

// WaitEvent makes work enqueued on the stream later wait until e completes (CUDA
// Driver API: cuStreamWaitEvent). e may belong to another device of the same backend.
func (s *Stream) WaitEvent(e *Event) error {
	return s.eventOp("WaitEvent", e, backend.Stream.WaitEvent)
}

// eventOp enqueues op (the backend stream's Record or WaitEvent) of e on s, both held
// so that a concurrent Close of either doesn't destroy it under the call.
func (s *Stream) eventOp(name string, e *Event, op func(backend.Stream, backend.Event) error) error {
	if err := s.hold(); err != nil {
		return err
	}
	defer s.unhold()
	if e.isNil() {
		return fmt.Errorf("gpu: %s(nil): %w", name, ErrInvalidValue)
	}
	if err := s.notCapturing(name); err != nil {
		return err
	}
	if !e.hold() {
		return fmt.Errorf("gpu: event: %w", ErrClosed)
	}
	defer e.unhold()
	if err := op(s.be, e.be); err != nil {
		return err
	}
	s.enqueued()
	if r := s.dev.race.Load(); r != nil {
		if name == "Record" {
			r.recordEvent(s, e.be)
		} else {
			r.waitEvent(s, e.be)
		}
	}
	return nil
}

// Synchronize waits until the work on every stream of the device (those created through
// this package, and the default stream) has completed, without pinning an OS thread
// (unless the policy is WaitBlock, which calls cuCtxSynchronize). Like
// Stream.Synchronize, it returns the index errors found in that work, once.
func (d *Device) Synchronize(ctx context.Context, policy ...WaitPolicy) error {
	if err := nilContext(ctx); err != nil {
		return err
	}
	if d.isNil() {
		return errNilDevice
	}
	// The idle path: a few atomic loads (gpubench's sync/context), no call. slowSync is
	// zero only with nothing enqueued where pend can't count it, no host function
	// running, the race checker off and no launch check pending: syncSlow's other steps
	// would do nothing.
	p := d.pend.Load()
	if p == d.idleAt.Load() && d.slowSync.Load() == 0 && policiesValid(d, policy) {
		if err := ctx.Err(); err != nil {
			return err
		}
		return d.Err()
	}
	return d.syncSlow(ctx, policy, p)
}

// syncSlow is Device.Synchronize past its idle path.
func (d *Device) syncSlow(ctx context.Context, policy []WaitPolicy, p uint64) error {
	if err := d.inHostFunc("Device.Synchronize"); err != nil {
		return err
	}
	err := d.synchronize(ctx, policy, p)
	if err == nil {
		err = d.takeRaceReports() // the race checker's (race.go)
	}
	if err == nil && d.checks.n.Load() != 0 {
		err = d.syncReportChecks(p) // failures kernels found on the device (launchcheck.go)
	}
	return err
}

// synchronize is Device.Synchronize's wait for the work enqueued up to p.
func (d *Device) synchronize(ctx context.Context, policy []WaitPolicy, p uint64) error {
	pol, err := d.pickPolicy(policy)
	if err != nil {
		return err
	}
	if p == d.idleAt.Load() && !d.external.Load() {
		if err := ctx.Err(); err != nil {
			return err
		}
		return d.Err()
	}
	w := &deviceWait{d: d}
	err = d.wait(ctx, w, pol)
	w.done()
	if err == nil {
		advance(&d.idleAt, p)
		// The streams' work listed is complete (settle).
		for i, s := range w.all {
			advance(&s.done, w.seqs[i])
		}
	}
	return err
}

// queryWork reports whether the work enqueued on s so far has completed, from the
// backend stream, or once that is destroyed (a Close in another goroutine), from its
// last event, which covers all its work.
func (s *Stream) queryWork() (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.destroyed || s.cap.Load() != nil {
		if s.last == nil {
			return true, nil
		}
		return s.last.be.Query()
	}
	return s.be.Query()
}

type deviceWait struct {
	d       *Device
	pending []*Stream
	all     []*Stream // the streams listed, with their operation counts then
	seqs    []uint64
	tails   []*pev // closed streams' work; one reference each, released by done
	started bool
}

// done releases what the wait holds.
func (w *deviceWait) done() {
	releaseAll(w.tails)
	w.tails = nil
}

// start lists the streams with work pending, once: the first query does it, or park
// when the wait parks at once without querying (too many active waits). The tails come
// after the live streams: a stream closed meanwhile adds its tail before it leaves them.
func (w *deviceWait) start() {
	if !w.started {
		w.started = true
		for _, s := range w.d.liveStreams() {
			if !s.idle() {
				w.pending = append(w.pending, s)
				w.all = append(w.all, s)
				w.seqs = append(w.seqs, s.seq.Load())
			}
		}
		w.tails = w.d.pendingTails()
	}
}

func (w *deviceWait) query() (bool, error) {
	w.start()
	rest := w.pending[:0]
	for _, s := range w.pending {
		done, err := s.queryWork()
		if err != nil {
			return false, err
		}
		if !done {
			rest = append(rest, s)
		}
	}
	w.pending = rest
	tails := w.tails[:0]
	for _, e := range w.tails {
		done, err := e.be.Query()
		if err != nil {
			return false, err
		}
		if done {
			e.release()
		} else {
			tails = append(tails, e)
		}
	}
	clear(w.tails[len(tails):])
	w.tails = tails
	return len(rest) == 0 && len(tails) == 0, nil
}

func (w *deviceWait) block() error {
	if w.d.captures.Load() == 0 {
		return w.d.be.Synchronize()
	}
	// A driver-wide synchronize would end the captures in progress (CUDA invalidates
	// them): wait for each stream's event instead.
	evs, err := w.park()
	if err != nil {
		return err
	}
	defer releaseAll(evs)
	return eventsWait{evs}.block()
}

func (w *deviceWait) park() ([]*pev, error) {
	w.start()
	evs := make([]*pev, 0, len(w.pending)+len(w.tails))
	for _, e := range w.tails {
		evs = append(evs, e.retain())
	}
	for _, s := range w.pending {
		ev, err := s.recordNow()
		if err != nil {
			for _, e := range evs {
				e.release()
			}
			return nil, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}
