package gpu_test

import (
	"runtime"
	"runtime/debug"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/backend/cpu"
)

// TestLaunchKeepsArguments: an array whose last use is as a launch's argument (In(x)
// of a temporary, an operation's operand) stays alive until the launch is tracked,
// while the garbage collector runs all along: its buffer's cleanup (a free) used to
// run mid-launch, which then failed with "buffer used after Free" (gokernel's
// TestCaptureRefused under GOGC=1 showed it). CPU backend: the collector's timing is
// the same on every backend.
func TestLaunchKeepsArguments(t *testing.T) {
	d, err := gpu.OpenBackend("cpu", 0)
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 64
	fn, err := gpu.NewGoFunction(d, "copy", func(l *cpu.Launch) error {
		copy(cpu.Slice[float32](l.Mem(1))[:n], cpu.Slice[float32](l.Mem(0))[:n])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer debug.SetGCPercent(debug.SetGCPercent(1))
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			runtime.GC()
		}
	}()
	defer func() { stop.Store(true); <-done }()
	xs := make([]float32, n)
	for i := range xs {
		xs[i] = float32(i) + 0.5
	}
	tmp := func() *gpu.Array[float32] { return mustArr[float32](t)(gpu.FromSlice(s, xs)) }
	out := tmp()
	defer out.Free()
	iters := 300
	if testing.Short() {
		iters = 100
	}
	for i := range iters {
		if err := s.Launch(fn, gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 1}}, gpu.In(tmp()), gpu.Out(out)); err != nil {
			t.Fatalf("launch %d: %v", i, err)
		}
		// LaunchChecked: more work between the argument and the launch's tracking.
		if err := s.LaunchChecked(fn, gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 1}}, func([]uint32) error { return nil },
			gpu.In(tmp()), gpu.Out(out)); err != nil {
			t.Fatalf("checked launch %d: %v", i, err)
		}
		y, err := gpu.Add(s, tmp(), tmp())
		if err != nil {
			t.Fatalf("Add %d: %v", i, err)
		}
		y.Free()
	}
	if got := toSlice(t, out); !slices.Equal(got, xs) {
		t.Fatalf("the copies: %v", got)
	}
}
