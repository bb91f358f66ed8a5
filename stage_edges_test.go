package gpu_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/conformance"
)

// blockCleanups occupies the runtime's cleanup goroutines until the returned function
// is called, so that a dropped stream's own cleanup doesn't run meanwhile.
func blockCleanups(t *testing.T) func() {
	block := make(chan struct{})
	var blocked sync.WaitGroup
	for range 64 {
		x := new([64]byte)
		blocked.Add(1)
		runtime.AddCleanup(x, func(c chan struct{}) { blocked.Done(); <-c }, block)
	}
	runtime.GC()
	return func() { close(block); blocked.Wait() }
}

// Two device waits at once, a stream dropped without Close whose cleanup hasn't run:
// the first wait's liveStreams deletes the stream from the device's list, then
// destroys it (adding its tail) after releasing stMu. The second wait, in between,
// sees neither the stream nor its tail and returns while the stream's work runs.
// (The dropped stream keeps many cached blocks, so that destroy takes a while.)
func TestConcurrentDeviceSyncDroppedStream(t *testing.T) {
	d, k := freshCPU(t)
	defer blockCleanups(t)()
	const spin = 500 * time.Millisecond
	var start time.Time
	func() {
		s, err := d.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		bufs := make([]*gpu.Buffer, 20000)
		for i := range bufs {
			if bufs[i], err = s.Alloc(512); err != nil {
				t.Fatal(err)
			}
		}
		for _, b := range bufs {
			if err := b.Free(); err != nil { // kept in s's block cache
				t.Fatal(err)
			}
		}
		start = time.Now()
		if err := k.SpinFor(s, spin); err != nil {
			t.Fatal(err)
		}
	}()
	runtime.GC()
	runtime.GC()
	ctx := context.Background()
	first := make(chan error, 1)
	go func() { first <- d.Synchronize(ctx) }()
	time.Sleep(2 * time.Millisecond) // the first wait is inside destroy by now
	if err := d.Synchronize(ctx); err != nil {
		t.Fatal(err)
	}
	el := time.Since(start)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if el < spin {
		t.Errorf("Device.Synchronize returned %v after the launch of a %v kernel on a dropped stream (another device wait was destroying it)", el, spin)
	}
}

// flakyDev wraps a CPU device as a backend that stages host copies (as CUDA does),
// with two faults to inject: pinned allocations failing for lack of memory, and the
// next event record on a stream created while failRecord is set (the plain copies'
// streams, made at the first copy) failing.
type flakyDev struct {
	backend.Device
	noPinned   atomic.Bool
	failRecord atomic.Bool
}

type flakyStream struct {
	backend.Stream
	d        *flakyDev
	failable bool
}

func newFlaky(t *testing.T) (*gpu.Device, *conformance.K, *flakyDev) {
	fd := &flakyDev{Device: cpu.New(0)}
	d, err := gpu.NewDevice(fd)
	if err != nil {
		t.Fatal(err)
	}
	return d, conformance.Kernels(t, d), fd
}

func (d *flakyDev) Info() backend.Info {
	i := d.Device.Info()
	i.StagedHostCopies = true
	return i
}

func (d *flakyDev) Alloc(kind backend.MemKind, size int64, s backend.Stream) (backend.Mem, error) {
	if kind == backend.PinnedMem && d.noPinned.Load() {
		return nil, fmt.Errorf("flaky: no pinned memory: %w", backend.ErrOutOfMemory)
	}
	return d.Device.Alloc(kind, size, s)
}

func (d *flakyDev) NewStream() (backend.Stream, error) {
	s, err := d.Device.NewStream()
	if err != nil {
		return nil, err
	}
	return &flakyStream{Stream: s, d: d, failable: d.failRecord.Load()}, nil
}

func (s *flakyStream) Record(e backend.Event) error {
	if s.failable && s.d.failRecord.CompareAndSwap(true, false) {
		return errors.New("flaky: event record failed")
	}
	return s.Stream.Record(e)
}

// A staged copy whose pinned staging chunks can't be allocated should copy as an
// unstaged one does (the driver's own copy), not fail with ErrOutOfMemory after the
// out-of-memory recovery (GC, then TrimMemory, which waits for the whole device under
// context.Background, ignoring the caller's deadline).
func TestStagingWithoutPinnedMemory(t *testing.T) {
	d, k, fd := newFlaky(t)
	fd.noPinned.Store(true)
	side, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer side.Close()
	const n = gpu.StageMin + 4<<20
	b, err := d.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	if err := d.Synchronize(context.Background()); err != nil {
		t.Fatal(err)
	}
	src := make([]byte, n)
	for i := range src {
		src[i] = byte(i * 7)
	}
	if err := k.SpinFor(side, time.Second); err != nil { // unrelated work
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = b.CopyFromHost(ctx, src)
	el := time.Since(start)
	if err != nil {
		t.Errorf("CopyFromHost of %d bytes with no pinned memory for staging: %v (after %v)", n, err, el)
	}
	if el > 500*time.Millisecond {
		t.Errorf("CopyFromHost took %v with a 200 ms context: it waited for unrelated device work", el)
	}
	dst := make([]byte, n)
	if err := b.CopyToHost(context.Background(), dst); err != nil {
		t.Fatalf("CopyToHost: %v", err)
	}
	if !bytes.Equal(dst, src) {
		t.Error("wrong data after the copies")
	}
}

// An operation that trackedScope enqueued but whose event record then failed
// (trackEnd returns its seq with the error) is forgotten by stagedCopy.run: release
// returns its staging chunk to the pool while the DMA into it is still queued, and the
// next staged copy's data in that chunk is overwritten by it.
func TestStagingChunkReusedWhileDMAPending(t *testing.T) {
	d, k, fd := newFlaky(t)
	ctx := context.Background()
	side, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer side.Close()
	const n = gpu.StageMin + 4<<20
	x, _ := d.Alloc(n)
	y, _ := d.Alloc(n)
	defer x.Free()
	defer y.Free()
	// x is written on another stream after a slow kernel: the copy out of x waits for it,
	// then copies on a copy stream (made now) and records an event after its first
	// chunk, which fails.
	if err := k.SpinFor(side, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := k.FillU32(side, x, 0x07070707); err != nil {
		t.Fatal(err)
	}
	fd.failRecord.Store(true)
	if err := x.CopyToHost(ctx, make([]byte, n)); err == nil {
		t.Fatal("the injected record failure went unseen")
	}
	// The next staged copy gets the same chunks from the pool.
	pattern := bytes.Repeat([]byte{0x55}, n)
	if err := y.CopyFromHost(ctx, pattern); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, n)
	if err := y.CopyToHost(ctx, got); err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(got, func(c byte) bool { return c != 0x55 }); i >= 0 {
		t.Errorf("y[%d] = %#x after copying 0x55s into it: a staging chunk was reused while a DMA into it was queued", i, got[i])
	}
}

// hostCopyN rounds each part up to 4 KiB, and the calling goroutine's part
// copy(dst[:per], src[:per]) isn't clipped to len(src): with parts > len/4096 it copies
// past the end of both slices (into their spare capacity). hostCopy's defaults keep
// parts <= len/64 KiB, but SetStaging's part argument below 4 KiB reaches it.
func TestHostCopyNShort(t *testing.T) {
	buf := make([]byte, 8192)
	src := bytes.Repeat([]byte{1}, 8192)[:3000]
	dst := buf[:3000]
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("HostCopyN of 3000 bytes in 2 parts panicked: %v", r)
			}
		}()
		gpu.HostCopyN(dst, src, 2)
	}()
	if i := slices.IndexFunc(buf[3000:], func(c byte) bool { return c != 0 }); i >= 0 {
		t.Errorf("HostCopyN of 3000 bytes in 2 parts wrote byte %d past the end of dst", i)
	}
}
