package gpu

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/go-gpu/gpu/backend"
)

// EventFlag is an option of NewEvent.
type EventFlag uint8

const (
	// DisableTiming makes an event that can't measure time, which is cheaper to record
	// (CUDA Driver API: CU_EVENT_DISABLE_TIMING).
	DisableTiming EventFlag = 1 << iota
)

// Event marks a point in a stream's work (CUDA: an event created with
// CU_EVENT_BLOCKING_SYNC, so a thread waiting in the driver sleeps). Record it on a
// stream with Stream.Record; it completes when the work enqueued before the record has.
// An event never recorded counts as complete. Re-recording an event moves it: Query,
// Wait, Done and Stream.WaitEvent called afterwards see the new point (as CUDA's
// cuEventQuery and cuEventSynchronize see the latest cuEventRecord). A Wait or Done
// still pending when the event is re-recorded may end at either point: don't re-record
// an event that others are waiting on (use one event per point instead). An Event is
// safe for concurrent use.
//
// A nil *Event is never valid: its methods that return an error, Close included, return
// one wrapping ErrInvalidValue; Device returns nil, and Done a closed channel (as for a
// closed event: Query and Wait give the error).
type Event struct {
	dev    *Device
	be     backend.Event
	timing bool
	*eventCore
}

// eventCore is the part of an event its cleanup needs. Parked waits hold the event
// (holds): it is destroyed when closed and no parked wait still uses it, since the
// driver must not destroy an event a thread is synchronizing on.
type eventCore struct {
	be        backend.Event
	mu        sync.Mutex
	closed    bool
	destroyed bool
	holds     int
}

// hold keeps the event alive for a parked wait; false if it is closed.
func (c *eventCore) hold() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.holds++
	return true
}

func (c *eventCore) unhold() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.holds--
	c.maybeDestroyLocked()
}

func (c *eventCore) maybeDestroyLocked() error {
	if c.closed && c.holds == 0 && !c.destroyed {
		c.destroyed = true
		return c.be.Destroy()
	}
	return nil
}

// destroy is the backstop for an event dropped without Close.
func (c *eventCore) destroy() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	c.maybeDestroyLocked()
}

// NewEvent creates an event. Events measure time unless made with DisableTiming.
func (d *Device) NewEvent(flags ...EventFlag) (*Event, error) {
	if d.isNil() {
		return nil, errNilDevice
	}
	timing := true
	for _, f := range flags {
		if f&DisableTiming != 0 {
			timing = false
		}
	}
	be, err := d.be.NewEvent(timing)
	if err != nil {
		return nil, err
	}
	e := &Event{dev: d, be: be, timing: timing, eventCore: &eventCore{be: be}}
	runtime.AddCleanup(e, (*eventCore).destroy, e.eventCore)
	return e, nil
}

// isNil reports a nil event or a zero Event{} (not made by NewEvent), which is one.
func (e *Event) isNil() bool { return e == nil || e.eventCore == nil }

// errNilEvent is the error of a nil *Event as the receiver.
var errNilEvent = fmt.Errorf("gpu: nil event: %w", ErrInvalidValue)

// Close destroys the event (once no parked wait uses it). It is idempotent. Closing a
// nil event is an error wrapping ErrInvalidValue.
func (e *Event) Close() error {
	if e.isNil() {
		return errNilEvent
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	if r := e.dev.race.Load(); r != nil {
		r.mu.Lock()
		delete(r.events, e.be)
		r.mu.Unlock()
	}
	return e.maybeDestroyLocked()
}

// Device returns the event's device (nil for a nil event).
func (e *Event) Device() *Device {
	if e.isNil() {
		return nil
	}
	return e.dev
}

// Query reports whether the event has completed; a fault of the device in the work
// before it (ErrLaunchFailed) is returned as the error. (A stream's fault by a failed
// HostFunc is the stream's: see Stream.HostFunc.)
func (e *Event) Query() (bool, error) {
	if e.isNil() {
		return false, errNilEvent
	}
	// Held, so that a concurrent Close doesn't destroy the event under the query.
	if !e.hold() {
		return false, fmt.Errorf("gpu: event: %w", ErrClosed)
	}
	defer e.unhold()
	done, err := e.be.Query()
	if r := e.dev.race.Load(); r != nil && done && err == nil {
		r.eventDone(e.be)
	}
	return done, err
}

// Wait waits until the event completes, without pinning an OS thread (unless the policy
// is WaitBlock). It returns ctx.Err() if ctx ends first, and the error of a fault.
func (e *Event) Wait(ctx context.Context, policy ...WaitPolicy) error {
	if e.isNil() {
		return errNilEvent
	}
	// Held for the whole wait: a Close meanwhile destroys the event only once the wait
	// (spinning or blocking in the driver) is done with it. A parked wait holds it too.
	if !e.hold() {
		return fmt.Errorf("gpu: event: %w", ErrClosed)
	}
	defer e.unhold()
	p, err := e.dev.pickPolicy(policy)
	if err != nil {
		return err
	}
	err = e.dev.wait(ctx, eventWait{e}, p)
	if r := e.dev.race.Load(); r != nil && err == nil {
		r.eventDone(e.be)
	}
	return err
}

type eventWait struct{ e *Event }

func (w eventWait) query() (bool, error) { return w.e.be.Query() }
func (w eventWait) block() error         { return w.e.be.Synchronize() }
func (w eventWait) park() ([]*pev, error) {
	// The hub waits on the user's event itself, held open until the wait ends.
	if !w.e.hold() {
		return nil, fmt.Errorf("gpu: event: %w", ErrClosed)
	}
	return []*pev{{be: w.e.be, free: w.e.unhold}}, nil
}

// Done returns a channel closed when the event's current recording completes (see Event
// about re-recording), or when the device faults (then Query or Wait return the error).
// Each call starts a parked wait unless the event is already complete. For a nil event
// the channel is closed (Query and Wait return the error), never one that blocks
// forever.
func (e *Event) Done() <-chan struct{} {
	if e.isNil() {
		return closedChan
	}
	if done, err := e.Query(); done || err != nil || !e.hold() {
		return closedChan
	}
	return e.dev.hub.submit(e.be, e.unhold).done
}

// Elapsed returns the time from start to end, two timing events recorded and complete
// (CUDA Driver API: cuEventElapsedTime; resolution about half a microsecond). An event
// not recorded or not yet complete is an error wrapping ErrInvalidValue (wait for end
// first: Event.Wait), and so are events of two devices (their clocks are not one).
func Elapsed(start, end *Event) (time.Duration, error) {
	if start.isNil() || end.isNil() {
		return 0, fmt.Errorf("gpu: elapsed time of a nil event: %w", ErrInvalidValue)
	}
	if start.dev != end.dev {
		return 0, fmt.Errorf("gpu: elapsed time from an event of %v to one of %v: %w", start.dev, end.dev, ErrInvalidValue)
	}
	if !start.timing || !end.timing {
		return 0, fmt.Errorf("gpu: elapsed time needs events made without DisableTiming: %w", ErrInvalidValue)
	}
	if !start.hold() {
		return 0, fmt.Errorf("gpu: event: %w", ErrClosed)
	}
	defer start.unhold()
	if !end.hold() {
		return 0, fmt.Errorf("gpu: event: %w", ErrClosed)
	}
	defer end.unhold()
	return end.be.Elapsed(start.be)
}
