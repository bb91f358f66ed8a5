package gpu

import (
	"context"
	"fmt"
	"math/bits"
	"reflect"
	"runtime"
	"slices"
	"sync"

	"github.com/go-gpu/gpu/backend"
)

// Graphs (CUDA Driver API: stream capture, cuStreamBeginCapture_v2 in relaxed mode,
// cuStreamEndCapture, cuGraphInstantiateWithFlags, cuGraphLaunch; the CPU backend
// records its operations and replays them).
//
// While a stream captures, the work enqueued on it goes into a graph instead of
// running: every operation of the package (kernels, copies between buffers, memsets,
// reductions, scans, products ...), Launch and work enqueued in an Access scope. The
// tracking neither waits nor records then (nothing runs): the capture notes each
// allocation the work uses and how, and the graph's launch is one tracked operation on
// its stream, with those uses: it waits for conflicting uses on other streams, and
// later uses wait for it. Launches of one graph run one after another, whatever their
// streams (the graph's own token allocation is written by each).
//
// A capture keeps what it uses: each allocation is pinned (allocation.pins) until its
// graph is closed, and a Free meanwhile only marks it freed (the buffer can no longer
// be used) while its memory stays for the graph's launches, returning to the pool once
// the graph is closed and its last launch is done. Memory allocated during a capture
// (the outputs and temporaries of the operations captured) is real memory, allocated
// outside the graph on the device's side stream, so that each launch finds it in
// place. Scratch (scratch.go) comes from the capture, not the stream: blocks of its
// own, tracked as buffers the graph uses, zeroed once and left clean by its kernels.
//
// What needs the host in the middle of the work can't be captured, and is refused with
// an error wrapping ErrCapturing: waits (Stream.Synchronize, Query), events
// (Stream.Record, WaitEvent), copies of Go memory (Stream.CopyHtoD, CopyDtoH), host
// functions, index checks in raise mode (Bincount with Bins too), and the operations
// that read a result back on the host to size their output or as their result (Nonzero,
// NonzeroWhere, Argwhere, Extract, FindFirst, FindFirstWhere, CountNonzero, Unique,
// Bincount without Bins: refused at once, the capture going on unharmed). A host read
// of a buffer that the open capture writes (ToSlice of a captured result, say) fails so
// too, and spoils the capture: EndCapture returns the error. Random numbers drawn
// inside a capture are drawn afresh at every launch (Graph.Launch sets and advances the
// generators).

// capture is a capture in progress.
type capture struct {
	dev  *Device
	core *streamCore // the capturing stream's (not the Stream: a stream dropped meanwhile must be collectable)
	name string      // the stream's String

	mu    sync.Mutex
	uses  map[*allocation]AccessMode
	order []*allocation // the keys of uses, in first-use order
	// free is the clean pooled scratch of the capture by kind; blocks lists every
	// block it made (the graph frees them).
	free     [numScratchKinds][]*Buffer
	blocks   []*Buffer
	launches []capLaunch // launches with Params
	draws    []capDraw   // random fills, in the order they were captured
	err      error       // what spoilt the capture, or nil
}

// capDraw is a random fill in a capture: each launch of the graph sets its seed and
// offset arguments from the generator and advances it by the fill's blocks, so that
// each launch draws fresh numbers (Graph.Launch). launch indexes the capture's
// launches with Params (recordLaunch registers both).
type capDraw struct {
	*drawArgs
	launch int
}

// capLaunch is a captured launch with Param arguments.
type capLaunch struct {
	node   uintptr // backend.Capturer.LastNode
	fn     *Function
	cfg    backend.LaunchConfig
	args   []backend.Arg // replaced whole by SetParam
	params []paramSlot
}

// paramSlot is a Param at argument index i.
type paramSlot struct {
	i int
	p *Param
}

// notCapturing returns an error wrapping ErrCapturing if s captures a graph: what can't
// be done then.
func (s *Stream) notCapturing(what string) error {
	if s.cap.Load() == nil {
		return nil // (inlined: every operation checks)
	}
	return s.capturingErr(what)
}

func (s *Stream) capturingErr(what string) error {
	return fmt.Errorf("gpu: %s on %v, which captures a graph (its work runs only when the graph is launched): %w", what, s, ErrCapturing)
}

// refuseReadBack returns an error wrapping ErrCapturing if s captures a graph: op reads
// a result back on the host (to size its output, or as its result), which a capture
// can't give, since its work runs only when the graph is launched. The operations that
// do so call it first, so the capture goes on unharmed. Called inside one of s's own
// host functions, it returns an error wrapping ErrInvalidValue: the read would wait for
// work enqueued on s after the function, which waits for the function (a deadlock).
func (s *Stream) refuseReadBack(op string) error {
	if s.cap.Load() != nil {
		return fmt.Errorf("gpu: %s reads a result back on the host, which it can't on %v: it captures a graph (its work runs only when the graph is launched): %w", op, s, ErrCapturing)
	}
	if s.hostFns.hasMe() {
		return fmt.Errorf("gpu: %s reads a result back on the host, which it can't on %v inside one of that stream's own host functions: the read would wait for work the stream runs after the function: %w", op, s, ErrInvalidValue)
	}
	return nil
}

// Capturing reports whether the stream captures a graph (false for a nil stream).
func (s *Stream) Capturing() bool { return s != nil && s.streamCore != nil && s.cap.Load() != nil }

// BeginCapture starts capturing the work enqueued on the stream into a graph: from now
// on, until EndCapture, the operations enqueued on s are recorded, not run (see Graph).
// It waits for operations on s in other goroutines to return first. The work enqueued
// before still runs. A stream captures one graph at a time; the legacy default stream
// (AdoptStream(0)) can't capture. Errors wrap ErrNotSupported where the backend or
// driver can't capture, ErrInvalidValue if s captures already, ErrClosed for a closed
// stream, ErrInScope inside an Access scope on s (which it would wait for); on a
// stream faulted by a host function it returns the fault (see HostFunc).
func (s *Stream) BeginCapture() error {
	if err := nilStream(s); err != nil {
		return err
	}
	bc, ok := s.be.(backend.Capturer)
	if !ok {
		return fmt.Errorf("gpu: %v can't capture graphs: %w", s, ErrNotSupported)
	}
	// Before exclusive, which waits for the operations holding s: one may be a wait for
	// this very host function (a Synchronize of s in another goroutine), or the
	// caller's own Access scope.
	if err := s.inOwnHostFunc("BeginCapture"); err != nil {
		return err
	}
	if err := s.inOwnScope("BeginCapture"); err != nil {
		return err
	}
	if err := s.exclusive(); err != nil {
		return err
	}
	defer s.endExclusive()
	if s.cap.Load() != nil {
		return fmt.Errorf("gpu: %v captures a graph already: %w", s, ErrInvalidValue)
	}
	if p := s.fault.Load(); p != nil {
		return *p // a host function failed: as every later operation on s (hold)
	}
	// The stream's last event covers all its work that runs: the waits for its uses
	// meanwhile wait for it (eventAfter).
	ev, err := s.recordNow()
	if err != nil {
		return err
	}
	ev.release()
	c := &capture{dev: s.dev, core: s.streamCore, name: s.String(), uses: map[*allocation]AccessMode{}}
	d := s.dev
	d.captures.Add(1)
	s.mu.Lock()
	err = bc.BeginCapture()
	if err == nil {
		s.cap.Store(c)
	}
	s.mu.Unlock()
	if err != nil {
		d.captures.Add(-1)
		return fmt.Errorf("gpu: beginning a capture on %v: %w", s, err)
	}
	d.capMu.Lock()
	if d.openCaps == nil {
		d.openCaps = map[*capture]struct{}{}
	}
	d.openCaps[c] = struct{}{}
	d.capMu.Unlock()
	return nil
}

// EndCapture ends the capture BeginCapture began and returns its graph, ready to
// launch on any stream of the device. It waits for operations on s in other goroutines
// to return first. If an operation spoilt the capture (a host read of a buffer it
// writes, ErrCapturing), or the backend could not make the graph, it returns that error
// and no graph; s no longer captures either way. Errors wrap ErrInvalidValue if s does
// not capture, ErrInScope inside an Access scope on s (s captures on).
func (s *Stream) EndCapture() (*Graph, error) {
	if err := nilStream(s); err != nil {
		return nil, err
	}
	if err := s.inOwnScope("EndCapture"); err != nil {
		return nil, err
	}
	if err := s.exclusive(); err != nil {
		return nil, err
	}
	defer s.endExclusive()
	c := s.cap.Load()
	if c == nil {
		return nil, fmt.Errorf("gpu: EndCapture on %v, which does not capture: %w", s, ErrInvalidValue)
	}
	bg, err := s.endBackendCapture()
	c.mu.Lock()
	spoilt := c.err
	c.mu.Unlock()
	if err == nil && spoilt != nil {
		bg.Destroy()
		err = spoilt
	}
	if err != nil {
		c.abort()
		return nil, fmt.Errorf("gpu: capture on %v: %w", s, err)
	}
	return c.graph(bg), nil
}

// Capture runs f with s capturing and returns the graph: BeginCapture, f, EndCapture.
// If f returns an error (or panics), the capture is dropped and the error returned (the
// panic goes on).
func (s *Stream) Capture(f func() error) (*Graph, error) {
	if f == nil {
		return nil, fmt.Errorf("gpu: Capture with a nil function: %w", ErrInvalidValue)
	}
	if err := s.BeginCapture(); err != nil {
		return nil, err
	}
	done := false
	defer func() {
		if !done {
			if g, err := s.EndCapture(); err == nil {
				g.Close()
			}
		}
	}()
	err := f()
	done = true
	g, eerr := s.EndCapture()
	if err != nil {
		if eerr == nil {
			g.Close()
		}
		return nil, err
	}
	return g, eerr
}

// endBackendCapture ends the backend's capture; s no longer captures.
func (c *streamCore) endBackendCapture() (backend.Graph, error) {
	c.mu.Lock()
	cp := c.cap.Load()
	bg, err := c.be.(backend.Capturer).EndCapture()
	c.cap.Store(nil)
	c.mu.Unlock()
	d := c.dev
	d.captures.Add(-1)
	d.capMu.Lock()
	delete(d.openCaps, cp)
	d.capMu.Unlock()
	return bg, err
}

// abortCapture ends a capture left open (Close, or the cleanup of a stream dropped),
// dropping its graph. No operation holds the stream.
func (c *streamCore) abortCapture() {
	cp := c.cap.Load()
	if cp == nil {
		return
	}
	if bg, err := c.endBackendCapture(); err == nil {
		bg.Destroy()
	}
	cp.abort()
}

// record notes the uses of an operation enqueued on the capturing stream; the caller
// holds the allocations' locks.
func (c *capture) record(s *Stream, uses []use, o trackOpt) error {
	if o&trackGraph != 0 {
		return fmt.Errorf("gpu: launching a graph on %v, which captures a graph: %w", s, ErrCapturing)
	}
	for _, u := range uses {
		if u.a.freed {
			return fmt.Errorf("gpu: buffer used after Free: %w", ErrClosed)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, u := range uses {
		c.addLocked(u.a, u.mode)
	}
	return nil
}

// addLocked notes a use of a; the caller holds a.mu and c.mu.
func (c *capture) addLocked(a *allocation, mode AccessMode) {
	m, seen := c.uses[a]
	if !seen {
		a.pins++
		c.order = append(c.order, a)
	}
	if mode&Write != 0 && m&Write == 0 {
		a.capWrites++
	}
	c.uses[a] = m | mode
}

// spoil records what makes the capture unusable (the first reason).
func (c *capture) spoil(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.mu.Unlock()
}

// endWrites ends the capture's writes: the host may read what it wrote again.
func (c *capture) endWrites() {
	for _, a := range c.order {
		if c.uses[a]&Write == 0 {
			continue
		}
		withAllocation(a, func() { a.capWrites-- })
	}
}

// abort drops a capture that gives no graph: its writes end, its scratch is freed, its
// allocations are unpinned.
func (c *capture) abort() {
	c.endWrites()
	for _, b := range c.blocks {
		b.Free()
	}
	unpinAll(c.order)
}

// graph makes the Graph of a capture that ended with bg.
func (c *capture) graph(bg backend.Graph) *Graph {
	c.endWrites()
	token := &allocation{id: nextAllocID.Add(1), dev: c.dev, kind: DeviceMem}
	uses := make([]use, 0, len(c.order)+1)
	for _, a := range c.order {
		uses = append(uses, use{a: a, mode: c.uses[a]})
	}
	uses = mergeUses(append(uses, use{a: token, mode: ReadWrite}))
	// The fills of each generator, in capture order; the generators in order of first use.
	var draws [][]capDraw
	for _, d := range c.draws {
		k := slices.IndexFunc(draws, func(ds []capDraw) bool { return ds[0].gen == d.gen })
		if k < 0 {
			draws = append(draws, nil)
			k = len(draws) - 1
		}
		draws[k] = append(draws[k], d)
	}
	g := &Graph{graphCore: &graphCore{dev: c.dev, be: bg, uses: uses, pinned: c.order, blocks: c.blocks,
		token: token, launches: c.launches, draws: draws, from: c.name}}
	g.cleanup = runtime.AddCleanup(g, (*graphCore).close, g.graphCore)
	return g
}

// withAllocation runs f with a locked: at once, or (when the caller holds a in an
// access scope) on another goroutine once the scope ends.
func withAllocation(a *allocation, f func()) {
	if lockAll([]*allocation{a}) == nil {
		f()
		a.mu.Unlock()
		return
	}
	go func() {
		a.mu.Lock()
		f()
		a.mu.Unlock()
	}()
}

// unpinAll drops a capture's or graph's pins; a free deferred meanwhile happens now
// (after the allocation's pending uses, as any free).
func unpinAll(as []*allocation) {
	for _, a := range as {
		withAllocation(a, func() {
			a.pins--
			if a.pins == 0 && a.deferred {
				a.deferred = false
				a.release() // (the error of a deferred free has no caller left)
			}
		})
	}
}

// capturedLocked returns the error of an access with the given mode to a, which an
// open capture writes, if it reads: its data will only be there once the graph is
// launched. The access is the host's (s nil) or an operation's on s, a stream that
// isn't capturing. It spoils the captures that write a (an operation that reads its
// results back, on the host or on another stream, can't be captured). The caller holds
// a.mu.
func (a *allocation) capturedLocked(mode AccessMode, s *Stream) error {
	if a.capWrites == 0 || mode&Read == 0 {
		return nil
	}
	who := "the host reads"
	if s != nil {
		who = "an operation on " + s.String() + " reads"
	}
	err := fmt.Errorf("gpu: %s a buffer that a capture still open writes (its data is there only once the graph is launched): %w", who, ErrCapturing)
	d := a.dev
	d.capMu.Lock()
	for c := range d.openCaps {
		c.mu.Lock()
		if c.uses[a]&Write != 0 && c.err == nil {
			c.err = err
		}
		c.mu.Unlock()
	}
	d.capMu.Unlock()
	return err
}

// scratch returns clean scratch for a use on s, which captures (scratchOwner): unpooled,
// a zeroed buffer from s's Alloc (outside the graph) whose zeroing is captured (so that
// every launch zeroes it); pooled, a block of the capture's own, zeroed once on the side
// stream and kept clean by the kernels that use it. Either is a buffer the graph uses.
// The caller holds s.
func (c *capture) scratch(s *Stream, k scratchKind, size int, pooled bool) (*scratch, error) {
	sc := &scratch{kind: k, s: s, cap: c}
	if !pooled {
		b, err := s.allocZeroed(int64(size))
		if err != nil {
			return nil, err
		}
		sc.buf, sc.arg = b, InOut(b)
		return sc, nil
	}
	b := c.takeScratch(k, size)
	if b == nil {
		d := c.dev
		side, err := d.sideStream()
		if err != nil {
			return nil, err
		}
		if b, err = d.alloc(DeviceMem, int64(max(scratchMin, 1<<bits.Len(uint(size-1)))), side); err != nil {
			return nil, fmt.Errorf("gpu: allocating %s for a capture: %w", scratchNames[k], err)
		}
		if err := side.MemsetD32(b, 0); err != nil {
			b.Free()
			return nil, fmt.Errorf("gpu: clearing %s for a capture: %w", scratchNames[k], err)
		}
		c.mu.Lock()
		c.blocks = append(c.blocks, b)
		c.mu.Unlock()
	}
	// The graph uses it, whether its kernels take it as a buffer or as backend memory.
	withAllocation(b.a, func() {
		c.mu.Lock()
		c.addLocked(b.a, ReadWrite)
		c.mu.Unlock()
	})
	sc.block, sc.mem, sc.arg = b, b.a.mem, InOut(b)
	return sc, nil
}

// takeScratch returns the smallest clean block of kind k of at least size bytes, or nil.
func (c *capture) takeScratch(k scratchKind, size int) *Buffer {
	c.mu.Lock()
	defer c.mu.Unlock()
	best := -1
	for i, b := range c.free[k] {
		if b.size >= int64(size) && (best < 0 || b.size < c.free[k][best].size) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	b := c.free[k][best]
	c.free[k] = append(c.free[k][:best], c.free[k][best+1:]...)
	return b
}

// putScratch pools a block the capture's work leaves clean.
func (c *capture) putScratch(k scratchKind, b *Buffer) {
	c.mu.Lock()
	c.free[k] = append(c.free[k], b)
	c.mu.Unlock()
}

// sideStream returns the device's side stream (the memory captures allocate, host
// reads' contiguous copies), made at first use. It never falls back to the default
// stream, which a capture may hold: a failure to make it is the caller's error.
func (d *Device) sideStream() (*Stream, error) {
	if s := d.side.Load(); s != nil {
		return s, nil
	}
	d.copyMu.Lock()
	defer d.copyMu.Unlock()
	if s := d.side.Load(); s != nil {
		return s, nil
	}
	s, err := d.NewStream()
	if err != nil {
		return nil, fmt.Errorf("gpu: making the device's side stream: %w", err)
	}
	d.side.Store(s)
	return s, nil
}

// syncBackend waits in the driver for all the device's work (cuCtxSynchronize), or,
// while a stream captures (which a driver-wide synchronize would end), for each
// stream's work through events.
func (d *Device) syncBackend() error {
	if d.captures.Load() == 0 {
		return d.be.Synchronize()
	}
	w := &deviceWait{d: d}
	defer w.done()
	return w.block()
}

// Graph is work captured from a stream (Stream.BeginCapture ... EndCapture), launched
// as a whole, as many times as wanted, on any stream of its device (CUDA: a graph
// instantiated once; one launch costs about one kernel launch however many operations
// it holds, where issuing them one by one costs a launch each, plus a
// cuGraphExecKernelNodeSetParams per random fill, to set its seed and offset). A
// launch is one tracked operation on its stream: it waits for the uses on other
// streams of the buffers the graph reads and writes, and later uses wait for it (see
// Buffer). Launches of one graph run one after another in the order they were
// enqueued, whatever their streams.
//
// The graph keeps the memory it uses until it is closed: a buffer freed meanwhile can
// no longer be used by its holder, but its memory stays for the graph's launches and
// returns to the pool after Close and the last launch. Close the graph when done; a
// graph dropped without Close is closed when the garbage collector finds it. A Graph is
// safe for concurrent use.
//
// A nil *Graph is never valid: its methods return an error wrapping ErrInvalidValue.
type Graph struct {
	*graphCore
	cleanup runtime.Cleanup
}

// graphCore is the part of a graph its cleanup needs.
type graphCore struct {
	dev      *Device
	mu       sync.Mutex
	be       backend.Graph
	uses     []use         // sorted by allocation (mergeUses), the token included
	pinned   []*allocation // the allocations the capture pinned
	blocks   []*Buffer     // the capture's pooled scratch
	token    *allocation   // written by every launch: orders them, tells Close when they are done
	launches []capLaunch
	draws    [][]capDraw // the random fills by generator (capture.graph)
	from     string
	closed   bool
}

// String returns "graph captured from stream 2 on cuda:0" ("<nil graph>" for a nil
// graph). It takes no lock: a launch in progress doesn't hold it up.
func (g *Graph) String() string {
	if g == nil || g.graphCore == nil {
		return "<nil graph>"
	}
	return "graph captured from " + g.from
}

// isNil reports a nil graph or a zero Graph{} (not made by a capture), which is one.
func (g *Graph) isNil() bool { return g == nil || g.graphCore == nil }

// errNilGraph is the error of a nil *Graph.
var errNilGraph = fmt.Errorf("gpu: nil graph: %w", ErrInvalidValue)

// Launch enqueues a run of the whole graph on s and returns at once: the run starts
// after s's earlier work and after the uses on other streams that conflict with the
// graph's, and later operations are ordered after it as after any operation (CUDA
// Driver API: cuGraphLaunch). Random fills in the graph draw fresh numbers: those the
// captured calls would draw from their generators now, which the launch advances (as a
// replay of a PyTorch graph does; on CUDA one cuGraphExecKernelNodeSetParams per fill).
// Errors wrap ErrClosed for a closed graph or stream, ErrInvalidValue for a stream of
// another device, ErrCapturing if s captures.
func (g *Graph) Launch(s *Stream) error {
	if g.isNil() {
		return errNilGraph
	}
	if err := nilStream(s); err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return fmt.Errorf("gpu: launch of a closed graph: %w", ErrClosed)
	}
	if s.dev != g.dev {
		return fmt.Errorf("gpu: a graph of %v launched on %v: %w", g.dev, s, ErrInvalidValue)
	}
	var small [8]*allocation
	t, _, err := s.trackBeginOpt(g.uses, small[:0], trackGraph)
	if err != nil {
		return err
	}
	undo, err := g.drawFresh()
	if err == nil {
		if err = g.be.Launch(s.be); err != nil && undo != nil {
			undo()
		}
	}
	_, err = s.trackEnd(t, err, false)
	return err
}

// drawFresh sets the seed and offset of the graph's random fills for its next launch:
// what the captured calls would draw if made now, in the order they were captured,
// reserved from their generators (g.mu is held). undo gives back the reservations of a
// launch that failed after (each generator that no request has moved since); drawFresh
// gives them back itself when the driver refuses the new arguments. A graph without
// random fills returns a nil undo.
func (c *graphCore) drawFresh() (undo func(), err error) {
	if len(c.draws) == 0 {
		return nil, nil
	}
	type reservation struct {
		gen      *Generator
		from, to uint64
	}
	var done []reservation
	undo = func() {
		for _, r := range done {
			r.gen.mu.Lock()
			if r.gen.offset == r.to {
				r.gen.offset = r.from
			}
			r.gen.mu.Unlock()
		}
	}
	for _, ds := range c.draws {
		var total uint64
		for _, d := range ds {
			total += d.blocks
		}
		seed, off := ds[0].gen.reserve(total)
		done = append(done, reservation{ds[0].gen, off, off + total})
		for _, d := range ds {
			if err := c.setDraw(d, seed, off); err != nil {
				undo()
				return nil, fmt.Errorf("gpu: setting the random numbers of %v: %w", c.from, err)
			}
			off += d.blocks
		}
	}
	return undo, nil
}

// setDraw sets a random fill's seed and offset arguments in the graph's later launches.
func (c *graphCore) setDraw(d capDraw, seed, off uint64) error {
	l := &c.launches[d.launch]
	args := append([]backend.Arg(nil), l.args...)
	d.resolveTo(args, l.params, seed, off)
	if err := c.be.SetKernelArgs(l.node, l.fn.be, l.cfg, args); err != nil {
		return err
	}
	l.args = args
	return nil
}

// Close releases the graph: later launches return an error wrapping ErrClosed.
// Launches already enqueued complete; the graph's backend resources and the memory it
// kept (buffers freed while it used them, its scratch) are released after the last of
// them, in the background. Close is idempotent; closing a nil graph is an error
// wrapping ErrInvalidValue.
func (g *Graph) Close() error {
	if g.isNil() {
		return errNilGraph
	}
	g.cleanup.Stop()
	g.graphCore.close()
	return nil
}

// close is Close, and the cleanup of a graph dropped without Close.
func (c *graphCore) close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	c.mu.Unlock()
	finish := func() {
		c.be.Destroy()
		for _, b := range c.blocks {
			b.Free()
		}
		unpinAll(c.pinned)
	}
	var evs []*pev
	var err error
	withAllocation(c.token, func() { evs, err = c.token.pendingEvents(ReadWrite) })
	if err != nil {
		go func() {
			c.dev.syncBackend()
			finish()
		}()
		return
	}
	if len(evs) == 0 {
		finish()
		return
	}
	go func() {
		c.dev.wait(context.Background(), eventsWait{evs}, WaitPolicy{Mode: WaitAuto, Spin: -1})
		releaseAll(evs)
		finish()
	}()
}

// Param is a scalar kernel argument that a graph can change without a new capture
// (Graph.SetParam; CUDA Driver API: cuGraphExecKernelNodeSetParams). Pass it to
// Stream.Launch in place of the scalar: outside a capture the launch takes its value; in
// a capture the graph remembers where it went. A Param is immutable and safe for
// concurrent use.
type Param struct {
	arg  backend.Arg
	typ  reflect.Type
	draw *drawArgs // a random fill's offset (random.go), or nil
}

// NewParam returns a Param with the value v, a scalar of any type Stream.Launch takes
// as a scalar (a Go integer, float or bool). Errors wrap ErrInvalidValue.
func NewParam(v any) (*Param, error) {
	a, err := scalarArg(v)
	if err != nil {
		return nil, fmt.Errorf("gpu: NewParam: %w", err)
	}
	return &Param{arg: a, typ: reflect.TypeOf(v)}, nil
}

// Type returns the Go type of p's value, which SetParam's values must have (nil for a
// nil Param).
func (p *Param) Type() reflect.Type {
	if p == nil {
		return nil
	}
	return p.typ
}

// SetParam sets the value p has in the graph's later launches, in every launch
// captured with p, without a new capture: v must have p's type. Launches already
// enqueued keep the old value. Errors wrap ErrInvalidValue (a value of another type, a
// Param no launch of the graph took), ErrClosed, or ErrNotSupported where the driver
// can't change a captured launch.
func (g *Graph) SetParam(p *Param, v any) error {
	if g.isNil() {
		return errNilGraph
	}
	if p == nil {
		return fmt.Errorf("gpu: SetParam of a nil Param: %w", ErrInvalidValue)
	}
	if t := reflect.TypeOf(v); t != p.typ {
		return fmt.Errorf("gpu: SetParam of a %v Param to a %v: %w", p.typ, t, ErrInvalidValue)
	}
	a, err := scalarArg(v)
	if err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return fmt.Errorf("gpu: SetParam of a closed graph: %w", ErrClosed)
	}
	found := false
	for k := range g.launches {
		l := &g.launches[k]
		var args []backend.Arg
		for _, ps := range l.params {
			if ps.p != p {
				continue
			}
			if args == nil {
				args = append([]backend.Arg(nil), l.args...)
			}
			args[ps.i] = a
		}
		if args == nil {
			continue
		}
		found = true
		if err := g.be.SetKernelArgs(l.node, l.fn.be, l.cfg, args); err != nil {
			return err
		}
		l.args = args
	}
	if !found {
		return fmt.Errorf("gpu: SetParam of a Param that no launch of the graph took: %w", ErrInvalidValue)
	}
	return nil
}

// recordLaunch remembers a captured launch that took Params, right after its backend
// launch (s is held).
func (c *capture) recordLaunch(s *Stream, fn *Function, cfg backend.LaunchConfig, args []backend.Arg, params []paramSlot) error {
	node, err := s.be.(backend.Capturer).LastNode()
	if err != nil {
		err = fmt.Errorf("gpu: the launch of %s with a Param in a capture on %v: %w", fn.Name(), s, err)
		c.spoil(err)
		return err
	}
	c.mu.Lock()
	c.launches = append(c.launches, capLaunch{node: node, fn: fn, cfg: cfg, args: append([]backend.Arg(nil), args...), params: params})
	if d := drawOf(params); d != nil {
		c.draws = append(c.draws, capDraw{d, len(c.launches) - 1})
	}
	c.mu.Unlock()
	return nil
}
