package gpu_test

// Edge cases of the runtime layer (streams, events, waits, buffers) on the CPU backend:
// closed and dropped streams, concurrent Close and Free, nil inputs, launch limits.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/conformance"
)

// Work enqueued on a stream before Close still runs; Device.Synchronize must wait for it.
func TestDeviceSyncAfterClose(t *testing.T) {
	for _, mode := range []gpu.WaitMode{gpu.WaitAuto, gpu.WaitSpin, gpu.WaitBlock} {
		d, k := freshCPU(t)
		s, _ := d.NewStream()
		buf, _ := d.Alloc(16)
		start := time.Now() // the kernel ends 300 ms after this at the earliest
		if err := k.SpinFor(s, 300*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := d.Synchronize(context.Background(), gpu.WaitPolicy{Mode: mode}); err != nil {
			t.Fatal(err)
		}
		if el := time.Since(start); el < 300*time.Millisecond {
			t.Errorf("%v: Device.Synchronize returned %v after the launch of a closed stream's 300 ms kernel", mode, el)
		}
		buf.Free()
	}
}

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

// checkDev wraps the CPU backend and flags what CUDA forbids: a driver call on an event
// or a stream after (or while) it is destroyed.
type checkDev struct {
	*cpu.Device
	bad atomic.Int32
}

// liveCheck counts the driver calls in flight on one object and flags a call on it
// after (or while) it is destroyed.
type liveCheck struct {
	d        *checkDev
	mu       sync.Mutex
	inflight int
	dead     bool
}

func (c *liveCheck) enter() {
	c.mu.Lock()
	if c.dead {
		c.d.bad.Add(1)
	}
	c.inflight++
	c.mu.Unlock()
}
func (c *liveCheck) leave() { c.mu.Lock(); c.inflight--; c.mu.Unlock() }

// destroying flags a destroy during a call or a second one.
func (c *liveCheck) destroying() {
	c.mu.Lock()
	if c.inflight > 0 || c.dead {
		c.d.bad.Add(1)
	}
	c.dead = true
	c.mu.Unlock()
}

type checkEvent struct {
	backend.Event
	liveCheck
}

func (d *checkDev) NewEvent(timing bool) (backend.Event, error) {
	e, err := d.Device.NewEvent(timing)
	if err != nil {
		return nil, err
	}
	return &checkEvent{Event: e, liveCheck: liveCheck{d: d}}, nil
}

func (d *checkDev) NewStream() (backend.Stream, error) {
	s, err := d.Device.NewStream()
	if err != nil {
		return nil, err
	}
	return &checkStream{Stream: s, liveCheck: liveCheck{d: d}}, nil
}

// checkStream flags, like checkEvent, a driver call on a stream after (or while) it is
// destroyed.
type checkStream struct {
	backend.Stream
	liveCheck
}

func unwrap(e backend.Event) backend.Event {
	if c, ok := e.(*checkEvent); ok {
		return c.Event
	}
	return e
}
func (s *checkStream) Record(e backend.Event) error {
	s.enter()
	defer s.leave()
	return s.Stream.Record(unwrap(e))
}
func (s *checkStream) WaitEvent(e backend.Event) error {
	s.enter()
	defer s.leave()
	return s.Stream.WaitEvent(unwrap(e))
}
func (s *checkStream) Launch(f backend.Function, c backend.LaunchConfig, a []backend.Arg) error {
	s.enter()
	defer s.leave()
	return s.Stream.Launch(f, c, a)
}
func (s *checkStream) Memset(m backend.Mem, off int64, v uint32, size int, n int64) error {
	s.enter()
	defer s.leave()
	return s.Stream.Memset(m, off, v, size, n)
}
func (s *checkStream) Copy(dst backend.Mem, doff int64, src backend.Mem, soff, n int64) error {
	s.enter()
	defer s.leave()
	return s.Stream.Copy(dst, doff, src, soff, n)
}
func (s *checkStream) CopyFromHost(dst backend.Mem, off int64, src []byte) error {
	s.enter()
	defer s.leave()
	return s.Stream.CopyFromHost(dst, off, src)
}
func (s *checkStream) CopyToHost(dst []byte, src backend.Mem, off int64) error {
	s.enter()
	defer s.leave()
	return s.Stream.CopyToHost(dst, src, off)
}
func (s *checkStream) Query() (bool, error) {
	s.enter()
	defer s.leave()
	return s.Stream.Query()
}
func (s *checkStream) Synchronize() error {
	s.enter()
	defer s.leave()
	return s.Stream.Synchronize()
}
func (s *checkStream) FreeAsync(m backend.Mem) error {
	s.enter()
	defer s.leave()
	return s.Stream.FreeAsync(m)
}
func (s *checkStream) Destroy() error {
	s.destroying()
	return s.Stream.Destroy()
}

func (e *checkEvent) Synchronize() error {
	e.enter()
	defer e.leave()
	return e.Event.Synchronize()
}
func (e *checkEvent) Query() (bool, error) {
	e.enter()
	defer e.leave()
	return e.Event.Query()
}
func (e *checkEvent) Destroy() error {
	e.destroying()
	return e.Event.Destroy()
}

// Closing an event while a goroutine waits on it must not destroy the driver's event
// under the wait (CUDA: undefined behaviour; the handle may be reused).
func TestEventCloseWhileWaited(t *testing.T) {
	for _, mode := range []gpu.WaitMode{gpu.WaitBlock, gpu.WaitSpin, gpu.WaitAuto} {
		cd := &checkDev{Device: cpu.New(0)}
		d, err := gpu.NewDevice(cd)
		if err != nil {
			t.Fatal(err)
		}
		k := conformance.Kernels(t, d)
		s, _ := d.NewStream()
		e, _ := d.NewEvent()
		if err := k.SpinFor(s, 100*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if err := s.Record(e); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- e.Wait(context.Background(), gpu.WaitPolicy{Mode: mode}) }()
		time.Sleep(20 * time.Millisecond)
		e.Close()
		select {
		case err := <-done:
			t.Logf("%v: Wait after Close = %v", mode, err)
		case <-time.After(5 * time.Second):
			t.Fatalf("%v: Wait hung", mode)
		}
		if n := cd.bad.Load(); n > 0 {
			t.Errorf("%v: %d driver calls on an event destroyed or being destroyed", mode, n)
		}
		s.Close()
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

func noPanic(t *testing.T, name string, f func() error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s panicked: %v", name, r)
		}
	}()
	if err := f(); !errors.Is(err, gpu.ErrInvalidValue) && !errors.Is(err, gpu.ErrClosed) {
		t.Errorf("%s = %v, want ErrInvalidValue", name, err)
	}
}

// Bad input gives an error, never a panic.
func TestNilInputs(t *testing.T) {
	d, k := freshCPU(t)
	s, _ := d.NewStream()
	defer s.Close()
	b, _ := d.Alloc(64)
	defer b.Free()
	e, _ := d.NewEvent()
	defer e.Close()
	ctx := context.Background()
	noPanic(t, "Record(nil)", func() error { return s.Record(nil) })
	noPanic(t, "WaitEvent(nil)", func() error { return s.WaitEvent(nil) })
	noPanic(t, "Elapsed(nil, e)", func() error { _, err := gpu.Elapsed(nil, e); return err })
	noPanic(t, "Elapsed(e, nil)", func() error { _, err := gpu.Elapsed(e, nil); return err })
	noPanic(t, "CopyHtoD(nil)", func() error { return s.CopyHtoD(nil, []byte{1}) })
	noPanic(t, "CopyDtoH(nil)", func() error { return s.CopyDtoH([]byte{1}, nil) })
	noPanic(t, "CopyDtoD(nil, b)", func() error { return s.CopyDtoD(nil, b) })
	noPanic(t, "Memset(nil)", func() error { return s.Memset(nil, 1) })
	noPanic(t, "CopyFrom(nil)", func() error { return b.CopyFrom(ctx, nil) })
	noPanic(t, "Launch(zero Function)", func() error {
		return s.Launch(&gpu.Function{}, gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 1}})
	})
	noPanic(t, "Access nil func", func() error { return b.Access(s, gpu.Read, nil) })
	noPanic(t, "HostAccess nil func", func() error { return b.HostAccess(ctx, gpu.Read, nil) })
	noPanic(t, "ArrayOf(nil)", func() error { _, err := gpu.ArrayOf[float32](nil, 2); return err })
	noPanic(t, "NewDevice(nil)", func() error { _, err := gpu.NewDevice(nil); return err })
	_ = k
}

// The CPU backend promises CUDA's semantics: a launch CUDA rejects is rejected on the
// CPU too (block of more than MaxThreadsPerBlock threads; too much shared memory).
func TestLaunchLimits(t *testing.T) {
	d, k := freshCPU(t)
	s, _ := d.NewStream()
	defer s.Close()
	info := d.Info()
	for _, cfg := range []gpu.LaunchConfig{
		{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: info.MaxThreadsPerBlock + 1}},
		{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 1024, Y: 1024}},
		{Grid: gpu.Dim3{X: 1, Y: 1 << 20}, Block: gpu.Dim3{X: 1}},
		{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 1, Z: 128}},
		{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 1}, SharedMem: info.MaxSharedPerBlock + 1},
	} {
		err := s.Launch(k.Empty, cfg)
		if !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("Launch with %+v = %v, want ErrInvalidValue (CUDA: CUDA_ERROR_INVALID_VALUE)", cfg, err)
		}
	}
	if err := s.Synchronize(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// Many goroutines each run a chain of operations hopping across shared streams, on
// buffers of every kind, views included, freeing each buffer as soon as its consumer is
// enqueued. No explicit synchronization: the tracking must order everything.
func TestChainsAcrossStreams(t *testing.T) {
	d, k := freshCPU(t)
	const nStreams, nG, hops, n = 6, 24, 8, 1 << 10
	var ss []*gpu.Stream
	for range nStreams {
		s, _ := d.NewStream()
		ss = append(ss, s)
	}
	defer func() {
		for _, s := range ss {
			s.Close()
		}
	}()
	g0 := runtime.NumGoroutine()
	var wg sync.WaitGroup
	errc := make(chan error, nG)
	for g := range nG {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 1))
			want := conformance.Random(n)
			alloc := func() (*gpu.Buffer, *gpu.Buffer, error) {
				var b *gpu.Buffer
				var err error
				switch r.IntN(4) {
				case 0:
					b, err = d.AllocUnified(8 * n)
				case 1:
					b, err = d.AllocPinned(8 * n)
				case 2:
					b, err = ss[r.IntN(nStreams)].Alloc(8 * n)
				default:
					b, err = d.Alloc(8 * n)
				}
				if err != nil {
					return nil, nil, err
				}
				v, err := b.Slice(int64(4*n*r.IntN(2)), 4*n)
				return b, v, err
			}
			cur, view, err := alloc()
			if err != nil {
				errc <- err
				return
			}
			s := ss[r.IntN(nStreams)]
			if err := s.CopyHtoD(view, gpu.Bytes(append([]uint32(nil), want...))); err != nil {
				errc <- err
				return
			}
			for h := range hops {
				nb, nv, err := alloc()
				if err != nil {
					errc <- err
					return
				}
				s = ss[r.IntN(nStreams)]
				inc := uint32(h + 1)
				if r.IntN(2) == 0 {
					err = k.SpinCopyU32(s, nv, view, time.Duration(r.IntN(300))*time.Microsecond, nil)
					inc = 0
				} else {
					err = k.AddU32(s, nv, view, inc)
				}
				if err != nil {
					errc <- err
					return
				}
				for i := range want {
					want[i] += inc
				}
				if err := cur.Free(); err != nil { // while the consumer may still run
					errc <- err
					return
				}
				cur, view = nb, nv
			}
			got := make([]uint32, n)
			if r.IntN(2) == 0 {
				err = view.CopyToHost(context.Background(), gpu.Bytes(got))
			} else {
				s = ss[r.IntN(nStreams)]
				if err = s.CopyDtoH(gpu.Bytes(got), view); err == nil {
					err = s.Synchronize(context.Background())
				}
			}
			if err != nil {
				errc <- err
				return
			}
			cur.Free()
			for i := range got {
				if got[i] != want[i] {
					errc <- fmt.Errorf("goroutine %d: word %d = %#x, want %#x", g, i, got[i], want[i])
					return
				}
			}
		}()
	}
	ch := make(chan struct{})
	go func() { wg.Wait(); close(ch) }()
	select {
	case <-ch:
	case <-time.After(60 * time.Second):
		buf := make([]byte, 1<<20)
		t.Fatalf("hung:\n%s", buf[:runtime.Stack(buf, true)])
	}
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	if err := d.Synchronize(context.Background()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if g := runtime.NumGoroutine(); g > g0+2 {
		t.Errorf("%d goroutines after, %d before", g, g0)
	}
}

// With an invalid device wait policy, the synchronous copies fail with ErrInvalidValue:
// they must not go on in the background after returning that error.
func TestInvalidPolicySyncCopy(t *testing.T) {
	d, k := freshCPU(t)
	b, _ := d.Alloc(1 << 12)
	defer b.Free()
	d.SetWaitPolicy(gpu.WaitPolicy{Mode: 9})
	// Delay the default stream so the copy runs after CopyToHost returns.
	if err := k.SpinFor(d.DefaultStream(), 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	dst := make([]byte, 1<<12)
	err := b.CopyToHost(context.Background(), dst)
	if !errors.Is(err, gpu.ErrInvalidValue) {
		t.Fatalf("CopyToHost with an invalid policy = %v", err)
	}
	for i := range dst { // the caller owns dst again after an error
		dst[i] = 1
	}
	d.SetWaitPolicy(gpu.DefaultWaitPolicy)
	if err := d.Synchronize(context.Background()); err != nil {
		t.Fatal(err)
	}
	if dst[0] != 1 {
		t.Errorf("CopyToHost returned an error, then overwrote dst in the background")
	}
}

// Cancelled waits of every kind leave no goroutine behind once the work is done.
func TestCancelledWaitsNoLeak(t *testing.T) {
	d, k := freshCPU(t)
	s, _ := d.NewStream()
	defer s.Close()
	u, _ := d.AllocUnified(1 << 12)
	defer u.Free()
	b, _ := s.Alloc(1 << 12)
	defer b.Free()
	e, _ := d.NewEvent()
	defer e.Close()
	runtime.GC()
	g0 := runtime.NumGoroutine()
	for range 20 {
		if err := k.SpinFor(s, 20*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if err := k.FillU32(s, u, 1); err != nil {
			t.Fatal(err)
		}
		if err := s.Record(e); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		for _, mode := range []gpu.WaitMode{gpu.WaitAuto, gpu.WaitSpin} {
			p := gpu.WaitPolicy{Mode: mode}
			if err := e.Wait(ctx, p); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Event.Wait = %v", err)
			}
			if err := s.Synchronize(ctx, p); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Stream.Synchronize = %v", err)
			}
			if err := d.Synchronize(ctx, p); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Device.Synchronize = %v", err)
			}
		}
		if err := u.HostAccess(ctx, gpu.Read, func([]byte) error { return nil }); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("HostAccess = %v", err)
		}
		if err := b.CopyToHost(ctx, make([]byte, 16)); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("CopyToHost = %v", err)
		}
		select {
		case <-e.Done():
			t.Errorf("Done closed early")
		default:
		}
		cancel()
	}
	if err := d.Synchronize(context.Background()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > g0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > g0 {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines, %d before:\n%s", g, g0, buf[:runtime.Stack(buf, true)])
	}
}

// Re-recording an event while waits are pending: every wait ends (at either point).
func TestReRecordWhileWaited(t *testing.T) {
	d, k := freshCPU(t)
	s1, _ := d.NewStream()
	s2, _ := d.NewStream()
	defer s1.Close()
	defer s2.Close()
	e, _ := d.NewEvent()
	defer e.Close()
	for i := range 50 {
		k.SpinFor(s1, 2*time.Millisecond)
		s1.Record(e)
		res := make(chan error, 8)
		for j := range 8 {
			go func() {
				p := []gpu.WaitPolicy{{Mode: gpu.WaitAuto}, {Mode: gpu.WaitSpin}, {Mode: gpu.WaitBlock}, {Spin: -1}}[j%4]
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				if j == 7 {
					select {
					case <-e.Done():
						res <- nil
					case <-ctx.Done():
						res <- ctx.Err()
					}
					return
				}
				res <- e.Wait(ctx, p)
			}()
		}
		k.SpinFor(s2, time.Duration(i%3)*time.Millisecond)
		s2.Record(e)
		for range 8 {
			if err := <-res; err != nil {
				t.Fatalf("iteration %d: wait: %v", i, err)
			}
		}
	}
}

// A stream dropped without Close: its work still runs, and Device.Synchronize waits for it.
func TestDeviceSyncAfterDroppedStream(t *testing.T) {
	d, k := freshCPU(t)
	start := time.Now() // the kernel ends 300 ms after this at the earliest
	func() {
		s, _ := d.NewStream()
		if err := k.SpinFor(s, 300*time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}()
	for range 3 {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
	if err := d.Synchronize(context.Background()); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 300*time.Millisecond {
		t.Errorf("Device.Synchronize returned %v after the launch of a dropped stream's 300 ms kernel", el)
	}
}

func freshCPU(t *testing.T) (*gpu.Device, *conformance.K) {
	t.Helper()
	d, err := gpu.NewDevice(cpu.New(0))
	if err != nil {
		t.Fatal(err)
	}
	return d, conformance.Kernels(t, d)
}

// Device.Synchronize must wait for pending work even when other goroutines are
// already spinning in waits on the same device.
func TestDeviceSyncWithBusyWaiters(t *testing.T) {
	d, k := freshCPU(t)
	long, _ := d.NewStream()
	defer long.Close()
	// Five goroutines spin (WaitSpin) on a stream running a 2 s kernel: they occupy the
	// device's active-wait slots.
	if err := k.SpinFor(long, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			long.Synchronize(ctx, gpu.WaitPolicy{Mode: gpu.WaitSpin})
		}()
	}
	defer func() { cancel(); wg.Wait() }()
	time.Sleep(50 * time.Millisecond)
	s, _ := d.NewStream()
	defer s.Close()
	start := time.Now() // the kernel ends 300 ms after this at the earliest
	if err := k.SpinFor(s, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := d.Synchronize(context.Background()); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 300*time.Millisecond {
		t.Errorf("Device.Synchronize returned %v after the launch of a 300 ms kernel", el)
	}
	if done, _ := s.Query(); !done {
		t.Errorf("after Device.Synchronize returned nil, the stream still has work")
	}
}

// A stream closed while other goroutines launch, copy, record, query, synchronize and
// allocate on it, and synchronize and trim the device: every operation either runs or fails with ErrClosed (never a panic or
// another error), Close returns nil at once, the backend stream is destroyed only after
// the operations that got past the closed check (checkDev: on CUDA a destroyed handle
// can be reused by a new stream, so work enqueued after the destroy could land on a
// stranger's stream), and the device's Synchronize returns.
func TestStreamCloseWhileInUse(t *testing.T) {
	cd := &checkDev{Device: cpu.New(4)}
	d, err := gpu.NewDevice(cd)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	add, err := d.Builtin("add_u32")
	if err != nil {
		t.Fatal(err)
	}
	const n = 1 << 12
	for round := range 40 {
		s, err := d.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		x, err := d.Alloc(4 * n)
		if err != nil {
			t.Fatal(err)
		}
		y, err := d.Alloc(4 * n)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := d.NewEvent(gpu.DisableTiming)
		if err != nil {
			t.Fatal(err)
		}
		ok := func(op string, err error) bool {
			if err == nil {
				return true
			}
			if !errors.Is(err, gpu.ErrClosed) {
				t.Errorf("round %d: %s on a stream being closed: %v, want nil or ErrClosed", round, op, err)
			}
			return false
		}
		var wg sync.WaitGroup
		for g := range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cfg := gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 64}}
				for i := 0; ; i++ {
					var err error
					var op string
					switch (g + i) % 9 {
					case 0:
						op, err = "Launch", s.Launch(add, cfg, gpu.Out(y), gpu.In(x), uint32(1), uint64(n))
					case 1:
						op, err = "CopyDtoD", s.CopyDtoD(y, x)
					case 2:
						op, err = "Record", s.Record(ev)
					case 3:
						op = "Query"
						_, err = s.Query()
					case 4:
						op, err = "Synchronize", s.Synchronize(ctx)
					case 5:
						var b *gpu.Buffer
						op = "Alloc"
						if b, err = s.Alloc(256); err == nil {
							err = b.Free()
						}
					case 6:
						op, err = "MemsetD32", s.MemsetD32(x, uint32(i))
					case 7:
						op, err = "Device.Synchronize", d.Synchronize(ctx)
					case 8:
						op, err = "TrimMemory", d.TrimMemory(ctx) // frees s's cached blocks on s
					}
					if !ok(op, err) {
						return
					}
				}
			}()
		}
		time.Sleep(time.Duration(round%5) * 100 * time.Microsecond)
		if err := s.Close(); err != nil {
			t.Errorf("round %d: Close: %v", round, err)
		}
		wg.Wait()
		if err := d.Synchronize(ctx); err != nil {
			t.Fatalf("round %d: device Synchronize: %v", round, err)
		}
		for _, b := range []*gpu.Buffer{x, y} {
			if err := b.Free(); err != nil {
				t.Fatal(err)
			}
		}
		ev.Close()
	}
	if n := cd.bad.Load(); n > 0 {
		t.Errorf("%d driver calls on a stream destroyed or being destroyed", n)
	}
}

// A search on a stream waits for its result on the host (readU64): a Close of the
// stream from another goroutine meanwhile (the search holds no stream between its
// operations) must not leave the wait querying the destroyed backend stream (checkDev).
func TestSearchWaitWhileStreamCloses(t *testing.T) {
	cd := &checkDev{Device: cpu.New(0)}
	d, err := gpu.NewDevice(cd)
	if err != nil {
		t.Fatal(err)
	}
	d.SetWaitPolicy(gpu.WaitPolicy{Mode: gpu.WaitSpin}) // the wait queries until done
	k := conformance.Kernels(t, d)
	ctx := context.Background()
	x, err := gpu.FromSlice(d.DefaultStream(), []int32{0, 1, 0, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Free()
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	if err := k.SpinFor(s, 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	type result struct {
		n   int
		err error
	}
	res := make(chan result, 1)
	go func() {
		n, err := gpu.CountNonzero(ctx, s, x)
		res <- result{n, err}
	}()
	time.Sleep(50 * time.Millisecond) // CountNonzero has enqueued its work and waits
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	r := <-res
	if r.err != nil || r.n != 3 {
		t.Errorf("CountNonzero on a stream closed during its wait: %d, %v; want 3, nil", r.n, r.err)
	}
	if n := cd.bad.Load(); n > 0 {
		t.Errorf("%d driver calls on a stream destroyed or being destroyed", n)
	}
}

// Every wait returns the error of a context that has ended before it, whatever it waits
// for: an idle stream's Synchronize as Device.Synchronize and Event.Wait do, under each
// policy.
func TestEndedContextIdleWaits(t *testing.T) {
	d, k := freshCPU(t)
	s, _ := d.NewStream()
	defer s.Close()
	ev, _ := d.NewEvent()
	if err := k.FillU32(s, conformance.Upload(t, d, conformance.Random(1000)), 7); err != nil {
		t.Fatal(err)
	}
	if err := s.Record(ev); err != nil {
		t.Fatal(err)
	}
	// Seen idle, each by a wait of its own: the waits below take the idle fast paths.
	for _, st := range []*gpu.Stream{s, d.DefaultStream()} {
		if err := st.Synchronize(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Synchronize(context.Background()); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	for _, c := range []struct {
		ctx  context.Context
		want error
	}{{cancelled, context.Canceled}, {expired, context.DeadlineExceeded}} {
		for _, mode := range []gpu.WaitMode{gpu.WaitAuto, gpu.WaitSpin, gpu.WaitBlock} {
			pol := gpu.WaitPolicy{Mode: mode}
			for name, err := range map[string]error{
				"Stream.Synchronize":         s.Synchronize(c.ctx, pol),
				"default Stream.Synchronize": d.DefaultStream().Synchronize(c.ctx, pol),
				"Device.Synchronize":         d.Synchronize(c.ctx, pol),
				"Event.Wait":                 ev.Wait(c.ctx, pol),
			} {
				if !errors.Is(err, c.want) {
					t.Errorf("%v, idle, with an ended context (%v): %v, want %v", name, mode, err, c.want)
				}
			}
		}
	}
	// HostAccess waits too: with nothing pending, it doesn't run f either.
	u, err := d.AllocUnified(64)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Free()
	for _, ctx := range []context.Context{cancelled, expired} {
		ran := false
		err := u.HostAccess(ctx, gpu.ReadWrite, func([]byte) error { ran = true; return nil })
		if err != ctx.Err() || ran {
			t.Errorf("HostAccess, idle, with an ended context: %v (f ran: %v), want %v without running f", err, ran, ctx.Err())
		}
	}
	// The idle waits still succeed with a live context.
	if err := s.Synchronize(context.Background()); err != nil {
		t.Errorf("Stream.Synchronize, idle: %v", err)
	}
}

// GPU_WAIT_SPIN sets the default spin at start-up: DefaultWaitPolicy's, a new device's,
// and that of every policy whose Spin is 0 (DefaultSpin's documentation), run in a child
// process with the variable set.
func TestWaitSpinEnv(t *testing.T) {
	if v := os.Getenv("GPU_TEST_WAIT_SPIN_CHILD"); v != "" {
		want, err := time.ParseDuration(v)
		if err != nil {
			t.Fatal(err)
		}
		d, k := freshCPU(t)
		if got := gpu.DefaultWaitPolicy.Spin; got != want {
			t.Errorf("DefaultWaitPolicy.Spin = %v, want GPU_WAIT_SPIN = %v", got, want)
		}
		if got := d.WaitPolicy(); got != (gpu.WaitPolicy{Mode: gpu.WaitAuto, Spin: want}) {
			t.Errorf("a new device's policy = %+v, want auto with a spin of %v", got, want)
		}
		for _, p := range []gpu.WaitPolicy{{}, {Mode: gpu.WaitAuto}, {Mode: gpu.WaitSpin}} {
			d.SetWaitPolicy(p)
			if got := d.WaitPolicy(); got != (gpu.WaitPolicy{Mode: p.Mode, Spin: want}) {
				t.Errorf("SetWaitPolicy(%+v): the policy is %+v, want a spin of %v", p, got, want)
			}
		}
		d.SetWaitPolicy(gpu.WaitPolicy{Spin: 3 * time.Millisecond})
		if got := d.WaitPolicy().Spin; got != 3*time.Millisecond {
			t.Errorf("SetWaitPolicy with a spin of 3ms: the spin is %v", got)
		}
		// The waits work under it.
		s, _ := d.NewStream()
		defer s.Close()
		if err := k.SpinFor(s, 5*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if err := s.Synchronize(context.Background(), gpu.WaitPolicy{}); err != nil {
			t.Fatal(err)
		}
		return
	}
	for _, v := range []string{"7ms", "-1ns"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestWaitSpinEnv$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "GPU_WAIT_SPIN="+v, "GPU_TEST_WAIT_SPIN_CHILD="+v)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestWaitSpinEnv") {
			t.Errorf("GPU_WAIT_SPIN=%s: the child process failed (%v):\n%s", v, err, out)
		}
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

// A stream dropped without Close whose cleanup hasn't run yet (here: every cleanup
// goroutine is busy) is already gone from the device's weak list of streams:
// Device.Synchronize must still wait for its work.
func TestDeviceSyncDroppedStreamCleanupPending(t *testing.T) {
	d, k := freshCPU(t)
	block := make(chan struct{})
	var blocked sync.WaitGroup
	for range 64 { // more than the runtime's cleanup goroutines (GOMAXPROCS/4)
		x := new([64]byte)
		blocked.Add(1)
		runtime.AddCleanup(x, func(c chan struct{}) { blocked.Done(); <-c }, block)
	}
	runtime.GC()
	defer func() {
		close(block)
		blocked.Wait()
	}()
	start := time.Now() // the kernel ends 300 ms after this at the earliest
	func() {
		s, err := d.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		if err := k.SpinFor(s, 300*time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}()
	runtime.GC()
	runtime.GC()
	if err := d.Synchronize(context.Background()); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 300*time.Millisecond {
		t.Errorf("Device.Synchronize returned %v after the launch of a 300 ms kernel on a dropped stream whose cleanup hadn't run", el)
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
