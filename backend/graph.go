package backend

// Capturer is the optional capability of a Stream that records the work enqueued on it
// into a graph instead of running it, and launches graphs (CUDA Driver API: stream
// capture, cuStreamBeginCapture_v2 in relaxed mode, cuStreamEndCapture,
// cuGraphInstantiateWithFlags, cuGraphLaunch; the CPU backend records its operations
// and replays them). Package gpu asks for it with a type assertion.
//
// While a stream captures, Launch, Memset, Copy, CopyFromHost and CopyToHost are
// recorded. A backend may refuse (with an error wrapping ErrNotSupported) work that
// can't be replayed: the CPU backend refuses Record, WaitEvent, WaitValue32 and
// FreeAsync; CUDA records some of those, which package gpu never asks of a capturing
// stream. Query and Synchronize of a capturing stream are the caller's mistake (CUDA
// invalidates the capture); package gpu never makes them.
type Capturer interface {
	// BeginCapture starts recording. It fails if the stream captures already.
	BeginCapture() error
	// EndCapture ends the recording and returns it as a graph ready to launch. It
	// fails if the stream does not capture, or if the capture was invalidated (then
	// the recording is dropped); the stream no longer captures either way.
	EndCapture() (Graph, error)
	// LastNode returns a handle on the work recorded last, right after a Launch, for
	// Graph.SetKernelArgs.
	LastNode() (uintptr, error)
}

// Graph is recorded work that can be launched many times, on any stream of the device.
// Launches of one graph run one after another, in the order they were enqueued,
// whatever their streams (CUDA orders the launches of one executable graph); package
// gpu orders them itself anyway, since they share memory.
type Graph interface {
	// Launch enqueues a run of the whole graph on s, after s's earlier work.
	Launch(s Stream) error
	// SetKernelArgs changes, for later launches, the arguments and geometry of the
	// kernel launch that Capturer.LastNode named (CUDA Driver API:
	// cuGraphExecKernelNodeSetParams_v2). f must be the function launched there.
	SetKernelArgs(node uintptr, f Function, cfg LaunchConfig, args []Arg) error
	// Destroy releases the graph. A launch in flight completes first.
	Destroy() error
}

// HandleStreamer is the optional capability of a Device that wraps stream handles of
// other libraries of the same process (CUDA: a CUstream of this device's primary
// context, such as PyTorch's or CuPy's current stream, or 0 for the legacy default
// stream) as Streams, and of Streams that hand out their handle.
type HandleStreamer interface {
	// AdoptStream returns a Stream that enqueues on the stream whose handle is h. Its
	// Destroy leaves the handle alone (its owner destroys it). Errors wrap
	// ErrInvalidValue for a handle of another context, ErrNotSupported where the
	// backend has no such handles.
	AdoptStream(h uintptr) (Stream, error)
	// StreamHandle returns the handle of a Stream of this device (CUDA: its CUstream).
	StreamHandle(s Stream) (uintptr, error)
}

// Observable is the optional capability of a Stream that makes a second Stream on the
// same device stream which reports the memory each operation enqueued through it uses,
// before enqueuing it (package gpu's race checker hands such a stream out from
// Stream.BackendStream). The second Stream must not be destroyed.
type Observable interface {
	Observed(f func(uses []MemUse)) Stream
}

// MemUse is memory an operation uses: bytes [Off, Off+N) of Mem (N 0: all of it),
// written or only read. A kernel's memory arguments count as written.
type MemUse struct {
	Mem    Mem
	Off, N int64
	Write  bool
}
