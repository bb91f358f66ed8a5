//go:build unix

package gpu_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/backend/cuda"
	"github.com/go-gpu/gpu/backend/cuda/cu"
	"github.com/go-gpu/gpu/backend/cuda/cublas"
)

// These benchmarks compare the runtime with the raw driver called directly through
// package cu (with the build's binding, cgo or purego: cu.Binding), in the same run. They
// skip without a CUDA device.

func cudaDev(b testing.TB) *gpu.Device {
	d, err := gpu.OpenBackend("cuda", 0)
	if errors.Is(err, gpu.ErrNoDevice) {
		b.Skipf("no CUDA device: %v", err)
	}
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// raw returns the device's context and a raw stream of its own, so that the baselines
// don't touch the runtime's streams (handing out a runtime stream's handle turns off
// the runtime's idle bookkeeping).
func raw(b testing.TB, d *gpu.Device) (cu.Context, cu.Stream) {
	ctx := d.BackendDevice().(*cuda.Device).Context()
	h, err := ctx.StreamCreate(cu.StreamNonBlocking)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ctx.StreamDestroy(h) })
	return ctx, h
}

func BenchmarkDriverCall(b *testing.B) {
	d := cudaDev(b)
	ctx, _ := raw(b, d)
	b.Run("noop", func(b *testing.B) {
		for b.Loop() {
			cu.Noop()
		}
	})
	b.Run("cuCtxGetCurrent", func(b *testing.B) {
		for b.Loop() {
			cu.GetCurrentRaw()
		}
	})
	b.Run("context-check", func(b *testing.B) {
		for b.Loop() {
			ctx.EnsureOnly()
		}
	})
}

func policies() []struct {
	name string
	p    gpu.WaitPolicy
} {
	return []struct {
		name string
		p    gpu.WaitPolicy
	}{
		{"default", gpu.DefaultWaitPolicy},
		{"spinning", gpu.WaitPolicy{Mode: gpu.WaitSpin}},
		{"blocking", gpu.WaitPolicy{Mode: gpu.WaitBlock}},
	}
}

func BenchmarkSync(b *testing.B) {
	d := cudaDev(b)
	s, err := d.NewStream()
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx, h := raw(b, d)
	bg := context.Background()
	empty, err := d.Builtin("empty")
	if err != nil {
		b.Fatal(err)
	}
	fempty := empty.BackendFunction().(*cuda.Function).Handle()
	one := gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 1}}
	for _, p := range policies() {
		b.Run("after-empty-kernel/"+p.name, func(b *testing.B) {
			for b.Loop() {
				s.Launch(empty, one)
				if err := s.Synchronize(bg, p.p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("after-empty-kernel/raw-cuStreamSynchronize", func(b *testing.B) {
		for b.Loop() {
			ctx.LaunchKernel(fempty, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, h, nil, nil)
			if err := ctx.StreamSynchronize(h); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("stream/raw-cuStreamQuery", func(b *testing.B) {
		for b.Loop() {
			ctx.StreamQuery(h)
		}
	})
	for _, p := range policies() {
		b.Run("stream/"+p.name, func(b *testing.B) {
			for b.Loop() {
				if err := s.Synchronize(bg, p.p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("stream/raw-cuStreamSynchronize", func(b *testing.B) {
		for b.Loop() {
			if err := ctx.StreamSynchronize(h); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, p := range policies() {
		b.Run("context/"+p.name, func(b *testing.B) {
			for b.Loop() {
				if err := d.Synchronize(bg, p.p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("context/raw-cuCtxSynchronize", func(b *testing.B) {
		for b.Loop() {
			if err := ctx.Synchronize(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkWaitAfterKernel times a 100 us kernel plus the wait for it.
func BenchmarkWaitAfterKernel(b *testing.B) {
	d := cudaDev(b)
	s, _ := d.NewStream()
	defer s.Close()
	spin, err := d.Builtin("spin")
	if err != nil {
		b.Fatal(err)
	}
	one := gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 1}}
	ctx, h := raw(b, d)
	fspin := spin.BackendFunction().(*cuda.Function).Handle()
	bg := context.Background()
	for _, us := range []int{10, 100} {
		ns := uint64(us) * 1000
		for _, p := range policies() {
			b.Run(fmt.Sprintf("%dus/%s", us, p.name), func(b *testing.B) {
				for b.Loop() {
					s.Launch(spin, one, ns)
					if err := s.Synchronize(bg, p.p); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		b.Run(fmt.Sprintf("%dus/raw-cuStreamSynchronize", us), func(b *testing.B) {
			blob := binary.LittleEndian.AppendUint64(nil, ns)
			for b.Loop() {
				ctx.LaunchKernel(fspin, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, h, blob, []int32{0})
				if err := ctx.StreamSynchronize(h); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkWaitLongKernel waits for a 2 s kernel and reports the process's CPU time
// over the wall time of the wait.
func BenchmarkWaitLongKernel(b *testing.B) {
	d := cudaDev(b)
	s, _ := d.NewStream()
	defer s.Close()
	spin, _ := d.Builtin("spin")
	one := gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 1}}
	ctx, h := raw(b, d)
	fspin := spin.BackendFunction().(*cuda.Function).Handle()
	blob := binary.LittleEndian.AppendUint64(nil, uint64(2*time.Second))
	for _, name := range []string{"default", "raw-cuStreamSynchronize"} {
		b.Run(name, func(b *testing.B) {
			var frac float64
			for b.Loop() {
				var err error
				if name == "default" {
					s.Launch(spin, one, uint64(2*time.Second))
				} else {
					ctx.LaunchKernel(fspin, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, h, blob, []int32{0})
				}
				c0, t0 := cpuTime(), time.Now()
				if name == "default" {
					err = s.Synchronize(context.Background())
				} else {
					err = ctx.StreamSynchronize(h)
				}
				if err != nil {
					b.Fatal(err)
				}
				frac = float64(cpuTime()-c0) / float64(time.Since(t0))
			}
			b.ReportMetric(100*frac, "%cpu")
		})
	}
}

func BenchmarkLaunch(b *testing.B) {
	d := cudaDev(b)
	s, _ := d.NewStream()
	defer s.Close()
	empty, err := d.Builtin("empty")
	if err != nil {
		b.Fatal(err)
	}
	one := gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 1}}
	ctx, h := raw(b, d)
	f := empty.BackendFunction().(*cuda.Function).Handle()
	bg := context.Background()
	const batch = 1000 // synchronize every batch launches so the queue never fills
	b.Run("gpu", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if err := s.Launch(empty, one); err != nil {
				b.Fatal(err)
			}
			if i++; i%batch == 0 {
				s.Synchronize(bg)
			}
		}
		s.Synchronize(bg)
	})
	b.Run("raw-go-loop", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if err := ctx.LaunchKernel(f, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, h, nil, nil); err != nil {
				b.Fatal(err)
			}
			if i++; i%batch == 0 {
				ctx.StreamSynchronize(h)
			}
		}
		ctx.StreamSynchronize(h)
	})
	b.Run("raw-c-loop", func(b *testing.B) {
		n := b.N
		b.ResetTimer()
		for n > 0 {
			k := min(n, batch)
			if err := ctx.RawLaunchLoop(f, h, k); err != nil {
				b.Fatal(err)
			}
			ctx.StreamSynchronize(h)
			n -= k
		}
	})
}

// BenchmarkTrackedLaunch launches a kernel with two buffer arguments: tracked on one
// stream, untracked (raw pointers), and alternating between two streams.
func BenchmarkTrackedLaunch(b *testing.B) {
	d := cudaDev(b)
	s1, _ := d.NewStream()
	s2, _ := d.NewStream()
	defer s1.Close()
	defer s2.Close()
	fill, _ := d.Builtin("add_u32")
	cfg := gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 32}}
	x, _ := s1.Alloc(1024)
	y, _ := s1.Alloc(1024)
	defer x.Free()
	defer y.Free()
	bg := context.Background()
	var px, py gpu.DevicePtr
	x.Access(s1, gpu.Read, func(p gpu.DevicePtr) error { px = p; return nil })
	y.Access(s1, gpu.Read, func(p gpu.DevicePtr) error { py = p; return nil })
	const batch = 1000
	run := func(b *testing.B, launch func(i int) error) {
		i := 0
		for b.Loop() {
			if err := launch(i); err != nil {
				b.Fatal(err)
			}
			if i++; i%batch == 0 {
				d.Synchronize(bg)
			}
		}
		d.Synchronize(bg)
	}
	b.Run("untracked-pointers", func(b *testing.B) {
		run(b, func(int) error { return s1.Launch(fill, cfg, py, px, uint32(1), uint64(0)) })
	})
	b.Run("tracked-one-stream", func(b *testing.B) {
		run(b, func(int) error { return s1.Launch(fill, cfg, gpu.Out(y), gpu.In(x), uint32(1), uint64(0)) })
	})
	b.Run("tracked-two-streams", func(b *testing.B) {
		run(b, func(i int) error {
			s := s1
			if i%2 == 1 {
				s = s2
			}
			return s.Launch(fill, cfg, gpu.Out(y), gpu.In(x), uint32(1), uint64(0))
		})
	})
}

// BenchmarkCopy compares the plain copies with raw driver copies plus a stream
// synchronize, for pageable (Go) and pinned host memory.
func BenchmarkCopy(b *testing.B) {
	d := cudaDev(b)
	s := d.DefaultStream()
	ctx, h := raw(b, d)
	bg := context.Background()
	for _, size := range []int64{2 << 20, 8 << 20, 1 << 30} {
		dev, err := d.Alloc(size)
		if err != nil {
			b.Fatal(err)
		}
		pinned, err := d.AllocPinned(size)
		if err != nil {
			b.Fatal(err)
		}
		page := make([]byte, size)
		for i := range page {
			page[i] = byte(i * 7)
		}
		var pdev gpu.DevicePtr
		dev.Access(s, gpu.Read, func(p gpu.DevicePtr) error { pdev = p; return nil })
		var hostPinned []byte
		pinned.HostAccess(bg, gpu.Write, func(h []byte) error { hostPinned = h; copy(h, page); return nil })
		name := fmt.Sprintf("%dMB", size>>20)
		set := func(b *testing.B) { b.SetBytes(size) }
		b.Run("HtoD/pageable/"+name+"/gpu", func(b *testing.B) {
			set(b)
			for b.Loop() {
				if err := dev.CopyFromHost(bg, page); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("HtoD/pageable/"+name+"/raw", func(b *testing.B) {
			set(b)
			for b.Loop() {
				ctx.MemcpyHtoDAsync(cu.DevicePtr(pdev), unsafe.Pointer(&page[0]), size, h)
				ctx.StreamSynchronize(h)
			}
		})
		b.Run("DtoH/pageable/"+name+"/gpu", func(b *testing.B) {
			set(b)
			for b.Loop() {
				if err := dev.CopyToHost(bg, page); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("DtoH/pageable/"+name+"/raw", func(b *testing.B) {
			set(b)
			for b.Loop() {
				ctx.MemcpyDtoHAsync(unsafe.Pointer(&page[0]), cu.DevicePtr(pdev), size, h)
				ctx.StreamSynchronize(h)
			}
		})
		b.Run("HtoD/pinned/"+name+"/gpu", func(b *testing.B) {
			set(b)
			for b.Loop() {
				if err := dev.CopyFrom(bg, pinned); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("HtoD/pinned/"+name+"/raw", func(b *testing.B) {
			set(b)
			for b.Loop() {
				ctx.MemcpyHtoDAsync(cu.DevicePtr(pdev), unsafe.Pointer(&hostPinned[0]), size, h)
				ctx.StreamSynchronize(h)
			}
		})
		b.Run("DtoH/pinned/"+name+"/gpu", func(b *testing.B) {
			set(b)
			for b.Loop() {
				if err := pinned.CopyFrom(bg, dev); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("DtoH/pinned/"+name+"/raw", func(b *testing.B) {
			set(b)
			for b.Loop() {
				ctx.MemcpyDtoHAsync(unsafe.Pointer(&hostPinned[0]), cu.DevicePtr(pdev), size, h)
				ctx.StreamSynchronize(h)
			}
		})
		// The same raw copy into page-locked memory allocated with no flags (gpubench's
		// raw rows), against ours (portable and mapped).
		if plain, err := ctx.MemHostAlloc(size, 0); err == nil {
			b.Run("DtoH/pinned-noflags/"+name+"/raw", func(b *testing.B) {
				set(b)
				for b.Loop() {
					ctx.MemcpyDtoHAsync(plain, cu.DevicePtr(pdev), size, h)
					ctx.StreamSynchronize(h)
				}
			})
			ctx.MemFreeHost(plain)
		}
		dev.Free()
		pinned.Free()
	}
}

// BenchmarkAlloc is array/construct's allocation: 8 bytes from the pool, and back.
func BenchmarkAlloc(b *testing.B) {
	d := cudaDev(b)
	ctx, h := raw(b, d)
	b.Run("gpu", func(b *testing.B) {
		for b.Loop() {
			x, err := d.Alloc(8)
			if err != nil {
				b.Fatal(err)
			}
			x.Free()
		}
	})
	b.Run("raw-cuMemAllocAsync", func(b *testing.B) {
		for b.Loop() {
			p, err := ctx.MemAllocAsync(8, h)
			if err != nil {
				b.Fatal(err)
			}
			ctx.MemFreeAsync(p, h)
		}
	})
}

// BenchmarkArrayBandwidth times fill, copy and a fused a*x+b at 2^28 float32 elements,
// rand and randn, against the device-to-device copy of the same bytes, all with events.
func BenchmarkArrayBandwidth(b *testing.B) {
	d := cudaDev(b)
	s, _ := d.NewStream()
	defer s.Close()
	const n = 1 << 28
	x, err := gpu.Full[float32](s, 1.5, n)
	if err != nil {
		b.Fatal(err)
	}
	defer x.Free()
	y, _ := gpu.Empty[float32](s, n)
	defer y.Free()
	g := gpu.NewGenerator(1)
	start, _ := d.NewEvent()
	end, _ := d.NewEvent()
	timed := func(b *testing.B, bytes int64, f func() error) {
		b.SetBytes(bytes)
		if err := f(); err != nil { // warm up: compile, load
			b.Fatal(err)
		}
		var total time.Duration
		for b.Loop() {
			s.Record(start)
			if err := f(); err != nil {
				b.Fatal(err)
			}
			s.Record(end)
			end.Wait(context.Background())
			el, _ := gpu.Elapsed(start, end)
			total += el
		}
		b.ReportMetric(float64(bytes)*float64(b.N)/total.Seconds()/1e9, "GB/s(events)")
	}
	xb, _ := x.Buffer().Slice(0, 4*n)
	yb, _ := y.Buffer().Slice(0, 4*n)
	b.Run("d2d-copy", func(b *testing.B) { timed(b, 8*n, func() error { return s.CopyDtoD(yb, xb) }) })
	b.Run("fill", func(b *testing.B) { timed(b, 4*n, func() error { return gpu.Fill(s, y, 2.5) }) })
	b.Run("fill-kernel", func(b *testing.B) {
		timed(b, 4*n, func() error { return gpu.EvalInto(s, y, "v", gpu.Vars{"v": float32(2.5)}) })
	})
	b.Run("copy", func(b *testing.B) { timed(b, 8*n, func() error { return gpu.Copy(s, y, x) }) })
	b.Run("copy-kernel", func(b *testing.B) {
		timed(b, 8*n, func() error { return gpu.EvalInto(s, y, "x", gpu.Vars{"x": x}) })
	})
	b.Run("axpb", func(b *testing.B) {
		timed(b, 8*n, func() error {
			return gpu.EvalInto(s, y, "a*x + b", gpu.Vars{"a": 2.0, "x": x, "b": 1.0})
		})
	})
	b.Run("rand", func(b *testing.B) { timed(b, 4*n, func() error { return gpu.RandInto(s, g, y) }) })
	b.Run("randn", func(b *testing.B) { timed(b, 4*n, func() error { return gpu.RandNInto(s, g, y) }) })
}

// BenchmarkEvalLaunch compares the host time of a cached Eval with a raw launch of a
// kernel with as many parameters (the built-in add_u32), both without synchronizing.
func BenchmarkEvalLaunch(b *testing.B) {
	d := cudaDev(b)
	s, _ := d.NewStream()
	defer s.Close()
	x, _ := gpu.Zeros[float32](s, 64)
	y, _ := gpu.Zeros[float32](s, 64)
	defer x.Free()
	defer y.Free()
	add, _ := d.Builtin("add_u32")
	f := add.BackendFunction().(*cuda.Function).Handle()
	ctx, h := raw(b, d)
	var px, py gpu.DevicePtr
	x.Buffer().Access(s, gpu.Read, func(p gpu.DevicePtr) error { px = p; return nil })
	y.Buffer().Access(s, gpu.Read, func(p gpu.DevicePtr) error { py = p; return nil })
	bg := context.Background()
	const batch = 1000
	b.Run("eval", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if err := gpu.EvalInto(s, y, "x + 1", gpu.Vars{"x": x}); err != nil {
				b.Fatal(err)
			}
			if i++; i%batch == 0 {
				s.Synchronize(bg)
			}
		}
		s.Synchronize(bg)
	})
	b.Run("kernel", func(b *testing.B) {
		k := gpu.NewKernel[float32]("x + 1", "x")
		i := 0
		for b.Loop() {
			if err := k.Into(s, y, x); err != nil {
				b.Fatal(err)
			}
			if i++; i%batch == 0 {
				s.Synchronize(bg)
			}
		}
		s.Synchronize(bg)
	})
	b.Run("launch-tracked", func(b *testing.B) {
		i := 0
		cfg := gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 64}}
		for b.Loop() {
			if err := s.Launch(add, cfg, gpu.Out(y), gpu.In(x), uint32(1), uint64(64)); err != nil {
				b.Fatal(err)
			}
			if i++; i%batch == 0 {
				s.Synchronize(bg)
			}
		}
		s.Synchronize(bg)
	})
	b.Run("raw-cuLaunchKernel", func(b *testing.B) {
		blob := make([]byte, 32)
		binary.LittleEndian.PutUint64(blob[0:], uint64(py))
		binary.LittleEndian.PutUint64(blob[8:], uint64(px))
		binary.LittleEndian.PutUint64(blob[16:], 1)
		binary.LittleEndian.PutUint64(blob[24:], 64)
		offs := []int32{0, 8, 16, 24}
		i := 0
		for b.Loop() {
			if err := ctx.LaunchKernel(f, [3]uint32{1, 1, 1}, [3]uint32{64, 1, 1}, 0, h, blob, offs); err != nil {
				b.Fatal(err)
			}
			if i++; i%batch == 0 {
				ctx.StreamSynchronize(h)
			}
		}
		ctx.StreamSynchronize(h)
	})
}

// BenchmarkTrackedLaunchInterleaved alternates rounds of launches with untracked
// pointers and with tracked buffers (one stream S, Out(y), In(x)), each round 2000
// launches then a synchronize, and reports the median per-launch time of each and their
// ratio (the target: at most 1.05). The sub-benchmarks say where x and y came from:
// S.Alloc (used on S only); Device.Alloc (ordered on the default stream); FromSlice on
// the default stream; Device.Alloc then a plain CopyFromHost (the device's copy
// stream); and S.Alloc with a read on the default stream first. In every case but the
// first, the buffers moved to S once: the tracking must settle back to S's free path.
func BenchmarkTrackedLaunchInterleaved(b *testing.B) {
	d := cudaDev(b)
	add, _ := d.Builtin("add_u32")
	cfg := gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 32}}
	bg := context.Background()
	type pair struct{ x, y *gpu.Buffer }
	sources := []struct {
		name string
		make func(s *gpu.Stream) pair
	}{
		{"stream-alloc", func(s *gpu.Stream) pair {
			x, _ := s.Alloc(1024)
			y, _ := s.Alloc(1024)
			return pair{x, y}
		}},
		{"device-alloc", func(*gpu.Stream) pair {
			x, _ := d.Alloc(1024)
			y, _ := d.Alloc(1024)
			return pair{x, y}
		}},
		{"fromslice-default", func(*gpu.Stream) pair {
			x, _ := gpu.FromSlice(d.DefaultStream(), make([]uint32, 256))
			y, _ := gpu.FromSlice(d.DefaultStream(), make([]uint32, 256))
			return pair{x.Buffer(), y.Buffer()}
		}},
		{"host-copy", func(*gpu.Stream) pair {
			x, _ := d.Alloc(1024)
			y, _ := d.Alloc(1024)
			x.CopyFromHost(bg, make([]byte, 1024))
			y.CopyFromHost(bg, make([]byte, 1024))
			return pair{x, y}
		}},
		{"default-read", func(s *gpu.Stream) pair {
			x, _ := s.Alloc(1024)
			y, _ := s.Alloc(1024)
			tmp, _ := d.Alloc(1024)
			d.DefaultStream().Launch(add, cfg, gpu.Out(tmp), gpu.In(x), uint32(1), uint64(0))
			d.DefaultStream().Launch(add, cfg, gpu.Out(tmp), gpu.In(y), uint32(1), uint64(0))
			tmp.Free()
			return pair{x, y}
		}},
	}
	for _, src := range sources {
		b.Run(src.name, func(b *testing.B) {
			s, _ := d.NewStream()
			defer s.Close()
			p := src.make(s)
			x, y := p.x, p.y
			defer x.Free()
			defer y.Free()
			var px, py gpu.DevicePtr
			x.Access(s, gpu.Read, func(p gpu.DevicePtr) error { px = p; return nil })
			y.Access(s, gpu.Read, func(p gpu.DevicePtr) error { py = p; return nil })
			const per = 2000
			round := func(tracked bool) time.Duration {
				start := time.Now()
				for range per {
					if tracked {
						s.Launch(add, cfg, gpu.Out(y), gpu.In(x), uint32(1), uint64(0))
					} else {
						s.Launch(add, cfg, py, px, uint32(1), uint64(0))
					}
				}
				s.Synchronize(bg)
				return time.Since(start) / per
			}
			round(false)
			round(true)
			var un, tr []time.Duration
			for b.Loop() {
				un = append(un, round(false))
				tr = append(tr, round(true))
			}
			med := func(v []time.Duration) float64 {
				slices.Sort(v)
				return float64(v[len(v)/2])
			}
			b.ReportMetric(med(un), "untracked-ns/launch")
			b.ReportMetric(med(tr), "tracked-ns/launch")
			b.ReportMetric(med(tr)/med(un), "ratio")
		})
	}
}

// BenchmarkAsyncCopy times Stream.CopyDtoH and CopyHtoD of pageable Go memory enqueued
// behind a 2 ms kernel on their stream: the host time of the call (staging ring, or
// the driver's synchronous copy with the ring off), and the whole, until the stream is
// done.
func BenchmarkAsyncCopy(b *testing.B) {
	d := cudaDev(b)
	spin, _ := d.Builtin("spin")
	bg := context.Background()
	for _, n := range []int{8, 4 << 10, 1 << 20, 64 << 20} {
		for _, ring := range []bool{true, false} {
			name := fmt.Sprintf("bytes=%d/ring=%v", n, ring)
			b.Run(name, func(b *testing.B) {
				defer gpu.SetAsyncStaging(gpu.SetAsyncStaging(ring))
				s, _ := d.NewStream()
				defer s.Close()
				buf, _ := s.Alloc(int64(n))
				defer buf.Free()
				host := make([]byte, n)
				var call, total time.Duration
				for b.Loop() {
					s.Launch(spin, gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 1}}, uint64(2*time.Millisecond))
					start := time.Now()
					s.CopyDtoH(host, buf)
					s.CopyHtoD(buf, host)
					call += time.Since(start)
					s.Synchronize(bg)
					total += time.Since(start)
				}
				b.ReportMetric(float64(call.Nanoseconds())/float64(b.N), "call-ns/op")
				b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "total-ns/op")
			})
		}
	}
}

// BenchmarkWaitPrimitives times a 100 us kernel plus a raw driver wait for it, by
// primitive: cuStreamSynchronize, a spin on cuStreamQuery, a spin on cuEventQuery of an
// event recorded after the kernel, and those spins with runtime.Gosched between queries.
// It also reports the cost of one query while the stream is busy. (Which primitive sees
// completion soonest decides the spin of WaitAuto.)
func BenchmarkWaitPrimitives(b *testing.B) {
	d := cudaDev(b)
	spin, err := d.Builtin("spin")
	if err != nil {
		b.Fatal(err)
	}
	ctx, h := raw(b, d)
	ev, err := ctx.EventCreate(cu.EventDisableTiming)
	if err != nil {
		b.Fatal(err)
	}
	defer ctx.EventDestroy(ev)
	fspin := spin.BackendFunction().(*cuda.Function).Handle()
	blob := binary.LittleEndian.AppendUint64(nil, 100_000)
	launch := func() {
		ctx.LaunchKernel(fspin, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, h, blob, []int32{0})
	}
	waits := []struct {
		name string
		wait func()
	}{
		{"cuStreamSynchronize", func() { ctx.StreamSynchronize(h) }},
		{"spin-cuStreamQuery", func() {
			for ok, _ := ctx.StreamQuery(h); !ok; ok, _ = ctx.StreamQuery(h) {
			}
		}},
		{"spin-cuStreamQuery-gosched", func() {
			for ok, _ := ctx.StreamQuery(h); !ok; ok, _ = ctx.StreamQuery(h) {
				runtime.Gosched()
			}
		}},
		{"spin-cuEventQuery", func() {
			ctx.EventRecord(ev, h)
			for ok, _ := ctx.EventQuery(ev); !ok; ok, _ = ctx.EventQuery(ev) {
			}
		}},
		{"spin-cuEventQuery-gosched", func() {
			ctx.EventRecord(ev, h)
			for ok, _ := ctx.EventQuery(ev); !ok; ok, _ = ctx.EventQuery(ev) {
				runtime.Gosched()
			}
		}},
	}
	for _, w := range waits {
		b.Run("100us/"+w.name, func(b *testing.B) {
			for b.Loop() {
				launch()
				w.wait()
			}
		})
	}
	for _, q := range []string{"cuStreamQuery", "cuEventQuery"} {
		b.Run("busy-query/"+q, func(b *testing.B) {
			long := binary.LittleEndian.AppendUint64(nil, 50_000_000)
			ctx.LaunchKernel(fspin, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, h, long, []int32{0})
			ctx.EventRecord(ev, h)
			for b.Loop() {
				if q == "cuStreamQuery" {
					ctx.StreamQuery(h)
				} else {
					ctx.EventQuery(ev)
				}
			}
			b.StopTimer()
			ctx.StreamSynchronize(h)
		})
	}
}

// BenchmarkHostCopy measures the host's copies between Go memory and pinned memory over
// several goroutines: the host's part of a staged copy.
func BenchmarkHostCopy(b *testing.B) {
	d := cudaDev(b)
	bg := context.Background()
	for _, size := range []int{512 << 10, 4 << 20} {
		pinned, err := d.AllocPinned(int64(size))
		if err != nil {
			b.Fatal(err)
		}
		var pin []byte
		pinned.HostAccess(bg, gpu.Write, func(h []byte) error { pin = h; return nil })
		page, page2 := make([]byte, size), make([]byte, size)
		for i := range page {
			page[i], page2[i], pin[i] = byte(i), byte(i+1), byte(i+2)
		}
		for _, parts := range []int{1, 2, 4, 8, 16} {
			for _, c := range []struct {
				name     string
				dst, src []byte
			}{{"to-pinned", pin, page}, {"from-pinned", page, pin}, {"pageable", page2, page}} {
				b.Run(fmt.Sprintf("%s/%dKB/parts=%d", c.name, size>>10, parts), func(b *testing.B) {
					b.SetBytes(int64(size))
					for b.Loop() {
						gpu.HostCopyN(c.dst, c.src, parts)
					}
				})
			}
		}
		pinned.Free()
	}
}

// BenchmarkStagedCopy times the staged copies (Buffer.CopyFromHost and CopyToHost of Go
// memory) over chunk sizes and host-copy splits, to tune stage.go.
func BenchmarkStagedCopy(b *testing.B) {
	d := cudaDev(b)
	bg := context.Background()
	for _, size := range []int64{2 << 20, 64 << 20} {
		dev, err := d.Alloc(size)
		if err != nil {
			b.Fatal(err)
		}
		page := make([]byte, size)
		for i := range page {
			page[i] = byte(i * 7)
		}
		for _, chunk := range []int{256 << 10, 512 << 10, 1 << 20, 2 << 20, 4 << 20, 8 << 20} {
			if int64(chunk) > size {
				continue
			}
			for _, part := range []int{64 << 10, 256 << 10} {
				for _, parts := range []int{4, 8, 16} {
					restore := gpu.SetStaging(d, chunk, part, parts)
					name := fmt.Sprintf("%dMB/chunk=%dK/part=%dK/parts=%d", size>>20, chunk>>10, part>>10, parts)
					b.Run("HtoD/"+name, func(b *testing.B) {
						b.SetBytes(size)
						for b.Loop() {
							if err := dev.CopyFromHost(bg, page); err != nil {
								b.Fatal(err)
							}
						}
					})
					b.Run("DtoH/"+name, func(b *testing.B) {
						b.SetBytes(size)
						for b.Loop() {
							if err := dev.CopyToHost(bg, page); err != nil {
								b.Fatal(err)
							}
						}
					})
					restore()
				}
			}
		}
		dev.Free()
	}
}

// BenchmarkSmallFill times gpubench's array/broadcast (Metal.jl's mat .= 0f0 on 512x1000
// float32) three ways, each with a synchronize, host clock: the generated kernel
// (EvalInto of a scalar), Fill (a 32-bit memset) and a raw cuMemsetD32Async.
func BenchmarkSmallFill(b *testing.B) {
	d := cudaDev(b)
	s := d.DefaultStream()
	bg := context.Background()
	y, err := gpu.Empty[float32](s, 1000, 512)
	if err != nil {
		b.Fatal(err)
	}
	defer y.Free()
	zero := gpu.Vars{"v": float32(0)}
	b.Run("eval", func(b *testing.B) {
		for b.Loop() {
			if err := gpu.EvalInto(s, y, "v", zero); err != nil {
				b.Fatal(err)
			}
			s.Synchronize(bg)
		}
	})
	b.Run("fill", func(b *testing.B) {
		for b.Loop() {
			if err := gpu.Fill(s, y, 0); err != nil {
				b.Fatal(err)
			}
			s.Synchronize(bg)
		}
	})
	ctx, h := raw(b, d)
	var p gpu.DevicePtr
	y.Buffer().Access(s, gpu.Write, func(q gpu.DevicePtr) error { p = q; return nil })
	b.Run("raw-memset", func(b *testing.B) {
		for b.Loop() {
			ctx.MemsetAsync(cu.DevicePtr(p), 0, 4, 512000, h)
			ctx.StreamSynchronize(h)
		}
	})
}

// BenchmarkReduceFused times a split reduction plus a stream synchronize, host clock,
// as one fused launch (the default) and as two launches (partial results, then their
// combination): Metal.jl's small whole-array Sum of 512x1000 float32, that array's sum
// over axis 0, and a 2^28-element Sum at memory speed. Each size first checks that both
// forms give bitwise the same result.
func BenchmarkReduceFused(b *testing.B) {
	d := cudaDev(b)
	s, err := d.NewStream()
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	defer gpu.SetReduceFuse(d, gpu.SetReduceFuse(d, true))
	bg := context.Background()
	cases := []struct {
		name  string
		shape []int
		opts  []gpu.ReduceOption
	}{
		{"512x1000", []int{512, 1000}, nil},
		{"512x1000-axis0", []int{512, 1000}, []gpu.ReduceOption{gpu.Axes(0)}},
		{"2^28", []int{1 << 28}, nil},
	}
	for _, c := range cases {
		n := 1
		for _, v := range c.shape {
			n *= v
		}
		xs := make([]float32, n)
		for i := range xs {
			xs[i] = float32(i%1000) * 0.001
		}
		x, err := gpu.FromSlice(s, xs, c.shape...)
		if err != nil {
			b.Fatal(err)
		}
		var ref []float32
		for _, fuse := range []bool{false, true} {
			gpu.SetReduceFuse(d, fuse)
			r, err := gpu.Sum[float32](s, x, c.opts...)
			if err != nil {
				b.Fatal(err)
			}
			v, err := r.ToSlice(bg)
			r.Free()
			if err != nil {
				b.Fatal(err)
			}
			if !fuse {
				ref = v
			} else if !slices.EqualFunc(v, ref, func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }) {
				b.Fatalf("%s: the fused sum differs from the two launches'", c.name)
			}
		}
		for _, mode := range []struct {
			name string
			fuse bool
		}{{"fused", true}, {"two-kernel", false}} {
			b.Run(c.name+"/"+mode.name, func(b *testing.B) {
				gpu.SetReduceFuse(d, mode.fuse)
				for b.Loop() {
					r, err := gpu.Sum[float32](s, x, c.opts...)
					if err != nil {
						b.Fatal(err)
					}
					if err := s.Synchronize(bg); err != nil {
						b.Fatal(err)
					}
					r.Free()
				}
				b.SetBytes(int64(4 * n))
			})
		}
		x.Free()
	}
}

// BenchmarkMatMulSmall times the S-size product of issue 19 (512x1000 by 1000x512
// float32 into a preallocated result) called back to back on one stream, against
// cublasGemmEx called directly on a raw stream with the same library, workspace and
// math mode (package cublas): where the device runs a call faster than the host issues
// it, the difference is the runtime's cost per call.
func BenchmarkMatMulSmall(b *testing.B) {
	d := cudaDev(b)
	if _, err := d.MatMulLibrary(); err != nil {
		b.Skipf("no cuBLAS: %v", err)
	}
	const m, k, n = 512, 1000, 512
	b.Run("ours", func(b *testing.B) {
		s, err := d.NewStream()
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		x, err1 := gpu.Full[float32](s, 0.5, m, k)
		y, err2 := gpu.Full[float32](s, 0.25, k, n)
		z, err3 := gpu.Empty[float32](s, m, n)
		if err := errors.Join(err1, err2, err3); err != nil {
			b.Fatal(err)
		}
		defer x.Free()
		defer y.Free()
		defer z.Free()
		// The stream's cuBLAS handle and workspace, made on its first product, before
		// the clock starts.
		if err := errors.Join(gpu.MatMulInto(s, z, x, y), s.Synchronize(context.Background())); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if err := gpu.MatMulInto(s, z, x, y); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.Synchronize(context.Background()); err != nil {
			b.Fatal(err)
		}
	})
	b.Run("raw", func(b *testing.B) {
		ctx, h := raw(b, d)
		if err := cublas.Load(); err != nil {
			b.Skip(err)
		}
		var ptr [4]cu.DevicePtr
		for i, size := range []int64{m * k * 4, k * n * 4, m * n * 4, 32 << 20} {
			p, err := ctx.MemAlloc(size)
			if err != nil {
				b.Fatal(err)
			}
			defer ctx.MemFree(p)
			ptr[i] = p
		}
		// The inputs hold 0.5 and 0.25 as ours do.
		if err := errors.Join(ctx.MemsetAsync(ptr[0], math.Float32bits(0.5), 4, m*k, h),
			ctx.MemsetAsync(ptr[1], math.Float32bits(0.25), 4, k*n, h)); err != nil {
			b.Fatal(err)
		}
		bl, err := cublas.Create(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer bl.Destroy()
		if err := errors.Join(bl.SetStream(uintptr(h)), bl.SetWorkspace(uintptr(ptr[3]), 32<<20),
			bl.SetMathMode(cublas.DefaultMath|cublas.DisallowReducedPrecisionReduction)); err != nil {
			b.Fatal(err)
		}
		one := cublas.Scalar(math.Float32bits(1))
		// Row-major C = A@B as cuBLAS's column-major C^T = B^T A^T.
		A := cublas.Matrix{Ptr: uintptr(ptr[1]), Type: cublas.R32F, LD: n}
		B := cublas.Matrix{Ptr: uintptr(ptr[0]), Type: cublas.R32F, LD: k}
		C := cublas.Matrix{Ptr: uintptr(ptr[2]), Type: cublas.R32F, LD: n}
		if err := errors.Join(bl.GemmEx(cublas.OpN, cublas.OpN, n, m, k, one, A, B, 0, C, cublas.Compute32F, cublas.GemmDefault),
			ctx.StreamSynchronize(h)); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if err := bl.GemmEx(cublas.OpN, cublas.OpN, n, m, k, one, A, B, 0, C, cublas.Compute32F, cublas.GemmDefault); err != nil {
				b.Fatal(err)
			}
		}
		if err := ctx.StreamSynchronize(h); err != nil {
			b.Fatal(err)
		}
	})
}
