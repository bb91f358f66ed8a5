package gpu_test

import (
	"context"
	"errors"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/backend/cuda"
	"github.com/go-gpu/gpu/internal/dl"
)

// tenOps enqueues ten elementwise operations on 512x1000 float32 arrays x and y
// (values stay bounded however often they run).
// (gpubench's graph/launch/10ops/512x1000 runs the same ten).
var tenOps = []struct{ dst, src string }{
	{"y", "x*0.5"}, {"x", "y*y"}, {"y", "sqrt(x)"}, {"x", "y - 0.5"}, {"y", "x*x"},
	{"x", "sin(y)"}, {"y", "x + 1.5"}, {"x", "y*0.75"}, {"y", "abs(x)"}, {"x", "y - 0.2"},
}

func runTenOps(s *gpu.Stream, x, y *gpu.Array[float32]) error {
	for _, op := range tenOps {
		dst, src := x, y
		if op.dst == "y" {
			dst, src = y, x
		}
		name := "x"
		if op.dst == "x" {
			name = "y"
		}
		if err := gpu.EvalInto(s, dst, op.src, gpu.Vars{name: src}); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkGraph: ten elementwise operations on 512x1000 float32, launched as a graph
// and synchronized, against the same ten issued one by one and synchronized, and the
// raw driver's empty-kernel launch plus cuStreamSynchronize (the floor a graph
// approaches: issue #22 asks for at most 1.5x of it); the -pdl runs with
// Tuning.ElementwisePDL (compute capability 9.0+). graph-launch is a launch alone,
// synchronized every 1000: the device's time per graph once the host keeps ahead.
func BenchmarkGraph(b *testing.B) {
	d := cudaDev(b)
	s, _ := d.NewStream()
	defer s.Close()
	x, err := gpu.Full[float32](s, 0.5, 512, 1000)
	if err != nil {
		b.Fatal(err)
	}
	y, _ := gpu.Zeros[float32](s, 512, 1000)
	defer x.Free()
	defer y.Free()
	if err := runTenOps(s, x, y); err != nil { // compile the kernels
		b.Fatal(err)
	}
	g, err := s.Capture(func() error { return runTenOps(s, x, y) })
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	bg := context.Background()
	ctx, h := raw(b, d)
	empty, _ := d.Builtin("empty")
	f := empty.BackendFunction().(*cuda.Function).Handle()
	b.Run("raw-empty-launch-sync", func(b *testing.B) {
		for b.Loop() {
			if err := ctx.LaunchKernel(f, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, h, nil, nil); err != nil {
				b.Fatal(err)
			}
			if err := ctx.StreamSynchronize(h); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("eager-10-sync", func(b *testing.B) {
		for b.Loop() {
			if err := errors.Join(runTenOps(s, x, y), s.Synchronize(bg)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("graph-10-sync", func(b *testing.B) {
		for b.Loop() {
			if err := errors.Join(g.Launch(s), s.Synchronize(bg)); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The same with programmatic dependent launch (Tuning.ElementwisePDL, compute
	// capability 9.0+): the graph captured with it, and the eager run.
	if d.Info().ComputeMajor >= 9 {
		tu := d.Tuning()
		tu.ElementwisePDL = true
		old, _ := d.SetTuning(tu)
		gp, err := s.Capture(func() error { return runTenOps(s, x, y) })
		if err != nil {
			d.SetTuning(old)
			b.Fatal(err)
		}
		b.Run("eager-10-sync-pdl", func(b *testing.B) {
			for b.Loop() {
				if err := errors.Join(runTenOps(s, x, y), s.Synchronize(bg)); err != nil {
					b.Fatal(err)
				}
			}
		})
		d.SetTuning(old)
		b.Run("graph-10-sync-pdl", func(b *testing.B) {
			for b.Loop() {
				if err := errors.Join(gp.Launch(s), s.Synchronize(bg)); err != nil {
					b.Fatal(err)
				}
			}
		})
		gp.Close()
	}
	b.Run("graph-launch", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if err := g.Launch(s); err != nil {
				b.Fatal(err)
			}
			if i++; i%1000 == 0 {
				s.Synchronize(bg)
			}
		}
		s.Synchronize(bg)
	})
}

// BenchmarkHostFunc: a host function's round trip (enqueue, the function, the next
// kernel, a synchronize) against the raw cuLaunchHostFunc with a C function (libc's
// free of NULL, no call into Go) and the empty kernel (gpubench's
// raw/hostfunc/round_trip/cuLaunchHostFunc has the callback into Go through cgo).
func BenchmarkHostFunc(b *testing.B) {
	d := cudaDev(b)
	s, _ := d.NewStream()
	defer s.Close()
	empty, _ := d.Builtin("empty")
	one := gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 1}}
	bg := context.Background()
	calls := 0
	b.Run("gpu", func(b *testing.B) {
		for b.Loop() {
			err := errors.Join(s.HostFunc(func() error { calls++; return nil }), s.Launch(empty, one), s.Synchronize(bg))
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	ctx, h := raw(b, d)
	f := empty.BackendFunction().(*cuda.Function).Handle()
	b.Run("raw-cuLaunchHostFunc-c", func(b *testing.B) {
		lib, err := dl.Open("libc.so.6")
		if err != nil {
			b.Skip(err)
		}
		free := lib.Lookup("free")
		for b.Loop() {
			err := errors.Join(ctx.LaunchHostFunc(h, free, 0),
				ctx.LaunchKernel(f, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, h, nil, nil), ctx.StreamSynchronize(h))
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRaceCheck: a launch with two tracked buffers, on a device whose race checker
// is off and on (two Device values of one backend device), on CUDA if there is one,
// else the CPU. With it off the figure must match BenchmarkTrackedLaunch's.
func BenchmarkRaceCheck(b *testing.B) {
	base, err := gpu.OpenBackend("cuda", 0)
	if err != nil {
		base, err = gpu.OpenBackend("cpu", 0)
	}
	if err != nil {
		b.Fatal(err)
	}
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			d, err := gpu.NewDevice(base.BackendDevice())
			if err != nil {
				b.Fatal(err)
			}
			d.SetRaceCheck(on)
			s, _ := d.NewStream()
			defer s.Close()
			add, _ := d.Builtin("add_u32")
			cfg := gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 32}}
			x, _ := s.Alloc(1024)
			y, _ := s.Alloc(1024)
			defer x.Free()
			defer y.Free()
			bg := context.Background()
			i := 0
			for b.Loop() {
				if err := s.Launch(add, cfg, gpu.Out(y), gpu.In(x), uint32(1), uint64(0)); err != nil {
					b.Fatal(err)
				}
				if i++; i%1000 == 0 {
					s.Synchronize(bg)
				}
			}
			if err := s.Synchronize(bg); err != nil {
				b.Fatal(err)
			}
		})
	}
}
