package gokernel_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/gokernel"
)

// TestFirstLaunchInHostFuncDuringBuild: a host function that launches a Go kernel for
// the first time while another goroutine is building it. On CUDA the build's module
// load may synchronize the context, and so wait for the host function: the launch
// inside the function must neither wait for the build nor build, but return an error
// wrapping ErrInvalidValue at once (it used to wait for the build's lock: a deadlock).
// Elsewhere it waits for the build and runs. The other goroutine's launch runs on
// every device, and so does a launch inside a host function once the kernel is built.
func TestFirstLaunchInHostFuncDuringBuild(t *testing.T) {
	forDevices(t, func(t *testing.T, s *gpu.Stream) {
		dev := s.Device()
		cuda := dev.Info().Backend == "cuda"
		k := newKernel(t, Saxpy) // a new kernel: nothing built on any device
		other, err := dev.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		const n = 1000
		xs, ys, x2s, y2s := randF32(n), randF32(n), randF32(n), randF32(n)
		x, y := fromSlice(t, s, xs), fromSlice(t, s, ys)
		x2, y2 := fromSlice(t, other, x2s), fromSlice(t, other, y2s)
		if err := s.Synchronize(context.Background()); err != nil {
			t.Fatal(err)
		}

		// The build of the other goroutine's first launch holds its lock until the
		// host function has returned (on CUDA) or a moment has passed (elsewhere,
		// where the function waits for the build).
		building, hfDone := make(chan struct{}), make(chan struct{})
		var once sync.Once
		gokernel.SetCompileHook(func(entry, src string) {
			once.Do(func() {
				close(building)
				wait := 300 * time.Millisecond
				if cuda {
					wait = 30 * time.Second // (a failure, not a hang, if the function waits)
				}
				select {
				case <-hfDone:
				case <-time.After(wait):
				}
			})
		})
		defer gokernel.SetCompileHook(nil)
		built := make(chan error, 1)
		go func() { built <- k.LaunchN(other, n, 2.5, x2, y2) }()
		<-building

		var inside error
		if err := s.HostFunc(func() error {
			defer close(hfDone)
			inside = k.LaunchN(s, n, 1.5, x, y)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-hfDone:
		case <-time.After(60 * time.Second):
			t.Fatal("the host function's launch waited for the kernel's build")
		}
		if err := <-built; err != nil {
			t.Fatalf("the building goroutine's launch: %v", err)
		}
		if err := s.Synchronize(context.Background()); err != nil {
			t.Fatal(err)
		}
		wantY := make([]float32, n)
		for i := range wantY {
			wantY[i] = ys[i]
			if !cuda {
				wantY[i] = 1.5*xs[i] + ys[i]
			}
		}
		if cuda != errors.Is(inside, gpu.ErrInvalidValue) {
			t.Fatalf("the first launch inside a host function during the build (on %s): %v", dev.Info().Backend, inside)
		}
		for i, g := range toSlice(t, y) {
			if g != wantY[i] {
				t.Fatalf("y[%d] = %v, want %v (launch inside the function: %v)", i, g, wantY[i], inside)
			}
		}
		for i, g := range toSlice(t, y2) {
			if want := 2.5*x2s[i] + y2s[i]; g != want {
				t.Fatalf("y2[%d] = %v, want %v", i, g, want)
			}
		}

		// Built: a launch inside a host function runs on every device.
		if err := s.HostFunc(func() error { inside = k.LaunchN(s, n, -1, x, y); return nil }); err != nil {
			t.Fatal(err)
		}
		if err := s.Synchronize(context.Background()); err != nil {
			t.Fatal(err)
		}
		if inside != nil {
			t.Fatalf("a launch inside a host function once built: %v", inside)
		}
		for i, g := range toSlice(t, y) {
			if want := wantY[i] - xs[i]; g != want {
				t.Fatalf("after the second launch y[%d] = %v, want %v", i, g, want)
			}
		}
	})
}
