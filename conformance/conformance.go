// Package conformance is the test suite every backend passes: the semantics of
// streams, events, waits, faults and buffer tracking that package gpu promises, checked
// the same way on the CPU and on CUDA (like gonum's testblas). Run it from a test:
//
//	func TestConformance(t *testing.T) {
//		d, _ := gpu.OpenBackend("cpu", 0)
//		conformance.Run(t, d)
//	}
//
// Kernels come from the built-ins every backend has (backend.Builtins), so the suite
// needs no code generation. Fault tests leave a device unusable (CUDA faults are sticky
// for the process), so they are separate: RunFault, on a fresh device or in a child
// process.
package conformance

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-gpu/gpu"
)

// K holds a device's built-in kernels and helpers that launch them.
type K struct {
	D                                      *gpu.Device
	Empty, Trap, Spin, Fill, Add, SpinCopy *gpu.Function
}

// Kernels loads the built-ins of d.
func Kernels(t testing.TB, d *gpu.Device) *K {
	t.Helper()
	k := &K{D: d}
	for name, dst := range map[string]**gpu.Function{
		"empty": &k.Empty, "trap": &k.Trap, "spin": &k.Spin, "fill_u32": &k.Fill,
		"add_u32": &k.Add, "spin_copy_u32": &k.SpinCopy,
	} {
		f, err := d.Builtin(name)
		if err != nil {
			t.Fatalf("Builtin(%q): %v", name, err)
		}
		*dst = f
	}
	return k
}

func grid(n int) gpu.LaunchConfig {
	g := max(1, min((n+255)/256, 1024))
	return gpu.LaunchConfig{Grid: gpu.Dim3{X: g}, Block: gpu.Dim3{X: 256}}
}

var one = gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 256}}

// FillU32 sets the n words of buf to v on s.
func (k *K) FillU32(s *gpu.Stream, buf *gpu.Buffer, v uint32) error {
	n := int(buf.Size() / 4)
	return s.Launch(k.Fill, grid(n), gpu.Out(buf), v, uint64(n))
}

// AddU32 sets dst[i] = src[i] + v on s, for the words of dst.
func (k *K) AddU32(s *gpu.Stream, dst, src *gpu.Buffer, v uint32) error {
	n := int(dst.Size() / 4)
	return s.Launch(k.Add, grid(n), gpu.Out(dst), gpu.In(src), v, uint64(n))
}

// SpinCopyU32 spins d, then copies src into dst, with one block; stamps (nil or 16
// bytes) receives the kernel's start and end times in nanoseconds.
func (k *K) SpinCopyU32(s *gpu.Stream, dst, src *gpu.Buffer, d time.Duration, stamps *gpu.Buffer) error {
	n := int(dst.Size() / 4)
	args := []any{gpu.Out(dst), gpu.In(src), uint64(n), uint64(d)}
	if stamps != nil {
		args = append(args, gpu.Out(stamps))
	} else {
		args = append(args, gpu.DevicePtr(0))
	}
	return s.Launch(k.SpinCopy, one, args...)
}

// SpinFor launches a single-thread kernel that spins for d.
func (k *K) SpinFor(s *gpu.Stream, d time.Duration) error {
	return s.Launch(k.Spin, gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 1}}, uint64(d))
}

// U32s reads buf back as words.
func U32s(t testing.TB, buf *gpu.Buffer) []uint32 {
	t.Helper()
	out := make([]uint32, buf.Size()/4)
	if err := buf.CopyToHost(context.Background(), gpu.Bytes(out)); err != nil {
		t.Fatalf("CopyToHost: %v", err)
	}
	return out
}

// U64s reads buf back as 64-bit words.
func U64s(t testing.TB, buf *gpu.Buffer) []uint64 {
	t.Helper()
	out := make([]uint64, buf.Size()/8)
	if err := buf.CopyToHost(context.Background(), gpu.Bytes(out)); err != nil {
		t.Fatalf("CopyToHost: %v", err)
	}
	return out
}

// Upload allocates a device buffer holding vals.
func Upload(t testing.TB, d *gpu.Device, vals []uint32) *gpu.Buffer {
	t.Helper()
	b, err := d.Alloc(int64(4 * len(vals)))
	if err != nil {
		t.Fatalf("Alloc: %v", err)
	}
	if err := b.CopyFromHost(context.Background(), gpu.Bytes(vals)); err != nil {
		t.Fatalf("CopyFromHost: %v", err)
	}
	return b
}

// Random returns n random words.
func Random(n int) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = rand.Uint32()
	}
	return out
}

func alloc(t testing.TB, d *gpu.Device, n int) *gpu.Buffer {
	t.Helper()
	b, err := d.Alloc(int64(n))
	if err != nil {
		t.Fatalf("Alloc(%d): %v", n, err)
	}
	t.Cleanup(func() { b.Free() })
	return b
}

func stream(t testing.TB, d *gpu.Device) *gpu.Stream {
	t.Helper()
	s, err := d.NewStream()
	if err != nil {
		t.Fatalf("NewStream: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func equalU32(t testing.TB, what string, got, want []uint32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d words, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: word %d = %#x, want %#x (and maybe more)", what, i, got[i], want[i])
		}
	}
}

// Threads returns the process's OS threads (Linux), or -1.
func Threads() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return -1
}

// settleGoroutines waits up to 5 s for the goroutine count to fall to at most n.
func settleGoroutines(n int) int {
	deadline := time.Now().Add(5 * time.Second)
	for {
		g := runtime.NumGoroutine()
		if g <= n || time.Now().After(deadline) {
			return g
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Run runs every test of the suite on d, except the fault tests.
func Run(t *testing.T, d *gpu.Device) {
	k := Kernels(t, d)
	// First, while the process has done little else: its thread count is the measure.
	t.Run("ManyWaiters", func(t *testing.T) { testManyWaiters(t, k) })
	t.Run("StreamOrder", func(t *testing.T) { testStreamOrder(t, k) })
	t.Run("EventCrossStream", func(t *testing.T) { testEventCrossStream(t, k) })
	t.Run("DoneWaitCancel", func(t *testing.T) { testDoneWaitCancel(t, k) })
	t.Run("Policies", func(t *testing.T) { testPolicies(t, k) })
	t.Run("DeviceSynchronize", func(t *testing.T) { testDeviceSynchronize(t, k) })
	t.Run("ManyGoroutines", func(t *testing.T) { testManyGoroutines(t, k) })
	t.Run("TimingEvents", func(t *testing.T) { testTiming(t, k) })
	t.Run("BadInput", func(t *testing.T) { testBadInput(t, k) })
	t.Run("CloseWhileInUse", func(t *testing.T) { testCloseWhileInUse(t, k) })
	RunMemory(t, d)
}

// testCloseWhileInUse closes streams while other goroutines launch, copy, record,
// query and synchronize on them and synchronize the device: every operation either
// runs or fails with ErrClosed, Close returns nil, and the device stays healthy (on
// CUDA a stream destroyed under a driver call is undefined behaviour). Then the work
// that ran is checked to be complete and right.
func testCloseWhileInUse(t *testing.T, k *K) {
	ctx := context.Background()
	const n = 1 << 12
	for round := range 20 {
		s, err := k.D.NewStream()
		must(t, err)
		vals := Random(n)
		x := Upload(t, k.D, vals)
		ev, err := k.D.NewEvent(gpu.DisableTiming)
		must(t, err)
		var ys [4]*gpu.Buffer
		for i := range ys {
			ys[i] = alloc(t, k.D, 4*n)
		}
		var wg sync.WaitGroup
		var errs [4]error
		var adds [4]int
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				y := ys[g] // each goroutine's own output: the last add it ran says what y holds
				for i := 0; ; i++ {
					var err error
					switch (g + i) % 5 {
					case 0:
						if err = k.AddU32(s, y, x, uint32(g)); err == nil {
							adds[g]++
						}
					case 1:
						err = s.Record(ev)
					case 2:
						_, err = s.Query()
					case 3:
						err = s.Synchronize(ctx)
					case 4:
						err = k.D.Synchronize(ctx)
					}
					if err != nil {
						errs[g] = err
						return
					}
				}
			}()
		}
		time.Sleep(time.Duration(round%4) * 200 * time.Microsecond)
		must(t, s.Close())
		wg.Wait()
		for g, err := range errs {
			if !errors.Is(err, gpu.ErrClosed) {
				t.Fatalf("round %d, goroutine %d: %v, want ErrClosed", round, g, err)
			}
		}
		must(t, k.D.Synchronize(ctx))
		must(t, k.D.Err())
		for g, y := range ys {
			if adds[g] == 0 {
				continue // closed before its first add
			}
			got := U32s(t, y)
			for i := range got {
				if got[i] != vals[i]+uint32(g) {
					t.Fatalf("round %d: y%d[%d] = %d after %d adds, want %d", round, g, i, got[i], adds[g], vals[i]+uint32(g))
				}
			}
		}
		ev.Close()
		x.Free()
	}
}

func testStreamOrder(t *testing.T, k *K) {
	s := stream(t, k.D)
	const n = 4099
	x := alloc(t, k.D, 4*n)
	base := rand.Uint32()
	must(t, k.FillU32(s, x, base))
	steps := 50 + rand.IntN(50)
	var sum uint32
	for range steps {
		v := rand.Uint32() % 1000
		sum += v
		must(t, k.AddU32(s, x, x, v))
	}
	must(t, s.Synchronize(context.Background()))
	got := U32s(t, x)
	for i, g := range got {
		if g != base+sum {
			t.Fatalf("word %d = %d after %d adds, want %d", i, g, steps, base+sum)
		}
	}
}

// testEventCrossStream orders two streams by an event alone: the buffers are untracked.
func testEventCrossStream(t *testing.T, k *K) {
	a, b := stream(t, k.D), stream(t, k.D)
	const n = 1 << 12
	src := Upload(t, k.D, Random(n))
	defer src.Free()
	mid, out := alloc(t, k.D, 4*n), alloc(t, k.D, 4*n)
	for _, buf := range []*gpu.Buffer{src, mid, out} {
		must(t, k.D.DefaultStream().Synchronize(context.Background()))
		must(t, buf.SetTracking(false))
	}
	want := U32s(t, src)
	ev, err := k.D.NewEvent(gpu.DisableTiming)
	must(t, err)
	defer ev.Close()
	must(t, k.SpinCopyU32(a, mid, src, 30*time.Millisecond, nil))
	must(t, a.Record(ev))
	must(t, b.WaitEvent(ev))
	must(t, k.AddU32(b, out, mid, 7))
	must(t, b.Synchronize(context.Background()))
	for i := range want {
		want[i] += 7
	}
	equalU32(t, "after an event wait", U32s(t, out), want)
}

func testDoneWaitCancel(t *testing.T, k *K) {
	g0 := runtime.NumGoroutine()
	s := stream(t, k.D)
	e1, err := k.D.NewEvent()
	must(t, err)
	e2, err := k.D.NewEvent()
	must(t, err)
	if _, err := gpu.Elapsed(e1, e2); err == nil {
		t.Error("Elapsed of two events never recorded succeeded")
	}
	must(t, e1.Close())
	must(t, e2.Close())
	ev, err := k.D.NewEvent()
	must(t, err)
	defer ev.Close()
	// An event never recorded is complete.
	if done, err := ev.Query(); !done || err != nil {
		t.Fatalf("Query of an unrecorded event = %v, %v; want true, nil", done, err)
	}
	// An invalid policy on an idle device (Device.Synchronize's fast path checks it
	// itself), before the kernel below makes the device busy.
	must(t, k.D.Synchronize(context.Background()))
	if err := k.D.Synchronize(context.Background(), gpu.WaitPolicy{Mode: 7}); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("synchronizing an idle device with mode 7 = %v, want ErrInvalidValue", err)
	}
	if err := k.D.Synchronize(context.Background(), gpu.WaitPolicy{Mode: gpu.WaitSpin}, gpu.WaitPolicy{Mode: gpu.WaitBlock}); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("synchronizing an idle device with two wait policies = %v, want ErrInvalidValue", err)
	}
	must(t, k.SpinFor(s, 300*time.Millisecond))
	must(t, s.Record(ev))
	done := ev.Done()
	select {
	case <-done:
		t.Fatal("Done closed while the kernel before the event still runs")
	default:
	}
	if ok, err := ev.Query(); ok || err != nil {
		t.Fatalf("Query during the kernel = %v, %v; want false, nil", ok, err)
	}
	if err := ev.Wait(context.Background(), gpu.WaitPolicy{Mode: 7}); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("a wait with mode 7 = %v, want ErrInvalidValue", err)
	}
	// Even with nothing to wait for.
	idle, err := k.D.NewStream()
	must(t, err)
	defer idle.Close()
	if err := idle.Synchronize(context.Background(), gpu.WaitPolicy{Mode: 7}); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("synchronizing an idle stream with mode 7 = %v, want ErrInvalidValue", err)
	}
	two := []gpu.WaitPolicy{{Mode: gpu.WaitSpin}, {Mode: gpu.WaitBlock}}
	for name, wait := range map[string]func() error{
		"Event.Wait":         func() error { return ev.Wait(context.Background(), two...) },
		"Stream.Synchronize": func() error { return idle.Synchronize(context.Background(), two...) },
		"Device.Synchronize": func() error { return k.D.Synchronize(context.Background(), two...) },
	} {
		if err := wait(); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("%s with two wait policies = %v, want ErrInvalidValue", name, err)
		}
	}
	// Cancellation: the wait returns ctx's error promptly, several times over.
	best := time.Hour
	for range 5 {
		ctx, cancel := context.WithCancel(context.Background())
		go func() { time.Sleep(5 * time.Millisecond); cancel() }()
		start := time.Now()
		err := ev.Wait(ctx)
		late := time.Since(start) - 5*time.Millisecond
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Wait with a cancelled context = %v, want context.Canceled", err)
		}
		best = min(best, late)
		if late > 200*time.Millisecond {
			t.Fatalf("Wait returned %v after the cancel", late)
		}
	}
	if best > 10*time.Millisecond {
		t.Errorf("Wait returned at best %v after its context was cancelled, want under 10 ms", best)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Millisecond)
	if err := s.Synchronize(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Stream.Synchronize past its deadline = %v", err)
	}
	cancel()
	must(t, ev.Wait(context.Background()))
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Done not closed after the event completed")
	}
	if ok, err := ev.Query(); !ok || err != nil {
		t.Fatalf("Query after Wait = %v, %v", ok, err)
	}
	// Nothing left behind once the work is done.
	if g := settleGoroutines(g0); g > g0 {
		t.Errorf("%d goroutines after the waits, %d before", g, g0)
	}
}

func testPolicies(t *testing.T, k *K) {
	s := stream(t, k.D)
	for _, p := range []gpu.WaitPolicy{
		{Mode: gpu.WaitAuto}, {Mode: gpu.WaitAuto, Spin: -1}, {Mode: gpu.WaitAuto, Spin: time.Second},
		{Mode: gpu.WaitSpin}, {Mode: gpu.WaitBlock},
	} {
		for _, d := range []time.Duration{0, 2 * time.Millisecond} {
			must(t, k.SpinFor(s, d))
			start := time.Now()
			if err := s.Synchronize(context.Background(), p); err != nil {
				t.Fatalf("Synchronize with %+v: %v", p, err)
			}
			if done, err := s.Query(); !done || err != nil {
				t.Fatalf("after Synchronize with %+v: Query = %v, %v", p, done, err)
			}
			if el := time.Since(start); el > 2*time.Second {
				t.Errorf("Synchronize with %+v took %v", p, el)
			}
		}
	}
}

func testDeviceSynchronize(t *testing.T, k *K) {
	ss := []*gpu.Stream{stream(t, k.D), stream(t, k.D), stream(t, k.D)}
	const n = 1024
	src := Upload(t, k.D, Random(n))
	defer src.Free()
	outs := make([]*gpu.Buffer, len(ss))
	for i, s := range ss {
		outs[i] = alloc(t, k.D, 4*n)
		must(t, k.SpinCopyU32(s, outs[i], src, time.Duration(i+1)*10*time.Millisecond, nil))
	}
	must(t, k.D.Synchronize(context.Background()))
	for i, s := range ss {
		if done, err := s.Query(); !done || err != nil {
			t.Fatalf("stream %d after Device.Synchronize: Query = %v, %v", i, done, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := k.D.Synchronize(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Device.Synchronize with a cancelled context = %v", err)
	}
	want := U32s(t, src)
	// A stream closed with work pending: Device.Synchronize still waits for that work,
	// in every mode (cuCtxSynchronize does; the parked and spinning waits must too).
	for _, mode := range []gpu.WaitMode{gpu.WaitAuto, gpu.WaitSpin, gpu.WaitBlock} {
		s, err := k.D.NewStream()
		must(t, err)
		out := alloc(t, k.D, 4*n)
		start := time.Now() // the kernel ends 100 ms after this at the earliest
		must(t, k.SpinCopyU32(s, out, src, 100*time.Millisecond, nil))
		must(t, s.Close())
		must(t, k.D.Synchronize(context.Background(), gpu.WaitPolicy{Mode: mode}))
		if el := time.Since(start); el < 100*time.Millisecond {
			t.Errorf("mode %v: Device.Synchronize returned %v after the launch of a closed stream's 100 ms kernel", mode, el)
		}
		if got := U32s(t, out); !slices.Equal(got, want) {
			t.Errorf("mode %v: the closed stream's copy is not complete after Device.Synchronize", mode)
		}
		out.Free()
	}
	// With more goroutines already querying than maxActiveWaits, a device wait parks at
	// once, without querying first: it must still wait for every stream.
	long := stream(t, k.D)
	must(t, k.SpinFor(long, 300*time.Millisecond))
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			long.Synchronize(context.Background(), gpu.WaitPolicy{Mode: gpu.WaitSpin})
		}()
	}
	time.Sleep(20 * time.Millisecond)
	s := stream(t, k.D)
	out := alloc(t, k.D, 4*n)
	start := time.Now()
	must(t, k.SpinCopyU32(s, out, src, 100*time.Millisecond, nil))
	must(t, k.D.Synchronize(context.Background()))
	if el := time.Since(start); el < 100*time.Millisecond {
		t.Errorf("Device.Synchronize with busy waiters returned %v after the launch of a 100 ms kernel", el)
	}
	if done, err := s.Query(); !done || err != nil {
		t.Errorf("after Device.Synchronize with busy waiters: Query = %v, %v", done, err)
	}
	wg.Wait()
}

func testManyGoroutines(t *testing.T, k *K) {
	const goroutines, n = 32, 1000
	errs := make(chan error, goroutines)
	for g := range goroutines {
		go func() {
			errs <- func() error {
				s, err := k.D.NewStream()
				if err != nil {
					return err
				}
				defer s.Close()
				buf, err := s.Alloc(4 * n)
				if err != nil {
					return err
				}
				defer buf.Free()
				base := uint32(g) << 20
				if err := k.FillU32(s, buf, base); err != nil {
					return err
				}
				var sum uint32
				for range 20 {
					v := rand.Uint32() % 100
					sum += v
					if err := k.AddU32(s, buf, buf, v); err != nil {
						return err
					}
				}
				out := make([]uint32, n)
				if err := s.CopyDtoH(gpu.Bytes(out), buf); err != nil {
					return err
				}
				if err := s.Synchronize(context.Background()); err != nil {
					return err
				}
				for i, v := range out {
					if v != base+sum {
						return errors.New("goroutine " + strconv.Itoa(g) + ": word " + strconv.Itoa(i) + " wrong")
					}
				}
				return nil
			}()
		}()
	}
	for range goroutines {
		must(t, <-errs)
	}
}

// testManyWaiters parks 10,000 goroutines on their own events at once: all complete,
// and the OS threads stay bounded.
func testManyWaiters(t *testing.T, k *K) {
	waiters := 10000
	if testing.Short() {
		waiters = 1000
	}
	const streams = 16
	ss := make([]*gpu.Stream, streams)
	for i := range ss {
		ss[i] = stream(t, k.D)
		must(t, k.SpinFor(ss[i], 200*time.Millisecond))
	}
	evs := make([]*gpu.Event, waiters)
	for i := range evs {
		ev, err := k.D.NewEvent(gpu.DisableTiming)
		must(t, err)
		must(t, ss[i%streams].Record(ev))
		evs[i] = ev
	}
	threads0 := Threads()
	maxThreads := threads0
	stop := make(chan struct{})
	sampled := make(chan int)
	go func() {
		m := 0
		for {
			select {
			case <-stop:
				sampled <- m
				return
			case <-time.After(time.Millisecond):
				m = max(m, Threads())
			}
		}
	}()
	errs := make(chan error, waiters)
	for _, ev := range evs {
		go func() { errs <- ev.Wait(context.Background()) }()
	}
	for range waiters {
		must(t, <-errs)
	}
	close(stop)
	maxThreads = max(maxThreads, <-sampled)
	for _, ev := range evs {
		ev.Close()
	}
	if threads0 > 0 {
		// The bound is on the threads the waits add: a tool such as compute-sanitizer
		// starts its own threads in the process before the test does.
		limit := runtime.GOMAXPROCS(0) + 16
		t.Logf("%d waiters: at most %d OS threads, %d before (added at most GOMAXPROCS+16 = %d)", waiters, maxThreads, threads0, limit)
		if maxThreads-threads0 > limit {
			t.Errorf("%d OS threads while %d goroutines waited, %d before: want at most GOMAXPROCS+16 = %d more", maxThreads, waiters, threads0, limit)
		}
	}
}

func testTiming(t *testing.T, k *K) {
	s := stream(t, k.D)
	start, err := k.D.NewEvent()
	must(t, err)
	end, err := k.D.NewEvent()
	must(t, err)
	must(t, s.Record(start))
	must(t, k.SpinFor(s, 20*time.Millisecond))
	must(t, s.Record(end))
	must(t, end.Wait(context.Background()))
	el, err := gpu.Elapsed(start, end)
	must(t, err)
	if el < 19*time.Millisecond || el > 2*time.Second {
		t.Errorf("Elapsed around a 20 ms kernel = %v", el)
	}
	nt, err := k.D.NewEvent(gpu.DisableTiming)
	must(t, err)
	must(t, s.Record(nt))
	must(t, nt.Wait(context.Background()))
	if _, err := gpu.Elapsed(start, nt); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("Elapsed to an event without timing = %v, want ErrInvalidValue", err)
	}
	// An end event not yet complete: an error wrapping ErrInvalidValue on every
	// backend (CUDA's cuEventElapsedTime says CUDA_ERROR_NOT_READY).
	must(t, k.SpinFor(s, 100*time.Millisecond))
	must(t, s.Record(end))
	if _, err := gpu.Elapsed(start, end); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("Elapsed to an event not yet complete = %v, want ErrInvalidValue", err)
	}
	must(t, end.Wait(context.Background()))
}

func testBadInput(t *testing.T, k *K) {
	s := stream(t, k.D)
	if err := s.Launch(k.Empty, gpu.LaunchConfig{}); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("launch with a zero grid = %v", err)
	}
	if err := s.Launch(k.Empty, one, "a string"); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("launch with a string argument = %v", err)
	}
	if err := s.Launch(k.Empty, one, (*gpu.Buffer)(nil)); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("launch with a nil buffer = %v", err)
	}
	if _, err := k.D.Builtin("no-such-kernel"); err == nil {
		t.Error("Builtin of an unknown name succeeded")
	}
	if _, err := k.D.Alloc(-1); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("Alloc(-1) = %v", err)
	}
	s2, err := k.D.NewStream()
	must(t, err)
	must(t, s2.Close())
	must(t, s2.Close())
	if err := s2.Launch(k.Empty, one); !errors.Is(err, gpu.ErrClosed) {
		t.Errorf("launch on a closed stream = %v", err)
	}
	if err := s2.Synchronize(context.Background()); !errors.Is(err, gpu.ErrClosed) {
		t.Errorf("Synchronize of a closed stream = %v", err)
	}
	if err := k.D.DefaultStream().Close(); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("closing the default stream = %v", err)
	}
	ev, err := k.D.NewEvent()
	must(t, err)
	must(t, ev.Close())
	if err := s.Record(ev); !errors.Is(err, gpu.ErrClosed) {
		t.Errorf("Record of a closed event = %v", err)
	}
}

// RunFault checks that a fault ends every wait with an error wrapping ErrLaunchFailed
// within a second. It leaves d unusable: give it a fresh device (on CUDA, run it in a
// child process).
func RunFault(t *testing.T, d *gpu.Device) {
	k := Kernels(t, d)
	a, b := stream(t, d), stream(t, d)
	must(t, k.SpinFor(a, 100*time.Millisecond))
	ev, err := d.NewEvent()
	must(t, err)
	must(t, a.Record(ev))
	must(t, b.Launch(k.Trap, one))
	errs := make(chan error, 4)
	start := time.Now()
	go func() { errs <- ev.Wait(context.Background()) }()
	go func() { errs <- a.Synchronize(context.Background()) }()
	go func() { errs <- b.Synchronize(context.Background()) }()
	go func() { errs <- d.Synchronize(context.Background()) }()
	for range 4 {
		select {
		case err := <-errs:
			if !errors.Is(err, gpu.ErrLaunchFailed) {
				t.Errorf("a wait after a trap returned %v, want an error wrapping ErrLaunchFailed", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a wait after a trap hung")
		}
	}
	if el := time.Since(start); el > time.Second {
		t.Errorf("waits took %v to fail after the trap, want under 1 s", el)
	}
	select {
	case <-ev.Done():
	case <-time.After(time.Second):
		t.Error("Done not closed after a fault")
	}
	t.Logf("fault error: %v", func() error { _, err := ev.Query(); return err }())
}
