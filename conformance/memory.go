package conformance

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/go-gpu/gpu"
)

// RunMemory runs the buffer tests: kinds, copies, tracking across streams, Free and
// the leak check.
func RunMemory(t *testing.T, d *gpu.Device) {
	k := Kernels(t, d)
	// The first unified and pinned allocations make the driver reserve device memory for
	// good (about 126 MiB on an H200 with driver 580): make them before the baseline.
	for _, alloc := range []func(int64) (*gpu.Buffer, error){d.AllocUnified, d.AllocPinned} {
		b, err := alloc(1 << 20)
		must(t, err)
		must(t, b.CopyFromHost(context.Background(), make([]byte, 1<<20)))
		must(t, k.AddU32(d.DefaultStream(), b, b, 1))
		must(t, b.HostAccess(context.Background(), gpu.Read, func([]byte) error { return nil }))
		must(t, b.Free())
	}
	free0 := settledFree(t, d)
	last := free0
	for _, tc := range []struct {
		name string
		f    func(*testing.T, *K)
	}{
		{"Kinds", testKinds}, {"CopyForms", testCopyForms},
		{"WriteThenReadOtherStream", testWriteRead}, {"WriteWaitsForReads", testWriteWaitsForReads},
		{"FreeWhileRead", testFreeWhileRead}, {"FreeAfterAsyncCopy", testFreeAfterAsyncCopy},
		{"DroppedReferences", testDropped}, {"Views", testViews}, {"Access", testAccess},
		{"Untracked", testUntracked}, {"UseAfterFree", testUseAfterFree},
		{"OutOfMemory", testOOM}, {"RandomStress", testRandomStress}, {"LargeCopies", CheckLargeCopies},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.f(t, k) })
		free := settledFree(t, d)
		t.Logf("free device memory after %s: %d bytes (%+d)%s", tc.name, free, free-last, poolStats(d))
		last = free
	}
	RunHostCopies(t, k)
	t.Run("NoLeak", func(t *testing.T) {
		free1 := settledFree(t, d)
		if free1 < free0 {
			t.Errorf("free device memory %d bytes after the memory tests, %d before: %d bytes leaked%s", free1, free0, free0-free1, poolStats(d))
			// Does a real driver synchronize let the pool release more?
			d.BackendDevice().Synchronize()
			d.TrimMemory(context.Background())
			free2, _, _ := d.MemInfo()
			t.Logf("after cuCtxSynchronize and a trim: %d bytes free (%+d)%s", free2, free2-free1, poolStats(d))
		}
	})
}

// poolStats describes the backend's memory pool, where it can.
func poolStats(d *gpu.Device) string {
	p, ok := d.BackendDevice().(interface {
		PoolReserved() (reserved, used uint64, err error)
	})
	if !ok {
		return ""
	}
	r, u, err := p.PoolReserved()
	if err != nil {
		return ""
	}
	return fmt.Sprintf("; pool reserved %d, used %d", r, u)
}

// settledFree collects garbage, waits for frees, trims the pool and returns free memory.
func settledFree(t *testing.T, d *gpu.Device) int64 {
	t.Helper()
	for range 3 {
		runtime.GC()
		time.Sleep(20 * time.Millisecond)
	}
	must(t, d.Synchronize(context.Background()))
	time.Sleep(20 * time.Millisecond) // host-side frees of pinned and unified memory
	must(t, d.TrimMemory(context.Background()))
	free, _, err := d.MemInfo()
	must(t, err)
	return free
}

func testKinds(t *testing.T, k *K) {
	const n = 3001
	vals := Random(n)
	for _, kind := range []gpu.MemKind{gpu.DeviceMem, gpu.UnifiedMem, gpu.PinnedMem} {
		t.Run(kind.String(), func(t *testing.T) {
			var b *gpu.Buffer
			var err error
			switch kind {
			case gpu.DeviceMem:
				b, err = k.D.Alloc(4 * n)
			case gpu.UnifiedMem:
				b, err = k.D.AllocUnified(4 * n)
			case gpu.PinnedMem:
				b, err = k.D.AllocPinned(4 * n)
			}
			must(t, err)
			defer b.Free()
			if b.Kind() != kind || b.Size() != 4*n {
				t.Fatalf("buffer of kind %v, size %d", b.Kind(), b.Size())
			}
			must(t, b.CopyFromHost(context.Background(), gpu.Bytes(vals)))
			s := stream(t, k.D)
			must(t, k.AddU32(s, b, b, 3))
			want := make([]uint32, n)
			for i, v := range vals {
				want[i] = v + 3
			}
			// A GPU's device memory has no host view; the PTX simulator's (simdev: a CUDA
			// device over host memory) has.
			if kind == gpu.DeviceMem && b.Kind() == gpu.DeviceMem && k.D.Backend() == "cuda" && k.D.Info().Name != "PTX simulator" {
				err := b.HostAccess(context.Background(), gpu.Read, func([]byte) error { return nil })
				if !errors.Is(err, gpu.ErrNotSupported) {
					t.Errorf("HostAccess of device memory = %v, want ErrNotSupported", err)
				}
			} else {
				// The host sees the kernel's result directly, after the tracked wait.
				var got []uint32
				must(t, b.HostAccess(context.Background(), gpu.Read, func(h []byte) error {
					got = append([]uint32(nil), bytesU32(h)...)
					return nil
				}))
				equalU32(t, "host view after a kernel", got, want)
				// A host write is seen by the next kernel.
				must(t, b.HostAccess(context.Background(), gpu.Write, func(h []byte) error {
					for i := range len(h) / 4 {
						binary.LittleEndian.PutUint32(h[4*i:], uint32(i))
					}
					return nil
				}))
				must(t, k.AddU32(s, b, b, 1))
				for i := range want {
					want[i] = uint32(i) + 1
				}
			}
			equalU32(t, "copied back", U32s(t, b), want)
		})
	}
}

func bytesU32(b []byte) []uint32 {
	out := make([]uint32, len(b)/4)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return out
}

func testCopyForms(t *testing.T, k *K) {
	ctx := context.Background()
	for _, n := range []int{0, 1, 255, 1 << 16, 1<<20 + 3} {
		vals := Random(n)
		a := alloc(t, k.D, 4*n)
		b := alloc(t, k.D, 4*n)
		must(t, a.CopyFromHost(ctx, gpu.Bytes(vals)))
		must(t, b.CopyFrom(ctx, a))
		out := make([]uint32, n)
		for i := range out {
			out[i] = 0xDEADBEEF
		}
		must(t, b.CopyToHost(ctx, gpu.Bytes(out)))
		equalU32(t, fmt.Sprintf("plain copies of %d words", n), out, vals)
		// Async forms on a side stream.
		s := stream(t, k.D)
		c := alloc(t, k.D, 4*n)
		vals2 := Random(n)
		must(t, s.CopyHtoD(c, gpu.Bytes(vals2)))
		must(t, s.CopyDtoD(b, c))
		out2 := make([]uint32, n)
		must(t, s.CopyDtoH(gpu.Bytes(out2), b))
		must(t, s.Synchronize(ctx))
		equalU32(t, fmt.Sprintf("async copies of %d words", n), out2, vals2)
		// Memset.
		if n > 0 {
			must(t, s.MemsetD32(c, 0x01020304))
			must(t, s.Synchronize(ctx))
			for i, v := range U32s(t, c) {
				if v != 0x01020304 {
					t.Fatalf("MemsetD32: word %d = %#x", i, v)
				}
			}
		}
	}
	// Sizes that don't fit are errors.
	a := alloc(t, k.D, 16)
	if err := a.CopyFromHost(ctx, make([]byte, 17)); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("copying 17 bytes into 16 = %v", err)
	}
	if err := a.CopyToHost(ctx, make([]byte, 17)); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("copying 17 bytes out of 16 = %v", err)
	}
	if err := a.CopyFrom(ctx, alloc(t, k.D, 8)); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("copying 8 bytes into 16 = %v", err)
	}
}

func testWriteRead(t *testing.T, k *K) {
	a, b := stream(t, k.D), stream(t, k.D)
	const n = 1 << 14
	vals := Random(n)
	src := Upload(t, k.D, vals)
	defer src.Free()
	x, y := alloc(t, k.D, 4*n), alloc(t, k.D, 4*n)
	// A slow write on a, then a read on b with no synchronization by the caller.
	must(t, k.SpinCopyU32(a, x, src, 50*time.Millisecond, nil))
	must(t, k.AddU32(b, y, x, 1))
	out := make([]uint32, n)
	must(t, b.CopyDtoH(gpu.Bytes(out), y))
	must(t, b.Synchronize(context.Background()))
	for i := range vals {
		vals[i]++
	}
	equalU32(t, "read on another stream after a slow write", out, vals)
}

func testWriteWaitsForReads(t *testing.T, k *K) {
	a, b, c := stream(t, k.D), stream(t, k.D), stream(t, k.D)
	const n = 1 << 12
	vals := Random(n)
	x := Upload(t, k.D, vals)
	defer x.Free()
	ra, rb := alloc(t, k.D, 4*n), alloc(t, k.D, 4*n)
	sa, sb, sc := alloc(t, k.D, 16), alloc(t, k.D, 16), alloc(t, k.D, 16)
	other := Upload(t, k.D, Random(n))
	defer other.Free()
	must(t, k.SpinCopyU32(a, ra, x, 60*time.Millisecond, sa)) // slow read of x
	must(t, k.SpinCopyU32(b, rb, x, time.Millisecond, sb))    // fast read of x
	must(t, k.SpinCopyU32(c, x, other, 0, sc))                // write of x
	must(t, k.D.Synchronize(context.Background()))
	ta, tb, tc := U64s(t, sa), U64s(t, sb), U64s(t, sc)
	if tc[0] < ta[1] || tc[0] < tb[1] {
		t.Errorf("the write started at %d, before the reads ended (%d, %d)", tc[0], ta[1], tb[1])
	}
	equalU32(t, "slow read", U32s(t, ra), vals)
	equalU32(t, "fast read", U32s(t, rb), vals)
}

func testFreeWhileRead(t *testing.T, k *K) {
	a := stream(t, k.D)
	const n = 1 << 14
	vals := Random(n)
	x := Upload(t, k.D, vals)
	out := alloc(t, k.D, 4*n)
	must(t, k.SpinCopyU32(a, out, x, 50*time.Millisecond, nil))
	must(t, x.Free())
	must(t, x.Free()) // idempotent
	y, err := k.D.Alloc(4 * n)
	must(t, err)
	defer y.Free()
	must(t, k.FillU32(k.D.DefaultStream(), y, 0xBADBAD))
	equalU32(t, "a read that outlived Free", U32s(t, out), vals)
}

func testFreeAfterAsyncCopy(t *testing.T, k *K) {
	side := stream(t, k.D)
	const n = 1 << 16
	vals := Random(n)
	x := Upload(t, k.D, vals)
	// Keep the side stream busy so the copy is still pending at Free.
	must(t, k.SpinFor(side, 30*time.Millisecond))
	host := make([]uint32, n)
	must(t, side.CopyDtoH(gpu.Bytes(host), x))
	must(t, x.Free())
	y, err := k.D.Alloc(4 * n)
	must(t, err)
	defer y.Free()
	must(t, k.FillU32(k.D.DefaultStream(), y, 0x5A5A5A5A))
	must(t, side.Synchronize(context.Background()))
	equalU32(t, "host copy made before Free", host, vals)
}

func testDropped(t *testing.T, k *K) {
	s := stream(t, k.D)
	const n = 1 << 14
	vals := Random(n)
	host := make([]uint32, n)
	func() {
		x := Upload(t, k.D, vals)
		y, err := k.D.Alloc(4 * n)
		must(t, err)
		must(t, k.SpinCopyU32(s, y, x, 50*time.Millisecond, nil))
		must(t, s.CopyDtoH(gpu.Bytes(host), y))
	}()
	for range 3 {
		runtime.GC()
	}
	must(t, s.Synchronize(context.Background()))
	equalU32(t, "result of work whose buffers were dropped", host, vals)
}

func testViews(t *testing.T, k *K) {
	a, b := stream(t, k.D), stream(t, k.D)
	const n = 1 << 12
	vals := Random(n)
	x := Upload(t, k.D, vals)
	defer x.Free()
	lo, err := x.Slice(0, 2*n)
	must(t, err)
	hi, err := x.Slice(2*n, 2*n)
	must(t, err)
	if _, err := x.Slice(1, 4*n); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("a slice past the end = %v", err)
	}
	if err := lo.Free(); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("Free of a view = %v", err)
	}
	// A slow write through a view on a; a read of the whole buffer on b waits for it.
	src := Upload(t, k.D, Random(n/2))
	defer src.Free()
	must(t, k.SpinCopyU32(a, hi, src, 40*time.Millisecond, nil))
	y := alloc(t, k.D, 4*n)
	must(t, k.AddU32(b, y, x, 0))
	want := append(append([]uint32(nil), vals[:n/2]...), U32s(t, src)...)
	equalU32(t, "whole buffer after a write through a view", U32s(t, y), want)
}

func testAccess(t *testing.T, k *K) {
	a, b := stream(t, k.D), stream(t, k.D)
	const n = 1 << 12
	vals := Random(n)
	src := Upload(t, k.D, vals)
	defer src.Free()
	x := alloc(t, k.D, 4*n)
	// Work enqueued with the raw pointer inside the scope is ordered like a launch.
	must(t, x.Access(a, gpu.Write, func(p gpu.DevicePtr) error {
		return a.Launch(k.SpinCopy, one, p, gpu.In(src), uint64(n), uint64(40*time.Millisecond), gpu.DevicePtr(0))
	}))
	y := alloc(t, k.D, 4*n)
	must(t, k.AddU32(b, y, x, 2))
	for i := range vals {
		vals[i] += 2
	}
	equalU32(t, "read after a write made inside Access", U32s(t, y), vals)
	// Using the buffer through the package inside its own scope is an error, not a hang.
	err := x.Access(a, gpu.Read, func(p gpu.DevicePtr) error {
		return k.AddU32(b, y, x, 1)
	})
	if !errors.Is(err, gpu.ErrInScope) {
		t.Errorf("using a buffer inside its own Access scope = %v, want ErrInScope", err)
	}
	// Another goroutine's use waits for the scope to end: not an error, not a hang.
	done := make(chan error, 1)
	must(t, x.Access(a, gpu.Read, func(gpu.DevicePtr) error {
		go func() { done <- k.AddU32(b, y, x, 3) }()
		select {
		case err := <-done:
			return fmt.Errorf("another goroutine used the buffer inside the scope (err %v)", err)
		case <-time.After(20 * time.Millisecond):
			return nil
		}
	}))
	must(t, <-done)
	for i := range vals {
		vals[i]++ // x + 3
	}
	equalU32(t, "a use from another goroutine after the scope", U32s(t, y), vals)
	// A panic inside a scope ends the scope: the buffer stays usable.
	u, err := k.D.AllocUnified(4 * n)
	must(t, err)
	defer u.Free()
	for _, buf := range []*gpu.Buffer{x, u} {
		func() {
			defer func() {
				if r := recover(); r != "boom" {
					t.Errorf("recovered %v, want the scope's panic", r)
				}
			}()
			if buf == u {
				_ = u.HostAccess(context.Background(), gpu.Write, func([]byte) error { panic("boom") })
			} else {
				_ = x.Access(a, gpu.Write, func(gpu.DevicePtr) error { panic("boom") })
			}
		}()
		done := make(chan error, 1)
		go func() { done <- k.AddU32(b, y, buf, 1) }()
		select {
		case err := <-done:
			must(t, err)
		case <-time.After(10 * time.Second):
			t.Fatalf("a use after a panic in a scope (unified %v) did not finish", buf == u)
		}
	}
	// The same for a host access scope.
	h, err := k.D.AllocPinned(64)
	must(t, err)
	defer h.Free()
	err = h.HostAccess(context.Background(), gpu.Write, func([]byte) error {
		return b.Memset(h, 7)
	})
	if !errors.Is(err, gpu.ErrInScope) {
		t.Errorf("using a buffer inside its own HostAccess scope = %v, want ErrInScope", err)
	}
}

func testUntracked(t *testing.T, k *K) {
	a, b := stream(t, k.D), stream(t, k.D)
	const n = 1 << 10
	src := Upload(t, k.D, Random(2*n))
	defer src.Free()
	must(t, k.D.DefaultStream().Synchronize(context.Background()))
	for _, tracked := range []bool{true, false} {
		x := alloc(t, k.D, 8*n)
		must(t, k.D.DefaultStream().Synchronize(context.Background()))
		must(t, x.SetTracking(tracked))
		lo, _ := x.Slice(0, 4*n)
		hi, _ := x.Slice(4*n, 4*n)
		srcLo, _ := src.Slice(0, 4*n)
		srcHi, _ := src.Slice(4*n, 4*n)
		sa, sb := alloc(t, k.D, 16), alloc(t, k.D, 16)
		must(t, k.SpinCopyU32(a, lo, srcLo, 50*time.Millisecond, sa))
		must(t, k.SpinCopyU32(b, hi, srcHi, 50*time.Millisecond, sb))
		must(t, k.D.Synchronize(context.Background()))
		ta, tb := U64s(t, sa), U64s(t, sb)
		overlap := tb[0] < ta[1] && ta[0] < tb[1]
		if tracked && overlap {
			t.Errorf("tracked writes to one buffer on two streams overlapped: [%d, %d] and [%d, %d]", ta[0], ta[1], tb[0], tb[1])
		}
		if !tracked && !overlap {
			t.Errorf("untracked writes to disjoint halves did not overlap: [%d, %d] and [%d, %d]", ta[0], ta[1], tb[0], tb[1])
		}
		equalU32(t, "halves written on two streams", U32s(t, x), U32s(t, src))
	}
}

func testUseAfterFree(t *testing.T, k *K) {
	x, err := k.D.Alloc(64)
	must(t, err)
	v, _ := x.Slice(0, 32)
	must(t, x.Free())
	s := k.D.DefaultStream()
	for name, err := range map[string]error{
		"launch":      k.FillU32(s, x, 1),
		"view launch": k.FillU32(s, v, 1),
		"copy in":     x.CopyFromHost(context.Background(), make([]byte, 8)),
		"copy out":    x.CopyToHost(context.Background(), make([]byte, 8)),
		"access":      x.Access(s, gpu.Read, func(gpu.DevicePtr) error { return nil }),
	} {
		if !errors.Is(err, gpu.ErrClosed) {
			t.Errorf("%s after Free = %v, want ErrClosed", name, err)
		}
	}
}

func testOOM(t *testing.T, k *K) {
	_, total, err := k.D.MemInfo()
	must(t, err)
	_, err = k.D.Alloc(4 * total)
	if !errors.Is(err, gpu.ErrOutOfMemory) {
		t.Fatalf("allocating 4x the device's memory = %v, want ErrOutOfMemory", err)
	}
	t.Logf("%v", err)
}

// testRandomStress runs random operations from many goroutines, each on its own stream,
// on shared buffers; a global lock decides the order in which they are enqueued, and the
// result must equal that order replayed sequentially on the host.
func testRandomStress(t *testing.T, k *K) {
	const buffers, n, goroutines = 6, 2048, 8
	ops := 60
	if testing.Short() {
		ops = 20
	}
	bufs := make([]*gpu.Buffer, buffers)
	ref := make([][]uint32, buffers)
	for i := range bufs {
		ref[i] = Random(n)
		bufs[i] = Upload(t, k.D, ref[i])
		defer bufs[i].Free()
	}
	var mu sync.Mutex
	errs := make(chan error, goroutines)
	for range goroutines {
		go func() {
			errs <- func() error {
				s, err := k.D.NewStream()
				if err != nil {
					return err
				}
				defer s.Close()
				for range ops {
					dst, src := rand.IntN(buffers), rand.IntN(buffers)
					v := rand.Uint32()
					spin := time.Duration(rand.IntN(3)) * 100 * time.Microsecond
					mu.Lock()
					switch rand.IntN(3) {
					case 0:
						err = k.AddU32(s, bufs[dst], bufs[src], v)
						for i := range ref[dst] {
							ref[dst][i] = ref[src][i] + v
						}
					case 1:
						if dst == src {
							err = k.FillU32(s, bufs[dst], v)
							for i := range ref[dst] {
								ref[dst][i] = v
							}
						} else {
							err = k.SpinCopyU32(s, bufs[dst], bufs[src], spin, nil)
							copy(ref[dst], ref[src])
						}
					case 2:
						if dst != src {
							err = s.CopyDtoD(bufs[dst], bufs[src])
							copy(ref[dst], ref[src])
						}
					}
					mu.Unlock()
					if err != nil {
						return err
					}
				}
				return nil
			}()
		}()
	}
	for range goroutines {
		must(t, <-errs)
	}
	must(t, k.D.Synchronize(context.Background()))
	for i, b := range bufs {
		equalU32(t, fmt.Sprintf("buffer %d after %d random operations", i, goroutines*ops), U32s(t, b), ref[i])
	}
}

// CheckLargeCopies checks the plain copies between buffers and pageable Go memory at
// sizes around the smallest that CUDA copies through pinned staging chunks (8 MiB, in
// chunks of half the copy up to 8 MiB): the data, the ordering after a write on another stream, views at an
// offset, and a context that ends while the copy waits (the copy returns its error and
// leaves the Go memory and the buffer alone). Part of the memory tests; exported for package gpu's tests
// of staging on the CPU backend.
func CheckLargeCopies(t *testing.T, k *K) {
	d := k.D
	ctx := context.Background()
	side, err := d.NewStream()
	must(t, err)
	defer side.Close()
	for _, words := range []int{64<<10 + 1, 2<<20 - 1, 2 << 20, 2<<20 + 1, 3<<20 + 3, 5<<20 + 7} {
		n := 4 * words
		vals := Random(words)
		x, err := d.Alloc(int64(n))
		must(t, err)
		y, err := d.Alloc(int64(n))
		must(t, err)
		// Host to device, then on another stream after a slow kernel y = x + 1: a copy
		// back must wait for it.
		must(t, x.CopyFromHost(ctx, gpu.Bytes(vals)))
		must(t, k.SpinFor(side, 20*time.Millisecond))
		must(t, k.AddU32(side, y, x, 1))
		got := make([]uint32, words)
		for i := range got {
			got[i] = 0xDEADBEEF
		}
		must(t, y.CopyToHost(ctx, gpu.Bytes(got)))
		for i, v := range vals {
			if got[i] != v+1 {
				t.Fatalf("%d words: y[%d] = %#x after y = x + 1 on another stream, want %#x", words, i, got[i], v+1)
			}
		}
		// A view at an odd word offset, both ways.
		off := int64(4 * (words / 3))
		view, err := x.Slice(off, int64(n)-off)
		must(t, err)
		part := Random(int(view.Size() / 4))
		must(t, view.CopyFromHost(ctx, gpu.Bytes(part)))
		back := make([]uint32, words)
		must(t, x.CopyToHost(ctx, gpu.Bytes(back)))
		for i := range back {
			want := vals[i]
			if j := i - int(off/4); j >= 0 {
				want = part[j]
			}
			if back[i] != want {
				t.Fatalf("%d words: x[%d] = %#x after a copy into the view at byte %d, want %#x", words, i, back[i], off, want)
			}
		}
		// A context that ends while the copy waits for a slow write on another stream:
		// the copy returns the context's error and never writes got (it waited on the
		// host, holding nothing); y is right once the device is done.
		cancelledDuring(t, d, fmt.Sprintf("%d words: CopyToHost with a context that ends during a slow write", words), func(spin time.Duration) error {
			for i := range got {
				got[i] = 0xDEADBEEF
			}
			must(t, k.SpinFor(side, spin))
			return k.AddU32(side, y, x, 2)
		}, func(cctx context.Context) error {
			return y.CopyToHost(cctx, gpu.Bytes(got))
		})
		must(t, d.Synchronize(ctx))
		for i := range got {
			if got[i] != 0xDEADBEEF {
				t.Fatalf("%d words: got[%d] = %#x after a cancelled CopyToHost: it wrote dst", words, i, got[i])
			}
		}
		must(t, y.CopyToHost(ctx, gpu.Bytes(got)))
		for i := range back {
			if got[i] != back[i]+2 {
				t.Fatalf("%d words: y[%d] = %#x after y = x + 2 on another stream, want %#x", words, i, got[i], back[i]+2)
			}
		}
		// The same for a copy into the device that a slow kernel's read delays: the
		// buffer keeps its old contents, and the slow reader reads them.
		fresh := Random(words)
		cancelledDuring(t, d, fmt.Sprintf("%d words: CopyFromHost with a context that ends during a slow read", words), func(spin time.Duration) error {
			// A copy that was not cancelled (see cancelledDuring) wrote y: put it back.
			must(t, y.CopyFromHost(ctx, gpu.Bytes(got)))
			return k.SpinCopyU32(side, x, y, spin, nil)
		}, func(cctx context.Context) error {
			return y.CopyFromHost(cctx, gpu.Bytes(fresh))
		})
		must(t, d.Synchronize(ctx))
		copied, now := U32s(t, x), U32s(t, y)
		for i := range fresh {
			if copied[i] != got[i] || now[i] != got[i] {
				t.Fatalf("%d words: word %d: the slow reader copied %#x (want %#x, the old value), the buffer holds %#x (want the old %#x: the copy was cancelled)", words, i, copied[i], got[i], now[i], got[i])
			}
		}
		must(t, y.CopyFromHost(ctx, gpu.Bytes(fresh)))
		equalU32(t, fmt.Sprintf("%d words copied in after the cancelled copy", words), U32s(t, y), fresh)
		must(t, x.Free())
		must(t, y.Free())
	}
}

// cancelledDuring checks that op, on d, given a context that ends 5 ms after it starts,
// returns context.DeadlineExceeded while slow work that start queued (spinning for the
// duration it is given, 50 ms first) still runs. A nil error counts against op only when
// the spin cannot have ended before op returned; otherwise the test goroutine was kept
// off a CPU for longer than the spin (a loaded CI machine under the race detector), so
// the work is waited for and the check repeated with a longer spin, up to 1.6 s.
func cancelledDuring(t *testing.T, d *gpu.Device, what string, start func(spin time.Duration) error, op func(context.Context) error) {
	t.Helper()
	for spin := 50 * time.Millisecond; ; spin *= 4 {
		t0 := time.Now()
		must(t, start(spin))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
		err := op(ctx)
		cancel()
		el := time.Since(t0)
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			return
		case err != nil || el < spin || spin >= 1600*time.Millisecond:
			t.Fatalf("%s (a %v spin; returned after %v): %v, want context.DeadlineExceeded", what, spin, el, err)
		}
		t.Logf("%s: returned %v after %v, past the %v spin: again with a longer one", what, err, el, spin)
		must(t, d.Synchronize(context.Background()))
	}
}
