package gpu

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"weak"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/backend/cuda"
)

// DeviceInfo describes a device: its backend, name, compute capability,
// multiprocessor count and memory.
type DeviceInfo = backend.Info

// MemKind is a kind of memory: DeviceMem, UnifiedMem or PinnedMem.
type MemKind = backend.MemKind

// The kinds of memory.
const (
	DeviceMem  = backend.DeviceMem
	UnifiedMem = backend.UnifiedMem
	PinnedMem  = backend.PinnedMem
)

var (
	cudaBackend backend.Backend = cuda.Backend{}
	cpuBackend  backend.Backend = cpu.Backend{}

	openMu sync.Mutex
	opened = map[string]*Device{}
)

// Devices lists every device: the CUDA devices, then the CPU.
func Devices() ([]DeviceInfo, error) {
	var out []DeviceInfo
	if n, err := cudaBackend.DeviceCount(); err == nil {
		for i := range n {
			d, err := OpenBackend("cuda", i)
			if err != nil {
				return nil, err
			}
			out = append(out, d.Info())
		}
	}
	d, err := OpenBackend("cpu", 0)
	if err != nil {
		return nil, err
	}
	return append(out, d.Info()), nil
}

// Open returns the default device: the first CUDA device if there is one, else the CPU.
// The environment variable GPU_BACKEND forces a choice: "cpu", "cuda" (device 0) or
// "cuda:N" (device N). Every call returns the same *Device for the same device.
func Open() (*Device, error) {
	name, ordinal, err := backendFromEnv()
	if err != nil {
		return nil, err
	}
	if name != "" {
		return OpenBackend(name, ordinal)
	}
	d, err := OpenBackend("cuda", 0)
	if errors.Is(err, ErrNoDevice) {
		return OpenBackend("cpu", 0)
	}
	return d, err
}

// OpenBackend opens device ordinal of the named backend, "cuda" or "cpu". Every call
// returns the same *Device for the same device.
func OpenBackend(name string, ordinal int) (*Device, error) {
	var b backend.Backend
	switch name {
	case "cuda":
		b = cudaBackend
	case "cpu":
		b = cpuBackend
	default:
		return nil, fmt.Errorf("gpu: unknown backend %q (want cuda or cpu): %w", name, ErrInvalidValue)
	}
	key := fmt.Sprintf("%s:%d", name, ordinal)
	openMu.Lock()
	defer openMu.Unlock()
	if d := opened[key]; d != nil {
		return d, nil
	}
	bd, err := b.Open(ordinal)
	if err != nil {
		return nil, err
	}
	d, err := NewDevice(bd)
	if err != nil {
		return nil, err
	}
	opened[key] = d
	return d, nil
}

// Device is a GPU (or the CPU backend): it owns a default stream, a pool of internal
// events, and the threads that complete parked waits. A Device is safe for concurrent
// use and lives as long as the process.
//
// A nil *Device is never valid: its methods that return an error return one wrapping
// ErrInvalidValue (Err included), and the others return zero values (nil, "", a zero
// DeviceInfo, WaitPolicy or Tuning, "<nil device>" for String; SetWaitPolicy does
// nothing).
type Device struct {
	be   backend.Device
	info DeviceInfo
	// noCoopSort: a cooperative launch was refused (the sort takes its passes).
	noCoopSort atomic.Bool
	def        *Stream
	policy     atomic.Pointer[WaitPolicy]
	hub        *hub

	evMu   sync.Mutex
	evFree []*pev

	stMu    sync.Mutex
	streams map[uint64]streamRef
	nextID  atomic.Uint64
	// tails holds, for each stream closed with work pending, an event after that work
	// (one reference each), until it completes: device waits and the free of an
	// untracked buffer wait for them.
	tails      []*pev
	tailsPrune int // addTail drops completed tails when there are this many

	liveAllocs atomic.Int64 // allocations not yet freed
	active     atomic.Int32 // goroutines querying the driver in a wait

	// pend counts operations enqueued on the device's streams; idleAt is the count at
	// the last moment every stream was seen idle. Equal, Synchronize has nothing to do.
	pend, idleAt atomic.Uint64
	// external is set once a stream's backend handle was handed out: work may then be
	// enqueued that pend doesn't count.
	external atomic.Bool
	// slowSync is nonzero while Device.Synchronize must take its full path although
	// pend says the device is idle: it counts external once set (setExternal), each
	// host function running (runHostFunc), the race checker while on (SetRaceCheck),
	// and launch checks while any is pending (setPendingChecks). One word, so that the
	// idle path reads one word for all four.
	slowSync atomic.Int64
	fault    atomic.Pointer[error] // the first fault a wait saw
	// peers holds the devices whose memory d's kernels may address (EnablePeerAccess
	// succeeded): *Device -> struct{}.
	peers sync.Map

	cache blockCache
	kc    kernelCache
	plans planCache

	stagePool    stagePool    // pinned staging buffers of plain host copies (stage.go)
	wordPool     wordPool     // pinned words of small reads (readU64, At)
	checkSlots   wordPool     // pinned check slots of launches that record failures (launchcheck.go)
	gate         freeGate     // host frees apart from the rings' waits (ring.go)
	checks       launchChecks // the launches whose check slots await a wait's report (launchcheck.go)
	forceStaging bool         // stage on any backend (tests)
	// copyStreams are the streams of plain host copies (to the host, to the device),
	// made at first use (copyStream).
	copyMu      sync.Mutex
	copyStreams [2]atomic.Pointer[Stream]
	// side is the stream of the memory that captures allocate outside their graphs
	// (graph.go), made at first use; captures counts the captures in progress (a
	// driver-wide synchronize would end them: syncBackend), openCaps lists them.
	side     atomic.Pointer[Stream]
	captures atomic.Int32
	capMu    sync.Mutex
	openCaps map[*capture]struct{}
	// race is the race checker's state while it is on (race.go), else nil.
	race atomic.Pointer[raceState]
	// hostFns counts the host functions running (hostfunc.go).
	hostFns atomic.Int32
	// raceHandler receives race reports (SetRaceHandler), or nil.
	raceHandler atomic.Pointer[func(*RaceReport)]
	tune        atomic.Pointer[Tuning] // the tuning (Device.Tuning, SetTuning)
	// hostMu guards hostRanges: the host address ranges of the device's live pinned and
	// unified buffers, sorted, which plain copies never stage.
	hostMu     sync.RWMutex
	hostRanges []hostRange
}

// setExternal records that work may be enqueued on the device that pend doesn't count.
func (d *Device) setExternal() {
	if !d.external.Swap(true) {
		d.slowSync.Add(1)
	}
}

// isNil reports a nil device or a zero Device{} (not made by OpenBackend or NewDevice),
// which is one.
func (d *Device) isNil() bool { return d == nil || d.be == nil }

// errNilDevice is the error of a nil *Device, as receiver or argument.
var errNilDevice = fmt.Errorf("gpu: nil device: %w", ErrInvalidValue)

// setFault remembers the first fault: the idle fast paths return it.
func (d *Device) setFault(err error) { d.fault.CompareAndSwap(nil, &err) }

// Err returns the fault that ended a wait on the device (on CUDA, sticky for the
// process), or nil; for a nil device, an error wrapping ErrInvalidValue.
func (d *Device) Err() error {
	if d.isNil() {
		return errNilDevice
	}
	if p := d.fault.Load(); p != nil {
		return *p
	}
	return nil
}

// advance raises c to at least v.
func advance(c *atomic.Uint64, v uint64) {
	for {
		cur := c.Load()
		if cur >= v || c.CompareAndSwap(cur, v) {
			return
		}
	}
}

// NewDevice wraps a backend device. Most programs use Open or OpenBackend instead;
// NewDevice serves tests that need a fresh device (such as a new cpu.Device after a
// fault) and other backends.
func NewDevice(bd backend.Device) (*Device, error) {
	if bd == nil {
		return nil, fmt.Errorf("gpu: NewDevice(nil): %w", ErrInvalidValue)
	}
	d := &Device{be: bd, info: bd.Info(), streams: map[uint64]streamRef{}, checkSlots: wordPool{size: checkSlotBytes, block: checkSlotBlock}}
	d.stagePool.tokens = make(chan struct{}, stageTokens)
	p := DefaultWaitPolicy
	d.policy.Store(&p)
	tu := DefaultTuning()
	d.tune.Store(&tu)
	d.hub = newHub(d)
	if raceMode == "1" || raceMode == "panic" {
		d.SetRaceCheck(true)
	}
	def, err := d.NewStream()
	if err != nil {
		return nil, err
	}
	d.def = def
	return d, nil
}

// Info describes the device (a zero DeviceInfo for a nil device).
func (d *Device) Info() DeviceInfo {
	if d.isNil() {
		return DeviceInfo{}
	}
	return d.info
}

// Backend returns the backend's name, "cuda" or "cpu" ("" for a nil device).
func (d *Device) Backend() string {
	if d.isNil() {
		return ""
	}
	return d.info.Backend
}

// String returns "cuda:0 (NVIDIA H200)" ("<nil device>" for a nil device).
func (d *Device) String() string {
	if d.isNil() {
		return "<nil device>"
	}
	return fmt.Sprintf("%s:%d (%s)", d.info.Backend, d.info.Ordinal, d.info.Name)
}

// BackendDevice returns the backend's device, for packages that extend the runtime (nil
// for a nil device).
func (d *Device) BackendDevice() backend.Device {
	if d.isNil() {
		return nil
	}
	return d.be
}

// DefaultStream returns the device's default stream. It is an ordinary stream created
// with the device (on CUDA a non-blocking one, not the legacy NULL stream), used by the
// operations that take no stream. It is nil for a nil device.
func (d *Device) DefaultStream() *Stream {
	if d.isNil() {
		return nil
	}
	return d.def
}

// SetWaitPolicy sets the policy of waits that don't give their own. A Mode other than
// WaitAuto, WaitSpin and WaitBlock makes those waits fail with ErrInvalidValue. On a
// nil device it does nothing.
func (d *Device) SetWaitPolicy(p WaitPolicy) {
	if d.isNil() {
		return
	}
	p = p.normalize()
	d.policy.Store(&p)
}

// WaitPolicy returns the device's wait policy (a zero WaitPolicy for a nil device).
func (d *Device) WaitPolicy() WaitPolicy {
	if d.isNil() {
		return WaitPolicy{}
	}
	return *d.policy.Load()
}

// MemInfo returns the device's free and total memory in bytes (CUDA Driver API:
// cuMemGetInfo).
func (d *Device) MemInfo() (free, total int64, err error) {
	if d.isNil() {
		return 0, 0, errNilDevice
	}
	return d.be.MemInfo()
}

// addTail keeps ev, an event after the work of a stream just closed or dropped, with
// the caller's reference. Completed tails are dropped as the list grows.
func (d *Device) addTail(ev *pev) {
	d.stMu.Lock()
	defer d.stMu.Unlock()
	if len(d.tails) >= d.tailsPrune {
		rest := d.tails[:0]
		for _, e := range d.tails {
			if done, err := e.be.Query(); done && err == nil {
				e.release()
			} else {
				rest = append(rest, e)
			}
		}
		clear(d.tails[len(rest):])
		d.tails = rest
		d.tailsPrune = max(64, 2*len(rest))
	}
	d.tails = append(d.tails, ev)
}

// pendingTails returns the events (each with a reference for the caller) of closed
// streams' work not yet seen complete, dropping those that are.
func (d *Device) pendingTails() []*pev {
	d.stMu.Lock()
	defer d.stMu.Unlock()
	var out []*pev
	rest := d.tails[:0]
	for _, e := range d.tails {
		if done, err := e.be.Query(); done && err == nil {
			e.release()
			continue
		}
		rest = append(rest, e)
		out = append(out, e.retain())
	}
	clear(d.tails[len(rest):])
	d.tails = rest
	return out
}

// streamRef is a device's reference to one of its streams: weak, so that a stream
// dropped without Close can be collected, and its core, which the stream's cleanup
// destroys.
type streamRef struct {
	w    weak.Pointer[Stream]
	core *streamCore
}

// liveStreams returns the device's open streams. A stream found collected is destroyed
// here if its cleanup hasn't run yet (the cleanup then does nothing), so that its tail
// is added before the caller lists the tails: a device wait doesn't miss its work. It
// leaves the list only after destroy has returned (as finishClose adds the tail before
// it deletes): a concurrent caller that finds it meanwhile calls destroy too, which
// waits on the core's mu for the first one's tail.
func (d *Device) liveStreams() []*Stream {
	d.stMu.Lock()
	out := make([]*Stream, 0, len(d.streams))
	var dead []uint64
	var cores []*streamCore
	for id, r := range d.streams {
		if s := r.w.Value(); s != nil {
			out = append(out, s)
		} else {
			dead = append(dead, id)
			cores = append(cores, r.core)
		}
	}
	d.stMu.Unlock()
	if len(dead) > 0 {
		for _, c := range cores {
			c.destroy()
		}
		d.stMu.Lock()
		for _, id := range dead {
			delete(d.streams, id)
		}
		d.stMu.Unlock()
	}
	return out
}

// pev is a pooled, reference-counted internal event (timing disabled, blocking sync),
// or, with dev nil, a wrapper around a user's event whose release calls free.
type pev struct {
	be   backend.Event
	dev  *Device
	refs atomic.Int32
	free func()
	// done and cover, set by eventAfter: the event completes after every operation of
	// its stream up to cover, so seeing it complete advances done (settle).
	done  *atomic.Uint64
	cover uint64
	sid   uint64 // the id of the stream it covers (the race checker's clocks)
}

// settle records what e's completion tells: its stream's operations up to cover are
// complete. The caller has seen e complete.
func (e *pev) settle() {
	if e != nil && e.done != nil {
		advance(e.done, e.cover)
	}
}

// settleAll settles events seen complete.
func settleAll(evs []*pev) {
	for _, e := range evs {
		e.settle()
	}
}

func (e *pev) retain() *pev {
	if e != nil {
		e.refs.Add(1)
	}
	return e
}

func (e *pev) release() {
	if e == nil {
		return
	}
	if e.dev == nil { // a wrapper around a user's event
		if e.free != nil {
			e.free()
		}
		return
	}
	if n := e.refs.Add(-1); n == 0 {
		e.dev.putEvent(e)
	} else if n < 0 {
		panic("gpu: internal event released too often")
	}
}

const maxFreeEvents = 4096

// getEvent returns a pooled event with one reference.
func (d *Device) getEvent() (*pev, error) {
	d.evMu.Lock()
	if n := len(d.evFree); n > 0 {
		e := d.evFree[n-1]
		d.evFree = d.evFree[:n-1]
		d.evMu.Unlock()
		e.refs.Store(1)
		e.done, e.cover, e.sid = nil, 0, 0
		return e, nil
	}
	d.evMu.Unlock()
	be, err := d.be.NewEvent(false)
	if err != nil {
		return nil, err
	}
	e := &pev{be: be, dev: d}
	e.refs.Store(1)
	return e, nil
}

func (d *Device) putEvent(e *pev) {
	d.evMu.Lock()
	if len(d.evFree) < maxFreeEvents {
		d.evFree = append(d.evFree, e)
		d.evMu.Unlock()
		return
	}
	d.evMu.Unlock()
	e.be.Destroy()
}
