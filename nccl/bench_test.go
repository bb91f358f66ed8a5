package nccl

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/backend/cuda"
	"github.com/go-gpu/gpu/backend/cuda/cu"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/nccl/internal/ncclapi"
)

// Benchmarks on two GPUs driven by one process (they skip without two). They report
// the algorithm and bus bandwidths as nccl-tests defines them (nccl-tests,
// doc/PERFORMANCE.md): algbw = S/t, with S the bytes of the largest buffer of the call
// (for AllGather and ReduceScatter the whole gathered or scattered array) and t the
// time per call; busbw = algbw × 2(n-1)/n for AllReduce, × (n-1)/n for AllGather and
// ReduceScatter, × 1 for Broadcast. GB is 10^9 bytes. The calls are float32, in place
// for AllReduce and Broadcast and out of place for AllGather and ReduceScatter, as
// PyTorch's all_reduce, broadcast, all_gather_into_tensor and reduce_scatter_tensor
// (nccl/bench/torch_nccl.py times those in the same way). Time is wall-clock time from
// the first launch to the end of the last call on both GPUs, over b.N back-to-back
// calls after three warm-up calls.
//
// Modes: "nonblocking" is the default communicator; "blocking" uses the Blocking
// option; "raw" (AllReduce only) calls ncclAllReduce directly on the blocking
// communicators' handles and raw streams, without this package's layer: the floor of
// its overhead.

var benchSizes = []int64{8 << 20, 32 << 20, 128 << 20, 512 << 20, 1 << 30, 4 << 30}

func sizeName(n int64) string {
	if n >= 1<<30 {
		return fmt.Sprintf("%dGiB", n>>30)
	}
	return fmt.Sprintf("%dMiB", n>>20)
}

var benchComms struct {
	sync.Mutex
	m map[string][]*Comm
}

// benchGroup returns the process-wide communicators of a mode, made on first use.
func benchGroup(b *testing.B, blocking bool) []*Comm {
	devs := cudaPair(b)
	key := fmt.Sprint(blocking)
	benchComms.Lock()
	defer benchComms.Unlock()
	if c := benchComms.m[key]; c != nil {
		return c
	}
	var opts []Option
	if blocking {
		opts = append(opts, Blocking())
	}
	comms, err := NewGroup(context.Background(), devs, opts...)
	if err != nil {
		b.Fatal(err)
	}
	if benchComms.m == nil {
		benchComms.m = map[string][]*Comm{}
	}
	benchComms.m[key] = comms
	return comms
}

func busFactor(op string, n int) float64 {
	switch op {
	case "AllReduce":
		return 2 * float64(n-1) / float64(n)
	case "AllGather", "ReduceScatter":
		return float64(n-1) / float64(n)
	}
	return 1
}

func report(b *testing.B, op string, world int, size int64) {
	sec := b.Elapsed().Seconds() / float64(b.N)
	algbw := float64(size) / sec / 1e9
	b.ReportMetric(algbw, "algbw_GB/s")
	b.ReportMetric(algbw*busFactor(op, world), "busbw_GB/s")
}

func BenchmarkNCCL(b *testing.B) {
	for _, op := range []string{"AllReduce", "AllGather", "ReduceScatter", "Broadcast"} {
		for _, mode := range []string{"nonblocking", "blocking", "raw"} {
			if mode == "raw" && op != "AllReduce" {
				continue
			}
			for _, size := range benchSizes {
				b.Run(fmt.Sprintf("%s/%s/%s", op, mode, sizeName(size)), func(b *testing.B) {
					comms := benchGroup(b, mode != "nonblocking")
					if mode == "raw" {
						benchRawAllReduce(b, comms, size)
						return
					}
					benchCollective(b, comms, op, size)
				})
			}
		}
	}
}

func mustAlloc(b *testing.B, d *gpu.Device, n int64) *gpu.Buffer {
	buf, err := d.Alloc(n)
	if err != nil {
		b.Fatal(err)
	}
	if err := d.DefaultStream().Memset(buf, 0); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { buf.Free() })
	return buf
}

func benchCollective(b *testing.B, comms []*Comm, op string, size int64) {
	world := len(comms)
	ctx := context.Background()
	streams := make([]*gpu.Stream, world)
	sends := make([]*gpu.Buffer, world)
	recvs := make([]*gpu.Buffer, world)
	count := size / 4
	for r, c := range comms {
		d := c.Device()
		s, err := d.NewStream()
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		streams[r] = s
		switch op {
		case "AllReduce", "Broadcast":
			sends[r] = mustAlloc(b, d, size)
			recvs[r] = sends[r]
		case "AllGather":
			count = size / 4 / int64(world)
			sends[r] = mustAlloc(b, d, size/int64(world))
			recvs[r] = mustAlloc(b, d, size)
		case "ReduceScatter":
			count = size / 4 / int64(world)
			sends[r] = mustAlloc(b, d, size)
			recvs[r] = mustAlloc(b, d, size/int64(world))
		}
	}
	launch := func() error {
		return Group(comms, func() error {
			for r, c := range comms {
				var err error
				switch op {
				case "AllReduce":
					err = c.AllReduce(streams[r], sends[r], recvs[r], count, dtype.Float32, Sum)
				case "Broadcast":
					err = c.Broadcast(streams[r], sends[r], recvs[r], count, dtype.Float32, 0)
				case "AllGather":
					err = c.AllGather(streams[r], sends[r], recvs[r], count, dtype.Float32)
				case "ReduceScatter":
					err = c.ReduceScatter(streams[r], sends[r], recvs[r], count, dtype.Float32, Sum)
				}
				if err != nil {
					return err
				}
			}
			return nil
		})
	}
	waitAll := func() {
		for _, s := range streams {
			if err := s.Synchronize(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	for range 3 {
		if err := launch(); err != nil {
			b.Fatal(err)
		}
	}
	waitAll()
	b.ResetTimer()
	for range b.N {
		if err := launch(); err != nil {
			b.Fatal(err)
		}
	}
	waitAll()
	b.StopTimer()
	report(b, op, world, size)
}

// benchRawAllReduce times ncclAllReduce called directly: raw allocations, raw streams,
// one ncclGroupStart/ncclGroupEnd per iteration on a locked thread, a stream
// synchronize at the end. comms must be blocking.
func benchRawAllReduce(b *testing.B, comms []*Comm, size int64) {
	world := len(comms)
	ctxs := make([]cu.Context, world)
	streams := make([]cu.Stream, world)
	ptrs := make([]cu.DevicePtr, world)
	hs := make([]ncclapi.Comm, world)
	for r, c := range comms {
		ctx := c.Device().BackendDevice().(*cuda.Device).Context()
		ctxs[r] = ctx
		hs[r] = c.be.(*cudaComm).h
		s, err := ctx.StreamCreate(cu.StreamNonBlocking)
		if err != nil {
			b.Fatal(err)
		}
		streams[r] = s
		p, err := ctx.MemAlloc(size)
		if err != nil {
			b.Fatal(err)
		}
		ptrs[r] = p
		b.Cleanup(func() {
			ctx.Synchronize()
			ctx.MemFree(p)
			ctx.StreamDestroy(s)
		})
	}
	launch := func() error {
		return onDevice(ctxs[0], func() error {
			if err := ncclapi.GroupStart(); err != nil {
				return err
			}
			var first error
			for r := range world {
				ctxs[r].EnsureOnly()
				err := ncclapi.AllReduce(uintptr(ptrs[r]), uintptr(ptrs[r]), uint64(size/4), ncclapi.Float32, ncclapi.Sum, hs[r], uintptr(streams[r]))
				if err != nil && first == nil {
					first = err
				}
			}
			if err := ncclapi.GroupEnd(); err != nil && first == nil {
				first = err
			}
			return first
		})
	}
	waitAll := func() {
		for r := range world {
			if err := ctxs[r].StreamSynchronize(streams[r]); err != nil {
				b.Fatal(err)
			}
		}
	}
	for range 3 {
		if err := launch(); err != nil {
			b.Fatal(err)
		}
	}
	waitAll()
	b.ResetTimer()
	for range b.N {
		if err := launch(); err != nil {
			b.Fatal(err)
		}
	}
	waitAll()
	b.StopTimer()
	report(b, "AllReduce", world, size)
}

// BenchmarkPeerCopy copies 1 GiB from GPU 0 to GPU 1 with peer access enabled both
// ways: "gpu" through Stream.CopyDtoD on a stream of GPU 0 (tracked buffers), "raw"
// with cuMemcpyPeerAsync on a raw stream of GPU 0 and raw allocations, in the same run.
// The bandwidth is bytes copied per second (10^9), one direction.
func BenchmarkPeerCopy(b *testing.B) {
	const size = 1 << 30
	devs := cudaPair(b)
	for _, p := range [][2]*gpu.Device{{devs[0], devs[1]}, {devs[1], devs[0]}} {
		ok, err := p[0].CanAccessPeer(p[1])
		if err != nil || !ok {
			b.Skipf("%v cannot access %v (%v)", p[0], p[1], err)
		}
		if err := p[0].EnablePeerAccess(p[1]); err != nil {
			b.Fatal(err)
		}
	}
	gbs := func(b *testing.B) {
		b.ReportMetric(float64(size)/(b.Elapsed().Seconds()/float64(b.N))/1e9, "GB/s")
	}
	b.Run("gpu/1GiB", func(b *testing.B) {
		ctx := context.Background()
		s, err := devs[0].NewStream()
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		src := mustAlloc(b, devs[0], size)
		dst := mustAlloc(b, devs[1], size)
		for range 3 {
			if err := s.CopyDtoD(dst, src); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.Synchronize(ctx); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for range b.N {
			if err := s.CopyDtoD(dst, src); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.Synchronize(ctx); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		gbs(b)
	})
	// raw: cuMemAlloc memory; rawpool: memory of the devices' stream-ordered pools, as
	// Device.Alloc gives (cuMemAllocAsync), so that a gap between gpu and raw can be
	// told apart from a cost of pool memory.
	for _, pool := range []bool{false, true} {
		name := "raw/1GiB"
		if pool {
			name = "rawpool/1GiB"
		}
		b.Run(name, func(b *testing.B) { benchRawPeerCopy(b, devs, size, pool) })
	}
}

func benchRawPeerCopy(b *testing.B, devs []*gpu.Device, size int64, pool bool) {
	gbs := func(b *testing.B) {
		b.ReportMetric(float64(size)/(b.Elapsed().Seconds()/float64(b.N))/1e9, "GB/s")
	}
	c0 := devs[0].BackendDevice().(*cuda.Device).Context()
	c1 := devs[1].BackendDevice().(*cuda.Device).Context()
	h, err := c0.StreamCreate(cu.StreamNonBlocking)
	if err != nil {
		b.Fatal(err)
	}
	defer c0.StreamDestroy(h)
	alloc := func(c cu.Context) cu.DevicePtr {
		var p cu.DevicePtr
		var err error
		if pool {
			s, serr := c.StreamCreate(cu.StreamNonBlocking)
			if serr != nil {
				b.Fatal(serr)
			}
			defer c.StreamDestroy(s)
			if p, err = c.MemAllocAsync(size, s); err == nil {
				err = c.StreamSynchronize(s)
			}
		} else {
			p, err = c.MemAlloc(size)
		}
		if err != nil {
			b.Fatal(err)
		}
		return p
	}
	free := func(c cu.Context, p cu.DevicePtr) {
		c.Synchronize()
		if pool {
			s, _ := c.StreamCreate(cu.StreamNonBlocking)
			c.MemFreeAsync(p, s)
			c.StreamSynchronize(s)
			c.StreamDestroy(s)
			return
		}
		c.MemFree(p)
	}
	src := alloc(c0)
	defer free(c0, src)
	dst := alloc(c1)
	defer free(c1, dst)
	for range 3 {
		if err := c0.MemcpyPeerAsync(dst, c1, src, c0, size, h); err != nil {
			b.Fatal(err)
		}
	}
	if err := c0.StreamSynchronize(h); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if err := c0.MemcpyPeerAsync(dst, c1, src, c0, size, h); err != nil {
			b.Fatal(err)
		}
	}
	if err := c0.StreamSynchronize(h); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	gbs(b)
}
