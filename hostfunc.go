package gpu

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/internal/hostcheck"
)

// Host functions in stream order. CUDA's own (cuLaunchHostFunc) runs the function on
// one driver thread shared by every stream of the process, which must not call CUDA and
// must not block: a function that waits for another stream, or takes a lock that a
// goroutine holds while it synchronizes, can deadlock every stream's callbacks (and, in
// a Go program, its callback into Go costs about 31 us through cgo, 96 us through
// purego: DESIGN.md §2). So no driver callback is involved: HostFunc is a job of the
// stream's staging ring (ring.go), whose goroutine (the drainer) waits for an event
// recorded after the stream's earlier work, with the package's own waits, runs the
// function, then writes the ring's pinned word, which the stream waits for
// (cuStreamWaitValue32_v2) before its later work. The function runs on that goroutine,
// one of each stream's: it may block, wait for other streams, take locks or do I/O,
// holding up only its own stream's later work. The same mechanism serves the stream's
// copies of pageable memory, in the same order.

// HostFunc enqueues f on the stream: f runs on a goroutine once the work enqueued on s
// before has completed, and the work enqueued on s after waits until f has returned.
// The call returns at once. f may do anything a Go function may: block, synchronize
// other streams, take locks, do I/O (it holds up only s's later work). It must not wait
// for work enqueued on s after it, which waits for f: Stream.Synchronize of s,
// Device.Synchronize, and the operations on s that read a result back on the host
// (Nonzero, NonzeroWhere, Argwhere, Extract, FindFirst, FindFirstWhere, CountNonzero,
// Unique, Bincount without Bins), called inside f, return an error wrapping
// ErrInvalidValue instead of deadlocking (other waits for that work deadlock). On CUDA,
// f must not be the first use of a kernel on the device either (an operation's first
// call, a Go kernel's first launch, LoadModule): loading a module may synchronize the
// whole context, and so wait for f; such a call returns an error wrapping
// ErrInvalidValue instead (use the operation once before enqueuing f).
//
// If f returns an error or panics, the stream is faulted with that error (a panic's
// wraps ErrLaunchFailed): s.Synchronize, s.Query and every later operation on s return
// it; the work enqueued after f still runs. The device is not faulted: its other
// streams go on, and Device.Synchronize doesn't report it; nor do the waits that see
// only the device's work, which went on: events recorded on s (Event.Wait, Query,
// another stream's WaitEvent) and host reads of the arrays s wrote. Close the stream
// and use another.
//
// Without stream memory operations (GPU_STREAM_MEMOPS=0, or a driver older than CUDA
// 11.7), HostFunc waits for s's earlier work and runs f before it returns. A stream
// that captures a graph can't take host functions (ErrCapturing).
func (s *Stream) HostFunc(f func() error) error {
	if err := nilStream(s); err != nil {
		return err
	}
	if f == nil {
		return fmt.Errorf("gpu: HostFunc(nil): %w", ErrInvalidValue)
	}
	if err := s.hold(); err != nil {
		return err
	}
	defer s.unhold()
	if err := s.notCapturing("HostFunc"); err != nil {
		return err
	}
	if ops, ok := s.be.(backend.StreamMemOps); ok && ops.MemOpsSupported() && asyncHostFuncs {
		if err := s.ringFor().hostFunc(s, f); err != nil {
			return err
		}
		s.enqueued()
		s.enqueued()
		return nil
	}
	// In place: after the stream's work so far, before anything enqueued later.
	ev, err := s.recordNow()
	if err != nil {
		return err
	}
	pol, err := s.dev.pickPolicy(nil)
	if err == nil {
		err = s.dev.wait(context.Background(), eventsWait{[]*pev{ev}}, pol)
	}
	ev.release()
	if err != nil {
		return err
	}
	s.runHostFunc(f)
	if p := s.fault.Load(); p != nil {
		return *p
	}
	return nil
}

// asyncHostFuncs turns the ring's host functions on (tests turn it off to check the
// fallback).
var asyncHostFuncs = true

// hostFunc enqueues f as a job of the ring: the stream records an event, the drainer
// waits for it and runs f, and the stream waits for the word; the caller holds s. The
// event covers s's work so far (its operation count), so that the drainer, once it saw
// the event complete, settles those uses: f may then read back what s's earlier work
// wrote without waiting for anything recorded later on s, which waits for f. On an idle
// stream (nothing enqueued since a wait saw it complete) there is no event: the uses
// settle at once and the drainer runs f without waiting.
func (r *hostRing) hostFunc(s *Stream, f func() error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.readyWord(); err != nil {
		return err
	}
	cover := s.seq.Load() // (before idle: an operation counted in cover is in pend too)
	var ev *pev
	if s.idle() && s.dev.race.Load() == nil {
		// Nothing is pending on s (a wait saw all its work complete): f may run at
		// once, with no event for the drainer to wait for (a driver call here and a
		// query there fewer on the round trip), and s's uses up to now are complete.
		// The race checker's bookkeeping wants the event's wait.
		advance(&s.done, cover)
	} else {
		var err error
		if ev, err = r.record(); err != nil {
			return err
		}
		ev.done, ev.cover, ev.sid = &s.done, cover, s.id
	}
	core := s.streamCore
	g := r.g
	// The job first: once the stream waits for its word, the drainer must come.
	r.push(&ringJob{g: g, ev: ev, fn: f, core: core})
	if err := r.wait(g + 1); err != nil {
		// Not enqueued: the drainer still runs f and writes the word, which nothing
		// waits for; the next job's wait covers it.
		r.g++
		return err
	}
	r.g++
	return nil
}

// runHostFunc runs f as one of the stream's host functions: marked as such (so that
// the stream's and the device's Synchronize inside it fail rather than deadlock), its
// error or panic faulting the stream.
func (c *streamCore) runHostFunc(f func() error) {
	d := c.dev
	id := enterScope()
	c.hostFns.add(id)
	d.hostFns.Add(1)
	d.slowSync.Add(1)
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				if e, ok := r.(error); ok {
					err = fmt.Errorf("gpu: host function panicked: %w: %w\n%s", e, ErrLaunchFailed, debug.Stack())
				} else {
					err = fmt.Errorf("gpu: host function panicked: %v: %w\n%s", r, ErrLaunchFailed, debug.Stack())
				}
			}
		}()
		return f()
	}()
	d.slowSync.Add(-1)
	d.hostFns.Add(-1)
	c.hostFns.remove(id)
	leaveScope()
	if err != nil {
		if !errors.Is(err, ErrLaunchFailed) {
			err = fmt.Errorf("gpu: host function failed: %w", err)
		}
		c.fault.CompareAndSwap(nil, &err)
	}
}

// inOwnHostFunc returns an error if the calling goroutine runs one of s's host
// functions: a wait for s would wait for the function itself.
func (s *Stream) inOwnHostFunc(what string) error {
	if s.hostFns.n.Load() == 0 {
		return nil // (inlined: every wait checks)
	}
	return s.ownHostFuncErr(what)
}

func (s *Stream) ownHostFuncErr(what string) error {
	if s.hostFns.hasMe() {
		return fmt.Errorf("gpu: %s of %v inside one of its own host functions, which the stream waits for: %w", what, s, ErrInvalidValue)
	}
	return nil
}

// moduleLoadAllowed returns an error wrapping ErrInvalidValue if d is a CUDA device and
// the calling goroutine runs a host function of one of its streams: loading a module
// (or a kernel of it, under CUDA's lazy loading) may synchronize the whole context, so
// it would wait for that stream, which waits for the function (CUDA C++ Programming
// Guide, "Lazy Loading": loading kernels might require context synchronization).
func (d *Device) moduleLoadAllowed() error {
	if d.hostFns.Load() == 0 || d.info.Backend != "cuda" {
		return nil // (inlined: every kernel lookup checks)
	}
	for _, s := range d.liveStreams() {
		if s.hostFns.hasMe() {
			return fmt.Errorf("gpu: loading a kernel inside a host function of %v: on CUDA a module load may wait for every stream of the context, and so for this function: use the kernel once before enqueuing the function: %w", s, ErrInvalidValue)
		}
	}
	return nil
}

func init() {
	// (package gokernel asks before it waits for a Go kernel's build)
	hostcheck.ModuleLoad = func(dev any) error {
		if d, ok := dev.(*Device); ok && !d.isNil() {
			return d.moduleLoadAllowed()
		}
		return nil
	}
}

// inHostFunc returns an error if the calling goroutine runs a host function of one of
// d's streams (Device.Synchronize would wait for it).
func (d *Device) inHostFunc(what string) error {
	if d.hostFns.Load() == 0 {
		return nil // (inlined: every device wait checks)
	}
	return d.inHostFuncSlow(what)
}

func (d *Device) inHostFuncSlow(what string) error {
	for _, s := range d.liveStreams() {
		if err := s.inOwnHostFunc(what); err != nil {
			return err
		}
	}
	return nil
}
