package cuda

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cuda/cu"
)

// Graphs through stream capture, in relaxed mode (cu.StreamCaptureModeRelaxed): the
// goroutines of a Go program move between threads, so the other modes' per-thread
// checks would refuse unrelated calls on the capturing goroutine's thread and let
// through others. What the capture needs of its own (a cuBLAS handle and workspace for
// the products captured, gemm.go) is made at first use, outside the graph, and goes
// with the graph: released by Graph.Destroy.

var (
	_ backend.Capturer       = (*Stream)(nil)
	_ backend.HandleStreamer = (*Device)(nil)
)

// capture is a capturing stream's own state.
type capture struct {
	mu      sync.Mutex
	release []func() // what the graph releases when destroyed
	blas    any      // the capture's cuBLAS handle (gemm.go), made at first use
}

// BeginCapture starts capturing the stream's work (CUDA Driver API:
// cuStreamBeginCapture_v2, relaxed mode). The legacy default stream can't capture.
func (s *Stream) BeginCapture() error {
	if s.h == 0 || s.h == cu.StreamLegacy || s.h == cu.StreamPerThread {
		return fmt.Errorf("cuda: capturing the legacy default stream: %w", backend.ErrNotSupported)
	}
	c := &capture{}
	if !s.cap.CompareAndSwap(nil, c) {
		return fmt.Errorf("cuda: the stream captures already: %w", backend.ErrInvalidValue)
	}
	if err := s.d.ctx.StreamBeginCapture(s.h, cu.StreamCaptureModeRelaxed); err != nil {
		s.cap.Store(nil)
		return err
	}
	return nil
}

// EndCapture ends the capture and instantiates its graph (cuStreamEndCapture,
// cuGraphInstantiateWithFlags).
func (s *Stream) EndCapture() (backend.Graph, error) {
	c := s.cap.Load()
	if c == nil {
		return nil, fmt.Errorf("cuda: the stream does not capture: %w", backend.ErrInvalidValue)
	}
	g, err := s.d.ctx.StreamEndCapture(s.h)
	s.cap.Store(nil)
	c.mu.Lock()
	rel := c.release
	c.release = nil
	c.mu.Unlock()
	gr := &Graph{d: s.d, g: g, release: rel}
	if err != nil {
		gr.Destroy()
		return nil, err
	}
	if gr.e, err = s.d.ctx.GraphInstantiate(g, 0); err != nil {
		gr.Destroy()
		return nil, err
	}
	return gr, nil
}

// LastNode returns the node captured last (cuStreamGetCaptureInfo).
func (s *Stream) LastNode() (uintptr, error) {
	n, err := s.d.ctx.StreamLastCaptured(s.h)
	return uintptr(n), err
}

// Graph is an instantiated CUDA graph and the graph it was made from (kept for its
// nodes' handles).
type Graph struct {
	d       *Device
	g       cu.Graph
	e       cu.GraphExec
	mu      sync.Mutex
	release []func()
}

// Launch enqueues the graph on s (cuGraphLaunch).
func (g *Graph) Launch(bs backend.Stream) error {
	s, ok := bs.(*Stream)
	if !ok || s.d != g.d {
		return fmt.Errorf("cuda: graph launch on a stream of type %T that is not the graph's device's: %w", bs, backend.ErrInvalidValue)
	}
	return g.d.ctx.GraphLaunch(g.e, s.h)
}

// SetKernelArgs changes kernel node node's parameters for later launches
// (cuGraphExecKernelNodeSetParams_v2).
func (g *Graph) SetKernelArgs(node uintptr, f backend.Function, cfg backend.LaunchConfig, args []backend.Arg) error {
	fn, ok := f.(*Function)
	if !ok {
		return fmt.Errorf("cuda: kernel node of %T, not a CUDA function: %w", f, backend.ErrInvalidValue)
	}
	blob, offs, err := packArgs(nil, nil, args)
	if err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.d.ctx.GraphExecKernelNodeSetParams(g.e, cu.GraphNode(node), fn.h, cfg.Grid, cfg.Block, cfg.SharedMem, blob, offs)
}

// Destroy destroys the executable graph and the graph (a launch in flight completes
// first: cuGraphExecDestroy), then releases what the capture made for the graph.
func (g *Graph) Destroy() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	var err error
	if g.e != 0 {
		err = g.d.ctx.GraphExecDestroy(g.e)
		g.e = 0
	}
	if g.g != 0 {
		if gerr := g.d.ctx.GraphDestroy(g.g); err == nil {
			err = gerr
		}
		g.g = 0
	}
	for _, f := range g.release {
		f()
	}
	g.release = nil
	return err
}

// packArgs appends args to blob, each 8-byte aligned (a by-value Blob whole), and their
// offsets to offs: the layout of cuLaunchKernel's kernelParams.
func packArgs(blob []byte, offs []int32, args []backend.Arg) ([]byte, []int32, error) {
	for i, a := range args {
		off := (len(blob) + 7) &^ 7
		blob = append(blob, make([]byte, off-len(blob))...)
		offs = append(offs, int32(off))
		switch a.Kind {
		case backend.ArgScalar:
			if a.Blob != nil {
				blob = append(blob, a.Blob...)
				continue
			}
			blob = binary.LittleEndian.AppendUint64(blob, a.Val)
		case backend.ArgMem:
			cm, ok := a.Mem.(*Mem)
			if !ok {
				return blob, offs, fmt.Errorf("cuda: argument %d: memory of type %T: %w", i, a.Mem, backend.ErrInvalidValue)
			}
			blob = binary.LittleEndian.AppendUint64(blob, uint64(cm.ptr)+uint64(a.Off))
		case backend.ArgPtr:
			blob = binary.LittleEndian.AppendUint64(blob, a.Val)
		}
	}
	return blob, offs, nil
}

// AdoptStream wraps h, a stream of the device's primary context made by other code (0
// or cu.StreamLegacy: the legacy default stream). Its Destroy leaves h alone.
func (d *Device) AdoptStream(h uintptr) (backend.Stream, error) {
	if cu.Stream(h) == cu.StreamPerThread {
		return nil, fmt.Errorf("cuda: the per-thread default stream (goroutines change threads): %w", backend.ErrInvalidValue)
	}
	ctx, err := d.ctx.StreamContext(cu.Stream(h))
	if err != nil {
		return nil, fmt.Errorf("cuda: stream handle %#x: %w", h, err)
	}
	if ctx != d.ctx {
		return nil, fmt.Errorf("cuda: stream handle %#x belongs to another context than %s's primary context: %w", h, d.info.Name, backend.ErrInvalidValue)
	}
	return &Stream{d: d, h: cu.Stream(h), foreign: true}, nil
}

// StreamHandle returns s's CUstream.
func (d *Device) StreamHandle(bs backend.Stream) (uintptr, error) {
	s, ok := bs.(*Stream)
	if !ok || s.d != d {
		return 0, fmt.Errorf("cuda: stream of type %T that is not this device's: %w", bs, backend.ErrInvalidValue)
	}
	return uintptr(s.h), nil
}
