package gpu_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/go-gpu/gpu"
)

// Buffers: frees racing closes and dropped streams, allocation limits, tracking that
// settles.

// An untracked buffer's Free "still waits for every stream of the device": a closed
// stream's pending work included.
func TestUntrackedFreeAfterClose(t *testing.T) {
	d, k := freshCPU(t)
	s, _ := d.NewStream()
	const n = 1 << 10
	src, _ := d.Alloc(4 * n)
	dst, _ := d.Alloc(4 * n)
	if err := d.Synchronize(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := dst.SetTracking(false); err != nil {
		t.Fatal(err)
	}
	free0, _, _ := d.MemInfo()
	start := time.Now() // the kernel ends 300 ms after this at the earliest
	if err := k.SpinCopyU32(s, dst, src, 300*time.Millisecond, nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := dst.Free(); err != nil {
		t.Fatal(err)
	}
	for time.Since(start) < 290*time.Millisecond {
		if f, _, _ := d.MemInfo(); f > free0 {
			t.Fatalf("the untracked buffer was released %v after the launch, while the kernel writing it (300 ms) still ran", time.Since(start))
		}
		time.Sleep(time.Millisecond)
	}
}

// Alloc failing for lack of memory should not wait for unrelated device work.
func TestOOMPastTotalFailsFast(t *testing.T) {
	d, k := freshCPU(t)
	s, _ := d.NewStream()
	defer s.Close()
	if err := k.SpinFor(s, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := d.Alloc(1 << 50)
	if !errors.Is(err, gpu.ErrOutOfMemory) {
		t.Fatalf("err %v", err)
	}
	if el := time.Since(start); el > time.Second {
		t.Errorf("a failing Alloc took %v: it waited (uncancellably) for a kernel on another stream", el)
	}
}

// Free racing with Close of the stream the buffer was used on must succeed (Free is safe
// at any moment) and must not leak the memory.
func TestFreeRacingStreamClose(t *testing.T) {
	d, k := freshCPU(t)
	free0, _, _ := d.MemInfo()
	fails := 0
	for i := range 3000 {
		s, _ := d.NewStream()
		b, err := s.Alloc(64 << 10)
		if err != nil {
			t.Fatal(err)
		}
		if err := k.FillU32(s, b, uint32(i)); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var ferr error
		wg.Add(2)
		go func() { defer wg.Done(); ferr = b.Free() }()
		go func() { defer wg.Done(); s.Close() }()
		wg.Wait()
		if ferr != nil {
			fails++
			if fails < 3 {
				t.Errorf("Free racing Close: %v", ferr)
			}
		}
	}
	if err := d.TrimMemory(t.Context()); err != nil {
		t.Fatal(err)
	}
	if f, _, _ := d.MemInfo(); f != free0 {
		t.Errorf("%d failures; %d bytes leaked", fails, free0-f)
	}
}

// A stream dropped without Close hands the small blocks it keeps for reuse back to the
// device in its cleanup (they used to keep it reachable, and their memory, for good).
func TestDroppedStreamFreesCachedBlocks(t *testing.T) {
	d, _ := freshCPU(t)
	free0, _, err := d.MemInfo()
	if err != nil {
		t.Fatal(err)
	}
	func() {
		s, err := d.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1, 100, 1000, 100000} {
			a, err := gpu.Empty[float32](s, n)
			if err != nil {
				t.Fatal(err)
			}
			if err := a.Free(); err != nil {
				t.Fatal(err)
			}
		}
	}()
	if free, _, _ := d.MemInfo(); free >= free0 {
		t.Fatalf("no block kept for reuse after Free (%d bytes free before, %d after): the test checks nothing", free0, free)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		if err := d.Synchronize(context.Background()); err != nil {
			t.Fatal(err)
		}
		free, _, _ := d.MemInfo()
		if free == free0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes still held 5 s after the stream was dropped", free0-free)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// On the CPU backend an allocation beyond the machine's memory is ErrOutOfMemory, not
// the Go runtime's fatal out-of-memory error (the backend reported 1 TiB before).
func TestCPUHugeAllocation(t *testing.T) {
	d, _ := freshCPU(t)
	_, total, err := d.MemInfo()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gpu.Empty[float32](d.DefaultStream(), int(total/4)+1); !errors.Is(err, gpu.ErrOutOfMemory) {
		t.Errorf("an array of %d bytes on a device of %d = %v, want ErrOutOfMemory", total+4, total, err)
	}
}

// Buffers that moved to a stream S once, whatever moved them (an allocation on the
// default stream, a plain host copy, FromSlice on the default stream, a read on the
// default stream), settle after a launch or two on S: later launches record no event
// (gpu.SharedUse), as for buffers used on S only. The ordering that the settling must
// keep is checked by the conformance suite (SettledTracking).
func TestTrackingSettles(t *testing.T) {
	d, k := freshCPU(t)
	ctx := context.Background()
	cases := []struct {
		name string
		make func(s *gpu.Stream) (x, y *gpu.Buffer)
	}{
		{"stream-alloc", func(s *gpu.Stream) (*gpu.Buffer, *gpu.Buffer) {
			x, _ := s.Alloc(1024)
			y, _ := s.Alloc(1024)
			return x, y
		}},
		{"device-alloc", func(*gpu.Stream) (*gpu.Buffer, *gpu.Buffer) {
			x, _ := d.Alloc(1024)
			y, _ := d.Alloc(1024)
			return x, y
		}},
		{"fromslice-default", func(*gpu.Stream) (*gpu.Buffer, *gpu.Buffer) {
			x, _ := gpu.FromSlice(d.DefaultStream(), make([]uint32, 256))
			y, _ := gpu.FromSlice(d.DefaultStream(), make([]uint32, 256))
			return x.Buffer(), y.Buffer()
		}},
		{"host-copy", func(*gpu.Stream) (*gpu.Buffer, *gpu.Buffer) {
			x, _ := d.Alloc(1024)
			y, _ := d.Alloc(1024)
			x.CopyFromHost(ctx, make([]byte, 1024))
			y.CopyFromHost(ctx, make([]byte, 1024))
			return x, y
		}},
		{"default-read", func(s *gpu.Stream) (*gpu.Buffer, *gpu.Buffer) {
			x, _ := s.Alloc(1024)
			y, _ := s.Alloc(1024)
			tmp, _ := d.Alloc(1024)
			k.AddU32(d.DefaultStream(), tmp, x, 1)
			k.AddU32(d.DefaultStream(), tmp, y, 1)
			tmp.Free()
			return x, y
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := d.NewStream()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			x, y := c.make(s)
			defer x.Free()
			defer y.Free()
			for i := range 3 {
				if err := k.AddU32(s, y, x, 1); err != nil {
					t.Fatal(err)
				}
				shared, err := gpu.SharedUse(s, y, x)
				if err != nil {
					t.Fatal(err)
				}
				if shared && i > 0 {
					t.Errorf("launch %d on one stream still records events", i+2)
				}
			}
		})
	}
}

// TestHostWaitBehindScope: a host wait for a buffer that another goroutine holds in a
// HostAccess scope ends with its context (the scope holds the buffer's lock while its
// function runs; the wait used to block on that lock whatever its context), and
// HostAccess doesn't run its function once its context has ended.
func TestHostWaitBehindScope(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		b, err := d.AllocPinned(64)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Free()
		held, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
		go func() {
			done <- b.HostAccess(context.Background(), gpu.Read, func([]byte) error {
				close(held)
				<-release
				return nil
			})
		}()
		<-held
		arr, err := gpu.ArrayOf[float32](b, 16)
		if err != nil {
			t.Fatal(err)
		}
		view := mustArr[float32](t)(arr.Slice(gpu.R(0, 16, 2)))
		reads := []struct {
			what string
			read func(ctx context.Context) error
		}{
			{"CopyToHost", func(ctx context.Context) error { return b.CopyToHost(ctx, make([]byte, 8)) }},
			{"HostAccess", func(ctx context.Context) error {
				return b.HostAccess(ctx, gpu.Write, func([]byte) error {
					t.Error("HostAccess ran its function after its context ended")
					return nil
				})
			}},
			{"Array.ToSlice", func(ctx context.Context) error { _, err := arr.ToSlice(ctx); return err }},
			{"Array.ToSlice of a strided view", func(ctx context.Context) error { _, err := view.ToSlice(ctx); return err }},
			{"Array.CopyToHost", func(ctx context.Context) error { return arr.CopyToHost(ctx, make([]float32, 16)) }},
			{"Array.At", func(ctx context.Context) error { _, err := arr.At(ctx, 3); return err }},
		}
		result := make(chan error, len(reads))
		go func() {
			for _, r := range reads {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
				result <- r.read(ctx)
				cancel()
			}
		}()
		for _, r := range reads {
			what := r.what
			select {
			case err := <-result:
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("%s behind another goroutine's scope: %v, want its context's deadline", what, err)
				}
			case <-time.After(20 * time.Second):
				close(release)
				t.Fatalf("%s behind another goroutine's scope didn't end with its context", what)
			}
		}
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

// TestReadInOwnScope: the array reads of a buffer inside that buffer's own Access or
// HostAccess scope return ErrInScope, as the buffer's own operations do, instead of
// waiting for the scope forever.
func TestReadInOwnScope(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		b, err := d.AllocPinned(64) // (HostAccess takes host-visible memory)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Free()
		a, err := gpu.ArrayOf[float32](b, 16)
		if err != nil {
			t.Fatal(err)
		}
		if err := gpu.Copy(s, a, mustArr[float32](t)(gpu.Arange[float32](s, 0, 16, 1))); err != nil {
			t.Fatal(err)
		}
		if err := s.Synchronize(bg); err != nil {
			t.Fatal(err)
		}
		view := mustArr[float32](t)(a.Slice(gpu.R(0, 16, 3)))
		reads := map[string]func() error{
			"ToSlice":           func() error { _, err := a.ToSlice(bg); return err },
			"ToSlice of a view": func() error { _, err := view.ToSlice(bg); return err },
			"CopyToHost":        func() error { return a.CopyToHost(bg, make([]float32, 16)) },
			"At":                func() error { _, err := a.At(bg, 2); return err },
		}
		for name, read := range reads {
			for _, scope := range []string{"Access", "HostAccess"} {
				done := make(chan error, 1)
				go func() {
					var inner error
					f := func() error { inner = read(); return nil }
					var err error
					if scope == "Access" {
						err = a.Buffer().Access(s, gpu.Read, func(gpu.DevicePtr) error { return f() })
					} else {
						err = a.Buffer().HostAccess(bg, gpu.Read, func([]byte) error { return f() })
					}
					done <- errors.Join(err, inner)
				}()
				select {
				case err := <-done:
					if !errors.Is(err, gpu.ErrInScope) {
						t.Errorf("%s inside %s: %v, want ErrInScope", name, scope, err)
					}
				case <-time.After(20 * time.Second):
					t.Fatalf("%s inside %s didn't return", name, scope)
				}
			}
		}
	})
}

// TestAccessModes: Access and HostAccess take Read, Write or ReadWrite; 0 and undefined
// bits are errors wrapping ErrInvalidValue, before f runs.
func TestAccessModes(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		b, err := d.AllocPinned(16)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Free()
		for _, m := range []gpu.AccessMode{0, 4, 0xff, gpu.ReadWrite | 8} {
			if err := b.Access(s, m, func(gpu.DevicePtr) error { t.Errorf("Access ran f with mode %d", m); return nil }); !errors.Is(err, gpu.ErrInvalidValue) {
				t.Errorf("Access with mode %d: %v, want ErrInvalidValue", m, err)
			}
			if err := b.HostAccess(context.Background(), m, func([]byte) error { t.Errorf("HostAccess ran f with mode %d", m); return nil }); !errors.Is(err, gpu.ErrInvalidValue) {
				t.Errorf("HostAccess with mode %d: %v, want ErrInvalidValue", m, err)
			}
		}
		for _, m := range []gpu.AccessMode{gpu.Read, gpu.Write, gpu.ReadWrite} {
			if err := b.HostAccess(context.Background(), m, func([]byte) error { return nil }); err != nil {
				t.Errorf("HostAccess with mode %v: %v", m, err)
			}
		}
	})
}
