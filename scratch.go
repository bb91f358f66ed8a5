package gpu

import (
	"errors"
	"fmt"
	"math/bits"
	"sync"

	"github.com/go-gpu/gpu/backend"
)

// Scratch: the small device memory that kernels use for their own bookkeeping, handed
// out clean (all zero) by the owner of the work, a stream, and taken back after use,
// clean or not. Fused reductions keep their ticket counters in it, scans their look-back
// status, compactions (Nonzero, Argwhere, Extract) their tile counts, two-pass
// reductions their partial results (a kind that needs no cleaning: scratchPartials).
//
// A stream orders every use of its scratch: the kernels of one stream run one after
// another, so a block given back clean once the kernels that leave it clean are
// enqueued (internal/kernel's self-cleaning kernels: ScanTiles, ScanColumns,
// CompactScatter, FuseReduce's tickets, RadixFused's sums) is clean for the next user, without a memset.
// Each use takes a block of its own, so concurrent users of one stream never share
// one. A use holds the stream (hold) until it gives the block back, so that Close frees
// the stream's blocks after the last use. Blocks are backend memory held by the
// stream's core (untracked: the stream is their only user), pooled by kind, up to
// scratchKeep clean ones of each, in sizes of powers of two from scratchMin; a block
// given back dirty is freed on the stream. Close, and the cleanup of a stream dropped
// without Close, free them. Scratch that its kernels don't leave clean, or that the
// host reads (a compaction's count), comes instead as a zeroed Buffer from the pool of
// small blocks (unpooled scratch), freed at the end of the use.
//
// The pool is its own type (scratchPool) behind an interface of its owner
// (scratchOwner), so that a graph owns the scratch of the work captured in it, separate
// from any stream's: while a stream captures, its scratch comes from the capture
// (capture.scratch, graph.go), blocks that become the graph's.

// scratchKind is what a block of scratch is for.
type scratchKind uint8

const (
	// scratchTickets is a fused reduction's ticket counters (kernel.ReduceFuseMaxTiles
	// uint32s, one per output tile).
	scratchTickets scratchKind = iota
	// scratchScanStatus is a scan's tile status (kernel.ScanTiles.StatusBytes).
	scratchScanStatus
	// scratchCompactStatus is a compaction's tile status (16 bytes and a word a tile).
	scratchCompactStatus
	// scratchSelect is TopK's radix select counts (kernel.TopKRadixScratchWords u32s a
	// row; left zero by its last pass).
	scratchSelect
	// scratchFusedSort is a fused sort's sums and barrier counters
	// (kernel.FusedSumsBytes; left zero by the kernel).
	scratchFusedSort
	// scratchPartials is a two-pass reduction's partial results
	// (kernel.ReducePartialBytes): its first pass writes every one before anything
	// reads them, so a block is given back as it is (clean for this kind means reusable).
	scratchPartials
	numScratchKinds
)

var scratchNames = [numScratchKinds]string{"a fused reduction's counters", "a scan's status", "a compaction's status",
	"a radix select's counts", "a fused sort's sums", "a reduction's partial results"}

const (
	// scratchMin is the smallest block; larger ones are powers of two.
	scratchMin = 4096
	// scratchKeep is the most clean blocks of one kind a pool keeps.
	scratchKeep = 4
)

// scratchOwner hands out scratch: a Stream (its pool lives and dies with it), or the
// capture in progress on it (graph.go), for the work captured.
type scratchOwner interface {
	// scratch returns clean scratch of kind k of at least size bytes for one use, which
	// must end with release. pooled says that the use leaves it clean (then it can
	// come from, and go back to, the owner's pool of clean blocks); otherwise it is
	// a zeroed Buffer.
	scratch(k scratchKind, size int, pooled bool) (*scratch, error)
}

var _ scratchOwner = (*Stream)(nil)

// scratch is one use of scratch memory. Stream.scratch's records come from
// scratchRecords and go back at release, so that a use allocates nothing in the steady
// state (a fused reduction takes one per call).
type scratch struct {
	arg   any         // the kernel argument where it is InOut of buf or block; nil for a pooled block (argument)
	mem   backend.Mem // a pooled block, or nil
	buf   *Buffer     // unpooled scratch, or nil
	block *Buffer     // a capture's pooled block (mem is its memory), or nil
	cap   *capture    // the capture that gave it, or nil
	kind  scratchKind
	s     *Stream
}

// scratchRecords recycles Stream.scratch's records.
var scratchRecords = sync.Pool{New: func() any { return new(scratch) }}

// argument returns the use's kernel argument: the DevicePtr of a pooled block, or InOut
// of the buffer or the capture's block.
func (sc *scratch) argument() any {
	if sc.arg != nil {
		return sc.arg
	}
	return DevicePtr(sc.mem.Ptr())
}

// addTo adds the use's memory to a launch's arguments, as argument does: a pooled
// block untracked (its stream orders its uses), a buffer or a capture's block read and
// written.
func (sc *scratch) addTo(la *launchArgs) {
	switch {
	case sc.buf != nil:
		la.buf(sc.buf, ReadWrite)
	case sc.block != nil:
		la.buf(sc.block, ReadWrite)
	default:
		la.raw(sc.mem, 0)
	}
}

// scratchPool is the clean blocks of an owner, by kind, and the bytes it holds.
type scratchPool struct {
	mu   sync.Mutex
	free [numScratchKinds][]backend.Mem
	held int64 // bytes of the owner's blocks not yet freed, pooled or in use
}

// scratch returns clean scratch of kind k of at least size bytes on s (scratchOwner).
// It holds s until release.
func (s *Stream) scratch(k scratchKind, size int, pooled bool) (*scratch, error) {
	if err := s.hold(); err != nil {
		return nil, err
	}
	if c := s.cap.Load(); c != nil {
		sc, err := c.scratch(s, k, size, pooled)
		if err != nil {
			s.unhold()
		}
		return sc, err
	}
	sc := scratchRecords.Get().(*scratch)
	*sc = scratch{kind: k, s: s}
	if !pooled {
		b, err := s.allocZeroed(int64(size))
		if err != nil {
			s.unhold()
			scratchRecords.Put(sc)
			return nil, err
		}
		sc.buf, sc.arg = b, InOut(b)
		return sc, nil
	}
	m := s.scratchPool.take(k, size)
	if m == nil {
		var err error
		if m, err = s.allocOwn(int64(max(scratchMin, 1<<bits.Len(uint(size-1)))), scratchNames[k]); err != nil {
			s.unhold()
			scratchRecords.Put(sc)
			return nil, err
		}
		s.scratchPool.count(m.Size())
	}
	sc.mem = m
	return sc, nil
}

// release ends the use: clean says that the memory is zero again once the work
// enqueued on the stream so far has run (so the block goes back to the pool, which
// keeps the larger ones when full; a dirty one is freed on the stream).
func (sc *scratch) release(clean bool) {
	s := sc.s
	switch {
	case sc.buf != nil:
		sc.buf.Free()
	case sc.block != nil:
		// A capture's block: back to its pool, clean again by a captured memset if the
		// work left it dirty.
		if clean || s.MemsetD32(sc.block, 0) == nil {
			sc.cap.putScratch(sc.kind, sc.block)
		}
	default:
		m := sc.mem
		if clean {
			m = s.scratchPool.put(sc.kind, m)
		}
		if m != nil {
			s.scratchPool.count(-m.Size())
			s.be.FreeAsync(m)
		}
	}
	*sc = scratch{} // (the record is not to be used again)
	scratchRecords.Put(sc)
	s.unhold()
}

// take returns a pooled clean block of kind k of at least size bytes (the smallest),
// or nil.
func (p *scratchPool) take(k scratchKind, size int) backend.Mem {
	p.mu.Lock()
	defer p.mu.Unlock()
	best := -1
	for i, m := range p.free[k] {
		if m.Size() >= int64(size) && (best < 0 || m.Size() < p.free[k][best].Size()) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	m := p.free[k][best]
	p.free[k] = append(p.free[k][:best], p.free[k][best+1:]...)
	return m
}

// put pools a clean block of kind k and returns the block to free, if any: none while
// the kind has room, else the smallest of its blocks and m (so that the sizes the
// owner's work needs stay pooled).
func (p *scratchPool) put(k scratchKind, m backend.Mem) backend.Mem {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free[k]) < scratchKeep {
		p.free[k] = append(p.free[k], m)
		return nil
	}
	small := 0
	for i, b := range p.free[k] {
		if b.Size() < p.free[k][small].Size() {
			small = i
		}
	}
	if b := p.free[k][small]; b.Size() < m.Size() {
		p.free[k][small] = m
		return b
	}
	return m
}

// count adds n to the bytes held.
func (p *scratchPool) count(n int64) {
	p.mu.Lock()
	p.held += n
	p.mu.Unlock()
}

// freeAll frees the pooled blocks on be (Close's backend part and destroy, which own
// the backend stream; no use is in progress then).
func (p *scratchPool) freeAll(be backend.Stream) {
	p.mu.Lock()
	free := p.free
	p.free = [numScratchKinds][]backend.Mem{}
	p.mu.Unlock()
	for _, ms := range free {
		for _, m := range ms {
			p.count(-m.Size())
			be.FreeAsync(m)
		}
	}
}

// allocOwn allocates n bytes of device memory on s for the stream's own use (untracked
// backend memory: scratch) and zeroes it on s; what names it in errors. Out of memory,
// it reclaims dropped buffers and cached blocks and tries once more, as Alloc. The
// caller holds s.
func (s *Stream) allocOwn(n int64, what string) (backend.Mem, error) {
	m, err := s.dev.be.Alloc(DeviceMem, n, s.be)
	if errors.Is(err, ErrOutOfMemory) {
		s.dev.reclaim()
		m, err = s.dev.be.Alloc(DeviceMem, n, s.be)
	}
	if err != nil {
		return nil, fmt.Errorf("gpu: allocating %s (%d bytes): %w", what, n, err)
	}
	s.enqueued()
	if err := s.be.Memset(m, 0, 0, 1, n); err != nil {
		s.be.FreeAsync(m)
		return nil, err
	}
	s.enqueued()
	return m, nil
}

// allocZeroed returns a zeroed buffer of size bytes from s's pool.
func (s *Stream) allocZeroed(size int64) (*Buffer, error) {
	b, err := s.Alloc(size)
	if err != nil {
		return nil, err
	}
	if err := s.MemsetD32(b, 0); err != nil {
		b.Free()
		return nil, err
	}
	return b, nil
}
