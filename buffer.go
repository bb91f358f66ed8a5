package gpu

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/go-gpu/gpu/backend"
)

// Buffer is memory of one device: device memory, unified (managed) memory or pinned
// host memory. Buffers are ordered across streams automatically (see Launch and the
// copy methods): an operation waits for the uses on other streams that it conflicts
// with, with no explicit synchronization. Views made with Slice share their parent's
// memory and tracking.
//
// Free releases the memory; it is idempotent and safe at any moment, since the memory
// returns to the pool only after every pending use on every stream. A Buffer dropped
// without Free is freed the same way when the garbage collector finds it (a backstop,
// with no timing guarantee). A Buffer is safe for concurrent use.
//
// A nil *Buffer is never valid: its methods that return an error, Free included, return
// one wrapping ErrInvalidValue, and the others return zero values (nil, 0, DeviceMem
// for Kind).
type Buffer struct {
	a    *allocation
	off  int64
	size int64
	root *Buffer // the buffer a view was sliced from, kept alive by the view
	args atomic.Pointer[argRefs]
	// cleanup frees a root buffer dropped without Free; Free stops it, so that freed
	// buffers don't leave cleanup records on their heap span (each AddCleanup searches
	// its span's records: a loop of Empty and Free otherwise slows as they pile up).
	cleanup runtime.Cleanup
}

// Alloc allocates size bytes of device memory from the device's stream-ordered pool,
// ordered on the default stream (CUDA Driver API: cuMemAllocAsync). The contents are
// undefined. Errors wrap ErrOutOfMemory (with the bytes asked for, free and total) or
// ErrInvalidValue. When the device is out of memory, the allocations (this one and the
// others) first collect garbage, give the frees of the buffers it finds up to a quarter
// of a second to complete on the device, trim the pool and try once more.
func (d *Device) Alloc(size int64) (*Buffer, error) {
	if d.isNil() {
		return nil, errNilDevice
	}
	return d.alloc(DeviceMem, size, d.def)
}

// Alloc allocates size bytes of device memory ordered on s: usable at once on s, and on
// other streams after s's work so far (which the tracking arranges).
func (s *Stream) Alloc(size int64) (*Buffer, error) {
	if err := s.hold(); err != nil {
		return nil, err
	}
	defer s.unhold()
	return s.dev.alloc(DeviceMem, size, s)
}

// AllocUnified allocates size bytes of unified (managed) memory, which the host can read
// and write directly with HostAccess (CUDA Driver API: cuMemAllocManaged).
func (d *Device) AllocUnified(size int64) (*Buffer, error) {
	if d.isNil() {
		return nil, errNilDevice
	}
	return d.alloc(UnifiedMem, size, nil)
}

// AllocPinned allocates size bytes of pinned (page-locked) host memory that the device
// can address, the fastest source and destination of host copies (CUDA Driver API:
// cuMemHostAlloc). HostAccess gives it as a slice.
func (d *Device) AllocPinned(size int64) (*Buffer, error) {
	if d.isNil() {
		return nil, errNilDevice
	}
	return d.alloc(PinnedMem, size, nil)
}

func (d *Device) alloc(kind MemKind, size int64, s *Stream) (*Buffer, error) {
	return d.allocate(kind, size, s, true)
}

// allocate is alloc; reclaim says whether to try the out-of-memory recovery.
func (d *Device) allocate(kind MemKind, size int64, s *Stream, reclaim bool) (*Buffer, error) {
	if size < 0 {
		return nil, fmt.Errorf("gpu: allocating %d bytes: %w", size, ErrInvalidValue)
	}
	if s != nil && kind == DeviceMem && s.cap.Load() != nil {
		// Memory for a capture is allocated outside the graph (an allocation on the
		// capturing stream would become a node of the graph, made anew at each launch
		// and never freed): on the device's side stream, after which the graph's
		// launches are ordered by the tracking; the graph keeps it (graph.go).
		side, err := d.sideStream()
		if err != nil {
			return nil, err
		}
		s = side
	}
	var bs backend.Stream
	if s != nil {
		bs = s.be
	}
	var mem backend.Mem
	var err error
	class := cacheClass(size)
	if kind == DeviceMem && s != nil && class > 0 {
		mem = d.cache.get(s, class)
	}
	if mem == nil {
		req := size
		if kind == DeviceMem && s != nil && class > 0 {
			req = class
		}
		mem, err = d.be.Alloc(kind, req, bs)
		if err == nil && kind == DeviceMem && s != nil {
			s.enqueued()
		}
	}
	if reclaim && errors.Is(err, ErrOutOfMemory) {
		// Buffers whose cleanups are pending may hold memory: collect them, let their
		// frees complete, hand unused pool memory back, and try once more. Not for more
		// than the device's memory: waiting for the device's work can't serve that.
		if _, total, terr := d.be.MemInfo(); terr != nil || size <= total {
			d.reclaim()
			mem, err = d.be.Alloc(kind, size, bs)
			if err == nil && kind == DeviceMem && s != nil {
				s.enqueued()
			}
		}
		if errors.Is(err, ErrOutOfMemory) {
			free, total, _ := d.be.MemInfo()
			return nil, fmt.Errorf("gpu: out of memory: allocating %d bytes of %s memory on %v (%d bytes free of %d): %w",
				size, kind, d, free, total, err)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("gpu: allocating %d bytes of %s memory on %v: %w", size, kind, d, err)
	}
	a := &allocation{id: nextAllocID.Add(1), dev: d, mem: mem, kind: kind}
	if kind != DeviceMem {
		d.addHost(mem.Host())
	}
	if r := d.race.Load(); r != nil {
		r.register(a)
	}
	if s != nil && kind == DeviceMem {
		a.w = access{s: s, seq: s.seq.Add(1)}
	}
	b := &Buffer{a: a, size: size}
	d.liveAllocs.Add(1)
	b.cleanup = runtime.AddCleanup(b, func(a *allocation) { a.free() }, a)
	return b, nil
}

// reclaim runs the garbage collector, waits briefly for the frees of buffers it found to
// be enqueued and for the device to reach them, then trims the pool. The wait for the
// device is bounded by reclaimWait: the allocating caller has no context, and a long
// kernel must not hold an allocation that fails anyway.
func (d *Device) reclaim() {
	runtime.GC()
	last := d.liveAllocs.Load()
	for range 50 {
		time.Sleep(time.Millisecond)
		n := d.liveAllocs.Load()
		if n == last {
			break
		}
		last = n
	}
	ctx, cancel := context.WithTimeout(context.Background(), reclaimWait)
	defer cancel()
	d.TrimMemory(ctx)
}

// reclaimWait bounds the out-of-memory recovery's wait for the device (reclaim).
const reclaimWait = 250 * time.Millisecond

// Device returns the buffer's device (nil for a nil buffer).
func (b *Buffer) Device() *Device {
	if b.isNil() {
		return nil
	}
	return b.a.dev
}

// Size returns the buffer's size in bytes (0 for a nil buffer).
func (b *Buffer) Size() int64 {
	if b.isNil() {
		return 0
	}
	return b.size
}

// Kind returns the kind of memory (DeviceMem, the zero MemKind, for a nil buffer).
func (b *Buffer) Kind() MemKind {
	if b.isNil() {
		return DeviceMem
	}
	return b.a.kind
}

// Offset returns the byte offset of a view in its allocation (0 for an allocation or a
// nil buffer).
func (b *Buffer) Offset() int64 {
	if b.isNil() {
		return 0
	}
	return b.off
}

// BackendMem returns the backend's memory and the buffer's offset in it, for packages
// that extend the runtime (nil and 0 for a nil buffer). Using it bypasses the tracking:
// prefer Access.
func (b *Buffer) BackendMem() (backend.Mem, int64) {
	if b.isNil() {
		return nil, 0
	}
	return b.a.mem, b.off
}

// Slice returns a view of n bytes at byte offset off, sharing the buffer's memory and
// tracking. The view keeps the buffer alive; freeing the buffer frees the view.
func (b *Buffer) Slice(off, n int64) (*Buffer, error) {
	if b.isNil() {
		return nil, errNilBuffer
	}
	if b.a.gone.Load() {
		return nil, errBufferFreed
	}
	if off < 0 || n < 0 || off > b.size || n > b.size-off {
		return nil, fmt.Errorf("gpu: slice of %d bytes at %d of a %d-byte buffer: %w", n, off, b.size, ErrInvalidValue)
	}
	root := b.root
	if root == nil {
		root = b
	}
	return &Buffer{a: b.a, off: b.off + off, size: n, root: root}, nil
}

// Free releases the buffer's memory once every pending use of it, on every stream, has
// completed (for device memory, by a stream-ordered free: CUDA Driver API:
// cuMemFreeAsync). Later use of the buffer or its views returns an error wrapping
// ErrClosed. Free is idempotent. Freeing a view is an error: free the buffer it was
// sliced from. Freeing a nil buffer is an error wrapping ErrInvalidValue.
func (b *Buffer) Free() error {
	if b.isNil() {
		return errNilBuffer
	}
	if b.root != nil {
		return fmt.Errorf("gpu: Free of a view: free the buffer it was sliced from: %w", ErrInvalidValue)
	}
	err := b.a.free()
	if b.a.gone.Load() {
		b.cleanup.Stop()
	}
	return err
}

// SetTracking turns the automatic ordering of the buffer (and its views) off or on; it
// applies to the whole allocation, so on a view it also sets the buffer the view was
// sliced from and its other views. Untracked, operations on it neither wait nor record:
// the caller orders them, for example to let two streams write disjoint halves at once.
// Free still waits for every stream of the device. Turning the tracking back on doesn't
// order the uses made while it was off (none was recorded): later operations don't wait
// for them, so order them first (Stream.Synchronize of their streams, or an event
// recorded after them that the next stream waits for: Stream.WaitEvent).
func (b *Buffer) SetTracking(on bool) error {
	if b.isNil() {
		return errNilBuffer
	}
	if err := lockAll([]*allocation{b.a}); err != nil {
		return err
	}
	defer b.a.mu.Unlock()
	if b.a.freed {
		return errBufferFreed
	}
	b.a.untracked = !on
	return nil
}

// errBufferFreed is the error of a buffer, or a view of it, used after Free.
var errBufferFreed = fmt.Errorf("gpu: buffer used after Free: %w", ErrClosed)

func (a *allocation) free() error {
	if err := lockAll([]*allocation{a}); err != nil {
		return err
	}
	defer a.mu.Unlock()
	if a.freed {
		return nil
	}
	a.freed = true
	a.gone.Store(true)
	a.dev.liveAllocs.Add(-1)
	if a.pins > 0 {
		// A capture or graph uses it: the memory goes when the last of them is done
		// (unpin), after the graph's launches.
		a.deferred = true
		return nil
	}
	return a.release()
}

// release returns the memory of a freed allocation once its pending uses are done
// (free, or unpin for a free that a graph deferred). The caller holds a.mu.
func (a *allocation) release() error {
	if a.kind != DeviceMem {
		a.dev.removeHost(a.mem.Host())
	}
	if r := a.dev.race.Load(); r != nil {
		r.forget(a)
	}
	defer func() {
		a.w.clear()
		for i := range a.r {
			a.r[i].clear()
		}
		a.r = nil
	}()
	if a.mem.Size() == 0 {
		return a.dev.freeHost(a.mem)
	}
	if a.kind == DeviceMem && !a.untracked {
		// Free on the one stream (of the buffer's device) that used it, else on the
		// default stream after waiting for every use; never on a stream that captures
		// a graph (the free would be captured): on the device's side stream instead.
		// Uses known complete don't count (settle). Memory whose uses are all complete
		// goes to the last writer's stream all the same (its block cache: the next
		// allocation there of that size reuses it), not to the default stream's.
		last := a.w.s
		if a.w.s != nil && a.w.complete() {
			a.w.clear()
		}
		idle := a.w.s == nil
		for i := range a.r {
			if a.r[i].s != nil && a.r[i].complete() {
				a.r[i].clear()
			}
			idle = idle && a.r[i].s == nil
		}
		f := a.dev.def
		if a.w.s != nil && a.w.s.dev == a.dev && !a.w.s.isClosed() {
			f = a.w.s
		} else if idle && last != nil && last.dev == a.dev && !last.isClosed() {
			f = last
		}
		for _, x := range a.r {
			if x.s != nil && x.s != f {
				f = a.dev.def
			}
		}
		if f.cap.Load() != nil {
			// Without a side stream, f stays: the check below sends the free to the
			// host path.
			if side, err := a.dev.sideStream(); err == nil {
				f = side
			}
		}
		ok := true
		var waitSmall [4]*pev
		waits := waitSmall[:0]
		for _, x := range append([]*access{&a.w}, ptrs(a.r)...) {
			if x.s == nil || x.s == f {
				continue
			}
			ev, err := x.event() // locks x.s: before f is locked
			if err != nil {
				ok = false
				break
			}
			waits = append(waits, ev)
		}
		if ok {
			// f stays locked while the free is enqueued on it, so that a Close can't
			// destroy it meanwhile, nor a capture begin on it; closed or capturing
			// already, the free takes the host path below.
			f.mu.Lock()
			ok = !f.closed && f.cap.Load() == nil
			for _, ev := range waits {
				if !ok {
					break
				}
				if err := f.be.WaitEvent(ev.be); err != nil {
					ok = false
					break
				}
				f.enqueued()
			}
			if ok {
				if a.dev.cache.put(f, a.mem) {
					f.mu.Unlock()
					return nil
				}
				err := f.be.FreeAsync(a.mem)
				f.mu.Unlock()
				if err == nil {
					f.enqueued()
				}
				if !errors.Is(err, ErrNotSupported) {
					return err
				}
			} else {
				f.mu.Unlock()
			}
		}
	}
	// Pinned and unified memory (or no pool): free on the host once the uses are done.
	evs, err := a.pendingEvents(ReadWrite)
	if err != nil {
		return err
	}
	if len(evs) == 0 {
		return a.dev.freeHost(a.mem)
	}
	mem, dev := a.mem, a.dev
	go func() {
		dev.wait(context.Background(), eventsWait{evs}, WaitPolicy{Mode: WaitAuto, Spin: -1})
		releaseAll(evs)
		dev.freeHost(mem)
	}()
	return nil
}

func ptrs(xs []access) []*access {
	out := make([]*access, len(xs))
	for i := range xs {
		out[i] = &xs[i]
	}
	return out
}

func (s *Stream) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Access runs f with the buffer's device address, for enqueuing work on s that the
// library can't see (a kernel launched through another library, say). The buffer is
// ordered as for a kernel that uses it with the given mode: s waits for conflicting uses
// on other streams before f runs, and the use is recorded after f returns, so it can't
// end before f's work was dispatched. f must enqueue that work on s, and must not use
// the buffer through this package (that returns an error wrapping ErrInScope); other
// goroutines' uses of the buffer wait until f returns. On Linux f runs locked to its OS
// thread (runtime.LockOSThread), which is how a use inside the scope is recognized.
func (b *Buffer) Access(s *Stream, mode AccessMode, f func(p DevicePtr) error) error {
	if b.isNil() {
		return errNilBuffer
	}
	if f == nil {
		return fmt.Errorf("gpu: Access with a nil function: %w", ErrInvalidValue)
	}
	if !mode.valid() {
		return fmt.Errorf("gpu: access mode %d: %w", mode, ErrInvalidValue)
	}
	_, err := s.trackedScope([]use{b.use(mode)}, func() error {
		return f(DevicePtr(b.a.mem.Ptr() + uint64(b.off)))
	}, true)
	return err
}

// HostAccess waits until the host may use the buffer with the given mode (for Read,
// until pending writes are done; for Write, also pending reads), then runs f with the
// buffer's bytes. The buffer must be pinned or unified memory (any memory on the CPU
// backend); device memory gives an error wrapping ErrNotSupported (copy instead). Other
// operations on the buffer wait until f returns (the host's waits, such as CopyToHost
// or another HostAccess, until their contexts end); f must not use the buffer through
// this package. If ctx ends first (before the call, too), HostAccess returns ctx.Err()
// without running f.
func (b *Buffer) HostAccess(ctx context.Context, mode AccessMode, f func(host []byte) error) error {
	if err := nilContext(ctx); err != nil {
		return err
	}
	if b.isNil() {
		return errNilBuffer
	}
	if f == nil {
		return fmt.Errorf("gpu: HostAccess with a nil function: %w", ErrInvalidValue)
	}
	if !mode.valid() {
		return fmt.Errorf("gpu: access mode %d: %w", mode, ErrInvalidValue)
	}
	a := b.a
	host := a.mem.Host()
	if host == nil && a.mem.Size() > 0 {
		return fmt.Errorf("gpu: host access to %s memory on %v: copy it instead: %w", a.kind, a.dev, ErrNotSupported)
	}
	if err := ctx.Err(); err != nil {
		return err // as when it ends during the wait, whether or not there is one
	}
	for {
		if err := lockAllCtx(ctx, []*allocation{a}); err != nil {
			return err
		}
		if a.freed {
			a.mu.Unlock()
			return errBufferFreed
		}
		if err := a.capturedLocked(mode, nil); err != nil {
			a.mu.Unlock()
			return err
		}
		evs, err := a.pendingEvents(mode)
		ver := a.version
		a.mu.Unlock()
		if err != nil {
			return err
		}
		if len(evs) > 0 {
			var pol WaitPolicy
			if pol, err = a.dev.pickPolicy(nil); err == nil {
				if err = a.dev.wait(ctx, eventsWait{evs}, pol); err == nil {
					settleAll(evs)
				}
			}
			releaseAll(evs)
			if err != nil {
				return err
			}
		}
		if err := lockAllCtx(ctx, []*allocation{a}); err != nil {
			return err
		}
		if a.version != ver || a.freed {
			a.mu.Unlock()
			continue
		}
		if err := ctx.Err(); err != nil {
			a.mu.Unlock()
			return err // f doesn't run once ctx has ended
		}
		if r := a.dev.race.Load(); r != nil {
			r.hostAccess(a, mode, b.off, b.off+b.size)
		}
		return a.hostScope(mode, host[b.off:b.off+b.size:b.off+b.size], f)
	}
}

// hostScope runs f inside a host access scope of a, which the caller has locked, and
// unlocks it: also when f panics (the panic goes on after the scope ends).
func (a *allocation) hostScope(mode AccessMode, host []byte, f func(host []byte) error) error {
	a.scope.Store(enterScope())
	defer func() {
		a.scope.Store(0)
		leaveScope()
		if mode&Write != 0 {
			a.w.clear()
			for i := range a.r {
				a.r[i].clear()
			}
			a.r = a.r[:0]
		}
		a.version++
		a.mu.Unlock()
	}()
	return f(host)
}

// use returns the buffer's use with mode: its bytes of its allocation.
func (b *Buffer) use(mode AccessMode) use {
	return use{a: b.a, mode: mode, off: b.off, n: b.size}
}

// isNil reports a nil buffer or a zero Buffer{} (not made by an Alloc), which is one.
func (b *Buffer) isNil() bool { return b == nil || b.a == nil }

// errNilBuffer is the error of a nil *Buffer, as receiver or argument.
var errNilBuffer = fmt.Errorf("gpu: nil buffer: %w", ErrInvalidValue)

// Bytes views a slice of plain values (no pointers) as its bytes, for the copy methods.
func Bytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(z)))
}

// unpinAfter keeps Go memory pinned until the operation just enqueued on s completes.
func (s *Stream) unpinAfter(seq uint64, p *runtime.Pinner) error {
	return s.runAfter(seq, p.Unpin)
}

// runAfter runs f once the operation seq on s has completed (on the device's event hub;
// at once after a wait for the whole device if no event can be recorded: s may be
// closed and destroyed by now).
func (s *Stream) runAfter(seq uint64, f func()) error {
	ev, err := s.eventAfter(seq)
	if err != nil {
		s.dev.syncBackend()
		f()
		return err
	}
	s.dev.hub.submit(ev.be, func() { f(); ev.release() })
	return nil
}

// CopyHtoD enqueues a copy of src into the start of dst and returns at once (CUDA
// Driver API: cuMemcpyHtoDAsync). src is read at some point before the copy completes
// (an event recorded on s after it, or s's synchronize, tells): don't modify it until
// then; it is kept alive meanwhile. len(src) must not exceed dst.Size().
//
// On CUDA, whose driver copies pageable memory synchronously, pageable Go memory goes
// through the stream's pinned staging ring (see ring.go): the call only enqueues, behind
// whatever the stream is doing, a goroutine fills the staging buffers, and the stream
// waits for it with a stream memory operation (cuStreamWaitValue32_v2). Pinned memory
// (the host memory of AllocPinned buffers) is copied directly, as are all copies where
// the driver lacks stream memory operations.
func (s *Stream) CopyHtoD(dst *Buffer, src []byte) error {
	if err := nilStream(s); err != nil {
		return err
	}
	if err := s.notCapturing("CopyHtoD of Go memory (copy from a pinned buffer with CopyDtoD instead)"); err != nil {
		return err
	}
	if dst != nil && int64(len(src)) <= dst.size && s.ringCopyable(src, dst) {
		return s.tracked([]use{dst.use(Write)}, func() error {
			return s.ringFor().copy(src, dst.a.mem, dst.off, false)
		})
	}
	seq, p, err := s.copyHtoD(dst, src)
	if err != nil {
		return err
	}
	if r := s.dev.race.Load(); r != nil {
		r.pinnedCopy(s, src, Read, seq)
	}
	return s.unpinAfter(seq, p)
}

func (s *Stream) copyHtoD(dst *Buffer, src []byte) (uint64, *runtime.Pinner, error) {
	if dst.isNil() {
		return 0, nil, errNilBuffer
	}
	if int64(len(src)) > dst.size {
		return 0, nil, fmt.Errorf("gpu: copying %d bytes into a %d-byte buffer: %w", len(src), dst.size, ErrInvalidValue)
	}
	p := new(runtime.Pinner)
	if len(src) > 0 {
		p.Pin(&src[0])
	}
	seq, err := s.trackedScope([]use{dst.use(Write)}, func() error {
		return s.be.CopyFromHost(dst.a.mem, dst.off, src)
	}, false)
	if err != nil {
		unpinFailed(s, seq, p)
		return 0, nil, err
	}
	return seq, p, nil
}

// CopyDtoH enqueues a copy of the start of src into dst and returns at once (CUDA
// Driver API: cuMemcpyDtoHAsync). dst holds the data once the copy completes: wait for
// an event recorded on s after it, or for s; don't use dst until then. It is kept alive
// meanwhile. len(dst) must not exceed src.Size().
//
// On CUDA, whose driver copies to pageable memory synchronously, pageable Go memory
// goes through the stream's pinned staging ring (see CopyHtoD): the call only
// enqueues, a goroutine copies each staged chunk into dst, and the stream waits for it
// (cuStreamWaitValue32_v2), so that work enqueued on s later, an event included,
// completes only once dst holds the data.
func (s *Stream) CopyDtoH(dst []byte, src *Buffer) error {
	if err := nilStream(s); err != nil {
		return err
	}
	if err := s.notCapturing("CopyDtoH into Go memory (copy into a pinned buffer with CopyDtoD instead)"); err != nil {
		return err
	}
	if src != nil && int64(len(dst)) <= src.size && s.ringCopyable(dst, src) {
		return s.tracked([]use{src.use(Read)}, func() error {
			return s.ringFor().copy(dst, src.a.mem, src.off, true)
		})
	}
	seq, p, err := s.copyDtoH(dst, src)
	if err != nil {
		return err
	}
	if r := s.dev.race.Load(); r != nil {
		r.pinnedCopy(s, dst, Write, seq)
	}
	return s.unpinAfter(seq, p)
}

func (s *Stream) copyDtoH(dst []byte, src *Buffer) (uint64, *runtime.Pinner, error) {
	if src.isNil() {
		return 0, nil, errNilBuffer
	}
	if int64(len(dst)) > src.size {
		return 0, nil, fmt.Errorf("gpu: copying %d bytes out of a %d-byte buffer: %w", len(dst), src.size, ErrInvalidValue)
	}
	p := new(runtime.Pinner)
	if len(dst) > 0 {
		p.Pin(&dst[0])
	}
	seq, err := s.trackedScope([]use{src.use(Read)}, func() error {
		return s.be.CopyToHost(dst, src.a.mem, src.off)
	}, false)
	if err != nil {
		unpinFailed(s, seq, p)
		return 0, nil, err
	}
	return seq, p, nil
}

// unpinFailed unpins the memory of a copy that returned an error: at once if it wasn't
// enqueued (seq 0), else after it (trackEnd returns the seq of an operation enqueued
// whose event record failed).
func unpinFailed(s *Stream, seq uint64, p *runtime.Pinner) {
	if seq == 0 {
		p.Unpin()
		return
	}
	s.unpinAfter(seq, p)
}

// CopyDtoD enqueues a copy of src into dst, two buffers of the same size, possibly on
// different devices (a peer copy: CUDA Driver API: cuMemcpyPeerAsync). Overlapping
// buffers (views of one allocation sharing bytes) are an error, ErrInvalidValue: the
// driver's copies leave the result of an overlapping copy undefined.
func (s *Stream) CopyDtoD(dst, src *Buffer) error {
	_, err := s.copyDtoD(dst, src)
	return err
}

func (s *Stream) copyDtoD(dst, src *Buffer) (uint64, error) {
	if dst.isNil() || src.isNil() {
		return 0, errNilBuffer
	}
	if dst.size != src.size {
		return 0, fmt.Errorf("gpu: copying a %d-byte buffer into a %d-byte one: %w", src.size, dst.size, ErrInvalidValue)
	}
	if dst.overlaps(src) {
		return 0, fmt.Errorf("gpu: copying between overlapping buffers (bytes %d and %d of one allocation, %d long): %w", src.off, dst.off, src.size, ErrInvalidValue)
	}
	return s.trackedScope([]use{dst.use(Write), src.use(Read)}, func() error {
		return s.be.Copy(dst.a.mem, dst.off, src.a.mem, src.off, src.size)
	}, false)
}

// overlaps reports whether b and c share bytes of one allocation.
func (b *Buffer) overlaps(c *Buffer) bool {
	return b.a == c.a && b.size > 0 && c.size > 0 && b.off < c.off+c.size && c.off < b.off+b.size
}

// Memset enqueues setting every byte of dst to value (CUDA Driver API: cuMemsetD8Async).
func (s *Stream) Memset(dst *Buffer, value byte) error {
	if dst.isNil() {
		return errNilBuffer
	}
	return s.tracked([]use{dst.use(Write)}, func() error {
		return s.be.Memset(dst.a.mem, dst.off, uint32(value), 1, dst.size)
	})
}

// MemsetD32 enqueues setting every 32-bit word of dst to value; dst's size, and its
// offset in its allocation (Offset) for a view, must be multiples of 4 (CUDA Driver
// API: cuMemsetD32Async, whose address must be 4-byte aligned).
func (s *Stream) MemsetD32(dst *Buffer, value uint32) error {
	if dst.isNil() {
		return errNilBuffer
	}
	if dst.size%4 != 0 || dst.off%4 != 0 {
		return fmt.Errorf("gpu: 32-bit memset of %d bytes at offset %d: %w", dst.size, dst.off, ErrInvalidValue)
	}
	return s.tracked([]use{dst.use(Write)}, func() error {
		return s.be.Memset(dst.a.mem, dst.off, value, 4, dst.size/4)
	})
}

// opWait waits for the operation seq on s: while spinning it queries the stream
// (covering later work too, which costs no event record; through queryWork, since s
// may be closed and destroyed meanwhile: the wait holds no stream); to park or block it
// records an event after the operation.
type opWait struct {
	s      *Stream
	seq    uint64
	ev     *pev
	misses int // stream queries that found it busy (query)
}

// opWaitStreamQueries is how many times an opWait without an event queries its whole
// stream before it records one: the stream may be shared (the device's copy streams)
// and kept busy by later work, which the event's wait no longer covers once recorded.
// 64 queries take 15-30 us on the H200's hosts, past the few microseconds of At's
// one-word copy, which at 8 queries recorded an event (about 2 us) on many reads:
// gpubench array/iteration/scalar/16k (ten reads) took 87-107 us at 8 and 78-85 us at
// 64, against 69-83 us for the 2026-11-30 build, each in turn with it on the H200.
const opWaitStreamQueries = 64

func (w *opWait) get() (*pev, error) {
	if w.ev == nil {
		ev, err := w.s.eventAfter(w.seq)
		if err != nil {
			return nil, err
		}
		w.ev = ev
	}
	return w.ev, nil
}

func (w *opWait) query() (bool, error) {
	if w.ev != nil {
		return w.ev.be.Query()
	}
	c := w.s.seq.Load() // enqueued before the query: done if the stream is idle
	done, err := w.s.queryWork()
	if done && err == nil {
		advance(&w.s.done, c)
	}
	if !done && err == nil {
		if w.misses++; w.misses >= opWaitStreamQueries {
			if _, err := w.get(); err != nil {
				return false, err
			}
		}
	}
	return done, err
}

func (w *opWait) block() error {
	ev, err := w.get()
	if err != nil {
		return err
	}
	return ev.be.Synchronize()
}

func (w *opWait) park() ([]*pev, error) {
	ev, err := w.get()
	if err != nil {
		return nil, err
	}
	return []*pev{ev.retain()}, nil
}

// waitOp waits for operation seq on s under ctx.
func (s *Stream) waitOp(ctx context.Context, seq uint64) error {
	pol, err := s.dev.pickPolicy(nil)
	if err != nil {
		return err
	}
	w := &opWait{s: s, seq: seq}
	err = s.dev.wait(ctx, w, pol)
	if err == nil {
		w.ev.settle() // (not seq itself: a later seq can be enqueued earlier)
	}
	w.ev.release()
	return err
}

// waitUnpin waits for operation seq on s, then unpins p; if ctx ends first (or is nil,
// which the callers rule out), the unpin waits for the operation in the background.
func (s *Stream) waitUnpin(ctx context.Context, seq uint64, p *runtime.Pinner) error {
	err := s.waitOp(ctx, seq)
	if err != nil && (ctx == nil || ctx.Err() != nil) {
		s.unpinAfter(seq, p)
		return err
	}
	p.Unpin()
	return err
}

// CopyFromHost copies src into the start of the buffer and returns once the data is in
// place, ordered like any other use of the buffer. It first waits on the host, under
// ctx and without pinning an OS thread, for the buffer's pending uses on every stream,
// then copies on one of the device's own copy streams (see the package documentation's
// "Host copies"); a copy of a buffer that is ready is never delayed by copies that wait.
// If ctx ends first it returns ctx.Err(), and src is no longer used once it has
// returned: the buffer then holds its old contents, src, or for a large copy a mix
// (the chunks copied before the end).
//
// On CUDA the copy goes through the device's pinned staging buffers, asynchronous
// copies that the package waits for: large copies in chunks of up to 8 MiB, two in
// flight, the host's part of each over several goroutines while the DMA engine moves
// the other: on the H200 at 1 GiB 2.6 times the speed of the driver's own pageable copy
// to the device and 1.5 times from it, bound by the host's memory bandwidth. Pinned
// memory (a buffer from AllocPinned, or src inside one) is copied directly.
// CopyToHost does the same.
func (b *Buffer) CopyFromHost(ctx context.Context, src []byte) error {
	return b.copyHost(ctx, src, false)
}

// plainCheck returns the error of a plain copy's context, receiver or wait policy,
// before anything is enqueued.
func (b *Buffer) plainCheck(ctx context.Context) error {
	if err := nilContext(ctx); err != nil {
		return err
	}
	if b.isNil() {
		return errNilBuffer
	}
	return b.a.dev.policyErr()
}

// CopyToHost copies the start of the buffer into dst and returns once dst holds the
// data. It waits for the buffer's pending writes, on any stream, on the host under ctx
// (see CopyFromHost). If ctx ends first it returns ctx.Err() and dst is not written
// after that (for a large copy it may hold part of the data; for a dst inside one of
// the device's pinned or unified buffers, a copy already under way still lands).
func (b *Buffer) CopyToHost(ctx context.Context, dst []byte) error {
	return b.copyHost(ctx, dst, true)
}

// CopyFrom copies src, a buffer of the same size, into the buffer and returns once the
// copy is complete, ordered like any other use of both. Like CopyFromHost it first
// waits on the host, under ctx, for the uses it conflicts with, then copies on one of
// the device's copy streams. If ctx ends first it returns ctx.Err(); a copy already
// enqueued then completes in the background (Device.Synchronize waits for it).
func (b *Buffer) CopyFrom(ctx context.Context, src *Buffer) error {
	if err := b.plainCheck(ctx); err != nil {
		return err
	}
	if src.isNil() {
		return errNilBuffer
	}
	if b.size != src.size {
		return fmt.Errorf("gpu: copying a %d-byte buffer into a %d-byte one: %w", src.size, b.size, ErrInvalidValue)
	}
	if b.overlaps(src) {
		return fmt.Errorf("gpu: copying between overlapping buffers (bytes %d and %d of one allocation, %d long): %w", src.off, b.off, src.size, ErrInvalidValue)
	}
	s := b.a.dev.copyStream(false)
	seq, err := s.trackedReady(ctx, []use{b.use(Write), src.use(Read)}, func() error {
		return s.be.Copy(b.a.mem, b.off, src.a.mem, src.off, src.size)
	})
	if err != nil {
		return err
	}
	return s.waitOp(ctx, seq)
}

// TrimMemory hands the device's unused memory back to the system: it frees the small
// blocks kept for reuse, waits (under ctx) for the device's streams, and trims the
// memory pool (CUDA Driver API: cuMemPoolTrimTo). The pool otherwise keeps freed memory
// for reuse. Measured on the H200 (driver 580): the pool releases memory freed in stream
// order only after a driver synchronize (cuCtxSynchronize), so TrimMemory makes one once
// the device is idle; it returns at once unless work enqueued outside this package is
// still running.
func (d *Device) TrimMemory(ctx context.Context) error {
	if err := nilContext(ctx); err != nil {
		return err
	}
	if d.isNil() {
		return errNilDevice
	}
	d.cache.flush(d, nil, false)
	d.stagePool.flush()
	if err := d.Synchronize(ctx); err != nil {
		return err
	}
	if err := d.syncBackend(); err != nil {
		return err
	}
	return d.be.TrimPool(0)
}
