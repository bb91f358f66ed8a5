package gpu_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/conformance"
)

// Waits: policies, cancelled and ended contexts, the spin setting.

// With an invalid device wait policy, the synchronous copies fail with ErrInvalidValue:
// they must not go on in the background after returning that error.
func TestInvalidPolicySyncCopy(t *testing.T) {
	d, k := freshCPU(t)
	b, _ := d.Alloc(1 << 12)
	defer b.Free()
	d.SetWaitPolicy(gpu.WaitPolicy{Mode: 9})
	// Delay the default stream so the copy runs after CopyToHost returns.
	if err := k.SpinFor(d.DefaultStream(), 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	dst := make([]byte, 1<<12)
	err := b.CopyToHost(context.Background(), dst)
	if !errors.Is(err, gpu.ErrInvalidValue) {
		t.Fatalf("CopyToHost with an invalid policy = %v", err)
	}
	for i := range dst { // the caller owns dst again after an error
		dst[i] = 1
	}
	d.SetWaitPolicy(gpu.DefaultWaitPolicy)
	if err := d.Synchronize(context.Background()); err != nil {
		t.Fatal(err)
	}
	if dst[0] != 1 {
		t.Errorf("CopyToHost returned an error, then overwrote dst in the background")
	}
}

// Cancelled waits of every kind leave no goroutine behind once the work is done.
func TestCancelledWaitsNoLeak(t *testing.T) {
	d, k := freshCPU(t)
	s, _ := d.NewStream()
	defer s.Close()
	u, _ := d.AllocUnified(1 << 12)
	defer u.Free()
	b, _ := s.Alloc(1 << 12)
	defer b.Free()
	e, _ := d.NewEvent()
	defer e.Close()
	runtime.GC()
	g0 := runtime.NumGoroutine()
	for range 20 {
		if err := k.SpinFor(s, 20*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if err := k.FillU32(s, u, 1); err != nil {
			t.Fatal(err)
		}
		if err := s.Record(e); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		for _, mode := range []gpu.WaitMode{gpu.WaitAuto, gpu.WaitSpin} {
			p := gpu.WaitPolicy{Mode: mode}
			if err := e.Wait(ctx, p); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Event.Wait = %v", err)
			}
			if err := s.Synchronize(ctx, p); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Stream.Synchronize = %v", err)
			}
			if err := d.Synchronize(ctx, p); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Device.Synchronize = %v", err)
			}
		}
		if err := u.HostAccess(ctx, gpu.Read, func([]byte) error { return nil }); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("HostAccess = %v", err)
		}
		if err := b.CopyToHost(ctx, make([]byte, 16)); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("CopyToHost = %v", err)
		}
		select {
		case <-e.Done():
			t.Errorf("Done closed early")
		default:
		}
		cancel()
	}
	if err := d.Synchronize(context.Background()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > g0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > g0 {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines, %d before:\n%s", g, g0, buf[:runtime.Stack(buf, true)])
	}
}

// Every wait returns the error of a context that has ended before it, whatever it waits
// for: an idle stream's Synchronize as Device.Synchronize and Event.Wait do, under each
// policy.
func TestEndedContextIdleWaits(t *testing.T) {
	d, k := freshCPU(t)
	s, _ := d.NewStream()
	defer s.Close()
	ev, _ := d.NewEvent()
	if err := k.FillU32(s, conformance.Upload(t, d, conformance.Random(1000)), 7); err != nil {
		t.Fatal(err)
	}
	if err := s.Record(ev); err != nil {
		t.Fatal(err)
	}
	// Seen idle, each by a wait of its own: the waits below take the idle fast paths.
	for _, st := range []*gpu.Stream{s, d.DefaultStream()} {
		if err := st.Synchronize(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Synchronize(context.Background()); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	for _, c := range []struct {
		ctx  context.Context
		want error
	}{{cancelled, context.Canceled}, {expired, context.DeadlineExceeded}} {
		for _, mode := range []gpu.WaitMode{gpu.WaitAuto, gpu.WaitSpin, gpu.WaitBlock} {
			pol := gpu.WaitPolicy{Mode: mode}
			for name, err := range map[string]error{
				"Stream.Synchronize":         s.Synchronize(c.ctx, pol),
				"default Stream.Synchronize": d.DefaultStream().Synchronize(c.ctx, pol),
				"Device.Synchronize":         d.Synchronize(c.ctx, pol),
				"Event.Wait":                 ev.Wait(c.ctx, pol),
			} {
				if !errors.Is(err, c.want) {
					t.Errorf("%v, idle, with an ended context (%v): %v, want %v", name, mode, err, c.want)
				}
			}
		}
	}
	// HostAccess waits too: with nothing pending, it doesn't run f either.
	u, err := d.AllocUnified(64)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Free()
	for _, ctx := range []context.Context{cancelled, expired} {
		ran := false
		err := u.HostAccess(ctx, gpu.ReadWrite, func([]byte) error { ran = true; return nil })
		if err != ctx.Err() || ran {
			t.Errorf("HostAccess, idle, with an ended context: %v (f ran: %v), want %v without running f", err, ran, ctx.Err())
		}
	}
	// The idle waits still succeed with a live context.
	if err := s.Synchronize(context.Background()); err != nil {
		t.Errorf("Stream.Synchronize, idle: %v", err)
	}
}

// GPU_WAIT_SPIN sets the default spin at start-up: DefaultWaitPolicy's, a new device's,
// and that of every policy whose Spin is 0 (DefaultSpin's documentation), run in a child
// process with the variable set.
func TestWaitSpinEnv(t *testing.T) {
	if v := os.Getenv("GPU_TEST_WAIT_SPIN_CHILD"); v != "" {
		want, err := time.ParseDuration(v)
		if err != nil {
			t.Fatal(err)
		}
		d, k := freshCPU(t)
		if got := gpu.DefaultWaitPolicy.Spin; got != want {
			t.Errorf("DefaultWaitPolicy.Spin = %v, want GPU_WAIT_SPIN = %v", got, want)
		}
		if got := d.WaitPolicy(); got != (gpu.WaitPolicy{Mode: gpu.WaitAuto, Spin: want}) {
			t.Errorf("a new device's policy = %+v, want auto with a spin of %v", got, want)
		}
		for _, p := range []gpu.WaitPolicy{{}, {Mode: gpu.WaitAuto}, {Mode: gpu.WaitSpin}} {
			d.SetWaitPolicy(p)
			if got := d.WaitPolicy(); got != (gpu.WaitPolicy{Mode: p.Mode, Spin: want}) {
				t.Errorf("SetWaitPolicy(%+v): the policy is %+v, want a spin of %v", p, got, want)
			}
		}
		d.SetWaitPolicy(gpu.WaitPolicy{Spin: 3 * time.Millisecond})
		if got := d.WaitPolicy().Spin; got != 3*time.Millisecond {
			t.Errorf("SetWaitPolicy with a spin of 3ms: the spin is %v", got)
		}
		// The waits work under it.
		s, _ := d.NewStream()
		defer s.Close()
		if err := k.SpinFor(s, 5*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if err := s.Synchronize(context.Background(), gpu.WaitPolicy{}); err != nil {
			t.Fatal(err)
		}
		return
	}
	for _, v := range []string{"7ms", "-1ns"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestWaitSpinEnv$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "GPU_WAIT_SPIN="+v, "GPU_TEST_WAIT_SPIN_CHILD="+v)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestWaitSpinEnv") {
			t.Errorf("GPU_WAIT_SPIN=%s: the child process failed (%v):\n%s", v, err, out)
		}
	}
}
