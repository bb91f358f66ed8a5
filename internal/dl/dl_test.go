package dl_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/go-gpu/gpu/internal/dl"
	"github.com/go-gpu/gpu/internal/dl/dltest"
)

// The tests load testdata/fakelib.c, compiled into a temporary directory by the C
// compiler (run as a program, so they work without cgo too), and the C library.

var (
	fakePath, fakeSkip string

	api           dl.Table
	fakeGet       = api.Func("fake_get")
	fakeSet       = api.Func("fake_set")
	fakeGetFails  = api.Func("fake_get_fails")
	fakeCurrent   = api.Func("fake_current")
	fakeCounts    = api.Func("fake_counts")
	fakeSum24     = api.Func("fake_sum24")
	fakeSum9      = api.Func("fake_sum9")
	fakeNarrow    = api.Func("fake_narrow")
	fakeFill      = api.Func("fake_fill")
	fakeString    = api.Func("fake_string_v2", "fake_string")
	fakeSleep     = api.Func("fake_sleep_us")
	fakeAbsent    = api.Optional("fake_absent")
	fakeCountTo   = api.Func("fake_count_to")
	fakeCounter   = api.Func("fake_counter")
	cur           = dl.Current{Get: fakeGet, Set: fakeSet}
	curFails      = dl.Current{Get: fakeGetFails, Set: fakeSet}
	bindOnce      sync.Once
	bindErr       error
	fakeLibHandle *dl.Lib
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dl-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if dl.Available {
		fakePath, fakeSkip = dltest.Build(filepath.Join("testdata", "fakelib.c"), dir, "libfake.so")
	} else {
		fakeSkip = "this build cannot load libraries (dl.Mechanism is \"\")"
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// fake loads and binds the fake library once, or skips.
func fake(t testing.TB) {
	t.Helper()
	if fakePath == "" {
		t.Skip(fakeSkip)
	}
	bindOnce.Do(func() {
		fakeLibHandle, bindErr = dl.Open(fakePath)
		if bindErr == nil {
			bindErr = api.Bind(fakeLibHandle)
		}
	})
	if bindErr != nil {
		t.Fatal(bindErr)
	}
}

func TestBind(t *testing.T) {
	fake(t)
	if fakeString.Name() != "fake_string" || !fakeString.Bound() {
		t.Errorf("fakeString bound as %q (bound %v), want the fallback name fake_string", fakeString.Name(), fakeString.Bound())
	}
	if fakeAbsent.Bound() || fakeAbsent.Addr() != 0 || fakeAbsent.Name() != "fake_absent" {
		t.Errorf("optional fake_absent: bound %v, addr %#x, name %q", fakeAbsent.Bound(), fakeAbsent.Addr(), fakeAbsent.Name())
	}
	if got := dl.PathOf(fakeSum9.Addr()); got != fakePath {
		t.Errorf("PathOf(fake_sum9) = %q, want %q", got, fakePath)
	}
	if n := len(api.Funcs()); n != 14 {
		t.Errorf("%d entry points in the table, want 14", n)
	}
	// A table with a required entry point the library lacks binds nothing.
	var t2 dl.Table
	sum := t2.Func("fake_sum9")
	t2.Func("fake_absent", "fake_absent_v2")
	err := t2.Bind(fakeLibHandle)
	if err == nil || !strings.Contains(err.Error(), "fake_absent or fake_absent_v2") || sum.Bound() {
		t.Errorf("Bind with a missing entry point: %v (fake_sum9 bound: %v)", err, sum.Bound())
	}
}

func TestOpenErrors(t *testing.T) {
	if !dl.Available {
		_, err := dl.Open("libc.so.6")
		if !errors.Is(err, dl.ErrUnavailable) {
			t.Fatalf("Open without a mechanism: %v, want ErrUnavailable", err)
		}
		return
	}
	_, err := dl.Open("/nonexistent/libnothing.so.1")
	if err == nil || !strings.Contains(err.Error(), "No such file") {
		t.Errorf("Open of a missing file: %v, want dlerror's text", err)
	}
}

func TestUnboundCallPanics(t *testing.T) {
	var t2 dl.Table
	f := t2.Optional("never_bound")
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "never_bound") {
			t.Errorf("call of an unbound entry point: recovered %v, want a panic naming it", r)
		}
	}()
	f.Call(1, 2)
}

func TestArguments(t *testing.T) {
	fake(t)
	for range 100 {
		var a [24]uintptr
		var want9, want24 uint64
		for i := range a {
			a[i] = uintptr(rand.Uint64())
			want24 += uint64(i+1) * uint64(a[i])
			if i < 9 {
				want9 += uint64(i+1) * uint64(a[i])
			}
		}
		if got := uint64(fakeSum9.Call(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8])); got != want9 {
			t.Fatalf("fake_sum9 = %#x, want %#x", got, want9)
		}
		if got := uint64(fakeSum24.Call(a[:]...)); got != want24 {
			t.Fatalf("fake_sum24 = %#x, want %#x", got, want24)
		}
		// Through the context prologue too.
		if got := uint64(fakeSum24.CallIn(&cur, 0x1000, a[:]...)); got != want24 {
			t.Fatalf("fake_sum24 after the prologue = %#x, want %#x", got, want24)
		}
	}
}

func TestNarrowArguments(t *testing.T) {
	fake(t)
	out := [4]int64{99, 99, 99, 99}
	i, u, c, s := int32(-123456), uint32(0xfedcba98), uint8(0xe1), uint16(0xbeef)
	r := fakeNarrow.Call(uintptr(int64(i)), uintptr(u), uintptr(c), uintptr(s), uintptr(unsafe.Pointer(&out)))
	if int32(r) != -7 {
		t.Errorf("int result %d, want -7", int32(r))
	}
	if want := [4]int64{int64(i), int64(u), int64(c), int64(s)}; out != want {
		t.Errorf("C read %v, want %v", out, want)
	}
}

func TestMemory(t *testing.T) {
	fake(t)
	// A stack buffer and a heap buffer, written by C.
	var small [64]byte
	big := make([]byte, 1<<20)
	for _, b := range [][]byte{small[:], big} {
		v := byte(rand.IntN(200) + 1)
		p := fakeFill.Call(uintptr(unsafe.Pointer(&b[0])), uintptr(v), uintptr(len(b)))
		if p != uintptr(unsafe.Pointer(&b[0])) {
			t.Errorf("fake_fill returned %#x, want the buffer's address", p)
		}
		for i, x := range b {
			if x != v {
				t.Fatalf("byte %d of %d = %d, want %d", i, len(b), x, v)
			}
		}
	}
	if got := dl.GoString(fakeString.Call()); got != "hello from C" {
		t.Errorf("GoString = %q", got)
	}
	if dl.GoString(0) != "" {
		t.Error("GoString(0) != \"\"")
	}
}

// TestStackVariablesAtEveryDepth passes stack buffers to C from goroutines whose stacks
// are filled to every depth in a range, so that some call finds its stack nearly full:
// if anything between the conversion of the buffer's address and the C call could grow
// (and so move) the stack, C would write to the old stack and the buffer would not
// change.
func TestStackVariablesAtEveryDepth(t *testing.T) {
	fake(t)
	var wg sync.WaitGroup
	var bad atomic.Int64
	for depth := range 600 {
		wg.Go(func() {
			if !fillAtDepth(depth, byte(depth%250+1)) {
				bad.Add(1)
			}
		})
	}
	wg.Wait()
	if n := bad.Load(); n != 0 {
		t.Errorf("%d of 600 calls did not see C's writes to a stack buffer", n)
	}
}

//go:noinline
func fillAtDepth(depth int, v byte) bool {
	var pad [24]byte // each level takes a little more stack
	if depth > 0 {
		return fillAtDepth(depth-1, v) && pad[0] == 0
	}
	var buf [40]byte
	fakeFill.Call(uintptr(unsafe.Pointer(&buf[0])), uintptr(v), uintptr(len(buf)))
	var out int64
	var in [4]int64
	neg := int64(-3)
	fakeNarrow.Call(uintptr(neg), 1, 2, 3, uintptr(unsafe.Pointer(&in)))
	out = in[0]
	for _, b := range buf {
		if b != v {
			return false
		}
	}
	return out == -3
}

// TestCurrent checks the context prologue: it runs on the thread of the call, calls Set
// only when the context differs, and a failing Get or Set is the call's result.
func TestCurrent(t *testing.T) {
	fake(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var g, s int32
	counts := func() (int32, int32) {
		fakeCounts.Call(uintptr(unsafe.Pointer(&g)), uintptr(unsafe.Pointer(&s)))
		return g, s
	}
	counts()
	if got := fakeCurrent.CallIn(&cur, 0x1234); got != 0x1234 {
		t.Errorf("current context %#x after CallIn, want 0x1234", got)
	}
	if g, s := counts(); g != 1 || s != 1 {
		t.Errorf("first CallIn: %d gets, %d sets; want 1, 1", g, s)
	}
	fakeCurrent.CallIn(&cur, 0x1234)
	if g, s := counts(); g != 1 || s != 0 {
		t.Errorf("CallIn with the context current: %d gets, %d sets; want 1, 0", g, s)
	}
	if r := int32(fakeSum9.CallIn(&cur, 0xbad, 1, 2, 3, 4, 5, 6, 7, 8, 9)); r != 201 {
		t.Errorf("CallIn with a failing Set returned %d, want its 201", r)
	}
	if r := int32(fakeSum9.CallIn(&curFails, 0x1234, 1, 2, 3, 4, 5, 6, 7, 8, 9)); r != 3 {
		t.Errorf("CallIn with a failing Get returned %d, want its 3", r)
	}
	if got := fakeCurrent.Call(); got != 0x1234 {
		t.Errorf("current context %#x after the failed calls, want 0x1234", got)
	}
}

func TestRepeatAndMake(t *testing.T) {
	fake(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	fakeCounter.Call()
	if r := fakeCountTo.CallInRepeat(10, &cur, 0x4321, 100); r != 0 {
		t.Errorf("10 calls of fake_count_to(100) returned %d", int32(r))
	}
	if n := fakeCounter.Call(); n != 10 {
		t.Errorf("CallInRepeat(10) made %d calls", n)
	}
	if r := fakeCountTo.CallInRepeat(10, &cur, 0x4321, 4); int32(r) != 5 {
		t.Errorf("fake_count_to(4) repeated returned %d, want 5", int32(r))
	}
	if n := fakeCounter.Call(); n != 4 {
		t.Errorf("CallInRepeat stopped after %d calls, want 4", n)
	}
	if got := fakeCurrent.Call(); got != 0x4321 {
		t.Errorf("current context %#x after CallInRepeat, want 0x4321", got)
	}
	if r := cur.Make(0x999); r != 0 {
		t.Errorf("Make returned %d", r)
	}
	if got := fakeCurrent.Call(); got != 0x999 {
		t.Errorf("current context %#x after Make, want 0x999", got)
	}
	if r := cur.Make(0xbad); int32(r) != 201 {
		t.Errorf("Make with a failing Set returned %d, want 201", int32(r))
	}
}

// TestCurrentConcurrent runs goroutines, each with a context of its own, over fewer
// threads: every call must see its own context current, so the prologue and the call
// run on one thread.
func TestCurrentConcurrent(t *testing.T) {
	fake(t)
	var wg sync.WaitGroup
	var bad atomic.Int64
	for g := range 16 {
		wg.Go(func() {
			ctx := uintptr(0x10000 + g)
			for i := range 2000 {
				if got := fakeCurrent.CallIn(&cur, ctx); got != ctx {
					bad.Add(1)
				}
				if i%100 == 0 {
					runtime.Gosched()
				}
			}
		})
	}
	wg.Wait()
	if n := bad.Load(); n != 0 {
		t.Errorf("%d calls saw another goroutine's context", n)
	}
}

// TestBlockingCallReleasesP blocks one goroutine in C for a second with GOMAXPROCS=1:
// another goroutine must run meanwhile, which it can only do if the blocked call gave
// its P back (as a cgo call does: runtime.cgocall, entersyscall).
func TestBlockingCallReleasesP(t *testing.T) {
	fake(t)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var returned atomic.Bool
	started := make(chan struct{})
	done := make(chan uintptr)
	go func() {
		close(started)
		r := fakeSleep.Call(1_000_000)
		returned.Store(true)
		done <- r
	}()
	<-started
	// Give the goroutine time to enter C, then do work that needs the P.
	time.Sleep(20 * time.Millisecond)
	ran := 0
	for range 10 {
		runtime.Gosched()
		time.Sleep(time.Millisecond)
		ran++
	}
	if returned.Load() {
		t.Errorf("the other goroutine ran only after the blocking C call returned: its P was not released")
	}
	if r := <-done; r != 1_000_000 || ran != 10 {
		t.Errorf("fake_sleep_us returned %d, ran %d", r, ran)
	}
}

func TestNoAllocations(t *testing.T) {
	fake(t)
	var g, s int32
	for name, f := range map[string]func(){
		"Call":      func() { fakeSum9.Call(1, 2, 3, 4, 5, 6, 7, 8, 9) },
		"CallIn":    func() { fakeSum9.CallIn(&cur, 0x55, 1, 2, 3, 4, 5, 6, 7, 8, 9) },
		"stack out": func() { fakeCounts.Call(uintptr(unsafe.Pointer(&g)), uintptr(unsafe.Pointer(&s))) },
		"Noop":      dl.Noop,
	} {
		if n := testing.AllocsPerRun(1000, f); n != 0 {
			t.Errorf("%s allocates %v times per call", name, n)
		}
	}
}

func TestMechanism(t *testing.T) {
	want := map[string]bool{"cgo": true, "purego": true, "": true}
	if !want[dl.Mechanism] || dl.Available != (dl.Mechanism != "") {
		t.Errorf("Mechanism %q, Available %v", dl.Mechanism, dl.Available)
	}
	t.Logf("mechanism %q on %s/%s", dl.Mechanism, runtime.GOOS, runtime.GOARCH)
}

// BenchmarkCall times one crossing into C and back: an empty C function (Noop), a C
// function reading a thread-local (fake_current, like cuCtxGetCurrent), the same after
// the context prologue (CallIn, the CUDA driver's per-call check), and, in the build's
// other mechanisms, the same calls through them (calls_*_test.go).
func BenchmarkCall(b *testing.B) {
	fake(b)
	b.Run("noop", func(b *testing.B) {
		for b.Loop() {
			dl.Noop()
		}
	})
	b.Run("get", func(b *testing.B) {
		for b.Loop() {
			fakeCurrent.Call()
		}
	})
	b.Run("get-in-context", func(b *testing.B) {
		fakeCurrent.CallIn(&cur, 0x77)
		for b.Loop() {
			fakeCurrent.CallIn(&cur, 0x77)
		}
	})
	b.Run("sum9", func(b *testing.B) {
		for b.Loop() {
			fakeSum9.Call(1, 2, 3, 4, 5, 6, 7, 8, 9)
		}
	})
	benchOther(b)
}
