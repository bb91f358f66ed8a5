package conformance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-gpu/gpu"
)

// RunGraphs runs the tests of graphs and host functions (issue #22) on d.
func RunGraphs(t *testing.T, d *gpu.Device) {
	k := Kernels(t, d)
	for _, tc := range []struct {
		name string
		f    func(*testing.T, *K)
	}{
		{"GraphReplay", testGraphReplay}, {"GraphTwoStreams", testGraphTwoStreams},
		{"GraphFreeWhileLive", testGraphFreeWhileLive}, {"GraphClose", testGraphClose},
		{"CaptureRefusals", testCaptureRefusals}, {"GraphParam", testGraphParam},
		{"HostFuncOrder", testHostFuncOrder}, {"HostFuncWaitsOtherStreams", testHostFuncWaits},
		{"HostFuncMutex", testHostFuncMutex}, {"HostFuncFault", testHostFuncFault},
		{"HostFuncThousands", testHostFuncThousands}, {"HostFuncSelfSync", testHostFuncSelfSync},
		{"ForeignStreams", testForeignStreams},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.f(t, k) })
	}
}

// capture captures f on s, failing the test on an error.
func capture(t *testing.T, s *gpu.Stream, f func() error) *gpu.Graph {
	t.Helper()
	g, err := s.Capture(f)
	if err != nil {
		t.Fatalf("Capture: %v", err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

func addWords(in []uint32, v uint32) []uint32 {
	out := make([]uint32, len(in))
	for i, x := range in {
		out[i] = x + v
	}
	return out
}

// testGraphReplay captures kernels, a copy and a memset, and checks each launch
// against the same work on the host, with new inputs between launches (written by the
// host, and by a kernel on another stream, not waited for).
func testGraphReplay(t *testing.T, k *K) {
	const n = 1 << 14
	s := stream(t, k.D)
	in := Upload(t, k.D, Random(n))
	defer in.Free()
	mid, out, cp, ms := alloc(t, k.D, 4*n), alloc(t, k.D, 4*n), alloc(t, k.D, 4*n), alloc(t, k.D, 4*n)
	for _, b := range []*gpu.Buffer{mid, out, cp, ms} {
		must(t, b.CopyFromHost(context.Background(), gpu.Bytes(Random(n)))) // poison
	}
	g := capture(t, s, func() error {
		return errors.Join(k.AddU32(s, mid, in, 3), k.AddU32(s, out, mid, 4), s.CopyDtoD(cp, out), s.MemsetD32(ms, 0xABCD))
	})
	// Nothing ran during the capture.
	for _, b := range []*gpu.Buffer{out, ms} {
		if w := U32s(t, b); w[0] == 0xABCD || w[1] == 0xABCD {
			t.Fatal("the captured memset ran during the capture")
		}
	}
	check := func(what string, src []uint32) {
		t.Helper()
		equalU32(t, what+": out", U32s(t, out), addWords(src, 7))
		equalU32(t, what+": copy", U32s(t, cp), addWords(src, 7))
		ms := U32s(t, ms)
		for i, w := range ms {
			if w != 0xABCD {
				t.Fatalf("%s: memset word %d = %#x", what, i, w)
			}
		}
	}
	s2, s3 := stream(t, k.D), stream(t, k.D)
	must(t, g.Launch(s2))
	check("first launch", U32s(t, in))
	vals := Random(n)
	must(t, in.CopyFromHost(context.Background(), gpu.Bytes(vals)))
	must(t, g.Launch(s))
	check("after a host write", vals)
	// A kernel on another stream writes the input (slowly); the launch waits for it.
	src := Upload(t, k.D, Random(n))
	defer src.Free()
	must(t, k.SpinCopyU32(s3, in, src, 20*time.Millisecond, nil))
	must(t, g.Launch(s2))
	check("after a kernel's write on another stream", U32s(t, src))
}

// testGraphTwoStreams launches a graph that adds 1 to a buffer in place, alternately
// on two streams without waiting: the launches must not overlap (each sees the
// previous one's result).
func testGraphTwoStreams(t *testing.T, k *K) {
	const n = 1 << 12
	s, a, b := stream(t, k.D), stream(t, k.D), stream(t, k.D)
	x0 := Random(n)
	x := Upload(t, k.D, x0)
	defer x.Free()
	g := capture(t, s, func() error { return k.AddU32(s, x, x, 1) })
	const launches = 40
	for i := range launches {
		st := a
		if i%2 == 1 {
			st = b
		}
		if i%8 == 0 {
			// A slow writer of its own in the middle, on the capture stream.
			must(t, k.SpinFor(st, time.Millisecond))
		}
		must(t, g.Launch(st))
	}
	equalU32(t, "after launches on two streams", U32s(t, x), addWords(x0, launches))
}

// testGraphFreeWhileLive frees buffers a graph uses, during and after the capture: the
// graph still runs right, the buffers can't be used by their holder, and their memory
// comes back once the graph is closed.
func testGraphFreeWhileLive(t *testing.T, k *K) {
	const n = 1 << 16
	d := k.D
	free0 := settledFree(t, d)
	s := stream(t, d)
	vals := Random(n)
	in := Upload(t, d, vals)
	out := alloc(t, d, 4*n)
	var tmp *gpu.Buffer
	g, err := s.Capture(func() error {
		var err error
		if tmp, err = s.Alloc(4 * n); err != nil { // allocated for the capture
			return err
		}
		err = errors.Join(k.AddU32(s, tmp, in, 2), k.AddU32(s, out, tmp, 3))
		return errors.Join(err, tmp.Free()) // freed inside the capture
	})
	must(t, err)
	must(t, in.Free()) // freed after
	if err := k.FillU32(s, in, 1); !errors.Is(err, gpu.ErrClosed) {
		t.Errorf("a launch on a freed buffer that a graph keeps = %v, want ErrClosed", err)
	}
	for range 3 {
		must(t, k.FillU32(s, out, 0))
		must(t, g.Launch(s))
		equalU32(t, "graph using freed buffers", U32s(t, out), addWords(vals, 5))
	}
	must(t, g.Close())
	must(t, out.Free())
	// The memory comes back after the close (in the background).
	deadline := time.Now().Add(5 * time.Second)
	for {
		free := settledFree(t, d)
		if free >= free0 || time.Now().After(deadline) {
			if free < free0 {
				t.Errorf("free memory %d after the graph was closed, %d before: %d bytes kept", free, free0, free0-free)
			}
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// testGraphClose closes graphs in every state: never launched, with launches in
// flight, twice, with its capture stream closed, and checks the errors after.
func testGraphClose(t *testing.T, k *K) {
	const n = 1 << 12
	s, s2 := stream(t, k.D), stream(t, k.D)
	x0 := Random(n)
	x := Upload(t, k.D, x0)
	defer x.Free()
	mk := func() *gpu.Graph {
		g, err := s.Capture(func() error {
			return errors.Join(k.SpinFor(s, 5*time.Millisecond), k.AddU32(s, x, x, 1))
		})
		must(t, err)
		return g
	}
	// Never launched.
	must(t, mk().Close())
	// Launched, closed while the launches run: they complete.
	g := mk()
	for range 3 {
		must(t, g.Launch(s2))
	}
	must(t, g.Close())
	must(t, g.Close()) // twice
	for name, err := range map[string]error{
		"Launch":   g.Launch(s2),
		"SetParam": g.SetParam(mustParam(t, uint32(1)), uint32(2)),
	} {
		if !errors.Is(err, gpu.ErrClosed) {
			t.Errorf("%s of a closed graph = %v, want ErrClosed", name, err)
		}
	}
	equalU32(t, "after launches of a graph closed while they ran", U32s(t, x), addWords(x0, 3))
	// Its capture stream closed first, and the launch stream after the launch.
	g = mk()
	s3 := stream(t, k.D)
	must(t, s.Close())
	must(t, g.Launch(s3))
	must(t, s3.Close())
	must(t, g.Close())
	equalU32(t, "after a launch on a stream closed since", U32s(t, x), addWords(x0, 4))
	// Nil.
	var nilG *gpu.Graph
	for name, err := range map[string]error{"Close": nilG.Close(), "Launch": nilG.Launch(s2), "SetParam": nilG.SetParam(nil, 1)} {
		if !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("%s of a nil graph = %v, want ErrInvalidValue", name, err)
		}
	}
	if err := g.Launch(nil); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("Launch on a nil stream = %v, want ErrInvalidValue", err)
	}
	// A capture left open when its stream is closed: EndCapture says the stream is closed.
	s4 := stream(t, k.D)
	must(t, s4.BeginCapture())
	must(t, k.AddU32(s4, x, x, 1))
	must(t, s4.Close())
	if _, err := s4.EndCapture(); !errors.Is(err, gpu.ErrClosed) {
		t.Errorf("EndCapture on a stream closed during the capture = %v, want ErrClosed", err)
	}
	equalU32(t, "after a capture dropped with its stream", U32s(t, x), addWords(x0, 4))
}

func mustParam(t *testing.T, v any) *gpu.Param {
	t.Helper()
	p, err := gpu.NewParam(v)
	must(t, err)
	return p
}

// testCaptureRefusals checks what a capture refuses (ErrCapturing), that the refusals
// leave the capture usable, that a host read of a buffer the capture writes spoils it,
// and that device-wide waits still work during a capture.
func testCaptureRefusals(t *testing.T, k *K) {
	const n = 1 << 10
	d := k.D
	s, other := stream(t, d), stream(t, d)
	x0 := Random(n)
	x := Upload(t, d, x0)
	defer x.Free()
	y := alloc(t, d, 4*n)
	ev, err := d.NewEvent()
	must(t, err)
	defer ev.Close()
	// Work pending before the capture: device waits still wait for it.
	must(t, k.SpinFor(s, 20*time.Millisecond))
	must(t, s.BeginCapture())
	if !s.Capturing() {
		t.Error("Capturing() = false during a capture")
	}
	if err := s.BeginCapture(); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("a second BeginCapture = %v, want ErrInvalidValue", err)
	}
	must(t, k.AddU32(s, y, x, 9))
	host := make([]byte, 4*n)
	_, qerr := s.Query()
	for name, err := range map[string]error{
		"Synchronize": s.Synchronize(context.Background()),
		"Query":       qerr,
		"Record":      s.Record(ev),
		"WaitEvent":   s.WaitEvent(ev),
		"CopyHtoD":    s.CopyHtoD(y, host),
		"CopyDtoH":    s.CopyDtoH(host, y),
		"HostFunc":    s.HostFunc(func() error { return nil }),
	} {
		if !errors.Is(err, gpu.ErrCapturing) {
			t.Errorf("%s on a capturing stream = %v, want ErrCapturing", name, err)
		}
	}
	// A device-wide wait waits for the work before the capture, not for the capture.
	start := time.Now()
	must(t, d.Synchronize(context.Background()))
	must(t, other.Synchronize(context.Background()))
	// The host may read what the capture only reads, and write what it writes.
	equalU32(t, "an input read during the capture", U32s(t, x), x0)
	must(t, y.CopyFromHost(context.Background(), gpu.Bytes(make([]uint32, n))))
	g, err := s.EndCapture()
	must(t, err)
	if time.Since(start) > 10*time.Second {
		t.Error("the device wait during a capture took too long")
	}
	if s.Capturing() {
		t.Error("Capturing() = true after EndCapture")
	}
	if _, err := s.EndCapture(); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("EndCapture without a capture = %v, want ErrInvalidValue", err)
	}
	// A graph launch inside a capture is refused.
	must(t, s.BeginCapture())
	if err := g.Launch(s); !errors.Is(err, gpu.ErrCapturing) {
		t.Errorf("a graph launched on a capturing stream = %v, want ErrCapturing", err)
	}
	// A host read of a buffer the capture writes fails, and spoils the capture.
	must(t, k.AddU32(s, y, x, 1))
	if err := y.CopyToHost(context.Background(), host); !errors.Is(err, gpu.ErrCapturing) {
		t.Errorf("a host read of a buffer the open capture writes = %v, want ErrCapturing", err)
	}
	if g2, err := s.EndCapture(); !errors.Is(err, gpu.ErrCapturing) {
		t.Errorf("EndCapture of a capture spoilt by a host read = %v, want ErrCapturing", err)
		if g2 != nil {
			g2.Close()
		}
	}
	// The stream works as before; the first graph runs.
	must(t, g.Launch(s))
	must(t, s.Synchronize(context.Background()))
	equalU32(t, "the graph after refusals", U32s(t, y), addWords(x0, 9))
	must(t, g.Close())
	// Capture can't begin inside a scope on the stream... but a Capture whose function
	// fails drops the capture and returns the error.
	boom := errors.New("boom")
	if _, err := s.Capture(func() error { return boom }); !errors.Is(err, boom) {
		t.Errorf("Capture of a failing function = %v, want its error", err)
	}
	if s.Capturing() {
		t.Error("the stream captures after a failed Capture")
	}
}

// testGraphParam changes a captured launch's scalar with SetParam.
func testGraphParam(t *testing.T, k *K) {
	const n = 1 << 12
	s := stream(t, k.D)
	x0 := Random(n)
	x := Upload(t, k.D, x0)
	defer x.Free()
	y := alloc(t, k.D, 4*n)
	p := mustParam(t, uint32(5))
	// Outside a capture a Param is its value.
	must(t, s.Launch(k.Add, grid(n), gpu.Out(y), gpu.In(x), p, uint64(n)))
	equalU32(t, "a launch with a Param", U32s(t, y), addWords(x0, 5))
	g := capture(t, s, func() error { return s.Launch(k.Add, grid(n), gpu.Out(y), gpu.In(x), p, uint64(n)) })
	for _, v := range []uint32{11, 0, 1 << 31} {
		if err := g.SetParam(p, v); errors.Is(err, gpu.ErrNotSupported) {
			t.Skipf("SetParam: %v", err)
		} else {
			must(t, err)
		}
		must(t, g.Launch(s))
		equalU32(t, fmt.Sprintf("after SetParam(%d)", v), U32s(t, y), addWords(x0, v))
	}
	if err := g.SetParam(p, 7); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("SetParam of an int to a uint32 Param = %v, want ErrInvalidValue", err)
	}
	if err := g.SetParam(mustParam(t, uint32(1)), uint32(2)); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("SetParam of a Param the graph doesn't take = %v, want ErrInvalidValue", err)
	}
}

// testHostFuncOrder checks that a host function runs after the work before it and that
// the work after it waits for it: an event recorded after a slow host function is
// never seen complete before the function has returned. Once with the work before it
// pending, once on a stream synchronized since (idle: the function runs without an
// event to wait for, and its read of the stream's result must not wait either).
func testHostFuncOrder(t *testing.T, k *K) {
	t.Run("Pending", func(t *testing.T) { testHostFuncOrderIdle(t, k, false) })
	t.Run("Idle", func(t *testing.T) { testHostFuncOrderIdle(t, k, true) })
}

func testHostFuncOrderIdle(t *testing.T, k *K, idle bool) {
	s := stream(t, k.D)
	const n = 1 << 10
	x := Upload(t, k.D, Random(n))
	defer x.Free()
	y := alloc(t, k.D, 4*n)
	must(t, k.SpinCopyU32(s, y, x, 10*time.Millisecond, nil))
	if idle {
		must(t, s.Synchronize(context.Background()))
	}
	var seen []uint32
	var done atomic.Bool
	must(t, s.HostFunc(func() error {
		// The copy before is complete: reading y waits for nothing.
		seen = U32sCtx(t, y)
		time.Sleep(30 * time.Millisecond)
		done.Store(true)
		return nil
	}))
	ev, err := k.D.NewEvent()
	must(t, err)
	defer ev.Close()
	must(t, s.Record(ev))
	for {
		ok, err := ev.Query()
		must(t, err)
		if ok {
			break
		}
		time.Sleep(100 * time.Microsecond)
	}
	if !done.Load() {
		t.Fatal("an event recorded after a host function completed before the function returned")
	}
	equalU32(t, "read inside the host function", seen, U32s(t, x))
}

// U32sCtx reads buf back as words, for use off the test's goroutine (errors as a nil
// slice).
func U32sCtx(t testing.TB, buf *gpu.Buffer) []uint32 {
	out := make([]uint32, buf.Size()/4)
	if err := buf.CopyToHost(context.Background(), gpu.Bytes(out)); err != nil {
		t.Errorf("CopyToHost in a host function: %v", err)
		return nil
	}
	return out
}

// testHostFuncWaits: a host function waits for another stream's work, which itself
// has host functions, while a third stream keeps working.
func testHostFuncWaits(t *testing.T, k *K) {
	a, b, c := stream(t, k.D), stream(t, k.D), stream(t, k.D)
	const n = 1 << 10
	x := Upload(t, k.D, Random(n))
	defer x.Free()
	y, z := alloc(t, k.D, 4*n), alloc(t, k.D, 4*n)
	var bDone atomic.Bool
	must(t, k.SpinFor(b, 20*time.Millisecond))
	must(t, b.HostFunc(func() error { bDone.Store(true); return nil }))
	var errA error
	var sawB bool
	must(t, a.HostFunc(func() error {
		errA = b.Synchronize(context.Background())
		sawB = bDone.Load()
		return nil
	}))
	must(t, k.AddU32(a, y, x, 1))
	// c is not held up by a's host function.
	must(t, k.AddU32(c, z, x, 2))
	must(t, c.Synchronize(context.Background()))
	must(t, a.Synchronize(context.Background()))
	if errA != nil || !sawB {
		t.Errorf("a host function's wait for another stream: %v, saw its host function done: %v", errA, sawB)
	}
	equalU32(t, "after the host function", U32s(t, y), addWords(U32s(t, x), 1))
}

// testHostFuncMutex: a goroutine holds a mutex while it synchronizes a stream that has
// a host function of its own; another stream's host function takes the mutex. With
// driver callbacks on one thread this deadlocks; here both complete.
func testHostFuncMutex(t *testing.T, k *K) {
	a, b := stream(t, k.D), stream(t, k.D)
	var mu sync.Mutex
	var order []string
	must(t, k.SpinFor(a, 10*time.Millisecond))
	must(t, a.HostFunc(func() error {
		mu.Lock()
		order = append(order, "a")
		mu.Unlock()
		return nil
	}))
	must(t, k.SpinFor(b, 30*time.Millisecond))
	must(t, b.HostFunc(func() error { time.Sleep(5 * time.Millisecond); return nil }))
	done := make(chan error, 1)
	mu.Lock()
	go func() {
		defer mu.Unlock()
		done <- b.Synchronize(context.Background())
		order = append(order, "sync b")
	}()
	select {
	case err := <-done:
		must(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("deadlock: a synchronize holding a mutex that another stream's host function takes")
	}
	must(t, a.Synchronize(context.Background()))
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(order, ",") != "sync b,a" {
		t.Errorf("order %v, want the synchronize first (it held the mutex)", order)
	}
}

// testHostFuncFault: a host function that returns an error or panics faults its
// stream with that error; later work on it fails; other streams go on.
func testHostFuncFault(t *testing.T, k *K) {
	mine := errors.New("host function's own error")
	for _, tc := range []struct {
		name string
		f    func() error
		want []error
		text string
	}{
		{"error", func() error { return mine }, []error{mine}, "own error"},
		{"panic", func() error { panic("boom") }, []error{gpu.ErrLaunchFailed}, "boom"},
		{"panic error", func() error { panic(mine) }, []error{gpu.ErrLaunchFailed, mine}, "own error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, other := stream(t, k.D), stream(t, k.D)
			x := alloc(t, k.D, 1024)
			must(t, s.HostFunc(tc.f))
			err := s.Synchronize(context.Background())
			for _, w := range tc.want {
				if !errors.Is(err, w) || !strings.Contains(fmt.Sprint(err), tc.text) {
					t.Errorf("Synchronize after a host function failing with %s = %v, want %v", tc.name, err, w)
				}
			}
			if err2 := k.FillU32(s, x, 1); !errors.Is(err2, tc.want[0]) {
				t.Errorf("a launch on the faulted stream = %v, want its fault", err2)
			}
			if _, err2 := s.Query(); !errors.Is(err2, tc.want[0]) {
				t.Errorf("Query of the faulted stream = %v, want its fault", err2)
			}
			must(t, k.FillU32(other, x, 3))
			must(t, other.Synchronize(context.Background()))
			must(t, k.D.Synchronize(context.Background()))
			must(t, s.Close())
		})
	}
}

// testHostFuncThousands enqueues thousands of host functions between kernels on two
// streams: each runs once, in order.
func testHostFuncThousands(t *testing.T, k *K) {
	n := 2000
	if testing.Short() {
		n = 500
	}
	a, b := stream(t, k.D), stream(t, k.D)
	x := alloc(t, k.D, 4096)
	var mu sync.Mutex
	got := map[*gpu.Stream][]int{}
	for i := range n {
		for _, s := range []*gpu.Stream{a, b} {
			must(t, s.HostFunc(func() error {
				mu.Lock()
				got[s] = append(got[s], i)
				mu.Unlock()
				return nil
			}))
		}
		if i%100 == 0 {
			must(t, k.FillU32(a, x, uint32(i)))
		}
	}
	must(t, k.D.Synchronize(context.Background()))
	for _, s := range []*gpu.Stream{a, b} {
		if len(got[s]) != n {
			t.Fatalf("%d host functions ran on %v, want %d", len(got[s]), s, n)
		}
		for i, v := range got[s] {
			if v != i {
				t.Fatalf("host function %d ran as number %d on %v", v, i, s)
			}
		}
	}
}

// testHostFuncSelfSync: synchronizing a stream (or the device) from inside one of its
// host functions is an error, not a deadlock.
func testHostFuncSelfSync(t *testing.T, k *K) {
	s, other := stream(t, k.D), stream(t, k.D)
	var errS, errD, errO error
	must(t, s.HostFunc(func() error {
		errS = s.Synchronize(context.Background())
		errD = k.D.Synchronize(context.Background())
		errO = other.Synchronize(context.Background())
		return nil
	}))
	done := make(chan error, 1)
	go func() { done <- s.Synchronize(context.Background()) }()
	select {
	case err := <-done:
		must(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("deadlock: a stream synchronized from inside its own host function")
	}
	if !errors.Is(errS, gpu.ErrInvalidValue) || !errors.Is(errD, gpu.ErrInvalidValue) {
		t.Errorf("Synchronize of the stream and of the device inside its host function = %v, %v; want ErrInvalidValue", errS, errD)
	}
	if errO != nil {
		t.Errorf("Synchronize of another stream inside a host function = %v", errO)
	}
}

// testForeignStreams hands out a stream's handle and adopts it (a second Stream on the
// same device stream, as another library's would be), and adopts the legacy default
// stream: the package's operations on them are ordered with its own streams by the
// tracking, and closing an adopted stream leaves the handle working. On a backend
// without handles both calls fail with ErrNotSupported.
func testForeignStreams(t *testing.T, k *K) {
	d := k.D
	own := stream(t, d)
	h, err := own.Handle()
	if errors.Is(err, gpu.ErrNotSupported) {
		if _, err := d.AdoptStream(0); !errors.Is(err, gpu.ErrNotSupported) {
			t.Errorf("AdoptStream on a backend without handles = %v, want ErrNotSupported", err)
		}
		return
	}
	must(t, err)
	const n = 1 << 14
	x0 := Random(n)
	x := Upload(t, d, x0)
	defer x.Free()
	y, z := alloc(t, d, 4*n), alloc(t, d, 4*n)
	adopted, err := d.AdoptStream(h)
	must(t, err)
	legacy, err := d.AdoptStream(0)
	must(t, err)
	other := stream(t, d)
	// Written slowly on the adopted stream, read on another stream and on the legacy
	// stream: the tracking orders them.
	must(t, k.SpinCopyU32(adopted, y, x, 20*time.Millisecond, nil))
	must(t, k.AddU32(other, z, y, 1))
	must(t, k.AddU32(legacy, y, z, 1)) // after the read on other
	must(t, legacy.Synchronize(context.Background()))
	equalU32(t, "written on the adopted stream, read on others", U32s(t, z), addWords(x0, 1))
	equalU32(t, "written on the legacy stream", U32s(t, y), addWords(x0, 2))
	if err := legacy.BeginCapture(); !errors.Is(err, gpu.ErrNotSupported) {
		t.Errorf("BeginCapture on the legacy default stream = %v, want ErrNotSupported", err)
	}
	// Closing the adopted stream leaves the handle to its owner: own still works.
	must(t, adopted.Close())
	must(t, legacy.Close())
	must(t, k.AddU32(own, z, x, 5))
	must(t, own.Synchronize(context.Background()))
	equalU32(t, "on the stream whose handle was adopted and closed", U32s(t, z), addWords(x0, 5))
	if _, err := d.AdoptStream(2); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("AdoptStream of the per-thread default stream = %v, want ErrInvalidValue", err)
	}
}
