package gpu

import (
	"math/bits"
	"sync"

	"github.com/go-gpu/gpu/backend"
)

// blockCache keeps freed small device blocks for reuse on the stream they were freed
// on, so that allocating and freeing small buffers costs no driver call (a pool
// allocation and a stream-ordered free take about 1.5 us together on an H200). Reuse
// on the same stream is safe without waits: the block's last uses were ordered before
// its free on that stream, and the new owner's work follows on it (the rule of
// stream-ordered allocation, CUDA Programming Guide: "Stream Ordered Memory
// Allocator"). Blocks come in power-of-two classes from 512 bytes to 32 MiB; at most
// cacheMaxBytes are kept, and TrimMemory, Stream.Close and out-of-memory recovery hand
// them back.
type blockCache struct {
	mu    sync.Mutex
	lists map[cacheKey][]backend.Mem
	bytes int64
}

type cacheKey struct {
	s     *Stream
	class int64
}

const (
	cacheMinBlock = 512
	cacheMaxBlock = 32 << 20
	cacheMaxBytes = 1 << 30
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

// get pops a block of the class on s.
func (c *blockCache) get(s *Stream, class int64) backend.Mem {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := cacheKey{s, class}
	l := c.lists[k]
	if len(l) == 0 {
		return nil
	}
	m := l[len(l)-1]
	c.lists[k] = l[:len(l)-1]
	c.bytes -= class
	return m
}

// put keeps m, freed in stream order on s, if there is room. The caller holds s.mu and
// has seen s open (Close flushes s's blocks after closing it).
func (c *blockCache) put(s *Stream, m backend.Mem) bool {
	class := m.Size()
	if cacheClass(class) != class {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bytes+class > cacheMaxBytes {
		return false
	}
	if c.lists == nil {
		c.lists = map[cacheKey][]backend.Mem{}
	}
	k := cacheKey{s, class}
	c.lists[k] = append(c.lists[k], m)
	c.bytes += class
	return true
}

// flush frees the blocks kept for s (every stream if s is nil) in stream order. own
// says the caller owns s's backend stream (Close, before destroying it); otherwise each
// stream is held (holdBackend) while its blocks are freed on it, and the blocks of a
// stream whose Close is destroying it meanwhile are freed on the host once the device
// is idle, in a goroutine.
func (c *blockCache) flush(s *Stream, own bool) {
	c.mu.Lock()
	var free []cacheKey
	var mems [][]backend.Mem
	for k, l := range c.lists {
		if s == nil || k.s == s {
			free = append(free, k)
			mems = append(mems, l)
			delete(c.lists, k)
			c.bytes -= k.class * int64(len(l))
		}
	}
	c.mu.Unlock()
	var left []backend.Mem
	for i, k := range free {
		if !own && !k.s.holdBackend() {
			left = append(left, mems[i]...)
			continue
		}
		for _, m := range mems[i] {
			if k.s.be.FreeAsync(m) == nil {
				k.s.enqueued()
			}
		}
		if !own {
			k.s.unhold()
		}
	}
	if len(left) > 0 {
		be := free[0].s.dev.be
		go func() {
			be.Synchronize()
			for _, m := range left {
				be.FreeNow(m)
			}
		}()
	}
}
