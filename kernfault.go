package gpu

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/go-gpu/gpu/backend"
)

// ErrKernelFailure is wrapped by the error of a kernel that recorded a failure in a
// FaultRecord (an index out of range in a Go kernel, say). Unlike a fault
// (ErrLaunchFailed), which a CUDA trap or a bad address makes and which ends the
// device's context for good, the device stays usable: the failing threads stopped,
// the others ran on.
var ErrKernelFailure = errors.New("gpu: kernel failure")

// FaultRecord is a few words of pinned host memory mapped for the device, where a
// kernel records its first failure instead of trapping: a failing thread claims the
// record, writes what happened and exits, and the host finds the record after the
// kernel. Package gokernel gives every compiled kernel one (its bounds checks write
// it).
//
// Every wait on the device that completes without an error (Synchronize on a
// stream, an event or the device, and the host reads and copies that wait for
// device work) then checks the device's records: the first that holds a failure ends
// the wait with the error its decoder makes of it, wrapping ErrKernelFailure, and is
// cleared. So the error reaches the first wait after the failing kernel, whichever
// stream it waits for. A record holds one failure at a time: a failure in a kernel
// that runs while the host clears the record may be lost.
//
// Layout, in 32-bit words: word 0 is non-zero once a failure is recorded (the
// kernel writes it last, after a fence); word 1 is the claim (a failing thread sets
// it with an atomic compare-and-swap from 0, and only the thread that succeeds writes
// the record); the other words are the decoder's.
//
// A FaultRecord is a handle (copy it freely); its zero value is no record: Ptr is 0,
// Words nil, and Check returns an error wrapping ErrInvalidValue.
type FaultRecord struct{ r *faultRecord }

type faultRecord struct {
	dev    *Device
	words  []uint32 // host view
	ptr    DevicePtr
	decode func(words []uint32) error
}

// faultRecords is a device's records, in pages of pinned memory that live as long
// as the device.
type faultRecords struct {
	mu   sync.Mutex
	page []byte // the current page's host view
	ptr  uint64 // its device address
	used int    // bytes of it handed out
	all  atomic.Pointer[[]*faultRecord]
}

const (
	faultPage  = 4096
	faultAlign = 64 // a record starts on its own cache line
)

// NewFaultRecord returns a record of words 32-bit words (at least 2; the first two
// are the flag and the claim described at FaultRecord) for kernels of d, zeroed.
// decode turns a copy of the words of a recorded failure into an error; it runs on
// the waiting goroutine. Records are never freed: make one per compiled kernel, not
// per launch.
func (d *Device) NewFaultRecord(words int, decode func(words []uint32) error) (FaultRecord, error) {
	if d == nil {
		return FaultRecord{}, errNilDevice
	}
	size := 4 * words
	if words < 2 || size > faultPage || decode == nil {
		return FaultRecord{}, fmt.Errorf("gpu: a fault record of %d words (2 to %d, with a decoder): %w", words, faultPage/4, ErrInvalidValue)
	}
	fr := &d.faultRecs
	fr.mu.Lock()
	defer fr.mu.Unlock()
	if fr.page == nil || fr.used+size > len(fr.page) {
		mem, err := d.be.Alloc(backend.PinnedMem, faultPage, nil)
		if err != nil {
			return FaultRecord{}, fmt.Errorf("gpu: allocating fault records: %w", err)
		}
		host := mem.Host()
		if len(host) < faultPage {
			return FaultRecord{}, fmt.Errorf("gpu: the %s backend's pinned memory is not host-addressable: %w", d.info.Backend, ErrNotSupported)
		}
		fr.page, fr.ptr, fr.used = host[:faultPage], mem.Ptr(), 0
	}
	off := fr.used
	fr.used += (size + faultAlign - 1) / faultAlign * faultAlign
	r := &faultRecord{
		dev:    d,
		words:  unsafe.Slice((*uint32)(unsafe.Pointer(&fr.page[off])), words),
		ptr:    DevicePtr(fr.ptr + uint64(off)),
		decode: decode,
	}
	for i := range r.words {
		atomic.StoreUint32(&r.words[i], 0)
	}
	var all []*faultRecord
	if p := fr.all.Load(); p != nil {
		all = append(all, *p...)
	}
	all = append(all, r)
	fr.all.Store(&all)
	return FaultRecord{r}, nil
}

// Ptr returns the record's device address, to pass to the kernels that write it.
func (r FaultRecord) Ptr() DevicePtr {
	if r.r == nil {
		return 0
	}
	return r.r.ptr
}

// Words returns the record's host view (for a CPU kernel that writes it as the device
// would: atomically, word 0 last).
func (r FaultRecord) Words() []uint32 {
	if r.r == nil {
		return nil
	}
	return r.r.words
}

// Check returns the failure the record holds, if any, and clears it, without waiting
// for anything: a kernel still running may record one later.
func (r FaultRecord) Check() error {
	if r.r == nil {
		return fmt.Errorf("gpu: zero FaultRecord: %w", ErrInvalidValue)
	}
	return r.r.check()
}

func (r *faultRecord) check() error {
	if atomic.LoadUint32(&r.words[0]) == 0 {
		return nil
	}
	w := make([]uint32, len(r.words))
	for i := range w {
		w[i] = atomic.LoadUint32(&r.words[i])
	}
	for i := len(r.words) - 1; i >= 0; i-- {
		atomic.StoreUint32(&r.words[i], 0)
	}
	err := r.decode(w)
	if err == nil {
		return nil
	}
	if !errors.Is(err, ErrKernelFailure) {
		err = fmt.Errorf("%w: %w", ErrKernelFailure, err)
	}
	return err
}

// checkFaultRecords returns the failure of the first of d's records that holds one.
func (d *Device) checkFaultRecords() error {
	p := d.faultRecs.all.Load()
	if p == nil {
		return nil
	}
	for _, r := range *p {
		if err := r.check(); err != nil {
			return err
		}
	}
	return nil
}

// idleErr is the error of a wait that finds nothing to wait for: the device's fault,
// else a failure a kernel recorded.
func (d *Device) idleErr() error {
	if err := d.Err(); err != nil {
		return err
	}
	return d.checkFaultRecords()
}
