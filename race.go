package gpu

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-gpu/gpu/backend"
)

// The race checker: a mode, off by default, in which the runtime records each access
// to each allocation (its stream, mode, bytes and the goroutine's stack) and reports
// every pair of conflicting accesses that nothing orders, in the ways the automatic
// tracking can't see (like Go's race detector, or PyTorch's CUDA sanitizer):
//
//   - a raw device pointer (from Buffer.Access) passed to Launch after its scope ended;
//   - untracked buffers (SetTracking(false)) used on two streams with nothing between:
//     no event (Stream.Record then WaitEvent, or a wait of the tracking) on the second
//     stream after the first use, and no host wait that saw it complete;
//   - a host access (HostAccess) to pinned memory that a copy enqueued with
//     Stream.CopyHtoD or CopyDtoH still reads or writes;
//   - work enqueued through Stream.BackendStream on a buffer that the tracking knows to
//     be in use on another stream and not waited for.
//
// Ordering follows vector clocks over the streams' tracked operation counts: a stream
// knows another's operations up to the count covered by the events it waited for
// (user events carry their stream's clock), and the host knows what a wait saw
// complete. Off, it costs one atomic load on the paths it watches.
//
// Reports go to the device's handler (SetRaceHandler), else to the next
// Stream.Synchronize or Device.Synchronize, as errors wrapping ErrRace;
// GPU_RACECHECK=panic makes each report a panic (a test fails at the first).

// ErrRace is matched by the errors that carry race reports (RaceReport), returned by a
// wait after the race checker found unordered accesses.
var ErrRace = errors.New("gpu: unordered accesses to a buffer")

// RaceReport is a pair of conflicting accesses to one buffer that nothing orders.
type RaceReport struct {
	Kind          string // what kind of race (see SetRaceCheck)
	Buffer        string // the allocation: "device buffer 12 (4096 bytes)"
	First, Second RaceAccess
}

// RaceAccess is one access of a RaceReport.
type RaceAccess struct {
	Where string     // "stream 3 on cuda:0", or "host"
	Mode  AccessMode // Read, Write or both
	Bytes [2]int64   // the bytes accessed, [lo, hi) in the allocation
	Stack string     // the goroutine's stack at the access
}

// Error describes the report with both stacks; it wraps ErrRace. A nil report is
// "<nil race report>".
func (r *RaceReport) Error() string {
	if r == nil {
		return "<nil race report>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "gpu: race (%s) on %s:\n", r.Kind, r.Buffer)
	for i, a := range []RaceAccess{r.First, r.Second} {
		fmt.Fprintf(&b, "  %s access: %s on %s, bytes [%d, %d)\n", []string{"first", "second"}[i], a.Mode, a.Where, a.Bytes[0], a.Bytes[1])
		for _, line := range strings.Split(strings.TrimSpace(a.Stack), "\n") {
			fmt.Fprintf(&b, "    %s\n", line)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// Unwrap returns ErrRace (for a nil report too).
func (r *RaceReport) Unwrap() error { return ErrRace }

// The kinds of races.
const (
	RaceRawPointer = "raw pointer used after its Access scope"
	RaceUntracked  = "untracked buffer on two streams"
	RacePinnedHost = "host access to pinned memory a pending copy uses"
	RaceBackend    = "work through BackendStream on a buffer in use elsewhere"
)

// raceMode is GPU_RACECHECK: "" (off), "1" (on), "panic" (on, reports panic), read at
// start-up (tuning.go's startupFromEnv).
var raceMode string

// SetRaceCheck turns the race checker on or off for the device (GPU_RACECHECK=1 or
// panic in the environment turns it on for every device at start). On, it reports
// unordered pairs of accesses of these kinds: RaceRawPointer, RaceUntracked,
// RacePinnedHost and RaceBackend (see ErrRace and RaceReport); allocations made while
// it was off are only partly watched. Off, it costs nothing measurable. A nil device
// does nothing.
func (d *Device) SetRaceCheck(on bool) {
	if d.isNil() {
		return
	}
	if !on {
		if d.race.Swap(nil) != nil {
			d.slowSync.Add(-1)
		}
		return
	}
	if d.race.Load() == nil && d.race.CompareAndSwap(nil, newRaceState(d, raceMode == "panic")) {
		d.slowSync.Add(1)
	}
}

// RaceCheck reports whether the race checker is on (false for a nil device).
func (d *Device) RaceCheck() bool { return d != nil && d.race.Load() != nil }

// SetRaceHandler has each race report passed to f (on the goroutine that made the
// second access) instead of kept for the next wait; nil restores that. In a test,
// d.SetRaceHandler(func(r *gpu.RaceReport) { t.Error(r) }) fails the test on a race. A
// nil device does nothing.
func (d *Device) SetRaceHandler(f func(*RaceReport)) {
	if d.isNil() {
		return
	}
	d.raceHandler.Store(&f)
}

// raceState is the race checker's state of a device.
type raceState struct {
	dev    *Device
	panics bool

	mu      sync.Mutex
	acc     map[*allocation][]raceAccess
	clock   map[uint64]map[uint64]uint64 // stream -> what it waited for of other streams
	host    map[uint64]uint64            // what the host saw complete, by stream
	events  map[backend.Event]raceEvent  // user events' clocks at their record
	devPtrs []raceRange                  // allocations by device address
	hostPtr []raceRange                  // pinned and unified allocations by host address
	pending []error                      // reports for the next wait
	seen    map[string]bool              // reports made, to say each once
}

// raceAccess is one recorded access.
type raceAccess struct {
	sid    uint64 // the stream's id, 0 for the host
	where  string
	done   *atomic.Uint64 // the stream's done count (complete up to)
	seq    uint64         // the stream's tracked operation count at the access
	mode   AccessMode
	lo, hi int64
	pcs    []uintptr
	kind   uint8 // rawScope: an Access scope (a raw pointer handed out); rawCopy: a pending copy of pinned memory
}

const (
	accessTracked uint8 = iota
	accessScope
	accessCopy
)

// raceEvent is a user event's record: its stream and that stream's clock.
type raceEvent struct {
	sid   uint64
	seq   uint64
	clock map[uint64]uint64
}

// raceRange is an allocation's address range.
type raceRange struct {
	lo, hi uint64
	a      *allocation
}

// maxRaceAccesses bounds the accesses kept per allocation.
const maxRaceAccesses = 16

func newRaceState(d *Device, panics bool) *raceState {
	return &raceState{dev: d, panics: panics, acc: map[*allocation][]raceAccess{},
		clock: map[uint64]map[uint64]uint64{}, host: map[uint64]uint64{}, events: map[backend.Event]raceEvent{},
		seen: map[string]bool{}}
}

func stack() []uintptr {
	pcs := make([]uintptr, 32)
	return pcs[:runtime.Callers(3, pcs)]
}

// formatStack formats a recorded stack as runtime/debug.Stack does, without the
// checker's and the tracking's own frames at the top.
func formatStack(pcs []uintptr) string {
	var b strings.Builder
	frames := runtime.CallersFrames(pcs)
	top := true
	for {
		f, more := frames.Next()
		if top && (strings.HasSuffix(f.File, "/race.go") || strings.HasSuffix(f.File, "/track.go")) && strings.HasPrefix(f.Function, "github.com/go-gpu/gpu.") {
			if !more {
				break
			}
			continue
		}
		top = false
		fmt.Fprintf(&b, "%s\n\t%s:%d\n", f.Function, f.File, f.Line)
		if !more {
			break
		}
	}
	return b.String()
}

func spansOverlap(lo1, hi1, lo2, hi2 int64) bool { return lo1 < hi2 && lo2 < hi1 }

// span returns the bytes of a use.
func (u use) span() (int64, int64) {
	if u.n == 0 {
		if u.a.mem == nil {
			return 0, 0 // a graph's token
		}
		return 0, u.a.mem.Size()
	}
	return u.off, u.off + u.n
}

// ordered reports whether access x happened before a new access on the stream with
// id sid (0: the host); r.mu is held.
func (r *raceState) ordered(x *raceAccess, sid uint64) bool {
	if x.sid == 0 || (x.sid == sid && x.kind != accessCopy) {
		return true // the host's own accesses, stream order
	}
	if x.done != nil && x.done.Load() >= x.seq {
		return true
	}
	if r.host[x.sid] >= x.seq {
		return true
	}
	return sid != 0 && r.clock[sid][x.sid] >= x.seq
}

// conflicts returns the recorded accesses to a that conflict with an access of mode m
// to [lo, hi) by sid and that nothing orders; r.mu is held.
func (r *raceState) conflicts(a *allocation, sid uint64, m AccessMode, lo, hi int64, kinds ...uint8) []raceAccess {
	var out []raceAccess
	for i := range r.acc[a] {
		x := &r.acc[a][i]
		if (x.mode|m)&Write == 0 || !spansOverlap(x.lo, x.hi, lo, hi) || !slices.Contains(kinds, x.kind) {
			continue
		}
		if !r.ordered(x, sid) {
			out = append(out, *x)
		}
	}
	return out
}

// add records an access to a; r.mu is held.
func (r *raceState) add(a *allocation, x raceAccess) {
	l := r.acc[a]
	// Drop what is known complete, then the oldest past the bound.
	keep := l[:0]
	for _, y := range l {
		if y.sid != 0 && y.done != nil && y.done.Load() >= y.seq && y.kind != accessScope {
			continue
		}
		keep = append(keep, y)
	}
	if len(keep) >= maxRaceAccesses {
		keep = append(keep[:0], keep[1:]...)
	}
	r.acc[a] = append(keep, x)
}

// report delivers a report, once per pair of places.
func (r *raceState) report(kind string, a *allocation, first raceAccess, second raceAccess) {
	key := fmt.Sprint(kind, a.id, first.pcs, second.pcs)
	r.mu.Lock()
	if r.seen[key] {
		r.mu.Unlock()
		return
	}
	r.seen[key] = true
	r.mu.Unlock()
	rep := &RaceReport{Kind: kind, Buffer: fmt.Sprintf("%s buffer %d (%d bytes)", a.kind, a.id, a.mem.Size()),
		First: first.public(), Second: second.public()}
	if p := r.dev.raceHandler.Load(); p != nil && *p != nil {
		(*p)(rep)
		return
	}
	if r.panics {
		panic(rep)
	}
	r.mu.Lock()
	r.pending = append(r.pending, rep)
	r.mu.Unlock()
}

func (x raceAccess) public() RaceAccess {
	return RaceAccess{Where: x.where, Mode: x.mode, Bytes: [2]int64{x.lo, x.hi}, Stack: formatStack(x.pcs)}
}

// takeReports returns the reports waiting for a wait, joined (nil if none).
func (d *Device) takeRaceReports() error {
	r := d.race.Load()
	if r == nil {
		return nil // (inlined: every wait checks)
	}
	return r.take()
}

func (r *raceState) take() error {
	r.mu.Lock()
	p := r.pending
	r.pending = nil
	r.mu.Unlock()
	return errors.Join(p...)
}

func (s *Stream) raceAccess(m AccessMode, lo, hi int64, kind uint8, seq uint64) raceAccess {
	return raceAccess{sid: s.id, where: s.String(), done: &s.done, seq: seq, mode: m, lo: lo, hi: hi, pcs: stack(), kind: kind}
}

func hostAccess(m AccessMode, lo, hi int64) raceAccess {
	return raceAccess{where: "host", mode: m, lo: lo, hi: hi, pcs: stack()}
}

// checkUntracked checks the uses of an operation about to be enqueued on s: those of
// untracked allocations against the accesses of other streams that nothing orders.
func (r *raceState) checkUntracked(s *Stream, uses []use) {
	for _, u := range uses {
		if !u.a.untracked {
			continue
		}
		lo, hi := u.span()
		r.mu.Lock()
		bad := r.conflicts(u.a, s.id, u.mode, lo, hi, accessTracked, accessScope)
		r.mu.Unlock()
		for _, x := range bad {
			r.report(RaceUntracked, u.a, x, s.raceAccess(u.mode, lo, hi, accessTracked, 0))
		}
	}
}

// recordUse records a use enqueued on s as operation seq.
func (r *raceState) recordUse(s *Stream, u use, seq uint64, scope bool) {
	lo, hi := u.span()
	kind := accessTracked
	if scope {
		kind = accessScope
	}
	x := s.raceAccess(u.mode, lo, hi, kind, seq)
	r.mu.Lock()
	r.add(u.a, x)
	r.mu.Unlock()
}

// waited records that s waits for ev (an internal event after operation cover of its
// stream, or a user event).
func (r *raceState) waited(s *Stream, ev *pev) {
	if ev == nil || ev.sid == 0 {
		return
	}
	r.mu.Lock()
	r.merge(s.id, map[uint64]uint64{ev.sid: ev.cover})
	r.mu.Unlock()
}

// merge raises stream sid's clock to c; r.mu is held.
func (r *raceState) merge(sid uint64, c map[uint64]uint64) {
	m := r.clock[sid]
	if m == nil {
		m = map[uint64]uint64{}
		r.clock[sid] = m
	}
	for k, v := range c {
		if v > m[k] {
			m[k] = v
		}
	}
}

// recordEvent notes a user event recorded on s: it carries s's clock.
func (r *raceState) recordEvent(s *Stream, e backend.Event) {
	r.mu.Lock()
	c := map[uint64]uint64{s.id: s.seq.Load()}
	for k, v := range r.clock[s.id] {
		c[k] = max(c[k], v)
	}
	r.events[e] = raceEvent{sid: s.id, seq: s.seq.Load(), clock: c}
	r.mu.Unlock()
}

// waitEvent notes s waiting for a user event.
func (r *raceState) waitEvent(s *Stream, e backend.Event) {
	r.mu.Lock()
	if ev, ok := r.events[e]; ok {
		r.merge(s.id, ev.clock)
	}
	r.mu.Unlock()
}

// eventDone notes the host seeing a user event complete.
func (r *raceState) eventDone(e backend.Event) {
	r.mu.Lock()
	if ev, ok := r.events[e]; ok {
		for k, v := range ev.clock {
			r.host[k] = max(r.host[k], v)
		}
	}
	r.mu.Unlock()
}

// register notes a new allocation's addresses.
func (r *raceState) register(a *allocation) {
	if a.mem == nil || a.mem.Size() == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	lo := a.mem.Ptr()
	r.devPtrs = insertRange(r.devPtrs, raceRange{lo, lo + uint64(a.mem.Size()), a})
	if h := a.mem.Host(); len(h) > 0 {
		hr := rangeOf(h)
		r.hostPtr = insertRange(r.hostPtr, raceRange{uint64(hr.lo), uint64(hr.hi), a})
	}
}

func insertRange(rs []raceRange, x raceRange) []raceRange {
	i, _ := slices.BinarySearchFunc(rs, x.lo, func(r raceRange, lo uint64) int {
		switch {
		case r.lo < lo:
			return -1
		case r.lo > lo:
			return 1
		}
		return 0
	})
	return slices.Insert(rs, i, x)
}

func removeRanges(rs []raceRange, a *allocation) []raceRange {
	return slices.DeleteFunc(rs, func(r raceRange) bool { return r.a == a })
}

// find returns the allocation of rs holding address p, and p's offset in it.
func findRange(rs []raceRange, p uint64) (*allocation, int64) {
	i, _ := slices.BinarySearchFunc(rs, p+1, func(r raceRange, lo uint64) int {
		switch {
		case r.lo < lo:
			return -1
		case r.lo > lo:
			return 1
		}
		return 0
	})
	if i > 0 && p < rs[i-1].hi {
		return rs[i-1].a, int64(p - rs[i-1].lo)
	}
	return nil, 0
}

// forget drops a released allocation.
func (r *raceState) forget(a *allocation) {
	r.mu.Lock()
	delete(r.acc, a)
	r.devPtrs = removeRanges(r.devPtrs, a)
	r.hostPtr = removeRanges(r.hostPtr, a)
	r.mu.Unlock()
}

// rawPointer checks a raw device pointer passed to Launch on s: one into a tracked
// allocation is a race unless the calling goroutine holds that allocation's Access
// scope.
func (r *raceState) rawPointer(s *Stream, p uint64) {
	r.mu.Lock()
	a, off := findRange(r.devPtrs, p)
	var first raceAccess
	found := false
	if a != nil {
		for _, x := range slices.Backward(r.acc[a]) {
			if x.kind == accessScope && off >= x.lo && off < x.hi {
				first, found = x, true
				break
			}
		}
	}
	r.mu.Unlock()
	if a == nil || a.untracked {
		return
	}
	if a.scope.Load() != 0 && heldByMe(&a.scope) {
		return
	}
	if !found {
		first = raceAccess{where: "an Access scope (not recorded: made before the checker was on)", mode: ReadWrite, lo: off, hi: off + 1}
	}
	r.report(RaceRawPointer, a, first, s.raceAccess(ReadWrite, off, off+1, accessTracked, 0))
}

// pinnedCopy records a copy enqueued on s as operation seq between device memory and
// host memory h: when h is in one of the device's pinned or unified allocations, the
// host must not touch those bytes until the copy is done (mode: the copy reads h for
// Read, writes it for Write).
func (r *raceState) pinnedCopy(s *Stream, h []byte, mode AccessMode, seq uint64) {
	if len(h) == 0 {
		return
	}
	hr := rangeOf(h)
	r.mu.Lock()
	defer r.mu.Unlock()
	a, off := findRange(r.hostPtr, uint64(hr.lo))
	if a == nil {
		return
	}
	r.add(a, s.raceAccess(mode, off, off+int64(len(h)), accessCopy, seq))
}

// hostAccess checks a host access (HostAccess) with mode to bytes [lo, hi) of a
// against the copies still pending on its memory.
func (r *raceState) hostAccess(a *allocation, mode AccessMode, lo, hi int64) {
	r.mu.Lock()
	bad := r.conflicts(a, 0, mode, lo, hi, accessCopy)
	r.mu.Unlock()
	for _, x := range bad {
		r.report(RacePinnedHost, a, x, hostAccess(mode, lo, hi))
	}
}

// backendWork checks work enqueued through BackendStream on s: its memory against the
// tracked uses on other streams that s has not waited for, and the untracked accesses
// nothing orders.
func (r *raceState) backendWork(s *Stream, uses []backend.MemUse) {
	for _, mu := range uses {
		if mu.Mem == nil {
			continue
		}
		r.mu.Lock()
		a, base := findRange(r.devPtrs, mu.Mem.Ptr())
		r.mu.Unlock()
		if a == nil || a.mem != mu.Mem || base != 0 {
			continue
		}
		m := Read
		if mu.Write {
			m = ReadWrite
		}
		lo, hi := mu.Off, mu.Off+mu.N
		if mu.N == 0 {
			lo, hi = 0, a.mem.Size()
		}
		second := s.raceAccess(m, lo, hi, accessTracked, 0)
		r.mu.Lock()
		bad := r.conflicts(a, s.id, m, lo, hi, accessTracked, accessScope)
		r.mu.Unlock()
		if !a.untracked {
			// What the tracking would have waited for, from its own state.
			if pend := a.pendingFor(s, m); !pend {
				bad = nil
			}
		}
		for _, x := range bad {
			r.report(RaceBackend, a, x, second)
		}
	}
}

// pendingFor reports whether a use of a with mode on s would have to wait for a use
// on another stream (the tracking's trackWaits, without its side effects).
func (a *allocation) pendingFor(s *Stream, m AccessMode) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	need := func(x *access) bool {
		return x.s != nil && x.s != s && !x.complete() && !x.waitedBy(s)
	}
	if need(&a.w) {
		return true
	}
	if m&Write != 0 {
		for i := range a.r {
			if need(&a.r[i]) {
				return true
			}
		}
	}
	return false
}

// observedStream returns the backend stream BackendStream hands out while the checker
// is on: a copy of s's that reports the work enqueued through it, where the backend
// can make one.
func (s *Stream) observedStream(r *raceState) backend.Stream {
	if p := s.observed.Load(); p != nil {
		return *p
	}
	ob, ok := s.be.(backend.Observable)
	if !ok {
		return s.be
	}
	bs := ob.Observed(func(uses []backend.MemUse) { r.backendWork(s, uses) })
	s.observed.CompareAndSwap(nil, &bs)
	return *s.observed.Load()
}
