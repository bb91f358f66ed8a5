// Package cpu is the CPU backend: the same semantics as a GPU, on the host.
//
// A stream is an ordered queue of operations run by a goroutine of its own (started
// when work arrives, gone when the queue is empty); events complete in stream order;
// blocking waits are real waits on channels. Kernels are Go functions (Func) that split
// their work over the device's cores with Launch.Parallel.
//
// Faults are sticky, as on CUDA: once an operation fails (a kernel returns an error or
// panics, the "trap" built-in runs), every stream of the device stops, and every query
// and wait on the device returns that error. Open a new device (New) to start afresh.
//
// Memory of every kind is ordinary Go memory, 8-byte aligned, that the host can address
// (Mem.Host). Freed memory is overwritten with 0xFF bytes in stream order, so a read that
// was wrongly ordered after a free shows up in tests as poison.
package cpu

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/go-gpu/gpu/backend"
)

// Backend is the CPU backend.
type Backend struct{}

// Name returns "cpu".
func (Backend) Name() string { return "cpu" }

// DeviceCount returns 1.
func (Backend) DeviceCount() (int, error) { return 1, nil }

// Open returns a new CPU device; ordinal must be 0.
func (Backend) Open(ordinal int) (backend.Device, error) {
	if ordinal != 0 {
		return nil, fmt.Errorf("cpu: device %d: the CPU backend has one device (0): %w", ordinal, backend.ErrNoDevice)
	}
	return New(0), nil
}

// Device is a CPU device.
type Device struct {
	workers int
	serial  int64 // 1 for the process's first device, 2 for the next, ...

	faultOnce sync.Once
	faultErr  atomic.Pointer[error]
	faultCh   chan struct{}

	mu      sync.Mutex
	streams map[*Stream]struct{}

	allocMu sync.RWMutex
	allocs  []*Mem // sorted by base address, for raw pointer arguments
	used    atomic.Int64
}

// New returns a new CPU device whose kernels use the given number of worker goroutines
// (0 means GOMAXPROCS).
func New(workers int) *Device {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return &Device{workers: workers, serial: serials.Add(1), faultCh: make(chan struct{}), streams: map[*Stream]struct{}{}}
}

// serials numbers the devices New makes, so that messages tell them apart.
var serials atomic.Int64

// TotalMemory is the memory the CPU device reports, in bytes: the machine's physical
// memory where the system says (Linux: sysinfo(2)), else 1 TiB. Allocations beyond what
// is left of it fail with ErrOutOfMemory rather than ending the process in the Go
// runtime's own out-of-memory error.
var TotalMemory = physicalMemory()

// Info describes the device.
func (d *Device) Info() backend.Info {
	return backend.Info{
		Backend: "cpu", Name: fmt.Sprintf("CPU #%d (%d workers)", d.serial, d.workers),
		Multiprocessors: d.workers, TotalMemory: TotalMemory, WarpSize: 1,
		MaxThreadsPerBlock: 1024, MaxSharedPerBlock: 48 << 10,
	}
}

// Err returns the device's sticky fault, or nil.
func (d *Device) Err() error {
	if p := d.faultErr.Load(); p != nil {
		return *p
	}
	return nil
}

func (d *Device) fault(err error) {
	d.faultOnce.Do(func() {
		if !errors.Is(err, backend.ErrLaunchFailed) {
			err = fmt.Errorf("%w: %w", backend.ErrLaunchFailed, err)
		}
		d.faultErr.Store(&err)
		close(d.faultCh)
	})
}

// NewStream creates a stream.
func (d *Device) NewStream() (backend.Stream, error) {
	if err := d.Err(); err != nil {
		return nil, err
	}
	s := &Stream{dev: d}
	d.mu.Lock()
	d.streams[s] = struct{}{}
	d.mu.Unlock()
	return s, nil
}

// NewEvent creates an event.
func (d *Device) NewEvent(timing bool) (backend.Event, error) {
	if err := d.Err(); err != nil {
		return nil, err
	}
	return &Event{dev: d, timing: timing}, nil
}

// Mem is CPU memory.
type Mem struct {
	buf  []byte
	kind backend.MemKind
	dev  *Device
}

// Ptr returns the address of the first byte (for information and raw arguments).
func (m *Mem) Ptr() uint64 {
	if len(m.buf) == 0 {
		return 0
	}
	return uint64(uintptr(unsafe.Pointer(&m.buf[0])))
}

// Size returns the size in bytes.
func (m *Mem) Size() int64 { return int64(len(m.buf)) }

// Kind returns the kind of memory.
func (m *Mem) Kind() backend.MemKind { return m.kind }

// Host returns the memory.
func (m *Mem) Host() []byte { return m.buf }

// Alloc allocates zeroed, 8-byte aligned memory of any kind.
func (d *Device) Alloc(kind backend.MemKind, size int64, s backend.Stream) (backend.Mem, error) {
	if err := d.Err(); err != nil {
		return nil, err
	}
	if size < 0 {
		return nil, fmt.Errorf("cpu: allocating %d bytes: %w", size, backend.ErrInvalidValue)
	}
	if size > TotalMemory-d.used.Load() || uint64(size) > math.MaxInt {
		// (Past MaxInt bytes a Go slice can't hold them: on a 32-bit platform.)
		return nil, fmt.Errorf("cpu: allocating %d bytes: %w", size, backend.ErrOutOfMemory)
	}
	words := make([]uint64, (size+7)/8)
	var buf []byte
	if len(words) > 0 {
		buf = unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), size)
	}
	m := &Mem{buf: buf, kind: kind, dev: d}
	d.used.Add(size)
	if size > 0 {
		d.allocMu.Lock()
		i := sort.Search(len(d.allocs), func(i int) bool { return d.allocs[i].Ptr() > m.Ptr() })
		d.allocs = append(d.allocs, nil)
		copy(d.allocs[i+1:], d.allocs[i:])
		d.allocs[i] = m
		d.allocMu.Unlock()
	}
	return m, nil
}

func (d *Device) release(m *Mem) {
	if len(m.buf) == 0 {
		return
	}
	d.allocMu.Lock()
	for i, a := range d.allocs {
		if a == m {
			d.allocs = append(d.allocs[:i], d.allocs[i+1:]...)
			break
		}
	}
	d.allocMu.Unlock()
	d.used.Add(-m.Size())
	for i := range m.buf {
		m.buf[i] = 0xFF
	}
}

// resolve finds the allocation holding address p, for raw pointer arguments, and p's
// offset in it.
func (d *Device) resolve(p uint64) ([]byte, int, error) {
	d.allocMu.RLock()
	defer d.allocMu.RUnlock()
	i := sort.Search(len(d.allocs), func(i int) bool { return d.allocs[i].Ptr() > p }) - 1
	if i < 0 || p >= d.allocs[i].Ptr()+uint64(d.allocs[i].Size()) {
		return nil, 0, fmt.Errorf("cpu: address %#x is not in any allocation: %w", p, backend.ErrInvalidValue)
	}
	a := d.allocs[i]
	return a.buf, int(p - a.Ptr()), nil
}

// FreeNow releases memory at once.
func (d *Device) FreeNow(m backend.Mem) error {
	cm, ok := m.(*Mem)
	if !ok || cm.dev != d {
		return fmt.Errorf("cpu: free of foreign memory: %w", backend.ErrInvalidValue)
	}
	d.release(cm)
	return nil
}

// MemInfo returns the memory left of TotalMemory and TotalMemory.
func (d *Device) MemInfo() (free, total int64, err error) {
	return TotalMemory - d.used.Load(), TotalMemory, nil
}

// TrimPool does nothing: the CPU backend has no pool.
func (d *Device) TrimPool(keep int64) error { return nil }

// LoadModule is not supported on the CPU.
func (d *Device) LoadModule(image []byte) (backend.Module, error) {
	return nil, fmt.Errorf("cpu: loading a PTX or cubin module: %w", backend.ErrNotSupported)
}

// Synchronize waits until every stream of the device is idle.
func (d *Device) Synchronize() error {
	d.mu.Lock()
	ss := make([]*Stream, 0, len(d.streams))
	for s := range d.streams {
		ss = append(ss, s)
	}
	d.mu.Unlock()
	for _, s := range ss {
		if err := s.sync(true); err != nil {
			return err
		}
	}
	return d.Err()
}

// CanAccessPeer reports true for another CPU device.
func (d *Device) CanAccessPeer(peer backend.Device) (bool, error) {
	_, ok := peer.(*Device)
	return ok, nil
}

// EnablePeerAccess does nothing.
func (d *Device) EnablePeerAccess(peer backend.Device) error { return nil }

// Workers returns the number of worker goroutines a kernel may use.
func (d *Device) Workers() int { return d.workers }

// Event is a CPU event.
type Event struct {
	dev    *Device
	timing bool
	mu     sync.Mutex
	ch     chan struct{} // closed when the current recording completes; nil if never recorded
	at     time.Time     // completion time of the current recording (timing events)
	dead   bool
}

var closedCh = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (e *Event) current() (chan struct{}, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.dead {
		return nil, fmt.Errorf("cpu: event: %w", backend.ErrClosed)
	}
	if e.ch == nil {
		return closedCh, nil
	}
	return e.ch, nil
}

// Query reports whether the event's recording has completed.
func (e *Event) Query() (bool, error) {
	if err := e.dev.Err(); err != nil {
		return false, err
	}
	ch, err := e.current()
	if err != nil {
		return false, err
	}
	select {
	case <-ch:
		return true, nil
	default:
		return false, nil
	}
}

// Synchronize waits until the event completes or the device faults.
func (e *Event) Synchronize() error {
	ch, err := e.current()
	if err != nil {
		return err
	}
	select {
	case <-ch:
		return e.dev.Err()
	case <-e.dev.faultCh:
		return e.dev.Err()
	}
}

// Elapsed returns the time between two completed timing events.
func (e *Event) Elapsed(start backend.Event) (time.Duration, error) {
	s, ok := start.(*Event)
	if !ok || !s.timing || !e.timing {
		return 0, fmt.Errorf("cpu: elapsed time needs two timing events: %w", backend.ErrInvalidValue)
	}
	for _, x := range []*Event{s, e} {
		if done, err := x.Query(); err != nil || !done {
			if err == nil {
				err = fmt.Errorf("cpu: elapsed time of an event not yet complete: %w", backend.ErrInvalidValue)
			}
			return 0, err
		}
	}
	s.mu.Lock()
	t0, rec0 := s.at, s.ch != nil
	s.mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if !rec0 || e.ch == nil {
		// As CUDA: cuEventElapsedTime of an event never recorded is an error.
		return 0, fmt.Errorf("cpu: elapsed time of an event never recorded: %w", backend.ErrInvalidValue)
	}
	return e.at.Sub(t0), nil
}

// Destroy releases the event.
func (e *Event) Destroy() error {
	e.mu.Lock()
	e.dead = true
	e.mu.Unlock()
	return nil
}
