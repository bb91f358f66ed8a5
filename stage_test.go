package gpu_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-gpu/gpu"
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
