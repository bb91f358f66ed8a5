package gpu

import (
	"fmt"
	"runtime"
	"weak"

	"github.com/go-gpu/gpu/backend"
)

// Streams of other libraries (see the package documentation's "Streams of other
// libraries").

// AdoptStream returns a Stream that enqueues on a stream made by other code in the same
// process, such as a library called through cgo, or PyTorch's or CuPy's current stream
// in an embedding program: h is its handle (CUDA: a CUstream of the device's primary
// context, as a uintptr; 0 for the legacy default stream). The package's operations on
// it are tracked as on any Stream, and its waits always ask the driver (the other code's
// work on it is invisible to the package). Close ends the package's use of it without
// destroying the handle, which stays its owner's: close the Stream before the owner
// destroys the handle.
//
// The legacy default stream synchronizes with the blocking streams of its context, not
// with this package's streams, which are created non-blocking; it can't capture graphs.
// Errors wrap ErrNotSupported on a backend without stream handles (the CPU), and
// ErrInvalidValue for a handle of another context or the per-thread default stream (a
// goroutine has no thread of its own).
func (d *Device) AdoptStream(h uintptr) (*Stream, error) {
	if d.isNil() {
		return nil, errNilDevice
	}
	hs, ok := d.be.(backend.HandleStreamer)
	if !ok {
		return nil, fmt.Errorf("gpu: %v has no stream handles: %w", d, ErrNotSupported)
	}
	bs, err := hs.AdoptStream(h)
	if err != nil {
		return nil, err
	}
	s := d.wrapStream(bs)
	s.external.Store(true)
	d.setExternal()
	return s, nil
}

// wrapStream makes a Stream of a backend stream and registers it with the device.
func (d *Device) wrapStream(bs backend.Stream) *Stream {
	s := &Stream{dev: d, be: bs, id: d.nextID.Add(1), streamCore: &streamCore{dev: d, be: bs}}
	d.stMu.Lock()
	d.streams[s.id] = streamRef{weak.Make(s), s.streamCore}
	d.stMu.Unlock()
	runtime.AddCleanup(s, (*streamCore).destroy, s.streamCore)
	return s
}

// Handle returns the stream's handle for other code in the same process (CUDA: its
// CUstream, as a uintptr), for example to enqueue a library's work on it or to adopt
// it elsewhere. Work enqueued through the handle is invisible to the package: from then
// on, waits on this stream and on the device always ask the driver, and buffers that
// work uses must be handed over in an Access scope on this stream (or ordered with
// events). Errors wrap ErrNotSupported on a backend without stream handles (the CPU).
func (s *Stream) Handle() (uintptr, error) {
	if err := s.hold(); err != nil {
		return 0, err
	}
	defer s.unhold()
	hs, ok := s.dev.be.(backend.HandleStreamer)
	if !ok {
		return 0, fmt.Errorf("gpu: %v has no handle: %w", s, ErrNotSupported)
	}
	h, err := hs.StreamHandle(s.be)
	if err != nil {
		return 0, err
	}
	s.external.Store(true)
	s.dev.setExternal()
	return h, nil
}
