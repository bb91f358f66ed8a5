package gpu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-gpu/gpu/backend"
)

// Access tracking. Every allocation remembers its last write and the reads since, at
// most one per stream. An operation on stream S that reads an allocation first makes S
// wait for a write made on another stream; one that writes also waits for the reads made
// on other streams. The event marking a use is recorded after the operation is enqueued:
// eagerly, one event per operation for every allocation it touches, while an allocation
// is in use on several streams at once (a wait was needed, or reads on other streams are
// pending); otherwise lazily, the first time another stream needs it, by recording on
// the using stream at that moment (which orders after everything already queued there).
// An allocation used on one stream only records and waits for nothing. (cudarc's
// read/write events; Vortex's sync-on-drop lesson: the record must follow the dispatch,
// which holding the allocation's lock across the enqueue guarantees.)
//
// Uses settle, so that an allocation that moved to one stream returns to that free
// path: a use on another stream stops counting for S once it is known complete (its
// stream's done count, advanced whenever a wait or query sees an event or the stream
// complete, reaches it: the use is dropped), or once S has waited for it (S's later work
// is ordered after it by stream order: the use remembers S, access.by). A foreign read
// that S merely saw while reading (no wait is needed between reads) is remembered too,
// so it makes only S's first such use record eagerly. Neither kind of memory ever
// spares a wait that is needed: a write on S still waits for every read on other
// streams that S has not waited for, whatever S saw.

// access is one use of an allocation on a stream.
type access struct {
	s   *Stream
	seq uint64 // the stream's operation count at the use
	ev  *pev   // nil until recorded; the slot owns one reference
	// by holds the ids of streams that waited for this use (waitedBit set) or saw it
	// as a concurrent read; 0 is an empty entry. Full, a stream is not remembered (it
	// then waits or records again: never less safe).
	by [3]uint64
}

// waitedBit marks an access.by entry of a stream that waited for the use.
const waitedBit = 1 << 63

// complete reports whether the use is known complete (its stream's done count).
func (x *access) complete() bool { return x.seq <= x.s.done.Load() }

// waitedBy reports whether s waited for the use.
func (x *access) waitedBy(s *Stream) bool {
	id := s.id | waitedBit
	return x.by[0] == id || x.by[1] == id || x.by[2] == id
}

// seenBy reports whether s waited for the use or saw it as a concurrent read.
func (x *access) seenBy(s *Stream) bool {
	for _, b := range x.by {
		if b&^waitedBit == s.id {
			return true
		}
	}
	return false
}

// remember records that s waited for (waited) or saw the use.
func (x *access) remember(s *Stream, waited bool) {
	id := s.id
	if waited {
		id |= waitedBit
	}
	for i, b := range x.by {
		if b == 0 || b&^waitedBit == s.id {
			if b != id|waitedBit || waited { // never downgrade a waited entry
				x.by[i] = id
			}
			return
		}
	}
}

// event returns an event that completes after the use, recording one if needed.
func (x *access) event() (*pev, error) {
	if x.ev == nil {
		ev, err := x.s.eventAfter(x.seq)
		if err != nil {
			return nil, err
		}
		x.ev = ev
	}
	return x.ev, nil
}

func (x *access) clear() {
	x.ev.release()
	*x = access{}
}

var nextAllocID atomic.Uint64

// allocation is the state views of one allocation share.
type allocation struct {
	id   uint64
	dev  *Device
	mem  backend.Mem
	kind MemKind

	mu        sync.Mutex
	scope     atomic.Int64 // the holder's enterScope id inside Access or HostAccess, or 0
	freed     bool
	gone      atomic.Bool // set with freed, for checks without the lock (nonNil)
	untracked bool
	word      bool // one of a wordPool's words: its block owns the memory (never freed)
	// pins counts the captures and graphs that use the allocation (graph.go): while it
	// is above 0 a Free only marks it freed (deferred) and its memory stays, for the
	// graph's launches, until the last graph using it is closed. capWrites counts the
	// open captures that write it: the host can't read it meanwhile (ErrCapturing).
	pins      int32
	capWrites int32
	deferred  bool
	w         access
	r         []access
	version   uint64
	// lastW is the last tracked write's stream (its id) and operation, which settling
	// never drops (unlike w): a host read reports the index errors of the launches up to
	// it on that stream (launchcheck.go).
	lastW struct{ sid, seq uint64 }
}

// use is an operation's use of an allocation: of bytes [off, off+n), or of all of it
// when n is 0 (the range serves only the race checker, race.go).
type use struct {
	a      *allocation
	mode   AccessMode
	off, n int64
}

// goid returns the calling goroutine's id, parsed from its stack trace (microseconds:
// scopes use a thread id on Linux, see enterScope).
func goid() int64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		n, _ := strconv.ParseInt(string(b[:i]), 10, 64)
		return n
	}
	return -1
}

// tryLockAll locks the allocations (sorted, distinct) if none is busy and returns -1;
// else it releases those it took and returns the index of the busy one. It fails with
// ErrInScope if the caller holds that one in an access scope.
func tryLockAll(as []*allocation) (int, error) {
	for i, a := range as {
		if a.mu.TryLock() {
			continue
		}
		for _, b := range as[:i] {
			b.mu.Unlock()
		}
		if a.scope.Load() != 0 && heldByMe(&a.scope) {
			return i, fmt.Errorf("%w (inside the scope, use the memory it gives: the raw pointer of Access, the host bytes of HostAccess)", ErrInScope)
		}
		return i, nil
	}
	return -1, nil
}

// lockAll locks the allocations (sorted, distinct) without holding some while waiting
// for others: if one is busy, it releases the rest, waits for that one, and retries. It
// fails with ErrInScope if the caller holds one in an access scope.
func lockAll(as []*allocation) error {
	for {
		busy, err := tryLockAll(as)
		if busy < 0 || err != nil {
			return err
		}
		as[busy].mu.Lock()
		as[busy].mu.Unlock()
	}
}

// lockAllCtx is lockAll for the host's waits, which take a context: an allocation
// stays locked for as long as another goroutine's HostAccess or Access scope runs its
// function, so while one is busy it polls (yielding, then sleeping up to a millisecond)
// and gives up with ctx's error when ctx ends.
func lockAllCtx(ctx context.Context, as []*allocation) error {
	for spins := 0; ; spins++ {
		busy, err := tryLockAll(as)
		if busy < 0 || err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if spins < 100 {
			runtime.Gosched()
		} else {
			time.Sleep(min(time.Duration(spins-99)*10*time.Microsecond, time.Millisecond))
		}
	}
}

// heldByMe reports whether the calling goroutine holds the scope recorded in scope.
// It checks locked to its OS thread: a scope's holder is locked to the thread that
// names it (enterScope), so while the caller is too, no other goroutine can hold a
// scope named by the caller's thread; unlocked, the caller could find its thread's id
// in a stale or new scope of another goroutine that ran on that thread.
func heldByMe(scope *atomic.Int64) bool {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return scope.Load() == scopeID()
}

func unlockAll(as []*allocation) {
	for _, a := range as {
		a.mu.Unlock()
	}
}

// mergeUses sorts uses by allocation and merges duplicates' modes.
func mergeUses(uses []use) []use {
	if len(uses) > 1 {
		slices.SortFunc(uses, func(x, y use) int {
			switch {
			case x.a.id < y.a.id:
				return -1
			case x.a.id > y.a.id:
				return 1
			}
			return 0
		})
		out := uses[:1]
		for _, u := range uses[1:] {
			if last := &out[len(out)-1]; last.a == u.a {
				last.mode |= u.mode
				if last.n == 0 || u.n == 0 {
					last.off, last.n = 0, 0
				} else {
					lo, hi := min(last.off, u.off), max(last.off+last.n, u.off+u.n)
					last.off, last.n = lo, hi-lo
				}
			} else {
				out = append(out, u)
			}
		}
		uses = out
	}
	return uses
}

// tracked runs enqueue, which enqueues one operation on s using the allocations in
// uses, with the waits before it and the tracking update after it.
func (s *Stream) tracked(uses []use, enqueue func() error) error {
	_, err := s.trackedScope(uses, enqueue, false)
	return err
}

// trackedScope is tracked, returning the operation's sequence number on s. With scope
// set, the allocations are marked as held by this goroutine while enqueue runs (Access),
// and if enqueue panics the scope still ends (its use recorded, as for an error, since
// the work it enqueued is unknown) before the panic goes on.
func (s *Stream) trackedScope(uses []use, enqueue func() error, scope bool) (uint64, error) {
	var small [4]*allocation
	t, err := s.trackBegin(uses, small[:0])
	if err != nil {
		return 0, err
	}
	if !scope {
		return s.trackEnd(t, enqueue(), false)
	}
	g := enterScope()
	for _, a := range t.as {
		a.scope.Store(g)
	}
	s.scopes.add(g)
	returned := false
	defer func() {
		if !returned {
			s.endScope(t, g, errScopePanic)
		}
	}()
	err = enqueue()
	returned = true
	return s.endScope(t, g, err)
}

// errScopePanic stands for the outcome of a scope whose function panicked.
var errScopePanic = errors.New("gpu: access scope ended by a panic")

// endScope ends an Access scope begun by trackedScope and records its use.
func (s *Stream) endScope(t tracking, g int64, err error) (uint64, error) {
	for _, a := range t.as {
		a.scope.Store(0)
	}
	s.scopes.remove(g)
	leaveScope()
	return s.trackEnd(t, err, true)
}

// tracking is one tracked operation in progress, between trackBegin and trackEnd. It
// lives on the caller's stack.
type tracking struct {
	uses      []use
	as        []*allocation // backed by the caller's array
	anyShared bool
	cap       *capture // the capture the operation is recorded in (s captures), or nil
}

// trackOpt modifies trackBeginOpt.
type trackOpt uint8

const (
	// trackReady: wait on the host, not in the device (trackBeginReady).
	trackReady trackOpt = 1 << iota
	// trackGraph: the operation is a graph's launch, which may use allocations freed
	// while the graph keeps them (deferred) and can't be captured; its uses are merged
	// already (Graph's uses, sorted once when the capture ended).
	trackGraph
)

// trackBegin holds s, locks the allocations of uses and makes s wait for the
// conflicting uses on other streams. as is scratch space for the allocations (the
// caller's small array, so that nothing here allocates). On success the caller enqueues
// its operation and calls trackEnd; on error nothing is held. While s captures a graph,
// nothing is waited for: the uses are recorded in the capture (graph.go).
func (s *Stream) trackBegin(uses []use, as []*allocation) (tracking, error) {
	t, _, err := s.trackBeginOpt(uses, as, 0)
	return t, err
}

// trackBeginReady is trackBegin; with ready set, if a use that the operation must wait
// for is not complete yet, it holds nothing and returns the events to wait for (one
// reference each) instead: the caller waits for them on the host and tries again, so
// that its stream never waits in the device for another stream's work (the host
// copies, trackedReady).
func (s *Stream) trackBeginReady(uses []use, as []*allocation, ready bool) (tracking, []*pev, error) {
	var o trackOpt
	if ready {
		o = trackReady
	}
	return s.trackBeginOpt(uses, as, o)
}

// trackBeginOpt is trackBegin with options.
func (s *Stream) trackBeginOpt(uses []use, as []*allocation, o trackOpt) (tracking, []*pev, error) {
	if err := s.hold(); err != nil {
		return tracking{}, nil, err
	}
	if o&trackGraph == 0 {
		uses = mergeUses(uses)
	}
	for _, u := range uses {
		if u.a.dev != s.dev && u.a.dev.info.Backend != s.dev.info.Backend {
			s.unhold()
			return tracking{}, nil, fmt.Errorf("gpu: a %s buffer used on %v: %w", u.a.dev.info.Backend, s, ErrInvalidValue)
		}
		as = append(as, u.a)
	}
	if err := lockAll(as); err != nil {
		s.unhold()
		return tracking{}, nil, err
	}
	t := tracking{uses: uses, as: as}
	if c := s.cap.Load(); c != nil {
		err := c.record(s, uses, o)
		if err != nil {
			unlockAll(as)
			s.unhold()
			return tracking{}, nil, err
		}
		t.cap = c
		return t, nil, nil
	}
	// Outside any capture, an operation reading what an open capture writes: its data is
	// not there yet (as for the host). Not a graph's launch: its uses, merged when its
	// capture ended, call a buffer it writes before it reads it ReadWrite.
	if o&trackGraph == 0 {
		for _, u := range uses {
			if u.a.capWrites == 0 || u.mode&Read == 0 {
				continue // (the common case, without a call)
			}
			if err := u.a.capturedLocked(u.mode, s); err != nil {
				unlockAll(as)
				s.unhold()
				return tracking{}, nil, err
			}
		}
	}
	if r := s.dev.race.Load(); r != nil {
		r.checkUntracked(s, uses)
	}
	shared, pending, err := s.trackWaits(uses, o)
	if err != nil || pending != nil {
		unlockAll(as)
		s.unhold()
		return tracking{}, pending, err
	}
	t.anyShared = shared
	return t, nil, nil
}

// trackedReady runs enqueue, which enqueues one operation on s using the allocations
// in uses, once every conflicting use on another stream has completed: it waits for
// them on the host under ctx first (an untracked allocation's: the work of every
// stream), so that s never waits in the device. It returns the operation's sequence
// number on s.
func (s *Stream) trackedReady(ctx context.Context, uses []use, enqueue func() error) (uint64, error) {
	pol, err := s.dev.pickPolicy(nil)
	if err != nil {
		return 0, err
	}
	for _, u := range uses {
		// (First wait, under ctx, for another goroutine's access scope on it to end:
		// the tracking below waits for the allocations' locks without a context.)
		if err := lockAllCtx(ctx, []*allocation{u.a}); err != nil {
			return 0, err
		}
		err := u.a.capturedLocked(u.mode, nil)
		u.a.mu.Unlock()
		if err != nil {
			return 0, err
		}
		if u.a.untracked {
			if err := u.a.hostWait(ctx, u.mode, pol); err != nil {
				return 0, err
			}
		}
	}
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		var small [4]*allocation
		t, pending, err := s.trackBeginReady(uses, small[:0], true)
		if err != nil {
			return 0, err
		}
		if pending == nil {
			return s.trackEnd(t, enqueue(), false)
		}
		err = s.dev.wait(ctx, eventsWait{pending}, pol)
		if err == nil {
			settleAll(pending)
		}
		releaseAll(pending)
		if err != nil {
			return 0, err
		}
	}
}

// hostWait waits under ctx until the host may use a with the given mode: for its
// pending uses (an untracked allocation's: every stream's work).
func (a *allocation) hostWait(ctx context.Context, mode AccessMode, pol WaitPolicy) error {
	if err := lockAllCtx(ctx, []*allocation{a}); err != nil {
		return err
	}
	if a.freed {
		a.mu.Unlock()
		return fmt.Errorf("gpu: buffer used after Free: %w", ErrClosed)
	}
	if err := a.capturedLocked(mode, nil); err != nil {
		a.mu.Unlock()
		return err
	}
	evs, err := a.pendingEvents(mode)
	a.mu.Unlock()
	if err != nil || len(evs) == 0 {
		return err
	}
	if err = a.dev.wait(ctx, eventsWait{evs}, pol); err == nil {
		settleAll(evs)
	}
	releaseAll(evs)
	return err
}

// trackWaits makes s wait for the uses on other streams that conflict with uses, and
// reports whether the allocations are in use on several streams at once. Uses known
// complete are dropped; those s already waited for need nothing (see the top of the file).
//
// With ready set, it queries the events it would wait for: complete ones need no wait
// (and settle), and if any is not, it returns them (a reference each) and enqueues
// nothing.
func (s *Stream) trackWaits(uses []use, o trackOpt) (anyShared bool, pending []*pev, err error) {
	ready := o&trackReady != 0
	var waitSmall [4]*pev
	var byWait [4]*access
	waits, waited := waitSmall[:0], byWait[:0]
	need := func(x *access) error {
		if x.s == nil || x.s == s {
			return nil
		}
		if x.complete() {
			x.clear()
			return nil
		}
		if x.waitedBy(s) {
			return nil
		}
		anyShared = true
		ev, err := x.event()
		if err != nil {
			return err
		}
		if !slices.Contains(waits, ev) {
			waits = append(waits, ev)
		}
		waited = append(waited, x)
		return nil
	}
	for _, u := range uses {
		a := u.a
		if a.freed && !(o&trackGraph != 0 && a.deferred) {
			return false, nil, fmt.Errorf("gpu: buffer used after Free: %w", ErrClosed)
		}
		if a.untracked {
			continue
		}
		if err := need(&a.w); err != nil {
			return false, nil, err
		}
		if u.mode&Write != 0 {
			for i := range a.r {
				if err := need(&a.r[i]); err != nil {
					return false, nil, err
				}
			}
		} else {
			// A read while other streams read too: the allocation is in use on several
			// streams at once, so mark this use precisely, the first time s sees each.
			for i := range a.r {
				r := &a.r[i]
				if r.s == nil || r.s == s || r.seenBy(s) {
					continue
				}
				if r.complete() {
					r.clear()
					continue
				}
				anyShared = true
				r.remember(s, false)
			}
		}
	}
	if ready {
		rest := waits[:0]
		for _, ev := range waits {
			done, err := ev.be.Query()
			if err != nil {
				return false, nil, err
			}
			if done {
				ev.settle()
				continue
			}
			rest = append(rest, ev)
		}
		if len(rest) > 0 {
			for _, ev := range rest {
				pending = append(pending, ev.retain())
			}
			return false, pending, nil
		}
		waits = rest // all complete: nothing to wait for in the device
	}
	for _, ev := range waits {
		if err := s.be.WaitEvent(ev.be); err != nil {
			return false, nil, err
		}
		s.enqueued()
		if r := s.dev.race.Load(); r != nil {
			r.waited(s, ev)
		}
	}
	for _, x := range waited {
		x.remember(s, true)
	}
	return anyShared, nil, nil
}

// trackEnd records the operation just enqueued (unless enqErr says nothing was, which
// only a scope may leave unknown) and unlocks. It returns the operation's sequence number.
func (s *Stream) trackEnd(t tracking, enqErr error, scope bool) (uint64, error) {
	defer s.unhold() // after the allocations' unlock (deferred below: runs first)
	defer unlockAll(t.as)
	if enqErr != nil && !scope {
		return 0, enqErr // nothing was enqueued
	}
	if t.cap != nil {
		// Recorded in the graph: nothing ran, so the tracking is unchanged.
		return s.seq.Load(), enqErr
	}
	s.enqueued()
	seq := s.seq.Add(1)
	if r := s.dev.race.Load(); r != nil {
		for _, u := range t.uses {
			r.recordUse(s, u, seq, scope)
		}
	}
	var ev *pev
	err := enqErr
	if t.anyShared {
		var rerr error
		if ev, rerr = s.eventAfter(seq); rerr != nil && err == nil {
			err = rerr
		}
	}
	for _, u := range t.uses {
		a := u.a
		if a.untracked {
			continue
		}
		a.version++
		x := access{s: s, seq: seq, ev: ev.retain()}
		if u.mode&Write != 0 {
			a.w.clear()
			for i := range a.r {
				a.r[i].clear()
			}
			a.r = a.r[:0]
			a.w = x
			a.lastW.sid, a.lastW.seq = s.id, seq
			continue
		}
		slot := -1
		for i := range a.r {
			if a.r[i].s == s {
				slot = i
				break
			}
			if a.r[i].s == nil && slot < 0 {
				slot = i // a dropped use's entry
			}
		}
		if slot >= 0 {
			a.r[slot].clear()
			a.r[slot] = x
		} else {
			a.r = append(a.r, x)
		}
	}
	ev.release()
	return seq, err
}

// pendingEvents returns events (each with a reference for the caller) for the uses a
// host access or a free must wait for: the last write, and for a write also the reads.
// The caller holds a.mu.
func (a *allocation) pendingEvents(mode AccessMode) ([]*pev, error) {
	var evs []*pev
	add := func(x *access) error {
		if x.s == nil || x.complete() {
			return nil
		}
		ev, err := x.event()
		if err != nil {
			return err
		}
		evs = append(evs, ev.retain())
		return nil
	}
	err := add(&a.w)
	if mode&Write != 0 {
		for i := range a.r {
			if err == nil {
				err = add(&a.r[i])
			}
		}
	}
	if err == nil && a.untracked {
		// An untracked allocation's uses are unknown: wait for every stream, those
		// closed with work pending included (listed after the live streams: a stream
		// closed meanwhile adds its tail before it leaves them).
		for _, s := range a.dev.liveStreams() {
			ev, rerr := s.recordNow()
			if rerr != nil {
				err = rerr
				break
			}
			evs = append(evs, ev)
		}
		if err == nil {
			evs = append(evs, a.dev.pendingTails()...)
		}
	}
	if err != nil {
		for _, e := range evs {
			e.release()
		}
		return nil, err
	}
	return evs, nil
}

// eventsWait waits for a set of events.
type eventsWait struct{ evs []*pev }

func (w eventsWait) query() (bool, error) {
	for _, e := range w.evs {
		if done, err := e.be.Query(); !done || err != nil {
			return false, err
		}
	}
	return true, nil
}

func (w eventsWait) block() error {
	for _, e := range w.evs {
		if err := e.be.Synchronize(); err != nil {
			return err
		}
	}
	return nil
}

func (w eventsWait) park() ([]*pev, error) {
	out := make([]*pev, len(w.evs))
	for i, e := range w.evs {
		out[i] = e.retain()
	}
	return out, nil
}

func releaseAll(evs []*pev) {
	for _, e := range evs {
		e.release()
	}
}
