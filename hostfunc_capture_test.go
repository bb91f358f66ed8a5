package gpu

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestBeginCaptureInOwnHostFuncWhileWaited: BeginCapture called inside one of the
// stream's own host functions is an error wrapping ErrInvalidValue even while another
// goroutine synchronizes the stream (and so holds it, waiting for the function): it
// used to wait for that goroutine to let go of the stream first (exclusive), which
// waits for the function, a deadlock.
func TestBeginCaptureInOwnHostFuncWhileWaited(t *testing.T) {
	_, s := cpuTestStream(t)
	held := func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.holds > 0
	}
	inner := make(chan error, 1)
	returned := make(chan struct{}) // (then a hold is the Synchronize's, not HostFunc's own)
	if err := s.HostFunc(func() error {
		<-returned
		for !held() { // until the Synchronize below holds s
			time.Sleep(time.Millisecond)
		}
		inner <- s.BeginCapture()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	close(returned)
	synced := make(chan error, 1)
	go func() { synced <- s.Synchronize(context.Background()) }()
	select {
	case err := <-inner:
		if !errors.Is(err, ErrInvalidValue) {
			t.Errorf("BeginCapture inside the stream's own host function = %v, want ErrInvalidValue", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("deadlock: BeginCapture inside the stream's own host function while the stream is synchronized")
	}
	if err := <-synced; err != nil {
		t.Fatal(err)
	}
	if s.Capturing() {
		t.Error("the stream captures after a refused BeginCapture")
	}
}

// TestBeginCaptureInOwnHostFuncInPlace: where host functions run in place (no stream
// memory operations: HostFunc runs f before it returns, holding the stream), BeginCapture
// inside f is an error wrapping ErrInvalidValue, not a wait for HostFunc's own hold.
func TestBeginCaptureInOwnHostFuncInPlace(t *testing.T) {
	asyncHostFuncs = false
	defer func() { asyncHostFuncs = true }()
	_, s := cpuTestStream(t)
	done := make(chan error, 1)
	var inner error
	go func() {
		done <- s.HostFunc(func() error {
			inner = s.BeginCapture()
			return nil
		})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("deadlock: BeginCapture inside the stream's own host function, run in place")
	}
	if !errors.Is(inner, ErrInvalidValue) {
		t.Errorf("BeginCapture inside the stream's own host function = %v, want ErrInvalidValue", inner)
	}
	if s.Capturing() {
		t.Error("the stream captures after a refused BeginCapture")
	}
}

// TestBeginCaptureFaultedStream: a stream faulted by a failed host function returns
// the fault from every later operation (Stream.HostFunc), BeginCapture included; it
// used to start a capture.
func TestBeginCaptureFaultedStream(t *testing.T) {
	_, s := cpuTestStream(t)
	boom := errors.New("boom")
	if err := s.HostFunc(func() error { return boom }); err != nil {
		t.Fatal(err)
	}
	if err := s.Synchronize(context.Background()); !errors.Is(err, boom) {
		t.Fatalf("Synchronize after a failed host function = %v, want its error", err)
	}
	if err := s.BeginCapture(); !errors.Is(err, boom) {
		t.Errorf("BeginCapture on a faulted stream = %v, want the host function's error", err)
	}
	if s.Capturing() {
		t.Error("a faulted stream captures")
	}
	if g, err := s.Capture(func() error { return nil }); !errors.Is(err, boom) {
		t.Errorf("Capture on a faulted stream = %v, %v, want the host function's error", g, err)
	}
}

// TestHostFuncEnqueuesWhileCaptureWaits: a host function of s enqueues work on s while
// another goroutine synchronizes s (holding it, waiting for the function) and a third
// begins a capture on s (waiting for that hold to end). The function's operation goes
// ahead of the waiting switch: it used to wait for the switch, which waits for the
// Synchronize, which waits for the function (a deadlock of the three). Its result is
// computed (not captured), and the capture then begins and ends.
func TestHostFuncEnqueuesWhileCaptureWaits(t *testing.T) {
	for _, async := range []bool{true, false} {
		t.Run(map[bool]string{true: "async", false: "in place"}[async], func(t *testing.T) {
			if !async {
				// (in place, HostFunc runs f before it returns: f's Synchronize-like hold is
				// HostFunc's own, taken before the switch waits)
				asyncHostFuncs = false
				defer func() { asyncHostFuncs = true }()
			}
			_, s := cpuTestStream(t)
			xs := []float32{1.5, -2, 7.25, 3}
			x, err := FromSlice(s, xs)
			if err != nil {
				t.Fatal(err)
			}
			defer x.Free()
			state := func() (holds int, switching bool) {
				s.mu.Lock()
				defer s.mu.Unlock()
				return s.holds, s.switching
			}
			var y *Array[float32]
			var inner error
			captured := make(chan error, 1)
			// (async: HostFunc's own hold may still be there when f starts; once HostFunc
			// has returned, a hold is the Synchronize's)
			returned := make(chan struct{})
			hf := func() error {
				if async {
					<-returned
					for h, _ := state(); h == 0; h, _ = state() { // the Synchronize below holds s
						time.Sleep(time.Millisecond)
					}
				}
				go func() { captured <- s.BeginCapture() }()
				for _, sw := state(); !sw; _, sw = state() { // the switch waits
					time.Sleep(time.Millisecond)
				}
				y, inner = Eval[float32](s, "x*2 - 1", Vars{"x": x})
				return nil
			}
			synced := make(chan error, 1)
			if async {
				if err := s.HostFunc(hf); err != nil {
					t.Fatal(err)
				}
				close(returned)
				go func() { synced <- s.Synchronize(context.Background()) }()
			} else {
				go func() { synced <- s.HostFunc(hf) }()
			}
			for _, ch := range []chan error{synced, captured} {
				select {
				case err := <-ch:
					if err != nil {
						t.Fatal(err)
					}
				case <-time.After(20 * time.Second):
					go panic("deadlock: a host function's operation, a Synchronize and a BeginCapture of one stream")
					select {}
				}
			}
			g, err := s.EndCapture()
			if err != nil {
				t.Fatal(err)
			}
			g.Close()
			if inner != nil {
				t.Fatalf("the host function's Eval: %v", inner)
			}
			defer y.Free()
			got, err := y.ToSlice(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range xs {
				if got[i] != v*2-1 {
					t.Fatalf("the host function's result %v, want x*2 - 1 of %v", got, xs)
				}
			}
		})
	}
}
