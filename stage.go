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

// Plain host copies (Buffer.CopyToHost, CopyFromHost and the array copies built on
// them: ToSlice, At...). The CUDA driver copies between the device and pageable host
// memory synchronously, on the calling thread, through its own small pinned buffers:
// a copy whose data isn't ready yet sits in the driver, uncancellable, and (on the
// stream it was enqueued on) holds up every later copy there. So a plain copy
//
//  1. first waits, on the host and under its context (the package's own wait: a spin,
//     then a parked goroutine), for the uses of the buffer it conflicts with;
//  2. then copies, on one of the device's own host-copy streams (Device.copyStream:
//     nothing on them ever waits for other work, so a copy of ready data starts at
//     once whatever other copies wait for): from 8 MiB (stageFrom) through the
//     device's pinned staging buffers with asynchronous copies and the package's own
//     waits, two chunks in flight: while the DMA engine moves one, the host copies the
//     other between the staging buffer and the Go memory, split over several
//     goroutines; smaller copies with the driver's own copy of pageable memory, but
//     those of 8 bytes or less (At, single words) through a pinned word.
//
// If ctx ends, the copy returns ctx.Err() within one wait (a driver's copy below 8 MiB,
// once started, first finishes: about 200 us for 2 MB): nothing is enqueued past
// that point, the Go memory is not touched after the return, and a staging buffer
// whose DMA is in flight goes back to its pool once the DMA completes (runAfter). At
// most stageTokens staging buffers are in use at a time per device (waited for under
// ctx), which bounds the pinned memory and the goroutines inside the driver however
// many goroutines copy at once. Backends whose DeviceInfo.StagedHostCopies is false
// (the CPU) and host-visible memory (pinned buffers) copy on the host directly
// (HostAccess). Pinned and unified memory of this package's own buffers as the Go side
// (a slice from HostAccess) is never staged: the driver's copy of it is asynchronous.

// Tuning, measured on the H200's host (BenchmarkStagedCopy, session 5: 2 MB and 64 MB
// copies over chunks of 256 KiB to 8 MiB and host copies split 4 to 16 ways, at least
// 64 KiB or 256 KiB each): larger chunks win (each DMA has about 10 us of fixed cost),
// and the host copy, bound by the host's memory bandwidth, is the limit from 8 MiB. At
// 1 GiB staging won against the driver's pageable copy (45 against 119 ms, 46 against
// 69 ms); at 2 MB it lost (gpubench array/copyto/{cpu_to_gpu,gpu_to_cpu}, 2026-12-02:
// 284 and 323 us against the driver's 194 and 228 us in the same run; 8 MB about even),
// so copies below stageFrom (8 MiB) are the driver's, of data already waited for: the
// thread sits in the driver for the copy only (about 200 us for 2 MB), and the staging
// tokens bound how many do at once. Copies of 8 bytes or less keep going through a
// pinned word (stagePool.get).
const (
	stageMinClass = 4 << 10 // the smallest staging buffer (smaller copies of more than 8 bytes use it)
	stageKeep     = 4       // staging buffers kept for reuse, per size
	// stageTokens bounds the staging buffers in use per device (and so the pinned
	// memory in flight, at most stageTokens*stageChunkMax, and the goroutines of plain
	// copies inside the driver at once).
	stageTokens = 8
)

// (Variables for BenchmarkStagedCopy.)
var (
	stageChunkMax    = 8 << 20  // the largest staging buffer
	stageFrom        = 8 << 20  // smaller plain copies of pageable memory go through the driver's copy
	stageChunkFixed  = 0        // if not 0, every copy's chunk size
	hostCopyPart     = 64 << 10 // the least bytes a goroutine of a host copy takes
	hostCopyMaxParts = 8        // the most goroutines of a host copy
)

// stagePool keeps a device's pinned staging buffers, by size (powers of two from
// stageMinClass to the chunk size), and the tokens that bound their use.
type stagePool struct {
	mu     sync.Mutex
	free   map[int][]*Buffer
	tokens chan struct{}
}

// stageClass returns the staging buffer size for n bytes.
func stageClass(n int) int {
	c := stageMinClass
	for c < n {
		c *= 2
	}
	return c
}

// acquire takes a token under ctx.
func (p *stagePool) acquire(ctx context.Context) error {
	select {
	case p.tokens <- struct{}{}:
		return nil
	default:
	}
	select {
	case p.tokens <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// tryAcquire takes a token if one is free at once.
func (p *stagePool) tryAcquire() bool {
	select {
	case p.tokens <- struct{}{}:
		return true
	default:
		return false
	}
}

func (p *stagePool) releaseToken() { <-p.tokens }

// get returns a staging buffer of at least n bytes: a pinned word for at most 8, else
// one of stageClass(n) bytes (allocated if none is kept). The caller holds a token.
func (p *stagePool) get(d *Device, n int) (*Buffer, error) {
	if n <= 8 {
		return d.wordPool.get(d)
	}
	class := stageClass(n)
	p.mu.Lock()
	if l := p.free[class]; len(l) > 0 {
		b := l[len(l)-1]
		p.free[class] = l[:len(l)-1]
		p.mu.Unlock()
		return b, nil
	}
	p.mu.Unlock()
	// No out-of-memory recovery (a GC and TrimMemory, which waits for the whole
	// device): the caller copies directly instead.
	b, err := d.allocate(PinnedMem, int64(class), nil, false)
	if err == nil && len(b.a.mem.Host()) < class {
		b.Free()
		err = fmt.Errorf("gpu: pinned staging without a host view: %w", ErrNotSupported)
	}
	return b, err
}

// put keeps b for reuse, or frees it past stageKeep; b's copies must be complete.
func (p *stagePool) put(d *Device, b *Buffer) {
	if b.size <= 8 && b.a.word {
		d.wordPool.put(b)
		return
	}
	p.mu.Lock()
	if p.free == nil {
		p.free = map[int][]*Buffer{}
	}
	if l := p.free[int(b.size)]; len(l) < stageKeep {
		p.free[int(b.size)] = append(l, b)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	b.Free()
}

// flush frees the kept buffers (TrimMemory).
func (p *stagePool) flush() {
	p.mu.Lock()
	free := p.free
	p.free = nil
	p.mu.Unlock()
	for _, l := range free {
		for _, b := range l {
			b.Free()
		}
	}
}

// wordPool keeps a device's 8-byte words of pinned host memory, cut from pinned
// blocks: for reading a small result back (readSmall, At), a copy into pinned memory is
// asynchronous, so the host waits for it as for any operation (under its context,
// without blocking an OS thread in the driver), where a copy into pageable Go memory
// returns from the driver only when done; and kernels write results into them directly
// (compact's count). Each word is an allocation of its own for the tracking (its block
// only owns the memory), so that the users of two words of one block never wait for
// each other.
type wordPool struct {
	size   int64 // bytes per word: 8 when 0 (launchcheck.go's slots are larger)
	block  int64 // bytes of pinned memory cut at a time: wordBlock when 0
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
		block := p.block
		if block <= 0 {
			block = wordBlock
		}
		b, err := d.allocate(PinnedMem, block, nil, false)
		if err != nil {
			return nil, err
		}
		if int64(len(b.a.mem.Host())) < block {
			b.Free()
			return nil, fmt.Errorf("gpu: pinned block without a host view: %w", ErrNotSupported)
		}
		p.blocks = append(p.blocks, b)
		size := max(p.size, 8)
		for off := int64(0); off+size <= block; off += size {
			// The block's memory, tracked on its own: never freed (the pool keeps the
			// words for the device's life), so neither counted nor cleaned up.
			wa := &allocation{id: nextAllocID.Add(1), dev: d, mem: b.a.mem, kind: PinnedMem, word: true}
			p.free = append(p.free, &Buffer{a: wa, off: off, size: size, root: b})
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

// hostBytes returns the host view of a word or staging buffer (pinned memory).
func hostBytes(w *Buffer) []byte { return w.a.mem.Host()[w.off : w.off+w.size : w.off+w.size] }

// hostVisible reports whether plain copies of b copy on the host directly (HostAccess):
// pinned memory, and any memory of a backend that doesn't stage (the CPU, unless a
// test forces staging of its device memory).
func (b *Buffer) hostVisible() bool {
	a := b.a
	if a.kind == PinnedMem && a.mem.Host() != nil {
		return true
	}
	d := a.dev
	return a.mem.Host() != nil && !d.info.StagedHostCopies && !(d.forceStaging && a.kind == DeviceMem)
}

// copyStream returns the device's stream for plain copies to the host (toHost) or to
// the device, made at first use (the default stream if that fails). Work is enqueued on
// them only once the data it uses is ready (trackedReady).
func (d *Device) copyStream(toHost bool) *Stream {
	i := 0
	if !toHost {
		i = 1
	}
	if s := d.copyStreams[i].Load(); s != nil {
		return s
	}
	d.copyMu.Lock()
	defer d.copyMu.Unlock()
	if s := d.copyStreams[i].Load(); s != nil {
		return s
	}
	s, err := d.NewStream()
	if err != nil {
		return d.def
	}
	d.copyStreams[i].Store(s)
	return s
}

// copyHost is CopyToHost (toHost) and CopyFromHost: on the host for host-visible
// memory, else through staging buffers (or, for the device's own pinned memory as the
// Go side, directly) on a copy stream, after a wait on the host for the data.
func (b *Buffer) copyHost(ctx context.Context, host []byte, toHost bool) error {
	if err := b.plainCheck(ctx); err != nil {
		return err
	}
	if int64(len(host)) > b.size {
		what := "into"
		if toHost {
			what = "out of"
		}
		return fmt.Errorf("gpu: copying %d bytes %s a %d-byte buffer: %w", len(host), what, b.size, ErrInvalidValue)
	}
	if b.a.gone.Load() {
		return fmt.Errorf("gpu: buffer used after Free: %w", ErrClosed)
	}
	if len(host) == 0 {
		return nil
	}
	mode := Read
	if !toHost {
		mode = Write
	}
	if b.hostVisible() {
		return b.HostAccess(ctx, mode, func(h []byte) error {
			if toHost {
				hostCopy(host, h[:len(host)])
			} else {
				hostCopy(h[:len(host)], host)
			}
			return nil
		})
	}
	d := b.a.dev
	pol, err := d.pickPolicy(nil)
	if err != nil {
		return err
	}
	// First the wait for the data, holding nothing: a copy waiting for a long kernel
	// must not keep a staging buffer (and so other copies) waiting.
	if err := b.a.hostWait(ctx, mode, pol); err != nil {
		return err
	}
	if d.ownsHost(host) {
		return b.copyDirect(ctx, host, toHost)
	}
	if len(host) > 8 && len(host) < stageFrom {
		// The driver's own copy of the ready data, a token held so that few threads
		// at a time sit in the driver. (Copies of 8 bytes or less, such as At's, go
		// through a pinned word: an asynchronous copy the host waits for.)
		if err := d.stagePool.acquire(ctx); err != nil {
			return err
		}
		defer d.stagePool.releaseToken()
		return b.copyDirect(ctx, host, toHost)
	}
	return b.copyStaged(ctx, host, toHost)
}

// copyDirect is the unstaged copy between b and host on a copy stream, once the data is
// ready: for the device's own pinned or unified memory as host (an asynchronous copy
// the package waits for), or pageable memory when no staging buffer can be had (the
// driver's copy, then, of data that is ready).
func (b *Buffer) copyDirect(ctx context.Context, host []byte, toHost bool) error {
	s := b.a.dev.copyStream(toHost)
	p := new(runtime.Pinner)
	p.Pin(&host[0])
	mode := Read
	if !toHost {
		mode = Write
	}
	seq, err := s.trackedReady(ctx, []use{{a: b.a, mode: mode}}, func() error {
		if toHost {
			return s.be.CopyToHost(host, b.a.mem, b.off)
		}
		return s.be.CopyFromHost(b.a.mem, b.off, host)
	})
	if err != nil {
		unpinFailed(s, seq, p)
		return err
	}
	return s.waitUnpin(ctx, seq, p)
}

// stagedCopy is one staged copy between b (from its first byte) and host on a copy
// stream. Chunk i covers bytes [i*chunk, (i+1)*chunk) and uses staging buffer
// i%len(stage) (one or two).
type stagedCopy struct {
	b      *Buffer
	s      *Stream
	host   []byte
	toHost bool
	chunk  int
	stage  []*Buffer
	ops    [2]*opWait // the DMA in flight in each staging buffer, or nil
	next   int        // the next chunk to start
	done   int        // chunks in place (copied out, for toHost)
}

// stagedChunk returns the chunk size for a copy of n bytes: the whole copy up to 1
// MiB; above, half of it (so that the two chunks of a small copy overlap), rounded up
// to 64 KiB, from 1 MiB to stageChunkMax.
func stagedChunk(n int) int {
	if stageChunkFixed > 0 {
		return stageChunkFixed
	}
	if n <= 1<<20 {
		return n
	}
	c := (n/2 + 64<<10 - 1) &^ (64<<10 - 1)
	return min(max(c, 1<<20), stageChunkMax)
}

// copyStaged copies between b and host through staging buffers, once the data is
// ready (copyHost waited for it); it returns once the data is in place, or ctx.Err()
// if ctx ends first (see the top of the file).
func (b *Buffer) copyStaged(ctx context.Context, host []byte, toHost bool) error {
	d := b.a.dev
	c := &stagedCopy{b: b, s: d.copyStream(toHost), host: host, toHost: toHost, chunk: stagedChunk(len(host))}
	size := min(c.chunk, len(host))
	if err := d.stagePool.acquire(ctx); err != nil {
		return err
	}
	st, err := d.stagePool.get(d, size)
	if err != nil {
		// No pinned memory for staging: the driver's own copy of the ready data.
		d.stagePool.releaseToken()
		return b.copyDirect(ctx, host, toHost)
	}
	c.stage = append(c.stage, st)
	if c.chunks() > 1 && d.stagePool.tryAcquire() {
		if st, err := d.stagePool.get(d, size); err == nil {
			c.stage = append(c.stage, st)
		} else {
			d.stagePool.releaseToken()
		}
	}
	err = c.run(ctx)
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
	s := c.s
	a := c.b.a
	n, slots := c.chunks(), len(c.stage)
	for c.done < n {
		// Start chunks while a staging buffer is free: the one of chunk next-slots,
		// which is done (copied out, for toHost; its DMA complete, for the device).
		for c.next < n && c.next < c.done+slots {
			if err := ctx.Err(); err != nil {
				return err
			}
			k := c.next % slots
			lo, hi := c.span(c.next)
			st := hostBytes(c.stage[k])[:hi-lo]
			off := c.b.off + int64(lo)
			var seq uint64
			var err error
			if c.toHost {
				seq, err = s.trackedReady(ctx, []use{{a: a, mode: Read}}, func() error {
					return s.be.CopyToHost(st, a.mem, off)
				})
			} else {
				hostCopy(st, c.host[lo:hi])
				seq, err = s.trackedReady(ctx, []use{{a: a, mode: Write}}, func() error {
					return s.be.CopyFromHost(a.mem, off, st)
				})
			}
			if err != nil {
				if seq != 0 {
					// Enqueued, only its event failed (trackEnd): release must still
					// wait for the DMA before the buffer is reused.
					c.next++
					c.ops[k] = &opWait{s: s, seq: seq}
				}
				return err
			}
			c.next++
			w := &opWait{s: s, seq: seq}
			c.ops[k] = w
			if n > 1 || s.seq.Load() != seq {
				// An event per chunk: the stream has more. A copy of one chunk (At's
				// word, say) that nothing followed yet waits for the stream's work
				// instead, without recording one (about 2 us of the host's on the
				// H200); a spinning wait records one after opWaitStreamQueries (64)
				// queries that find the stream busy (opWait.query), others when they
				// block or park.
				if _, err := w.get(); err != nil {
					return err
				}
			}
		}
		// Finish the oldest chunk in flight.
		k := c.done % slots
		if err := c.wait(ctx, k); err != nil {
			return err
		}
		if c.toHost {
			lo, hi := c.span(c.done)
			hostCopy(c.host[lo:hi], hostBytes(c.stage[k])[:hi-lo])
		}
		c.done++
	}
	return nil
}

// wait waits for the DMA in staging buffer k and forgets it.
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
	w.ev.settle()
	w.ev.release()
	c.ops[k] = nil
	return nil
}

// release returns the staging buffers and their tokens: at once where no DMA uses
// them, else once it completes (on the event hub: a cancelled copy returns at once).
// The buffer of a DMA that can't be waited for (a fault) is dropped: its cleanup frees
// it.
func (c *stagedCopy) release() {
	d := c.b.a.dev
	for k, st := range c.stage {
		w := c.ops[k]
		c.ops[k] = nil
		if w == nil {
			d.stagePool.put(d, st)
			d.stagePool.releaseToken()
			continue
		}
		if w.ev == nil {
			if _, err := w.get(); err != nil {
				d.syncBackend() // no event: wait for the device
				d.stagePool.releaseToken()
				continue
			}
		}
		ev := w.ev
		d.hub.submit(ev.be, func() {
			if done, err := ev.be.Query(); done && err == nil {
				d.stagePool.put(d, st)
			}
			d.stagePool.releaseToken()
			ev.release()
		})
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
