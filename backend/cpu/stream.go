package cpu

import (
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/go-gpu/gpu/backend"
)

// op is one queued operation; after, if set, runs once the operation counts as done
// (it completes events, so that a completed event implies an idle stream behind it).
type op struct {
	run   func() error
	after func()
}

// Stream is an ordered queue of operations run by a goroutine.
type Stream struct {
	dev       *Device
	mu        sync.Mutex
	queue     []op
	running   bool   // a goroutine is draining the queue
	enq, done uint64 // operations enqueued and completed
	dead      bool
	capt      *Graph // the graph being recorded, or nil (graph.go)
}

func (s *Stream) enqueue(f func() error) error { return s.enqueueOp(op{run: f}) }

func (s *Stream) enqueueOp(f op) error { return s.push(f, false) }

// push queues f; onDead allows it on a destroyed stream (whose queued work still runs),
// for Device.Synchronize.
func (s *Stream) push(f op, onDead bool) error {
	if err := s.dev.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	if s.dead && !onDead {
		s.mu.Unlock()
		return fmt.Errorf("cpu: stream: %w", backend.ErrClosed)
	}
	if s.capt != nil && !onDead {
		if f.after != nil {
			s.mu.Unlock()
			return fmt.Errorf("cpu: an operation that completes events, while the stream captures: %w", backend.ErrNotSupported)
		}
		s.capt.ops = append(s.capt.ops, f)
		s.mu.Unlock()
		return nil
	}
	s.queue = append(s.queue, f)
	s.enq++
	if !s.running {
		s.running = true
		go s.run()
	}
	s.mu.Unlock()
	return nil
}

func (s *Stream) run() {
	for {
		s.mu.Lock()
		if len(s.queue) == 0 {
			s.running = false
			s.queue = nil
			dead := s.dead
			s.mu.Unlock()
			if dead {
				s.dev.forget(s) // a destroyed stream leaves the device once drained
			}
			return
		}
		f := s.queue[0]
		s.queue[0] = op{}
		s.queue = s.queue[1:]
		s.mu.Unlock()
		if s.dev.Err() != nil {
			continue // a faulted device runs nothing more
		}
		err := safeRun(f.run)
		if err != nil {
			s.dev.fault(err)
		}
		s.mu.Lock()
		s.done++
		s.mu.Unlock()
		if err == nil && f.after != nil {
			f.after()
		}
	}
}

func safeRun(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("cpu: kernel panicked: %v\n%s", r, debug.Stack())
		}
	}()
	return f()
}

// Query reports whether the stream is idle.
func (s *Stream) Query() (bool, error) {
	s.mu.Lock()
	idle := s.done == s.enq
	s.mu.Unlock()
	// The fault after the count: an operation that failed counts as done after its
	// fault is set (run), so a count that includes it sees the fault.
	if err := s.dev.Err(); err != nil {
		return false, err
	}
	return idle, nil
}

// Synchronize waits until the stream is idle or the device faults.
func (s *Stream) Synchronize() error { return s.sync(false) }

// sync is Synchronize; onDead allows it on a destroyed stream.
func (s *Stream) sync(onDead bool) error {
	done := make(chan struct{})
	if err := s.push(op{run: func() error { return nil }, after: func() { close(done) }}, onDead); err != nil {
		return err
	}
	select {
	case <-done:
	case <-s.dev.faultCh:
	}
	return s.dev.Err()
}

// Record records e on the stream.
func (s *Stream) Record(be backend.Event) error {
	e, ok := be.(*Event)
	if !ok || e.dev != s.dev {
		return fmt.Errorf("cpu: record of a foreign event: %w", backend.ErrInvalidValue)
	}
	if err := s.noCapture("Record"); err != nil {
		return err
	}
	ch := make(chan struct{})
	e.mu.Lock()
	if e.dead {
		e.mu.Unlock()
		return fmt.Errorf("cpu: event: %w", backend.ErrClosed)
	}
	prev := e.ch
	e.ch = ch
	e.mu.Unlock()
	err := s.enqueueOp(op{run: func() error {
		now := time.Now()
		e.mu.Lock()
		if e.ch == ch {
			e.at = now
		}
		e.mu.Unlock()
		return nil
	}, after: func() { close(ch) }})
	if err != nil {
		e.mu.Lock()
		if e.ch == ch {
			e.ch = prev
		}
		e.mu.Unlock()
	}
	return err
}

// WaitEvent makes later work on the stream wait for e's current recording.
func (s *Stream) WaitEvent(be backend.Event) error {
	e, ok := be.(*Event)
	if !ok {
		return fmt.Errorf("cpu: wait on a foreign event: %w", backend.ErrInvalidValue)
	}
	ch, err := e.current()
	if err != nil {
		return err
	}
	select {
	case <-ch:
		return nil // already complete: nothing to wait for
	default:
	}
	if err := s.noCapture("WaitEvent"); err != nil {
		return err
	}
	fault := e.dev.faultCh
	return s.enqueue(func() error {
		select {
		case <-ch:
			return nil
		case <-fault:
			return e.dev.Err()
		}
	})
}

func (s *Stream) mem(m backend.Mem, off, n int64) ([]byte, error) {
	cm, ok := m.(*Mem)
	if !ok {
		return nil, fmt.Errorf("cpu: foreign memory: %w", backend.ErrInvalidValue)
	}
	if off < 0 || n < 0 || off+n > cm.Size() {
		return nil, fmt.Errorf("cpu: range [%d, %d) outside an allocation of %d bytes: %w", off, off+n, cm.Size(), backend.ErrInvalidValue)
	}
	return cm.buf[off : off+n], nil
}

// Memset sets n elements of width bytes to value.
func (s *Stream) Memset(dst backend.Mem, off int64, value uint32, width int, n int64) error {
	if width != 1 && width != 2 && width != 4 {
		return fmt.Errorf("cpu: memset width %d: %w", width, backend.ErrInvalidValue)
	}
	b, err := s.mem(dst, off, n*int64(width))
	if err != nil {
		return err
	}
	return s.enqueue(func() error {
		for i := 0; i < len(b); i += width {
			for j := 0; j < width; j++ {
				b[i+j] = byte(value >> (8 * j))
			}
		}
		return nil
	})
}

// Copy copies n bytes between two memories.
func (s *Stream) Copy(dst backend.Mem, dstOff int64, src backend.Mem, srcOff int64, n int64) error {
	d, err := s.mem(dst, dstOff, n)
	if err != nil {
		return err
	}
	r, err := s.mem(src, srcOff, n)
	if err != nil {
		return err
	}
	return s.enqueue(func() error { copy(d, r); return nil })
}

// Copy2D copies height rows of width bytes, row r from srcOff + r*srcPitch of src to
// dstOff + r*dstPitch of dst, in stream order (backend.Copier2D, as cuMemcpy2DAsync).
// Pitches below width are errors wrapping ErrInvalidValue.
func (s *Stream) Copy2D(dst backend.Mem, dstOff, dstPitch int64, src backend.Mem, srcOff, srcPitch int64, width, height int64) error {
	if width <= 0 || height <= 0 {
		return nil
	}
	if dstPitch < width || srcPitch < width {
		return fmt.Errorf("cpu: 2-D copy of rows of %d bytes with pitches %d and %d: %w", width, dstPitch, srcPitch, backend.ErrInvalidValue)
	}
	d, err := s.mem(dst, dstOff, (height-1)*dstPitch+width)
	if err != nil {
		return err
	}
	r, err := s.mem(src, srcOff, (height-1)*srcPitch+width)
	if err != nil {
		return err
	}
	return s.enqueue(func() error {
		for i := range height {
			copy(d[i*dstPitch:i*dstPitch+width], r[i*srcPitch:i*srcPitch+width])
		}
		return nil
	})
}

// CopyFromHost copies src into dst at off, in stream order.
func (s *Stream) CopyFromHost(dst backend.Mem, off int64, src []byte) error {
	d, err := s.mem(dst, off, int64(len(src)))
	if err != nil {
		return err
	}
	return s.enqueue(func() error { copy(d, src); return nil })
}

// CopyToHost copies len(dst) bytes from src at off into dst, in stream order.
func (s *Stream) CopyToHost(dst []byte, src backend.Mem, off int64) error {
	r, err := s.mem(src, off, int64(len(dst)))
	if err != nil {
		return err
	}
	return s.enqueue(func() error { copy(dst, r); return nil })
}

// FreeAsync releases m once the stream reaches this point, poisoning it.
func (s *Stream) FreeAsync(m backend.Mem) error {
	cm, ok := m.(*Mem)
	if !ok {
		return fmt.Errorf("cpu: free of foreign memory: %w", backend.ErrInvalidValue)
	}
	if err := s.noCapture("FreeAsync"); err != nil {
		return err
	}
	return s.enqueue(func() error { cm.dev.release(cm); return nil })
}

// Destroy marks the stream dead; queued work still runs, and the device's Synchronize
// waits for it (as cuCtxSynchronize waits for the work of destroyed streams).
func (s *Stream) Destroy() error {
	s.mu.Lock()
	s.dead = true
	idle := !s.running
	s.mu.Unlock()
	if idle {
		s.dev.forget(s)
	}
	return nil
}

// forget removes a destroyed, drained stream from the device.
func (d *Device) forget(s *Stream) {
	d.mu.Lock()
	delete(d.streams, s)
	d.mu.Unlock()
}

// Launch enqueues a kernel: f must be a *Func.
func (s *Stream) Launch(f backend.Function, cfg backend.LaunchConfig, args []backend.Arg) error {
	run, err := s.dev.launchOp(f, cfg, args)
	if err != nil {
		return err
	}
	return s.enqueue(run)
}

// launchOp returns the operation of a launch of f.
func (d *Device) launchOp(f backend.Function, cfg backend.LaunchConfig, args []backend.Arg) (func() error, error) {
	fn, ok := f.(*Func)
	if !ok {
		return nil, fmt.Errorf("cpu: launch of %T, not a CPU function: %w", f, backend.ErrInvalidValue)
	}
	if err := d.checkGeometry(cfg); err != nil {
		return nil, err
	}
	l := &Launch{Grid: cfg.Grid, Block: cfg.Block, SharedMem: cfg.SharedMem, dev: d,
		Args: append([]backend.Arg(nil), args...)}
	l.mem = make([][]byte, len(args))
	l.full = make([][]byte, len(args))
	l.off = make([]int, len(args))
	for i, a := range args {
		switch a.Kind {
		case backend.ArgMem:
			cm, ok := a.Mem.(*Mem)
			if !ok || a.Off < 0 || a.Off > cm.Size() {
				return nil, fmt.Errorf("cpu: argument %d: bad memory or offset: %w", i, backend.ErrInvalidValue)
			}
			l.mem[i] = cm.buf[a.Off:]
			l.full[i], l.off[i] = cm.buf, int(a.Off)
		case backend.ArgPtr:
			if a.Val != 0 {
				full, off, err := d.resolve(a.Val)
				if err != nil {
					return nil, fmt.Errorf("cpu: argument %d: %w", i, err)
				}
				l.mem[i] = full[off:]
				l.full[i], l.off[i] = full, off
			}
		}
	}
	return func() error { return fn.fn(l) }, nil
}

// checkGeometry rejects the launch geometries CUDA rejects (CUDA_ERROR_INVALID_VALUE):
// a block of more than MaxThreadsPerBlock threads or past 1024 x 1024 x 64, a grid past
// 2^31-1 x 65535 x 65535, more dynamic shared memory than MaxSharedPerBlock.
func (d *Device) checkGeometry(cfg backend.LaunchConfig) error {
	info := d.Info()
	b, g := cfg.Block, cfg.Grid
	if b[0] > 1024 || b[1] > 1024 || b[2] > 64 || uint64(b[0])*uint64(b[1])*uint64(b[2]) > uint64(info.MaxThreadsPerBlock) {
		return fmt.Errorf("cpu: block %v: at most %d threads, 1024 x 1024 x 64: %w", b, info.MaxThreadsPerBlock, backend.ErrInvalidValue)
	}
	if g[0] > 1<<31-1 || g[1] > 65535 || g[2] > 65535 {
		return fmt.Errorf("cpu: grid %v: at most 2^31-1 x 65535 x 65535: %w", g, backend.ErrInvalidValue)
	}
	if int64(cfg.SharedMem) > int64(info.MaxSharedPerBlock) {
		return fmt.Errorf("cpu: %d bytes of shared memory: at most %d: %w", cfg.SharedMem, info.MaxSharedPerBlock, backend.ErrInvalidValue)
	}
	return nil
}

// MemOpsSupported reports true: WaitValue32 works on the CPU.
func (s *Stream) MemOpsSupported() bool { return true }

// WaitValue32 makes later work on the stream wait until the 32-bit word at off of m
// reaches v (int32(word-v) >= 0), polling it with a backoff of up to 1 ms, as CUDA's
// stream memory operations do.
func (s *Stream) WaitValue32(m backend.Mem, off int64, v uint32) error {
	b, err := s.mem(m, off, 4)
	if err != nil {
		return err
	}
	if uintptr(unsafe.Pointer(&b[0]))%4 != 0 {
		return fmt.Errorf("cpu: waiting on an unaligned word: %w", backend.ErrInvalidValue)
	}
	if err := s.noCapture("WaitValue32"); err != nil {
		return err
	}
	p := (*uint32)(unsafe.Pointer(&b[0]))
	fault := s.dev.faultCh
	return s.enqueue(func() error {
		for sleep := time.Microsecond; int32(atomic.LoadUint32(p)-v) < 0; sleep = min(2*sleep, time.Millisecond) {
			select {
			case <-fault:
				return s.dev.Err()
			case <-time.After(sleep):
			}
		}
		return nil
	})
}
