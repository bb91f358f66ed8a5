package gpu_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
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

// The staged copies (stage.go) on the CPU backend, forced on: the conformance checks of
// large copies, then many goroutines copying at once (sharing the staging chunks).
func TestStagedCopies(t *testing.T) {
	d, k := freshCPU(t)
	gpu.ForceStaging(d, true)
	conformance.CheckLargeCopies(t, k)
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			n := gpu.StageMin + rand.IntN(3<<20) + g
			b, err := d.Alloc(int64(n))
			if err != nil {
				t.Error(err)
				return
			}
			defer b.Free()
			src := make([]byte, n)
			for i := range src {
				src[i] = byte(rand.Uint32())
			}
			dst := make([]byte, n)
			for range 5 {
				for i := range dst {
					dst[i] = 0xA5
				}
				if err := b.CopyFromHost(ctx, src); err != nil {
					t.Error(err)
					return
				}
				if err := b.CopyToHost(ctx, dst); err != nil {
					t.Error(err)
					return
				}
				for i := range src {
					if dst[i] != src[i] {
						t.Errorf("goroutine %d, %d bytes: byte %d = %#x, want %#x", g, n, i, dst[i], src[i])
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

// The host memory of the device's own pinned and unified buffers is never staged.
func TestStagingSkipsOwnHostMemory(t *testing.T) {
	d, _ := freshCPU(t)
	ctx := context.Background()
	pin, err := d.AllocPinned(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	uni, err := d.AllocUnified(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []*gpu.Buffer{pin, uni} {
		err := b.HostAccess(ctx, gpu.Read, func(h []byte) error {
			for _, s := range [][]byte{h, h[1000:], h[len(h)-1:]} {
				if !gpu.OwnsHost(d, s) {
					t.Errorf("%v memory at byte %d of its buffer not seen as the device's own", b.Kind(), len(h)-len(s))
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if gpu.OwnsHost(d, make([]byte, 1<<20)) {
		t.Error("Go memory seen as the device's own")
	}
	var h []byte
	pin.HostAccess(ctx, gpu.Read, func(b []byte) error { h = b; return nil })
	if err := pin.Free(); err != nil {
		t.Fatal(err)
	}
	if gpu.OwnsHost(d, h) {
		t.Error("the host memory of a freed pinned buffer still seen as the device's own")
	}
	uni.Free()
}

// The host copies' conformance tests with the staging forced on the CPU backend: the
// staged plain copies and the streams' staging rings (ring.go) run in CI.
func TestStagedHostCopies(t *testing.T) {
	d, k := freshCPU(t)
	gpu.ForceStaging(d, true)
	conformance.RunHostCopies(t, k)
}

// The staging ring with small slots (64 KiB): copies of many chunks both ways, mixed on
// one stream with kernels between them, against a host reference.
func TestStagingRingChunks(t *testing.T) {
	d, k := freshCPU(t)
	gpu.ForceStaging(d, true)
	defer gpu.SetStageChunkMax(d, 64<<10)()
	ctx := context.Background()
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const words = 300 << 10 / 4
	x, _ := d.Alloc(4 * words)
	y, _ := d.Alloc(4 * words)
	defer x.Free()
	defer y.Free()
	var outs [][]uint32
	var wants [][]uint32
	for round := range 12 {
		n := 1 + rand.IntN(words)
		src := conformance.Random(n)
		xv, _ := x.Slice(0, int64(4*n))
		yv, _ := y.Slice(0, int64(4*n))
		if err := s.CopyHtoD(xv, gpu.Bytes(src)); err != nil {
			t.Fatal(err)
		}
		if err := k.SpinFor(s, time.Duration(rand.IntN(3))*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if err := k.AddU32(s, yv, xv, uint32(round)); err != nil {
			t.Fatal(err)
		}
		out := make([]uint32, n)
		if err := s.CopyDtoH(gpu.Bytes(out), yv); err != nil {
			t.Fatal(err)
		}
		want := make([]uint32, n)
		for i := range src {
			want[i] = src[i] + uint32(round)
		}
		if round%4 == 3 {
			if err := s.Synchronize(ctx); err != nil {
				t.Fatal(err)
			}
		}
		outs, wants = append(outs, out), append(wants, want)
	}
	if err := s.Synchronize(ctx); err != nil {
		t.Fatal(err)
	}
	for r := range outs {
		if !slices.Equal(outs[r], wants[r]) {
			t.Fatalf("round %d: %d words copied through the ring differ", r, len(outs[r]))
		}
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
	// Unrelated work of 4 s, a context of 2 s: the copy, which must not wait for that
	// work, has 2 s (12 MiB; under the race detector on a loaded 2-core machine a
	// 200 ms context was not enough).
	if err := k.SpinFor(side, 4*time.Second); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	err = b.CopyFromHost(ctx, src)
	el := time.Since(start)
	if err != nil {
		t.Errorf("CopyFromHost of %d bytes with no pinned memory for staging: %v (after %v)", n, err, el)
	}
	if el > 3*time.Second {
		t.Errorf("CopyFromHost took %v with a 2 s context: it waited for unrelated device work", el)
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
