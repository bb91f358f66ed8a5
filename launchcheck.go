package gpu

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Launch checks: failures a kernel finds while it runs, reported by a later wait. A
// CUDA trap would end the device's context for good, so a kernel that meets a failure
// it must report (an index out of range in raise mode, a Go kernel's bounds check)
// records it in its launch's check slot instead: a few words of pinned host memory,
// mapped for the device, zeroed before the launch (the device's checkSlots pool). The
// device keeps the launches' pending slots (launchChecks); a wait that covers a launch
// reads its slot, reports what it holds and returns the slot to the pool. Index
// operations (index.go, scatter.go) and Stream.LaunchChecked (package gokernel's
// kernels) are the two users; each decodes its slot into its own error.
//
// A slot's contract: checkSlotBytes bytes; a kernel that records a failure makes the
// first 8 bytes nonzero (a launch whose slot's first 8 bytes are zero recorded
// nothing); the rest is the user's.

// checkSlotBytes is the size of a launch's check slot (a cache line, so that two
// slots never share one).
const checkSlotBytes = 64

// checkSlotBlock is the pinned memory the device's check slots are cut from at a time:
// 1024 slots, so that the launches of a loop that no wait covers (each holds its slot
// until one does) rarely pay for a pinned allocation (cuMemHostAlloc) before their
// launch.
const checkSlotBlock = 64 << 10

// CheckSlotWords is the number of 32-bit words of the check slot of
// Stream.LaunchChecked.
const CheckSlotWords = checkSlotBytes / 4

// ErrIndexOutOfRange is the error of an index out of range in ModeRaise (the default
// of Take, TakeAlongAxis, Put, PutAlongAxis, AddAt, MaximumAt and MinimumAt), of a
// negative value given to Bincount, and of a value outside Bincount's Bins. It wraps
// ErrInvalidValue.
//
// The device finds such an index while the kernel runs, after the call has returned
// (an index array into an empty axis, and Bincount's negative values when it reads
// them first, are errors at the call). A gather (Take, TakeAlongAxis) then reads the
// nearest end of the axis instead, and a scatter (Put, PutAlongAxis, AddAt,
// MaximumAt, MinimumAt, Bincount with Bins) skips that update, so nothing is read or
// written outside the arrays and no element the indices don't name changes; the
// kernel stores the index into its launch's check slot, pinned host memory. The error
// is returned, once, by the first of these that returns after the kernel ran:
//   - Stream.Synchronize of the stream the operation was enqueued on, or
//     Device.Synchronize;
//   - a host read (Array.ToSlice, Array.CopyToHost, Array.At) of an array last written
//     on that stream by the operation or after it: its result, the array it modified,
//     anything computed from them on the same stream;
//   - a call that waits to read such an array itself: CountNonzero, FindFirst,
//     FindFirstWhere, Nonzero, NonzeroWhere, Argwhere, Extract, Unique, and Bincount
//     without Bins (it reads the largest value). The error then replaces the call's
//     result.
//
// An operation that moves no element (Take with OnAxis, AddAt, MaximumAt and MinimumAt
// where an axis of the result or of the updates is empty) still checks its indices, as
// NumPy's take and ufunc.at do; its result and the array it modifies are then empty,
// and their reads wait for nothing, so only the waits and later reads above report it.
//
// The results hold every other update (a gather's result: the elements at the nearest
// end for the bad indices). Work on other streams that reads the results doesn't
// report it: synchronize the operation's stream first. (Checking the
// slot costs no device round trip: it is host memory, read after a wait that happens
// anyway.) The failures of Stream.LaunchChecked (ErrKernelFailure) are reported by the
// same waits.
var ErrIndexOutOfRange = fmt.Errorf("gpu: index out of range: %w", ErrInvalidValue)

// ErrKernelFailure is wrapped by the error of a kernel launched by Stream.LaunchChecked
// that recorded a failure in its check slot (an index out of range in a Go kernel of
// package gokernel, say). Unlike a fault (ErrLaunchFailed), which a CUDA trap or a
// bad address makes and which ends the device's context for good, the device stays
// usable: the failing threads stopped, the others ran on.
var ErrKernelFailure = errors.New("gpu: kernel failure")

// LaunchChecked launches fn on s as Launch does, with one more argument after args:
// the device address (a .u64 parameter) of the launch's check slot, CheckSlotWords
// 32-bit words of pinned host memory mapped for the device, zeroed, where a kernel
// records a failure instead of trapping. A kernel that records one makes word 0 or
// word 1 nonzero (package gokernel's convention: word 1 is the claim, set by the
// failing thread that wins an atomic compare-and-swap from 0, which alone writes the
// other words; word 0 is written last, after a fence); the other words are the
// kernel's. The argument is an untracked pointer (no cost of tracking per launch); on
// the CPU backend cpu.Launch.Mem of the last argument is the slot's memory.
//
// The failure is reported by the waits that report index errors (see
// ErrIndexOutOfRange): Synchronize of s or of the device, or a host read of an array
// last written on s by this launch or after it. That wait calls decode with the slot's
// host view, the kernel complete, and returns its error, wrapped in ErrKernelFailure
// unless it wraps it already (nil: no failure); several launches' failures covered by
// one wait are joined (errors.Join) in launch order. Each launch's failure is reported
// once. decode runs on the waiting goroutine; it must not keep the slice. A stream that
// captures a graph refuses it (ErrCapturing): no wait reads a graph's slots.
func (s *Stream) LaunchChecked(fn *Function, cfg LaunchConfig, decode func(slot []uint32) error, args ...any) error {
	if err := nilStream(s); err != nil {
		return err
	}
	if decode == nil {
		return fmt.Errorf("gpu: LaunchChecked without a decoder: %w", ErrInvalidValue)
	}
	slot, err := s.checkSlot()
	if err != nil {
		return err
	}
	all := make([]any, len(args)+1)
	copy(all, args)
	// An untracked pointer: the slot is read only after a wait that covers the
	// launch, and goes back to the pool only then.
	all[len(args)] = DevicePtr(slot.a.mem.Ptr() + uint64(slot.off))
	if err := s.Launch(fn, cfg, all...); err != nil {
		s.dev.checkSlots.put(slot)
		return err
	}
	s.addCheck(slot, func(b []byte) error {
		err := decode(unsafe.Slice((*uint32)(unsafe.Pointer(&b[0])), CheckSlotWords))
		if err != nil && !errors.Is(err, ErrKernelFailure) {
			err = fmt.Errorf("%w: %w", ErrKernelFailure, err)
		}
		return err
	})
	return nil
}

// launchCheck is one launch's check slot.
type launchCheck struct {
	slot *Buffer // pinned, from the device's checkSlots
	s    *Stream
	seq  uint64 // s.seq after the launch: tracked uses up to it cover it
	pend uint64 // s.pend after the launch: a wait for s's work up to it covers it
	dpnd uint64 // the device's pend after the launch: the same for a device wait
	// report returns the failure the slot records (called when its first 8 bytes are
	// not zero), nil for none.
	report func(slot []byte) error
}

// launchChecks is a device's pending check slots.
type launchChecks struct {
	mu      sync.Mutex
	pending []*launchCheck
	sweepAt int          // the length at which addCheck sweeps next (with checkSweepMin)
	n       atomic.Int32 // len(pending), for the fast path of the reports
}

// setPendingChecks sets the count of pending checks to n (under d.checks.mu), and
// slowSync's count of them (one while any is pending).
func (d *Device) setPendingChecks(n int) {
	was := d.checks.n.Swap(int32(n))
	switch {
	case was == 0 && n != 0:
		d.slowSync.Add(1)
	case was != 0 && n == 0:
		d.slowSync.Add(-1)
	}
}

// checkSweepMin is the fewest pending slots at which addCheck sweeps the complete ones.
const checkSweepMin = 64

func (d *Device) launchChecks() *launchChecks { return &d.checks }

// checkedLaunchWhat names what a capture refuses in a launch with a check slot.
const checkedLaunchWhat = "a checked launch (an index check in raise mode: use ModeClip or ModeWrap in a graph; Stream.LaunchChecked)"

// checkSlot returns a zeroed check slot for a launch on s; give it back with
// s.dev.checkSlots.put if the launch fails, else register it with addCheck.
func (s *Stream) checkSlot() (*Buffer, error) {
	if err := s.notCapturing(checkedLaunchWhat); err != nil {
		return nil, err // (the slot is read on the host after a wait that covers the launch)
	}
	d := s.dev
	w, err := d.checkSlots.get(d)
	if err != nil {
		return nil, fmt.Errorf("gpu: a check slot for a launch: %w", err)
	}
	clear(hostBytes(w))
	return w, nil
}

// addCheck registers the check slot of the launch just enqueued on s, with the
// function that makes its failure an error.
func (s *Stream) addCheck(slot *Buffer, report func(slot []byte) error) {
	c := &launchCheck{slot: slot, s: s, seq: s.seq.Load(), pend: s.pend.Load(), dpnd: s.dev.pend.Load(), report: report}
	lc := s.dev.launchChecks()
	lc.mu.Lock()
	// Retire the slots of launches seen complete with nothing recorded, so that a
	// program that never waits doesn't keep them all. The sweep runs when the list has
	// doubled since the last one left it (64 at least), so that its cost per launch
	// stays constant however many launches no wait has covered yet (a loop timed with
	// events alone, say: a sweep at every launch made each one slower than the last).
	if len(lc.pending) >= max(checkSweepMin, lc.sweepAt) {
		keep := lc.pending[:0]
		for _, p := range lc.pending {
			if p.complete() && !p.recorded() {
				s.dev.checkSlots.put(p.slot)
				continue
			}
			keep = append(keep, p)
		}
		clear(lc.pending[len(keep):])
		lc.pending = keep
		lc.sweepAt = 2 * len(keep)
	}
	lc.pending = append(lc.pending, c)
	s.dev.setPendingChecks(len(lc.pending))
	lc.mu.Unlock()
}

// addIndexCheck registers the check slot of the index operation just enqueued on s:
// its first 8 bytes are the raw index out of range (0 for none). what says what the
// operation was ("Take along axis 1 of size 50").
func (s *Stream) addIndexCheck(slot *Buffer, what string) {
	s.addCheck(slot, func(b []byte) error {
		v := int64(binary.LittleEndian.Uint64(b))
		if v == 0 {
			return nil
		}
		return fmt.Errorf("gpu: %s on %v: index %d (found on the device, reported by the first wait after it): %w", what, s, v, ErrIndexOutOfRange)
	})
}

// complete reports whether the launch is known to have completed.
func (c *launchCheck) complete() bool { return c.s.idleAt.Load() >= c.pend }

// recorded reports whether the slot holds a failure (its first 8 bytes nonzero).
func (c *launchCheck) recorded() bool {
	return atomic.LoadUint64((*uint64)(unsafe.Pointer(&hostBytes(c.slot)[0]))) != 0
}

// reportChecks returns the failures of the launches a wait that just returned covers,
// and retires their slots.
func (d *Device) reportChecks(covered func(c *launchCheck) bool) error {
	lc := d.launchChecks()
	if lc.n.Load() == 0 {
		return nil
	}
	var errs []error
	lc.mu.Lock()
	keep := lc.pending[:0]
	var done []*launchCheck
	for _, c := range lc.pending {
		if !covered(c) {
			keep = append(keep, c)
			continue
		}
		done = append(done, c)
	}
	clear(lc.pending[len(keep):])
	lc.pending = keep
	d.setPendingChecks(len(keep))
	lc.mu.Unlock()
	// The reports run unlocked: a decoder is the caller's code.
	for _, c := range done {
		if c.recorded() {
			if err := c.report(hostBytes(c.slot)); err != nil {
				errs = append(errs, err)
			}
		}
		d.checkSlots.put(c.slot)
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}

// lastWrite returns the stream id and operation of the allocation's last tracked write
// (0 if none), for the index errors a host read reports. It is the allocation's lastW,
// not its w: settling drops a completed write from w once another stream uses the
// allocation (track.go), and the read must report the write's failures all the same.
// It waits for an allocation held by another goroutine's Access or HostAccess scope
// under ctx (returning ctx's error when it ends), and fails with ErrInScope where the
// caller holds it in a scope of its own.
func (a *allocation) lastWrite(ctx context.Context) (sid, seq uint64, err error) {
	if err := lockAllCtx(ctx, []*allocation{a}); err != nil {
		return 0, 0, err
	}
	defer a.mu.Unlock()
	return a.lastW.sid, a.lastW.seq, nil
}

// readReport returns the failures a host read of b reports, given the last write seen
// before the read (lastWrite): those of the launches on that stream up to it.
func readReport(b *Buffer, wsid, wseq uint64) error {
	if wsid == 0 || b == nil {
		return nil
	}
	return b.a.dev.reportChecks(func(c *launchCheck) bool { return c.s.id == wsid && c.seq <= wseq })
}

// syncReport is Stream.Synchronize's report: after a wait that succeeded for the work
// enqueued up to pend, the failures of the launches on s up to it.
func (s *Stream) syncReport(err error, pend uint64) error {
	if err != nil || s.dev.checks.n.Load() == 0 {
		return err // (inlined: every wait reports)
	}
	return s.syncReportChecks(pend)
}

func (s *Stream) syncReportChecks(pend uint64) error {
	return s.dev.reportChecks(func(c *launchCheck) bool { return c.s == s && c.pend <= pend })
}

// syncReport is Device.Synchronize's report: after a wait that succeeded for the work
// enqueued up to pend, the failures of the launches up to it.
func (d *Device) syncReport(err error, pend uint64) error {
	if err != nil || d.checks.n.Load() == 0 {
		return err // (inlined: every wait reports)
	}
	return d.syncReportChecks(pend)
}

func (d *Device) syncReportChecks(pend uint64) error {
	return d.reportChecks(func(c *launchCheck) bool { return c.dpnd <= pend })
}
