package gpu

import (
	"errors"

	"github.com/go-gpu/gpu/backend"
)

// Sentinel errors, matched with errors.Is whatever the backend. A CUDA error is also a
// *cu.Error (package backend/cuda/cu) carrying the CUresult's name and message.
var (
	// ErrNoDevice: no driver, no device, or the requested backend can't run here.
	ErrNoDevice = backend.ErrNoDevice
	// ErrOutOfMemory: an allocation failed for lack of memory.
	ErrOutOfMemory = backend.ErrOutOfMemory
	// ErrInvalidValue: an argument was out of range or of the wrong kind.
	ErrInvalidValue = backend.ErrInvalidValue
	// ErrLaunchFailed: a kernel faulted (a trap, an illegal address). On CUDA the fault
	// is sticky: every later operation on the device fails, as the driver requires.
	ErrLaunchFailed = backend.ErrLaunchFailed
	// ErrNotSupported: the backend or device cannot do this.
	ErrNotSupported = backend.ErrNotSupported
	// ErrClosed: the stream, event or module was closed, or the buffer freed.
	ErrClosed = backend.ErrClosed
	// ErrInScope: an operation used a buffer inside that buffer's own Access or
	// HostAccess scope, or began or ended a capture inside an Access scope on the same
	// stream, which would deadlock.
	ErrInScope = errors.New("gpu: buffer used inside its own access scope")
	// ErrCapturing: the operation can't run while the stream captures a graph
	// (Stream.BeginCapture), or the host or an operation on a stream that isn't
	// capturing asked for data that a capture still open writes: the graph's work runs
	// only when the graph is launched.
	ErrCapturing = errors.New("gpu: not possible while a stream captures a graph")
)
