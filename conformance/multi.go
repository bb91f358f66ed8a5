package conformance

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-gpu/gpu"
)

// RunMulti runs the tests of two devices of one backend: peer access, peer copies, and
// buffers of one device used on the other device's streams, ordered by the tracking
// with no explicit synchronization (cross-device event waits). On the CPU backend two
// devices made with gpu.NewDevice(cpu.New(0)) stand in for two GPUs.
//
// Tests that launch a kernel on one device with a buffer of the other need peer access
// from the first to the second; they enable it (EnablePeerAccess, one direction each)
// and are skipped where CanAccessPeer says no.
func RunMulti(t *testing.T, d0, d1 *gpu.Device) {
	if d0 == d1 {
		t.Fatal("RunMulti needs two distinct devices")
	}
	k0, k1 := Kernels(t, d0), Kernels(t, d1)
	// First: PeerAccess enables access both ways, for the rest of the process.
	t.Run("KernelNeedsPeerAccess", func(t *testing.T) { testKernelNeedsPeerAccess(t, k0, k1) })
	t.Run("PeerAccess", func(t *testing.T) { testPeerAccess(t, d0, d1) })
	t.Run("PeerCopyRoundTrip", func(t *testing.T) { testPeerCopyRoundTrip(t, k0, k1) })
	t.Run("WriteThenPeerRead", func(t *testing.T) { testWriteThenPeerRead(t, k0, k1) })
	t.Run("PeerReadThenWrite", func(t *testing.T) { testPeerReadThenWrite(t, k0, k1) })
	t.Run("EventAcrossDevices", func(t *testing.T) { testEventAcrossDevices(t, k0, k1) })
	t.Run("FreeWhilePeerReads", func(t *testing.T) { testFreeWhilePeerReads(t, k0, k1) })
	t.Run("FreeAfterPeerWrite", func(t *testing.T) { testFreeAfterPeerWrite(t, k0, k1) })
	// Last: where peer access does not reach the buffers (on CUDA, allocations from a
	// stream-ordered pool need cuMemPoolSetAccess besides cuCtxEnablePeerAccess), the
	// kernel faults, and the fault is sticky.
	t.Run("PeerKernel", func(t *testing.T) { testPeerKernel(t, k0, k1) })
}

// peerAccess enables access from d to peer, or skips the test.
func peerAccess(t *testing.T, d, peer *gpu.Device) {
	t.Helper()
	ok, err := d.CanAccessPeer(peer)
	must(t, err)
	if !ok {
		t.Skipf("%v cannot access %v", d, peer)
	}
	must(t, d.EnablePeerAccess(peer))
}

func testPeerAccess(t *testing.T, d0, d1 *gpu.Device) {
	for _, d := range []*gpu.Device{d0, d1} {
		if ok, err := d.CanAccessPeer(d); !ok || err != nil {
			t.Errorf("%v.CanAccessPeer(itself) = %v, %v; want true, nil", d, ok, err)
		}
		if err := d.EnablePeerAccess(d); err != nil {
			t.Errorf("%v.EnablePeerAccess(itself) = %v", d, err)
		}
	}
	if _, err := d0.CanAccessPeer(nil); err == nil {
		t.Error("CanAccessPeer(nil) gave no error")
	}
	if err := d0.EnablePeerAccess(nil); err == nil {
		t.Error("EnablePeerAccess(nil) gave no error")
	}
	for _, p := range [][2]*gpu.Device{{d0, d1}, {d1, d0}} {
		ok, err := p[0].CanAccessPeer(p[1])
		must(t, err)
		t.Logf("%v can access %v: %v", p[0], p[1], ok)
		if !ok {
			continue
		}
		// Twice: enabling access already enabled is not an error.
		for range 2 {
			if err := p[0].EnablePeerAccess(p[1]); err != nil {
				t.Errorf("%v.EnablePeerAccess(%v) = %v", p[0], p[1], err)
			}
		}
	}
}

// multiSize returns a large test size in bytes: 64 MiB + 12 on a GPU, 4 MiB + 12 on the CPU.
func multiSize(d *gpu.Device) int {
	if d.Backend() == "cpu" {
		return 4<<20 + 12
	}
	return 64<<20 + 12
}

// testPeerCopyRoundTrip copies d0 -> d1 on d0's stream, d1 -> d0 on d1's stream, and
// d0 -> d1 again with Buffer.CopyFrom, with no synchronization in between.
func testPeerCopyRoundTrip(t *testing.T, k0, k1 *K) {
	ctx := context.Background()
	s0, s1 := stream(t, k0.D), stream(t, k1.D)
	for _, n := range []int{0, 4, 4 * 1001, multiSize(k0.D)} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			vals := Random(n / 4)
			a := Upload(t, k0.D, vals)
			defer a.Free()
			b := alloc(t, k1.D, n)
			c := alloc(t, k0.D, n)
			must(t, s0.CopyDtoD(b, a)) // d0's stream writes a d1 buffer
			must(t, s1.CopyDtoD(c, b)) // d1's stream reads it and writes a d0 buffer
			d := alloc(t, k1.D, n)
			must(t, d.CopyFrom(ctx, c)) // d1's default stream reads the d0 buffer
			equalU32(t, "d0 -> d1 -> d0", U32s(t, c), vals)
			equalU32(t, "d0 -> d1 -> d0 -> d1", U32s(t, d), vals)
			equalU32(t, "d0 -> d1", U32s(t, b), vals)
		})
	}
}

// testWriteThenPeerRead writes a d0 buffer with a slow kernel on d0's stream, then reads
// it on d1's stream (a peer copy and, on d1, a kernel), with no explicit wait: the read
// must see the write.
func testWriteThenPeerRead(t *testing.T, k0, k1 *K) {
	s0, s1 := stream(t, k0.D), stream(t, k1.D)
	const n = 1 << 14
	vals := Random(n)
	src := Upload(t, k0.D, vals)
	defer src.Free()
	mid := alloc(t, k0.D, 4*n)
	out := alloc(t, k1.D, 4*n)
	sum := alloc(t, k1.D, 4*n)
	for range 3 {
		must(t, k0.SpinCopyU32(s0, mid, src, 30*time.Millisecond, nil))
		must(t, s1.CopyDtoD(out, mid))
		must(t, k1.AddU32(s1, sum, out, 5))
		got := make([]uint32, n)
		must(t, s1.CopyDtoH(gpu.Bytes(got), sum))
		must(t, s1.Synchronize(context.Background()))
		want := make([]uint32, n)
		for i, v := range vals {
			want[i] = v + 5
		}
		equalU32(t, "a d0 buffer read on d1's stream after a slow write on d0's", got, want)
		vals = Random(n)
		must(t, src.CopyFromHost(context.Background(), gpu.Bytes(vals)))
	}
}

// testPeerReadThenWrite reads a d0 buffer late on d1's stream (after a spin there), then
// overwrites it on d0's stream: the write must wait for the peer's read.
func testPeerReadThenWrite(t *testing.T, k0, k1 *K) {
	s0, s1 := stream(t, k0.D), stream(t, k1.D)
	const n = 1 << 14
	vals := Random(n)
	x := Upload(t, k0.D, vals)
	defer x.Free()
	out := alloc(t, k1.D, 4*n)
	must(t, s0.Synchronize(context.Background()))
	must(t, k1.SpinFor(s1, 40*time.Millisecond))
	must(t, s1.CopyDtoD(out, x)) // reads x once the spin is over
	must(t, k0.FillU32(s0, x, 0xA5A5A5A5))
	equalU32(t, "a d1 read of a d0 buffer overwritten later on d0's stream", U32s(t, out), vals)
	want := make([]uint32, n)
	for i := range want {
		want[i] = 0xA5A5A5A5
	}
	equalU32(t, "the overwrite", U32s(t, x), want)
}

// testKernelNeedsPeerAccess launches a kernel on d0 with a buffer of d1, before any
// test enables access from d0 to d1: the launch fails with ErrInvalidValue (on CUDA the kernel
// would fault), enqueues nothing, and the stream goes on working.
func testKernelNeedsPeerAccess(t *testing.T, k0, k1 *K) {
	s0 := stream(t, k0.D)
	const n = 1 << 10
	vals := Random(n)
	src := Upload(t, k1.D, vals) // on d1
	defer src.Free()
	dst := alloc(t, k0.D, 4*n)
	err := k0.AddU32(s0, dst, src, 1)
	if !errors.Is(err, gpu.ErrInvalidValue) {
		t.Fatalf("a kernel on %v with a buffer of %v, without peer access: %v, want ErrInvalidValue", k0.D, k1.D, err)
	}
	own := Upload(t, k0.D, vals)
	defer own.Free()
	must(t, k0.AddU32(s0, dst, own, 1))
	for i := range vals {
		vals[i]++
	}
	equalU32(t, "the stream after the refused launch", U32s(t, dst), vals)
}

// testPeerKernel launches a kernel on d1 that reads a d0 buffer written by a slow kernel
// on d0 and writes another d0 buffer, then reads that on d0: needs peer access from d1
// to d0.
func testPeerKernel(t *testing.T, k0, k1 *K) {
	peerAccess(t, k1.D, k0.D)
	s0, s1 := stream(t, k0.D), stream(t, k1.D)
	const n = 1<<16 + 3
	vals := Random(n)
	src := Upload(t, k0.D, vals)
	defer src.Free()
	mid := alloc(t, k0.D, 4*n)
	res := alloc(t, k0.D, 4*n)
	back := alloc(t, k0.D, 4*n)
	must(t, k0.SpinCopyU32(s0, mid, src, 30*time.Millisecond, nil))
	must(t, k1.AddU32(s1, res, mid, 9)) // a d1 kernel on two d0 buffers
	must(t, k0.AddU32(s0, back, res, 1))
	for i := range vals {
		vals[i] += 10
	}
	equalU32(t, "d0 -> kernel on d1 -> d0", U32s(t, back), vals)
}

// testEventAcrossDevices orders a stream of d1 after a stream of d0 with an event alone
// (untracked buffers).
func testEventAcrossDevices(t *testing.T, k0, k1 *K) {
	ctx := context.Background()
	s0, s1 := stream(t, k0.D), stream(t, k1.D)
	const n = 1 << 12
	vals := Random(n)
	src := Upload(t, k0.D, vals)
	defer src.Free()
	mid := alloc(t, k0.D, 4*n)
	out := alloc(t, k1.D, 4*n)
	for _, b := range []*gpu.Buffer{src, mid, out} {
		must(t, b.Device().Synchronize(ctx))
		must(t, b.SetTracking(false))
	}
	ev, err := k0.D.NewEvent(gpu.DisableTiming)
	must(t, err)
	defer ev.Close()
	must(t, k0.SpinCopyU32(s0, mid, src, 30*time.Millisecond, nil))
	must(t, s0.Record(ev))
	must(t, s1.WaitEvent(ev)) // a d1 stream waits for an event of d0
	must(t, s1.CopyDtoD(out, mid))
	must(t, s1.Synchronize(ctx))
	equalU32(t, "after a cross-device event wait", U32s(t, out), vals)
}

// testFreeWhilePeerReads frees a d0 buffer while d1's stream still has to read it: the
// read sees the data (the CPU backend poisons freed memory with 0xFF bytes).
func testFreeWhilePeerReads(t *testing.T, k0, k1 *K) {
	s1 := stream(t, k1.D)
	const n = 1 << 14
	for _, size := range []int{4 * 64, 4 * n, multiSize(k0.D) &^ 3} {
		vals := Random(size / 4)
		x := Upload(t, k0.D, vals)
		out := alloc(t, k1.D, size)
		must(t, k1.SpinFor(s1, 30*time.Millisecond))
		must(t, s1.CopyDtoD(out, x))
		must(t, x.Free())
		// Reuse d0's memory at once: a wrong free would let this overwrite x.
		y, err := k0.D.Alloc(int64(size))
		must(t, err)
		must(t, k0.FillU32(k0.D.DefaultStream(), y, 0x5A5A5A5A))
		equalU32(t, fmt.Sprintf("a peer read of %d bytes after the buffer's Free", size), U32s(t, out), vals)
		must(t, y.Free())
	}
	must(t, k0.D.Synchronize(context.Background()))
	must(t, k1.D.Synchronize(context.Background()))
}

// testFreeAfterPeerWrite frees d0 buffers whose only use was a write made on d1's
// stream (a peer copy), small ones (which the runtime may keep for reuse) and large
// ones, then allocates on d0 again and checks both devices are healthy.
func testFreeAfterPeerWrite(t *testing.T, k0, k1 *K) {
	ctx := context.Background()
	s1 := stream(t, k1.D)
	for _, size := range []int{512, 4096, 1 << 20, 4<<20 + 4} {
		vals := Random(size / 4)
		src := Upload(t, k1.D, vals)
		x, err := k0.D.Alloc(int64(size))
		must(t, err)
		must(t, k0.D.DefaultStream().Synchronize(ctx))
		must(t, s1.CopyDtoD(x, src)) // d1's stream writes the d0 buffer
		must(t, s1.Synchronize(ctx))
		equalU32(t, fmt.Sprintf("a d0 buffer of %d bytes written on d1's stream", size), U32s(t, x), vals)
		// The read back used d0's default stream; write on d1 once more so that d1's
		// stream is the buffer's only user again.
		must(t, s1.CopyDtoD(x, src))
		if err := x.Free(); err != nil {
			t.Fatalf("Free of a d0 buffer last written on d1's stream: %v", err)
		}
		must(t, src.Free())
		y, err := k0.D.Alloc(int64(size))
		must(t, err)
		must(t, k0.FillU32(k0.D.DefaultStream(), y, 7))
		for i, v := range U32s(t, y) {
			if v != 7 {
				t.Fatalf("a new d0 buffer after the free: word %d = %#x", i, v)
			}
		}
		must(t, y.Free())
	}
	must(t, k0.D.Synchronize(ctx))
	must(t, k1.D.Synchronize(ctx))
	must(t, k0.D.TrimMemory(ctx))
	must(t, k1.D.TrimMemory(ctx))
}
