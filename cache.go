package gpu

import (
	"math/bits"
	"sync/atomic"

	"github.com/go-gpu/gpu/backend"
)

// blockCache keeps freed small device blocks for reuse on the stream they were freed
// on, so that allocating and freeing small buffers costs no driver call (a pool
// allocation and a stream-ordered free take about 1.5 us together on an H200). Reuse
// on the same stream is safe without waits: the block's last uses were ordered before
// its free on that stream, and the new owner's work follows on it (the rule of
// stream-ordered allocation, CUDA Programming Guide: "Stream Ordered Memory
// Allocator"). Blocks come in power-of-two classes from 512 bytes to 32 MiB, kept in
// the stream's own lists (streamCore.blocks, guarded by the stream's mu, which a free
// holds already); at most cacheMaxBytes are kept on a device, and TrimMemory,
// Stream.Close, out-of-memory recovery and the cleanup of a stream dropped without
// Close hand them back.
type blockCache struct {
	bytes atomic.Int64
}

const (
	cacheMinBlock = 512
	cacheMaxBlock = 32 << 20
	cacheMaxBytes = 1 << 30
	// cacheClasses is the number of classes, 512 bytes (index 0) to 32 MiB.
	cacheClasses = 17
)

// cacheClass returns the block size that serves size bytes, or 0 if size isn't cached.
func cacheClass(size int64) int64 {
	if size <= 0 || size > cacheMaxBlock {
		return 0
	}
	if size <= cacheMinBlock {
		return cacheMinBlock
	}
	return 1 << bits.Len64(uint64(size-1))
}

// classIndex is the index of a class (a power of two from cacheMinBlock to
// cacheMaxBlock) in streamCore.blocks.
func classIndex(class int64) int { return bits.Len64(uint64(class)) - 10 }

// get pops a block of the class on s.
func (c *blockCache) get(s *Stream, class int64) backend.Mem {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := &s.blocks[classIndex(class)]
	n := len(*l)
	if n == 0 {
		return nil
	}
	m := (*l)[n-1]
	(*l)[n-1] = nil
	*l = (*l)[:n-1]
	c.bytes.Add(-class)
	return m
}

// put keeps m, freed in stream order on s, if there is room. The caller holds s.mu and
// has seen s open (Close flushes s's blocks after closing it).
func (c *blockCache) put(s *Stream, m backend.Mem) bool {
	class := m.Size()
	if cacheClass(class) != class {
		return false
	}
	if c.bytes.Add(class) > cacheMaxBytes {
		c.bytes.Add(-class)
		return false
	}
	l := &s.blocks[classIndex(class)]
	*l = append(*l, m)
	return true
}

// take removes and returns every block kept for the stream core sc, whose mu the
// caller holds.
func (c *blockCache) take(sc *streamCore) []backend.Mem {
	var out []backend.Mem
	for i := range sc.blocks {
		out = append(out, sc.blocks[i]...)
		c.bytes.Add(-int64(len(sc.blocks[i])) * (cacheMinBlock << i))
		sc.blocks[i] = nil
	}
	return out
}

// flush frees the blocks kept for s (every live stream of d if s is nil) in stream
// order. own says the caller owns s's backend stream (Close, before destroying it);
// otherwise each stream is held (holdBackend) while its blocks are freed on it, and the
// blocks of a stream whose Close is destroying it meanwhile are freed on the host once
// the device is idle, in a goroutine. (A stream dropped without Close frees its own in
// its cleanup, streamCore.destroy.)
func (c *blockCache) flush(d *Device, s *Stream, own bool) {
	streams := []*Stream{s}
	if s == nil {
		streams = d.liveStreams()
	}
	var left []backend.Mem
	for _, s := range streams {
		s.mu.Lock()
		if !own && s.cap.Load() != nil {
			s.mu.Unlock()
			continue // a capturing stream keeps them: a free enqueued on it would be captured
		}
		mems := c.take(s.streamCore)
		s.mu.Unlock()
		if len(mems) == 0 {
			continue
		}
		if !own && !s.holdBackend() {
			left = append(left, mems...)
			continue
		}
		for _, m := range mems {
			if s.be.FreeAsync(m) == nil {
				s.enqueued()
			}
		}
		if !own {
			s.unhold()
		}
	}
	if len(left) > 0 {
		go func() {
			d.syncBackend()
			for _, m := range left {
				d.freeHost(m)
			}
		}()
	}
}
