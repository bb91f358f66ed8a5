package gpu

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"unsafe"
)

// Staged host copies. The CUDA driver copies between the device and pageable host
// memory through its own small pinned buffers, on the calling thread: measured on the
// H200 (PCIe 5, driver 580), 6 to 16 GB/s, against 54 GB/s to and from pinned memory.
// The plain copies (Buffer.CopyFromHost and CopyToHost, and the array copies built on
// them) of at least stageMin bytes of pageable memory therefore go through the device's
// own pinned staging chunks, two in flight: while the DMA engine moves one chunk, the
// host copies the other between the chunk and the Go memory, split over several
// goroutines. Backends whose DeviceInfo.StagedHostCopies is false (the CPU) copy
// directly. Pinned and unified memory of this package's own buffers (a slice from
// HostAccess) is never staged.

// Tuning, measured on the H200's host (BenchmarkStagedCopy, session 5: 2 MB and 64 MB
// copies over chunks of 256 KiB to 8 MiB and host copies split 4 to 16 ways, at least
// 64 KiB or 256 KiB each): larger chunks win (each DMA has about 10 us of fixed cost),
// and the host copy, bound by the host's memory bandwidth, is the limit from 8 MiB. At
// 2 MB staging lost to the driver's copy (BenchmarkCopy: 184 against 157 us host to
// device, 188 against 179 device to host); at 1 GiB it won (45 against 119 ms, 46
// against 69 ms).
const (
	stageMin  = 8 << 20 // smaller copies go to the driver directly (at 2 MB it was faster)
	stageKeep = 4       // chunks kept for reuse (32 MiB of pinned memory)
)

// (Variables for BenchmarkStagedCopy.)
var (
	stageChunkMax    = 8 << 20  // the size of a staging chunk
	stageChunkFixed  = 0        // if not 0, every copy's chunk size
	hostCopyPart     = 64 << 10 // the least bytes a goroutine of a host copy takes
	hostCopyMaxParts = 8        // the most goroutines of a host copy
)

// stagePool keeps a device's pinned staging chunks.
type stagePool struct {
	mu   sync.Mutex
	free []*Buffer
}

// get returns a staging chunk (allocated if none is kept).
func (p *stagePool) get(d *Device) (*Buffer, error) {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		b := p.free[n-1]
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return b, nil
	}
	p.mu.Unlock()
	// No out-of-memory recovery (a GC and TrimMemory, which waits for the whole
	// device): the caller copies directly instead.
	return d.allocate(PinnedMem, int64(max(stageChunkMax, stageChunkFixed)), nil, false)
}

// put keeps b for reuse, or frees it past stageKeep; b's copies must be complete.
func (p *stagePool) put(b *Buffer) {
	p.mu.Lock()
	if len(p.free) < stageKeep {
		p.free = append(p.free, b)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	b.Free()
}

// flush frees the kept chunks (TrimMemory).
func (p *stagePool) flush() {
	p.mu.Lock()
	free := p.free
	p.free = nil
	p.mu.Unlock()
	for _, b := range free {
		b.Free()
	}
}

// wordPool keeps a device's 8-byte words of pinned host memory, as views of pinned
// blocks: for reading a small result back (readSmall), a copy into pinned memory is
// asynchronous, so the host waits for it as for any operation (under its context,
// without blocking an OS thread in the driver), where a copy into pageable Go memory
// returns from the driver only when done; and kernels write results into them
// directly (compact's count).
type wordPool struct {
	mu     sync.Mutex
	free   []*Buffer
	blocks []*Buffer // the pinned blocks the words are cut from, kept for the device
}

// wordBlock is the bytes of pinned memory a wordPool allocates at a time.
const wordBlock = 4096

// get returns a free word, cutting a new pinned block when none is left.
func (p *wordPool) get(d *Device) (*Buffer, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free) == 0 {
		b, err := d.allocate(PinnedMem, wordBlock, nil, false)
		if err != nil {
			return nil, err
		}
		if len(b.a.mem.Host()) < wordBlock {
			b.Free()
			return nil, fmt.Errorf("gpu: pinned block without a host view: %w", ErrNotSupported)
		}
		p.blocks = append(p.blocks, b)
		for off := int64(0); off < wordBlock; off += 8 {
			w, err := b.Slice(off, 8)
			if err != nil {
				return nil, err
			}
			p.free = append(p.free, w)
		}
	}
	w := p.free[len(p.free)-1]
	p.free = p.free[:len(p.free)-1]
	return w, nil
}

// put returns a word whose copies and kernels are complete.
func (p *wordPool) put(w *Buffer) {
	p.mu.Lock()
	p.free = append(p.free, w)
	p.mu.Unlock()
}

// hostBytes returns the host view of a word (pinned memory).
func hostBytes(w *Buffer) []byte { return w.a.mem.Host()[w.off : w.off+w.size : w.off+w.size] }

// staged reports whether a plain copy between b and host goes through staging chunks:
// b is live device memory, host is large, pageable (not one of the device's own pinned
// or unified buffers) and fits in b, and the backend wants staging.
func (b *Buffer) staged(host []byte) bool {
	a := b.a
	d := a.dev
	return len(host) >= stageMin && int64(len(host)) <= b.size && a.kind == DeviceMem && !a.gone.Load() &&
		(d.info.StagedHostCopies || d.forceStaging) && !d.ownsHost(host)
}

// stagedCopy is one staged copy between b (from its first byte) and host on the
// device's default stream. Chunk i covers bytes [i*chunk, (i+1)*chunk) and uses
// staging chunk i%2.
type stagedCopy struct {
	b      *Buffer
	host   []byte
	toHost bool
	chunk  int
	stage  [2]*Buffer
	ops    [2]*opWait // the DMA in flight in each staging chunk, or nil
	next   int        // the next chunk to start
	done   int        // chunks in place (copied out, for toHost)
}

// stagedChunk returns the chunk size for a copy of n bytes: half of it (so that the
// two chunks of a small copy overlap), rounded up to 64 KiB, from 1 MiB to
// stageChunkMax.
func stagedChunk(n int) int {
	if stageChunkFixed > 0 {
		return stageChunkFixed
	}
	c := (n/2 + 64<<10 - 1) &^ (64<<10 - 1)
	return min(max(c, 1<<20), stageChunkMax)
}

// copyStaged copies between b and host through staging chunks; it returns once the
// data is in place. If ctx ends first it returns ctx.Err(), and the chunks not yet in
// place are enqueued as direct driver copies on the default stream, so that the copy
// completes in the background as Buffer.CopyToHost and CopyFromHost document.
func (b *Buffer) copyStaged(ctx context.Context, host []byte, toHost bool) error {
	d := b.a.dev
	c := &stagedCopy{b: b, host: host, toHost: toHost, chunk: stagedChunk(len(host))}
	for i := range c.stage {
		if i*c.chunk >= len(host) {
			break
		}
		st, err := d.stagePool.get(d)
		if err != nil {
			// No pinned memory for staging: the driver's own copy, as if unstaged.
			c.release()
			return b.copyDirect(ctx, host, toHost)
		}
		c.stage[i] = st
	}
	err := c.run(ctx)
	if err != nil && ctx.Err() != nil {
		if derr := c.direct(); derr != nil {
			err = derr
		}
		go c.release() // after the DMAs in flight
		return err
	}
	c.release()
	return err
}

func (c *stagedCopy) chunks() int { return (len(c.host) + c.chunk - 1) / c.chunk }

// span returns the byte range of chunk i.
func (c *stagedCopy) span(i int) (lo, hi int) {
	lo = i * c.chunk
	return lo, min(lo+c.chunk, len(c.host))
}

// run advances the copy until it is complete or a wait fails.
func (c *stagedCopy) run(ctx context.Context) error {
	s := c.b.a.dev.def
	a := c.b.a
	n := c.chunks()
	for c.done < n {
		// Start chunks while a staging chunk is free: the one of chunk next-2, which is
		// done (copied out, for toHost; its DMA complete, for the device).
		for c.next < n && c.next < c.done+2 {
			if err := ctx.Err(); err != nil {
				return err
			}
			k := c.next % 2
			lo, hi := c.span(c.next)
			st := c.stage[k].a.mem.Host()[:hi-lo]
			off := c.b.off + int64(lo)
			var seq uint64
			var err error
			if c.toHost {
				seq, err = s.trackedScope([]use{{a, Read}}, func() error {
					return s.be.CopyToHost(st, a.mem, off)
				}, false)
			} else {
				hostCopy(st, c.host[lo:hi])
				seq, err = s.trackedScope([]use{{a, Write}}, func() error {
					return s.be.CopyFromHost(a.mem, off, st)
				}, false)
			}
			if err != nil {
				if seq != 0 {
					// Enqueued, only its event failed (trackEnd): release must still
					// wait for the DMA before the chunk is reused.
					c.next++
					c.ops[k] = &opWait{s: s, seq: seq}
				}
				return err
			}
			c.next++
			w := &opWait{s: s, seq: seq}
			c.ops[k] = w
			if _, err := w.get(); err != nil { // an event per chunk: the stream has more
				return err
			}
		}
		// Finish the oldest chunk in flight.
		k := c.done % 2
		if err := c.wait(ctx, k); err != nil {
			return err
		}
		if c.toHost {
			lo, hi := c.span(c.done)
			hostCopy(c.host[lo:hi], c.stage[k].a.mem.Host()[:hi-lo])
		}
		c.done++
	}
	return nil
}

// direct enqueues the chunks not yet in place as the driver's own copies of pageable
// memory on the default stream (pinned until they complete), after a cancelled run:
// for toHost every chunk not copied out, for the device every chunk not started.
func (c *stagedCopy) direct() error {
	s := c.b.a.dev.def
	from := c.done
	if !c.toHost {
		from = c.next
	}
	lo, _ := c.span(from)
	if lo >= len(c.host) {
		return nil
	}
	rest := &Buffer{a: c.b.a, off: c.b.off + int64(lo), size: int64(len(c.host) - lo)}
	var seq uint64
	var p *runtime.Pinner
	var err error
	if c.toHost {
		seq, p, err = s.copyDtoH(c.host[lo:], rest)
	} else {
		seq, p, err = s.copyHtoD(rest, c.host[lo:])
	}
	if err != nil {
		return err
	}
	return s.unpinAfter(seq, p)
}

// wait waits for the DMA in staging chunk k and forgets it.
func (c *stagedCopy) wait(ctx context.Context, k int) error {
	d := c.b.a.dev
	pol, err := d.pickPolicy(nil)
	if err != nil {
		return err
	}
	w := c.ops[k]
	if err := d.wait(ctx, w, pol); err != nil {
		return err
	}
	w.ev.release()
	c.ops[k] = nil
	return nil
}

// release returns the staging chunks once no DMA uses them (the chunk of a DMA that
// can't be waited for, after a fault, is dropped: its cleanup frees it).
func (c *stagedCopy) release() {
	d := c.b.a.dev
	for k, st := range c.stage {
		if st == nil {
			continue
		}
		if w := c.ops[k]; w != nil {
			var err error
			if w.ev == nil {
				err = w.s.dev.be.Synchronize() // no event: wait for the device
			} else {
				err = w.ev.be.Synchronize()
				w.ev.release()
			}
			c.ops[k] = nil
			if err != nil {
				continue
			}
		}
		d.stagePool.put(st)
	}
}

// hostCopy copies src into dst (of equal length) over up to GOMAXPROCS goroutines, at
// least hostCopyPart bytes each.
func hostCopy(dst, src []byte) {
	hostCopyN(dst, src, min(runtime.GOMAXPROCS(0), len(src)/hostCopyPart, hostCopyMaxParts))
}

// hostCopyN copies src into dst over parts goroutines.
func hostCopyN(dst, src []byte, parts int) {
	if parts <= 1 {
		copy(dst, src)
		return
	}
	per := min((len(src)/parts+4095)&^4095, len(src))
	var wg sync.WaitGroup
	for lo := per; lo < len(src); lo += per {
		hi := min(lo+per, len(src))
		wg.Go(func() { copy(dst[lo:hi], src[lo:hi]) })
	}
	copy(dst[:per], src[:per])
	wg.Wait()
}

// hostRange is the host address range [lo, hi) of a pinned or unified buffer.
type hostRange struct{ lo, hi uintptr }

func rangeOf(h []byte) hostRange {
	if len(h) == 0 {
		return hostRange{}
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(h)))
	return hostRange{lo, lo + uintptr(len(h))}
}

// addHost records the host range of a new pinned or unified buffer.
func (d *Device) addHost(h []byte) {
	r := rangeOf(h)
	if r.lo == 0 {
		return
	}
	d.hostMu.Lock()
	defer d.hostMu.Unlock()
	i, _ := d.findHost(r.lo)
	d.hostRanges = slices.Insert(d.hostRanges, i, r)
}

// findHost finds the range starting at lo in d.hostRanges (or where it would go); the
// caller holds hostMu.
func (d *Device) findHost(lo uintptr) (int, bool) {
	return slices.BinarySearchFunc(d.hostRanges, lo, func(x hostRange, lo uintptr) int { return cmp.Compare(x.lo, lo) })
}

// removeHost forgets the host range of a freed pinned or unified buffer.
func (d *Device) removeHost(h []byte) {
	r := rangeOf(h)
	if r.lo == 0 {
		return
	}
	d.hostMu.Lock()
	defer d.hostMu.Unlock()
	if i, ok := d.findHost(r.lo); ok {
		d.hostRanges = slices.Delete(d.hostRanges, i, i+1)
	}
}

// ownsHost reports whether h starts in one of the device's pinned or unified buffers.
func (d *Device) ownsHost(h []byte) bool {
	p := rangeOf(h).lo
	d.hostMu.RLock()
	defer d.hostMu.RUnlock()
	// The last range starting at or before p.
	i, _ := d.findHost(p + 1)
	return i > 0 && p < d.hostRanges[i-1].hi
}
