package cpu

import (
	"fmt"
	"sync"

	"github.com/go-gpu/gpu/backend"
)

// Graphs: a capturing stream records its operations (the closures it would queue) in
// a Graph instead of running them; a launch of the graph queues one operation that runs
// them all in order. Operations that complete events or wait for something outside the
// graph (Record, WaitEvent, WaitValue32) and FreeAsync are refused while a stream
// captures: a replay could not do them again.

var (
	_ backend.Capturer       = (*Stream)(nil)
	_ backend.HandleStreamer = (*Device)(nil)
)

// Graph is recorded operations.
type Graph struct {
	dev  *Device
	mu   sync.Mutex
	ops  []op // replaced, never modified in place, by SetKernelArgs (launches share it)
	dead bool
}

// noCapture returns the error of what, an operation a capture can't record, on a
// capturing stream.
func (s *Stream) noCapture(what string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.capt != nil {
		return fmt.Errorf("cpu: %s while the stream captures a graph: %w", what, backend.ErrNotSupported)
	}
	return nil
}

// BeginCapture starts recording the stream's operations.
func (s *Stream) BeginCapture() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return fmt.Errorf("cpu: stream: %w", backend.ErrClosed)
	}
	if s.capt != nil {
		return fmt.Errorf("cpu: the stream captures already: %w", backend.ErrInvalidValue)
	}
	s.capt = &Graph{dev: s.dev}
	return nil
}

// EndCapture ends the recording and returns it.
func (s *Stream) EndCapture() (backend.Graph, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.capt
	if g == nil {
		return nil, fmt.Errorf("cpu: the stream does not capture: %w", backend.ErrInvalidValue)
	}
	s.capt = nil
	return g, nil
}

// LastNode names the operation recorded last: its index plus one.
func (s *Stream) LastNode() (uintptr, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.capt == nil || len(s.capt.ops) == 0 {
		return 0, fmt.Errorf("cpu: no operation captured: %w", backend.ErrInvalidValue)
	}
	return uintptr(len(s.capt.ops)), nil
}

// Launch queues one operation on s that runs the graph's operations in order; the
// first error ends it (and faults the device, as the operation's own would).
func (g *Graph) Launch(bs backend.Stream) error {
	s, ok := bs.(*Stream)
	if !ok || s.dev != g.dev {
		return fmt.Errorf("cpu: graph launch on a stream of type %T that is not the graph's device's: %w", bs, backend.ErrInvalidValue)
	}
	g.mu.Lock()
	ops, dead := g.ops, g.dead
	g.mu.Unlock()
	if dead {
		return fmt.Errorf("cpu: graph: %w", backend.ErrClosed)
	}
	return s.enqueue(func() error {
		for _, o := range ops {
			if err := o.run(); err != nil {
				return err
			}
		}
		return nil
	})
}

// SetKernelArgs replaces the launch named node (LastNode) for later launches.
func (g *Graph) SetKernelArgs(node uintptr, f backend.Function, cfg backend.LaunchConfig, args []backend.Arg) error {
	run, err := g.dev.launchOp(f, cfg, args)
	if err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if node == 0 || node > uintptr(len(g.ops)) {
		return fmt.Errorf("cpu: graph node %d of %d: %w", node, len(g.ops), backend.ErrInvalidValue)
	}
	ops := append([]op(nil), g.ops...)
	ops[node-1] = op{run: run}
	g.ops = ops
	return nil
}

// Destroy drops the graph; launches already queued still run.
func (g *Graph) Destroy() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.dead, g.ops = true, nil
	return nil
}

// AdoptStream is not supported: the CPU backend's streams have no handles other code
// could make.
func (d *Device) AdoptStream(h uintptr) (backend.Stream, error) {
	return nil, fmt.Errorf("cpu: adopting stream handle %#x: the CPU backend has no stream handles: %w", h, backend.ErrNotSupported)
}

// StreamHandle is not supported on the CPU backend.
func (d *Device) StreamHandle(s backend.Stream) (uintptr, error) {
	return 0, fmt.Errorf("cpu: stream handles: %w", backend.ErrNotSupported)
}

var _ backend.Observable = (*Stream)(nil)

// Observed returns a stream that passes the memory of each operation enqueued through it
// to f, then enqueues it on s (backend.Observable).
func (s *Stream) Observed(f func([]backend.MemUse)) backend.Stream {
	return &observedStream{Stream: s, obs: f}
}

// observedStream is a Stream whose operations report their memory first.
type observedStream struct {
	*Stream
	obs func([]backend.MemUse)
}

func (o *observedStream) Launch(f backend.Function, cfg backend.LaunchConfig, args []backend.Arg) error {
	var uses []backend.MemUse
	for _, a := range args {
		if a.Kind == backend.ArgMem {
			uses = append(uses, backend.MemUse{Mem: a.Mem, Off: a.Off, Write: true})
		}
	}
	o.obs(uses)
	return o.Stream.Launch(f, cfg, args)
}

func (o *observedStream) Memset(dst backend.Mem, off int64, value uint32, width int, n int64) error {
	o.obs([]backend.MemUse{{Mem: dst, Off: off, N: n * int64(width), Write: true}})
	return o.Stream.Memset(dst, off, value, width, n)
}

func (o *observedStream) Copy(dst backend.Mem, dstOff int64, src backend.Mem, srcOff int64, n int64) error {
	o.obs([]backend.MemUse{{Mem: dst, Off: dstOff, N: n, Write: true}, {Mem: src, Off: srcOff, N: n}})
	return o.Stream.Copy(dst, dstOff, src, srcOff, n)
}

func (o *observedStream) CopyFromHost(dst backend.Mem, off int64, src []byte) error {
	o.obs([]backend.MemUse{{Mem: dst, Off: off, N: int64(len(src)), Write: true}})
	return o.Stream.CopyFromHost(dst, off, src)
}

func (o *observedStream) CopyToHost(dst []byte, src backend.Mem, off int64) error {
	o.obs([]backend.MemUse{{Mem: src, Off: off, N: int64(len(dst))}})
	return o.Stream.CopyToHost(dst, src, off)
}
