package gpu_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/conformance"
)

// Streams and events on the CPU backend: closes and re-records while waited for, chains
// of operations across streams, launch limits, Device.Synchronize with closed, dropped
// and busy streams. checkDev flags what CUDA forbids.

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
