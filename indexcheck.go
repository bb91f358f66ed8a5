package gpu

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// Out-of-range indices found on the device (see ErrIndexOutOfRange). Each raise-mode
// launch gets an 8-byte error word of pinned host memory (the device's wordPool),
// zeroed before the launch; a kernel that meets an index out of range stores the raw
// index there (one lane per warp; any one of several bad indices). The device keeps
// the pending words (indexChecks); a wait that covers a launch reads its word, reports
// a nonzero one and returns the word to the pool.

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
// kernel stores the index into a word of pinned host memory. The error is returned,
// once, by the first of these that returns after the kernel ran:
//   - Stream.Synchronize of the stream the operation was enqueued on, or
//     Device.Synchronize;
//   - a host read (Array.ToSlice, Array.CopyToHost, Array.At) of an array last written
//     on that stream by the operation or after it: its result, the array it modified,
//     anything computed from them on the same stream.
//
// The results hold every other update (a gather's result: the elements at the nearest
// end for the bad indices). Work on other streams that reads the results doesn't
// report it: synchronize the operation's stream first. (Checking the word costs no
// device round trip: it is host memory, read after a wait that happens anyway.)
var ErrIndexOutOfRange = fmt.Errorf("gpu: index out of range: %w", ErrInvalidValue)

// indexCheck is one launch's error word.
type indexCheck struct {
	word *Buffer // pinned, from the device's wordPool
	s    *Stream
	seq  uint64 // s.seq after the launch: tracked uses up to it cover it
	pend uint64 // s.pend after the launch: a wait for s's work up to it covers it
	dpnd uint64 // the device's pend after the launch: the same for a device wait
	what string // what to say of an error: "Take along axis 1 of size 50"
}

// indexChecks is a device's pending error words.
type indexChecks struct {
	mu      sync.Mutex
	pending []*indexCheck
	n       atomic.Int32 // len(pending), for the fast path of the reports
}

// deviceIndexChecks maps a *Device to its *indexChecks.
var deviceIndexChecks sync.Map

func (d *Device) indexChecks() *indexChecks {
	if c, ok := deviceIndexChecks.Load(d); ok {
		return c.(*indexChecks)
	}
	c, _ := deviceIndexChecks.LoadOrStore(d, &indexChecks{})
	return c.(*indexChecks)
}

// indexErrWord returns a zeroed error word for a launch on s.
func (s *Stream) indexErrWord() (*Buffer, error) {
	d := s.dev
	w, err := d.wordPool.get(d)
	if err != nil {
		return nil, fmt.Errorf("gpu: an error word for raise mode: %w", err)
	}
	clear(hostBytes(w))
	return w, nil
}

// addIndexCheck registers the error word of the launch just enqueued on s.
func (s *Stream) addIndexCheck(word *Buffer, what string) {
	c := &indexCheck{word: word, s: s, seq: s.seq.Load(), pend: s.pend.Load(), dpnd: s.dev.pend.Load(), what: what}
	ic := s.dev.indexChecks()
	ic.mu.Lock()
	// Retire the words of launches seen complete with no error, so that a program
	// that never waits doesn't keep them all.
	if len(ic.pending) >= 64 {
		keep := ic.pending[:0]
		for _, p := range ic.pending {
			if p.complete() && p.value() == 0 {
				s.dev.wordPool.put(p.word)
				continue
			}
			keep = append(keep, p)
		}
		clear(ic.pending[len(keep):])
		ic.pending = keep
	}
	ic.pending = append(ic.pending, c)
	ic.n.Store(int32(len(ic.pending)))
	ic.mu.Unlock()
}

// complete reports whether the launch is known to have completed.
func (c *indexCheck) complete() bool { return c.s.idleAt.Load() >= c.pend }

// value returns the raw index the kernel stored, 0 for none.
func (c *indexCheck) value() int64 {
	return int64(binary.LittleEndian.Uint64(hostBytes(c.word)))
}

func (c *indexCheck) err(v int64) error {
	return fmt.Errorf("gpu: %s on %v: index %d (found on the device, reported by the first wait after it): %w", c.what, c.s, v, ErrIndexOutOfRange)
}

// reportIndexErrors returns the errors of the launches a wait that just returned
// covers, and retires their words.
func (d *Device) reportIndexErrors(covered func(c *indexCheck) bool) error {
	ic := d.indexChecks()
	if ic.n.Load() == 0 {
		return nil
	}
	var errs []error
	ic.mu.Lock()
	keep := ic.pending[:0]
	for _, c := range ic.pending {
		if !covered(c) {
			keep = append(keep, c)
			continue
		}
		if v := c.value(); v != 0 {
			errs = append(errs, c.err(v))
		}
		d.wordPool.put(c.word)
	}
	clear(ic.pending[len(keep):])
	ic.pending = keep
	ic.n.Store(int32(len(keep)))
	ic.mu.Unlock()
	return errors.Join(errs...)
}

// lastWrite returns the stream id and operation of the allocation's last tracked write
// (0 if none). It is the allocation's lastW, not its w: settling drops a completed write
// from w once another stream uses the allocation (track.go), and the read must report
// the write's errors all the same.
func (a *allocation) lastWrite() (sid, seq uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.lastW.sid, a.lastW.seq
}

// readReport returns the index errors a host read of b reports, given the last write
// seen before the read (lastWrite): those of the launches on that stream up to it.
func readReport(b *Buffer, wsid, wseq uint64) error {
	if wsid == 0 || b == nil {
		return nil
	}
	return b.a.dev.reportIndexErrors(func(c *indexCheck) bool { return c.s.id == wsid && c.seq <= wseq })
}

// syncReport is Stream.Synchronize's report: after a wait that succeeded for the work
// enqueued up to pend, the index errors of the launches on s up to it.
func (s *Stream) syncReport(err error, pend uint64) error {
	if err != nil {
		return err
	}
	return s.dev.reportIndexErrors(func(c *indexCheck) bool { return c.s == s && c.pend <= pend })
}

// syncReport is Device.Synchronize's report: after a wait that succeeded for the work
// enqueued up to pend, the index errors of the launches up to it.
func (d *Device) syncReport(err error, pend uint64) error {
	if err != nil {
		return err
	}
	return d.reportIndexErrors(func(c *indexCheck) bool { return c.dpnd <= pend })
}
