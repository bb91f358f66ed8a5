package cu

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/internal/dl"
	"github.com/go-gpu/gpu/internal/dl/dltest"
)

// The tests load a fake driver (testdata/fakecuda.c), compiled by the C compiler (run as
// a program, so the tests run with and without cgo: the same tests check both
// bindings) and named by GPU_CUDA_LIBRARY. Each entry point of the fake records its
// call as the C function received it, read back through fake_last. The driver is loaded
// once per process: the failures to load run in a child process.

const childEnv = "CU_TEST_CHILD"

var (
	fakePath, fakeSkip string

	// The fake's own entry points, for the tests.
	fake          dl.Table
	fakeLast      = fake.Func("fake_last")
	fakeSets      = fake.Func("fake_sets")
	fakeLaunches  = fake.Func("fake_launches")
	fakeHostFn    = fake.Func("fake_hostfn")
	fakeBindOnce  sync.Once
	fakeBindError error
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "cu-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if dl.Available {
		fakePath, fakeSkip = dltest.Build(filepath.Join("testdata", "fakecuda.c"), dir, "libcuda-fake.so.1")
	} else {
		fakeSkip = "this build cannot load libraries (Binding is \"\")"
	}
	if fakePath != "" {
		os.Setenv("GPU_CUDA_LIBRARY", fakePath)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// needFake loads the fake driver, or skips.
func needFake(t testing.TB) {
	t.Helper()
	if fakePath == "" {
		t.Skip(fakeSkip)
	}
	if err := Load(); err != nil {
		t.Fatal(err)
	}
	fakeBindOnce.Do(func() {
		lib, err := dl.Open(fakePath)
		if err == nil {
			err = fake.Bind(lib)
		}
		fakeBindError = err
	})
	if fakeBindError != nil {
		t.Fatal(fakeBindError)
	}
}

// last returns the fake's record of the calling thread's last call: lock the goroutine
// to its thread around the call and last.
func last() string { return dl.GoString(fakeLast.Call()) }

// locked runs f with the goroutine locked to its thread and the context current.
func locked(t *testing.T, f func(c Context)) {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c, err := Device(1).PrimaryCtxRetain()
	if err != nil {
		t.Fatal(err)
	}
	f(c)
}

// cx formats v as the fake does (C's %#llx: "0" for zero).
func cx(v uint64) string {
	if v == 0 {
		return "0"
	}
	return fmt.Sprintf("%#x", v)
}

func wantLast(t *testing.T, want string) {
	t.Helper()
	if got := last(); got != want {
		t.Errorf("the driver saw\n\t%s\nwant\n\t%s", got, want)
	}
}

func wantCode(t *testing.T, err error, code Result, sentinel error) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Code != code || (sentinel != nil && !errors.Is(err, sentinel)) {
		t.Fatalf("error %v, want code %d matching %v", err, code, sentinel)
	}
	return e
}

func TestLoad(t *testing.T) {
	needFake(t)
	if got := LibraryPath(); got != fakePath {
		t.Errorf("LibraryPath() = %q, want %q", got, fakePath)
	}
	if v, err := DriverVersion(); v != 13000 || err != nil {
		t.Errorf("DriverVersion() = %d, %v", v, err)
	}
	if Binding != dl.Mechanism || !Available {
		t.Errorf("Binding %q, Available %v", Binding, Available)
	}
	t.Logf("binding %q", Binding)
}

func TestDevice(t *testing.T) {
	needFake(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if n, err := DeviceCount(); n != 2 || err != nil {
		t.Errorf("DeviceCount() = %d, %v", n, err)
	}
	d, err := DeviceGet(1)
	if d != 1 || err != nil {
		t.Errorf("DeviceGet(1) = %d, %v", d, err)
	}
	_, err = DeviceGet(-1)
	e := wantCode(t, err, ErrorInvalidDevice, backend.ErrNoDevice)
	if e.Name != "CUDA_ERROR_INVALID_DEVICE" || e.Message != "fake: invalid device ordinal" || e.Op != "cuDeviceGet" {
		t.Errorf("DeviceGet(-1) error %+v", e)
	}
	wantLast(t, "cuDeviceGet ctx=0 0xffffffffffffffff")
	if s, err := d.Name(); s != "Fake GPU 1" || err != nil {
		t.Errorf("Name() = %q, %v", s, err)
	}
	wantLast(t, "cuDeviceGetName ctx=0 0x100 0x1")
	if s, err := d.PCIBusID(); s != "0000:1a:00.0" || err != nil {
		t.Errorf("PCIBusID() = %q, %v", s, err)
	}
	if v, err := d.Attribute(AttrMultiprocessorCount); v != 161 || err != nil {
		t.Errorf("Attribute(AttrMultiprocessorCount) = %d, %v", v, err)
	}
	if v, err := d.TotalMem(); v != 80<<30+1 || err != nil {
		t.Errorf("TotalMem() = %d, %v", v, err)
	}
	if ok, err := d.CanAccessPeer(0); !ok || err != nil {
		t.Errorf("CanAccessPeer(0) = %v, %v", ok, err)
	}
	wantLast(t, "cuDeviceCanAccessPeer ctx=0 0x1 0")
	if c, err := d.PrimaryCtxRetain(); c != 0xC0001 || err != nil {
		t.Errorf("PrimaryCtxRetain() = %#x, %v", c, err)
	}
	if p, err := d.DefaultMemPool(); p != 0x9001 || err != nil {
		t.Errorf("DefaultMemPool() = %#x, %v", p, err)
	}
	if err := d.PrimaryCtxRelease(); err != nil {
		t.Error(err)
	}
	wantLast(t, "cuDevicePrimaryCtxRelease ctx=0 0x1")
}

// TestContextMadeCurrent checks that a call with a context makes it current on the
// thread first, in the same crossing, and only when it is not.
func TestContextMadeCurrent(t *testing.T) {
	needFake(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := Context(0).SetCurrent(); err != nil {
		t.Fatal(err)
	}
	fakeSets.Call()
	c := Context(0xC0001)
	s, err := c.StreamCreate(StreamNonBlocking)
	if s != 0x5000 || err != nil {
		t.Fatalf("StreamCreate = %#x, %v", s, err)
	}
	wantLast(t, "cuStreamCreate ctx=0xc0001 0x1")
	if n := fakeSets.Call(); n != 1 {
		t.Errorf("%d cuCtxSetCurrent calls for the first call, want 1", n)
	}
	for range 3 {
		c.StreamQuery(s)
	}
	if n := fakeSets.Call(); n != 0 {
		t.Errorf("%d cuCtxSetCurrent calls with the context current, want 0", n)
	}
	if cur, err := CurrentContext(); cur != c || err != nil {
		t.Errorf("CurrentContext() = %#x, %v", cur, err)
	}
	// A context the driver refuses: the call is not made.
	_, err = Context(0xBAD).StreamCreate(0)
	wantCode(t, err, ErrorInvalidContext, backend.ErrInvalidValue)
	wantLast(t, "cuStreamQuery ctx=0xc0001 0x5000")
	// EnsureOnly makes the context current and calls nothing else.
	if err := Context(0xC0000).EnsureOnly(); err != nil {
		t.Fatal(err)
	}
	if cur, _ := CurrentContext(); cur != 0xC0000 {
		t.Errorf("current context %#x after EnsureOnly, want 0xc0000", cur)
	}
	wantCode(t, Context(0xBAD).EnsureOnly(), ErrorInvalidContext, nil)
	GetCurrentRaw()
	Noop()
}

// TestContextConcurrent runs goroutines over two contexts: each call must find its own
// context current, whatever thread it runs on.
func TestContextConcurrent(t *testing.T) {
	needFake(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			c := Context(0xC0000 + g%2)
			for range 500 {
				runtime.LockOSThread()
				c.StreamSynchronize(7)
				got := last()
				runtime.UnlockOSThread()
				if want := fmt.Sprintf("cuStreamSynchronize ctx=%#x 0x7", uintptr(c)); got != want {
					errs <- fmt.Errorf("goroutine %d: the driver saw %q, want %q", g, got, want)
					return
				}
				runtime.Gosched()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestStreamsAndEvents(t *testing.T) {
	needFake(t)
	locked(t, func(c Context) {
		for _, q := range []struct {
			h     uintptr
			ready bool
			code  Result
		}{{0x5000, true, 0}, {0x5010, false, 0}, {0xBAD, false, ErrorInvalidHandle}} {
			ok, err := c.StreamQuery(Stream(q.h))
			if ok != q.ready || (q.code == 0) != (err == nil) {
				t.Errorf("StreamQuery(%#x) = %v, %v", q.h, ok, err)
			}
			ok, err = c.EventQuery(Event(q.h))
			if ok != q.ready || (q.code == 0) != (err == nil) {
				t.Errorf("EventQuery(%#x) = %v, %v", q.h, ok, err)
			}
			if q.code != 0 {
				wantCode(t, err, q.code, backend.ErrInvalidValue)
			}
		}
		e, err := c.EventCreate(EventBlockingSync | EventDisableTiming)
		if e != 0xE003 || err != nil {
			t.Errorf("EventCreate = %#x, %v", e, err)
		}
		if err := c.EventRecord(e, 0x5000); err != nil {
			t.Error(err)
		}
		wantLast(t, "cuEventRecord ctx=0xc0001 0xe003 0x5000")
		if err := c.StreamWaitEvent(0x5000, e); err != nil {
			t.Error(err)
		}
		wantLast(t, "cuStreamWaitEvent ctx=0xc0001 0x5000 0xe003 0")
		if ms, err := c.EventElapsedTime(0xE001, e); ms != 1.25 || err != nil {
			t.Errorf("EventElapsedTime = %v, %v", ms, err)
		}
		wantLast(t, "cuEventElapsedTime ctx=0xc0001 0xe001 0xe003")
		if err := c.EventSynchronize(e); err != nil {
			t.Error(err)
		}
		e700 := wantCode(t, c.EventSynchronize(0xFA17), ErrorIllegalAddress, backend.ErrLaunchFailed)
		if !Sticky(e700.Code) || e700.Name != "CUDA_ERROR_ILLEGAL_ADDRESS" {
			t.Errorf("fault %+v", e700)
		}
		if err := c.EventDestroy(e); err != nil {
			t.Error(err)
		}
		if err := c.StreamSynchronize(0x5000); err != nil {
			t.Error(err)
		}
		if err := c.Synchronize(); err != nil {
			t.Error(err)
		}
		wantLast(t, "cuCtxSynchronize ctx=0xc0001")
		if err := c.SetLimit(LimitMaxL2FetchGranularity, 32); err != nil {
			t.Error(err)
		}
		wantLast(t, "cuCtxSetLimit ctx=0xc0001 0x5 0x20")
		if v, err := c.Limit(LimitMaxL2FetchGranularity); err != nil || v != 32 {
			t.Errorf("Limit: %d, %v; want 32", v, err)
		}
		wantLast(t, "cuCtxGetLimit ctx=0xc0001 0x5")
		wantCode(t, c.StreamDestroy(0xBAD), ErrorInvalidHandle, nil)
		if err := c.EnablePeerAccess(0xC0000); err != nil {
			t.Error(err)
		}
		wantLast(t, "cuCtxEnablePeerAccess ctx=0xc0001 0xc0000 0")
		if err := c.EnablePeerAccess(0xC0000); err != nil {
			t.Errorf("EnablePeerAccess when enabled: %v, want nil", err)
		}
	})
}

func TestMemory(t *testing.T) {
	needFake(t)
	locked(t, func(c Context) {
		if p, err := c.MemAlloc(1234); p != 0xD0000000+1234 || err != nil {
			t.Errorf("MemAlloc = %#x, %v", p, err)
		}
		if p, err := c.MemAllocAsync(1<<40, 0x5000); p != 0xD1000000+1<<40 || err != nil {
			t.Errorf("MemAllocAsync = %#x, %v", p, err)
		}
		wantLast(t, "cuMemAllocAsync ctx=0xc0001 0x10000000000 0x5000")
		if err := c.MemFreeAsync(0xD1000010, 0x5000); err != nil {
			t.Error(err)
		}
		wantLast(t, "cuMemFreeAsync ctx=0xc0001 0xd1000010 0x5000")
		if err := c.MemPoolSetAttribute(0x9001, MemPoolReleaseThreshold, math.MaxUint64-5); err != nil {
			t.Error(err)
		}
		if v, err := c.MemPoolGetAttribute(0x9001, MemPoolReleaseThreshold); v != math.MaxUint64-5 || err != nil {
			t.Errorf("MemPoolGetAttribute = %#x, %v", v, err)
		}
		if err := c.MemPoolTrimTo(0x9001, 1<<33); err != nil {
			t.Error(err)
		}
		wantLast(t, "cuMemPoolTrimTo ctx=0xc0001 0x9001 0x200000000")
		if err := c.MemPoolSetAccessDevice(0x9001, 0); err != nil {
			t.Error(err)
		}
		wantLast(t, "cuMemPoolSetAccess ctx=0xc0001 0x9001 0x1 0 0x3 0x1")
		h, err := c.MemHostAlloc(64, MemHostAllocPortable|MemHostAllocDeviceMap)
		if h == nil || err != nil {
			t.Fatalf("MemHostAlloc = %v, %v", h, err)
		}
		wantLast(t, "cuMemHostAlloc ctx=0xc0001 0x40 0x3")
		b := unsafe.Slice((*byte)(h), 64)
		for i := range b {
			if b[i] != 0 {
				t.Fatal("pinned memory not as the driver made it")
			}
			b[i] = byte(i)
		}
		d, err := c.MemHostGetDevicePointer(h)
		if uintptr(d) != uintptr(h) || err != nil || HostPointer(d) != h {
			t.Errorf("MemHostGetDevicePointer = %#x, %v; HostPointer = %v", d, err, HostPointer(d))
		}
		if err := c.MemFreeHost(h); err != nil {
			t.Error(err)
		}
		m, err := c.MemAllocManaged(16)
		if m == 0 || err != nil {
			t.Errorf("MemAllocManaged = %#x, %v", m, err)
		}
		wantLast(t, "cuMemAllocManaged ctx=0xc0001 0x10 0x1")
		if err := c.MemFree(m); err != nil {
			t.Error(err)
		}
		if f, tot, err := c.MemGetInfo(); f != 1<<30 || tot != 80<<30 || err != nil {
			t.Errorf("MemGetInfo = %d, %d, %v", f, tot, err)
		}
	})
}

func TestCopies(t *testing.T) {
	needFake(t)
	locked(t, func(c Context) {
		src := make([]byte, 1000+rand.IntN(1000))
		for i := range src {
			src[i] = byte(rand.Uint32())
		}
		var sum uint64
		for _, v := range src {
			sum = sum*31 + uint64(v)
		}
		if err := c.MemcpyHtoDAsync(0xD0000100, unsafe.Pointer(&src[0]), int64(len(src)), 0x5000); err != nil {
			t.Error(err)
		}
		wantLast(t, fmt.Sprintf("cuMemcpyHtoDAsync ctx=0xc0001 0xd0000100 %#x %#x 0x5000", sum, len(src)))
		dst := make([]byte, 300)
		for i := range dst {
			dst[i] = 0xEE // poison
		}
		if err := c.MemcpyDtoHAsync(unsafe.Pointer(&dst[0]), 0xD00001A7, 299, 0x5000); err != nil {
			t.Error(err)
		}
		for i, v := range dst {
			if want := byte(0xA7); i == 299 {
				want = 0xEE
				if v != want {
					t.Errorf("byte %d after a copy of 299 = %#x, want %#x", i, v, want)
				}
			} else if v != want {
				t.Fatalf("byte %d = %#x, want %#x", i, v, want)
			}
		}
		if err := c.MemcpyDtoDAsync(1, 2, 3, 4); err != nil {
			t.Error(err)
		}
		wantLast(t, "cuMemcpyDtoDAsync ctx=0xc0001 0x1 0x2 0x3 0x4")
		if err := c.Memcpy2DDtoDAsync(0xD0, 0x200, 0xD8, 0x100, 0x80, 7, 4); err != nil {
			t.Error(err)
		}
		wantLast(t, "cuMemcpy2DAsync ctx=0xc0001 0x2 0xd8 0x100 0x2 0xd0 0x200 0x80 0x7 0x4")
		if err := c.MemcpyAsync(5, 6, 7, 8); err != nil {
			t.Error(err)
		}
		wantLast(t, "cuMemcpyAsync ctx=0xc0001 0x5 0x6 0x7 0x8")
		if err := c.MemcpyPeerAsync(0xD1, 0xC0000, 0xD2, 0xC0001, 1<<36, 0x5000); err != nil {
			t.Error(err)
		}
		wantLast(t, "cuMemcpyPeerAsync ctx=0xc0001 0xd1 0xc0000 0xd2 0xc0001 0x1000000000 0x5000")
		for _, w := range []struct {
			width int
			want  string
		}{
			{1, "cuMemsetD8Async ctx=0xc0001 0xd0 0xcd 0x10 0x5000"},
			{2, "cuMemsetD16Async ctx=0xc0001 0xd0 0xabcd 0x10 0x5000"},
			{4, "cuMemsetD32Async ctx=0xc0001 0xd0 0x1234abcd 0x10 0x5000"},
		} {
			if err := c.MemsetAsync(0xD0, 0x1234ABCD, w.width, 16, 0x5000); err != nil {
				t.Error(err)
			}
			wantLast(t, w.want)
		}
		wantCode(t, c.MemsetAsync(0xD0, 1, 3, 16, 0x5000), ErrorInvalidValue, backend.ErrInvalidValue)
	})
}

func TestModules(t *testing.T) {
	needFake(t)
	locked(t, func(c Context) {
		m, err := c.ModuleLoadData([]byte("good ptx\x00"))
		if m != 8 || err != nil {
			t.Errorf("ModuleLoadData = %#x, %v", m, err)
		}
		wantLast(t, "cuModuleLoadDataEx ctx=0xc0001 0x8 0x2 0x5 0x6 0x2000")
		_, err = c.ModuleLoadData([]byte("bad ptx text\x00"))
		e := wantCode(t, err, ErrorInvalidPTX, backend.ErrInvalidValue)
		if e.Detail != "fake ptxas: syntax error in line 1 of bad ptx te" {
			t.Errorf("JIT log %q", e.Detail)
		}
		_, err = c.ModuleLoadData(nil)
		wantCode(t, err, ErrorInvalidImage, backend.ErrInvalidValue)
		f, err := c.ModuleGetFunction(m, "kernel_a")
		if f < 0xF0000 || err != nil {
			t.Errorf("ModuleGetFunction = %#x, %v", f, err)
		}
		wantLast(t, "cuModuleGetFunction ctx=0xc0001 0x8 0x8")
		_, err = c.ModuleGetFunction(m, "missing")
		if e := wantCode(t, err, ErrorNotFound, backend.ErrInvalidValue); e.Detail != "missing" {
			t.Errorf("Detail %q", e.Detail)
		}
		if v, err := c.FuncGetAttribute(f, FuncNumRegs); v != 36 || err != nil {
			t.Errorf("FuncGetAttribute = %d, %v", v, err)
		}
		if err := c.FuncSetAttribute(f, FuncMaxDynamicSharedMem, -5); err != nil {
			t.Error(err)
		}
		wantLast(t, fmt.Sprintf("cuFuncSetAttribute ctx=0xc0001 %#x 0x8 0xfffffffffffffffb", f))
		if n, err := c.OccupancyMaxActiveBlocks(f, 256, 1<<12); n != 8 || err != nil {
			t.Errorf("OccupancyMaxActiveBlocks = %d, %v", n, err)
		}
		wantLast(t, fmt.Sprintf("cuOccupancyMaxActiveBlocksPerMultiprocessor ctx=0xc0001 %#x 0x100 0x1000", f))
		if err := c.ModuleUnload(m); err != nil {
			t.Error(err)
		}
		wantCode(t, c.ModuleUnload(0xBAD), ErrorInvalidHandle, nil)
	})
}

// TestLaunch launches the fake kernel with n 8-byte parameters, n below and above the
// array kept on the stack: the fake reads each through kernelParams.
func TestLaunch(t *testing.T) {
	needFake(t)
	locked(t, func(c Context) {
		for _, n := range []int{0, 1, 3, 24, 25, 40} {
			blob := make([]byte, 8*n+16)
			offs := make([]int32, n)
			var w uint64
			for i := range offs {
				offs[i] = int32(8 * (i + 1)) // one word of padding first
				v := rand.Uint64()
				*(*uint64)(unsafe.Pointer(&blob[offs[i]])) = v
				w += uint64(i+1) * v
			}
			orig := append([]byte(nil), blob...)
			err := c.LaunchKernel(Function(n), [3]uint32{7, 8, 9}, [3]uint32{128, 2, 1}, 4096, 0x5000, blob, offs)
			if err != nil {
				t.Fatal(err)
			}
			wantLast(t, fmt.Sprintf("cuLaunchKernel ctx=0xc0001 %s 0x7 0x8 0x9 0x80 0x2 0x1 0x1000 0x5000 %s 0", cx(uint64(n)), cx(w)))
			if string(orig) != string(blob) {
				t.Errorf("%d parameters: the blob changed", n)
			}
		}
		wantCode(t, c.LaunchKernel(0xBAD, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, 0, nil, nil), ErrorInvalidHandle, nil)
		fakeLaunches.Call()
		if err := c.RawLaunchLoop(0, 0x5000, 1000); err != nil {
			t.Fatal(err)
		}
		if n := fakeLaunches.Call(); n != 1000 {
			t.Errorf("RawLaunchLoop(1000) launched %d times", n)
		}
		wantLast(t, "cuLaunchKernel ctx=0xc0001 0 0x1 0x1 0x1 0x1 0x1 0x1 0 0x5000 0 0")
		wantCode(t, c.RawLaunchLoop(0xBAD, 0, 10), ErrorInvalidHandle, nil)
		if n := fakeLaunches.Call(); n != 1 {
			t.Errorf("RawLaunchLoop of a failing launch went on: %d launches", n)
		}
	})
}

// TestGraphs captures, instantiates, launches, updates and destroys graphs on the
// fake, and calls the other entry points of issue #22 (host functions, a stream's
// context).
func TestGraphs(t *testing.T) {
	needFake(t)
	locked(t, func(c Context) {
		if err := c.StreamBeginCapture(0x5000, StreamCaptureModeRelaxed); err != nil {
			t.Fatal(err)
		}
		wantLast(t, "cuStreamBeginCapture ctx=0xc0001 0x5000 0x2")
		for want := GraphNode(0x7001); want <= 0x7002; want++ {
			n, err := c.StreamLastCaptured(0x5000)
			if n != want || err != nil {
				t.Errorf("StreamLastCaptured = %#x, %v; want %#x", n, err, want)
			}
		}
		wantLast(t, "cuStreamGetCaptureInfo_v3 ctx=0xc0001 0x5000")
		g, err := c.StreamEndCapture(0x5000)
		if g != 0x6000 || err != nil {
			t.Fatalf("StreamEndCapture = %#x, %v", g, err)
		}
		e, err := c.GraphInstantiate(g, 0)
		if e != 0x6100 || err != nil {
			t.Fatalf("GraphInstantiate = %#x, %v", e, err)
		}
		wantLast(t, "cuGraphInstantiateWithFlags ctx=0xc0001 0x6000 0")
		if err := c.GraphLaunch(e, 0x5001); err != nil {
			t.Error(err)
		}
		wantLast(t, "cuGraphLaunch ctx=0xc0001 0x6100 0x5001")
		wantCode(t, c.GraphLaunch(0xBAD, 0x5001), ErrorInvalidHandle, backend.ErrInvalidValue)
		// The node update reads the parameters as a launch does, below and above the
		// addresses kept on the stack.
		for _, n := range []int{0, 2, 30} {
			blob := make([]byte, 8*n)
			offs := make([]int32, n)
			var w uint64
			for i := range offs {
				offs[i] = int32(8 * i)
				v := rand.Uint64()
				*(*uint64)(unsafe.Pointer(&blob[offs[i]])) = v
				w += uint64(i+1) * v
			}
			if err := c.GraphExecKernelNodeSetParams(e, 0x7001, Function(n), [3]uint32{3, 2, 1}, [3]uint32{64, 1, 1}, 128, blob, offs); err != nil {
				t.Fatal(err)
			}
			wantLast(t, fmt.Sprintf("cuGraphExecKernelNodeSetParams ctx=0xc0001 0x6100 0x7001 %s 0x3 0x2 0x1 0x40 0x1 0x1 0x80 %s 0 0 0", cx(uint64(n)), cx(w)))
		}
		if err := c.GraphExecDestroy(e); err != nil {
			t.Error(err)
		}
		wantLast(t, "cuGraphExecDestroy ctx=0xc0001 0x6100")
		if err := c.GraphDestroy(g); err != nil {
			t.Error(err)
		}
		wantLast(t, "cuGraphDestroy ctx=0xc0001 0x6000")
		// An invalidated capture, and one never begun.
		if _, err := c.StreamEndCapture(0x5020); !errors.Is(err, backend.ErrNotSupported) {
			t.Errorf("StreamEndCapture of an invalidated capture: %v, want ErrNotSupported", err)
		}
		wantCode(t, func() error { _, err := c.StreamEndCapture(0xBAD); return err }(), ErrorCaptureUnmatched, backend.ErrInvalidValue)
		// A host function: the fake calls it at once.
		var word int32
		if err := c.LaunchHostFunc(0x5000, fakeHostFn.Addr(), uintptr(unsafe.Pointer(&word))); err != nil || word != 1 {
			t.Errorf("LaunchHostFunc: %v, the function ran %d times", err, word)
		}
		if sc, err := c.StreamContext(0x5001); sc != 0xC0001 || err != nil {
			t.Errorf("StreamContext = %#x, %v", sc, err)
		}
		if sc, err := c.StreamContext(0); sc != c || err != nil {
			t.Errorf("StreamContext(0) = %#x, %v", sc, err)
		}
		wantCode(t, func() error { _, err := c.StreamContext(0xBAD); return err }(), ErrorInvalidHandle, nil)
	})
}

// TestNoAllocations: the calls of the hot paths allocate nothing, out-parameters
// included (they stay on the stack: package dl's nosplit calls).
func TestNoAllocations(t *testing.T) {
	needFake(t)
	c := Context(0xC0001)
	blob := make([]byte, 24)
	offs := []int32{0, 8, 16}
	for name, f := range map[string]func(){
		"EventQuery":        func() { c.EventQuery(0xE000) },
		"EventRecord":       func() { c.EventRecord(0xE000, 0x5000) },
		"StreamWaitEvent":   func() { c.StreamWaitEvent(0x5000, 0xE000) },
		"MemAllocAsync":     func() { c.MemAllocAsync(64, 0x5000) },
		"LaunchKernel(0)":   func() { c.LaunchKernel(0, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, 0x5000, nil, nil) },
		"LaunchKernel(3)":   func() { c.LaunchKernel(3, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, 0x5000, blob, offs) },
		"StreamSynchronize": func() { c.StreamSynchronize(0x5001) },
		"EnsureOnly":        func() { c.EnsureOnly() },
	} {
		if n := testing.AllocsPerRun(1000, f); n != 0 {
			t.Errorf("%s allocates %v times per call", name, n)
		}
	}
}

// TestEveryEntryPointHasItsFunction reads api.go and cu.go: every entry point of the
// table is called (cuInit by Load, the others by cu.go's functions), and nothing calls
// an entry point that is not in the table (the compiler sees to the second; the first
// is what this checks).
func TestEveryEntryPointHasItsFunction(t *testing.T) {
	fset := token.NewFileSet()
	declared := map[string]bool{}
	apiFile, err := parser.ParseFile(fset, "api.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	ast.Inspect(apiFile, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok && len(vs.Values) == 1 {
			if call, ok := vs.Values[0].(*ast.CallExpr); ok {
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && fmt.Sprint(sel.X) == "api" {
					declared[vs.Names[0].Name] = true
				}
			}
		}
		return true
	})
	if len(declared) != len(api.Funcs()) {
		t.Fatalf("found %d entry points in api.go, the table has %d", len(declared), len(api.Funcs()))
	}
	cu, err := parser.ParseFile(fset, "cu.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	ast.Inspect(&ast.File{Decls: append(apiFile.Decls, cu.Decls...)}, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && (sel.Sel.Name == "Call" || sel.Sel.Name == "CallIn" || sel.Sel.Name == "CallInRepeat" || sel.Sel.Name == "Bound") {
				used[id.Name] = true
			}
		}
		return true
	})
	for name := range declared {
		if !used[name] {
			t.Errorf("entry point %s has no function in cu.go", name)
		}
	}
}

// TestLoadFailures loads in child processes: a missing library, and a library that is
// not the driver.
func TestLoadFailures(t *testing.T) {
	if !Available {
		t.Skip("this build cannot load libraries")
	}
	for _, c := range []struct{ lib, want string }{
		{"/nonexistent/libcuda.so.1", "no driver: /nonexistent/libcuda.so.1: cannot open shared object file"},
		{"libm.so.6", "too old: libm.so.6 lacks cuInit, cuDriverGetVersion"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestChildLoadFailure$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), childEnv+"=1", "GPU_CUDA_LIBRARY="+c.lib, "CU_TEST_WANT="+c.want, "GORACE=atexit_sleep_ms=0")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestChildLoadFailure") {
			t.Errorf("child with GPU_CUDA_LIBRARY=%s: %v\n%s", c.lib, err, out)
		}
	}
}

func TestChildLoadFailure(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("run by TestLoadFailures")
	}
	err := Load()
	if !errors.Is(err, backend.ErrNoDevice) || !strings.Contains(err.Error(), os.Getenv("CU_TEST_WANT")) {
		t.Fatalf("Load() = %v, want ErrNoDevice saying %q", err, os.Getenv("CU_TEST_WANT"))
	}
	if Load() != err {
		t.Error("a second Load returned another error")
	}
	if p := LibraryPath(); p != "" {
		t.Errorf("LibraryPath() = %q after a failed load", p)
	}
}

// BenchmarkCalls times the bindings' calls on the fake driver; the names are the same in
// every build, so that benchstat compares a cgo run with a CGO_ENABLED=0 one.
func BenchmarkCalls(b *testing.B) {
	needFake(b)
	b.Logf("binding %q", Binding)
	c := Context(0xC0001)
	blob := make([]byte, 24)
	offs := []int32{0, 8, 16}
	for _, bm := range []struct {
		name string
		f    func()
	}{
		{"Noop", Noop},
		{"GetCurrentRaw", GetCurrentRaw},
		{"EnsureOnly", func() { c.EnsureOnly() }},
		{"EventQuery", func() { c.EventQuery(0xE000) }},
		{"MemAllocAsync", func() { c.MemAllocAsync(64, 0x5000) }},
		{"LaunchKernel0", func() { c.LaunchKernel(0, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, 0x5000, nil, nil) }},
		{"LaunchKernel3", func() { c.LaunchKernel(3, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, 0x5000, blob, offs) }},
	} {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				bm.f()
			}
		})
	}
}

func TestUnavailable(t *testing.T) {
	if Available {
		t.Skip("this build can load the driver")
	}
	err := Load()
	if !errors.Is(err, backend.ErrNoDevice) || !strings.Contains(err.Error(), "cannot load the driver") {
		t.Fatalf("Load() = %v, want ErrNoDevice saying the build cannot load the driver", err)
	}
}
