package gpu

import (
	"testing"
	"time"

	"github.com/go-gpu/gpu/backend/cpu"
)

// TestHostFuncInPlaceNestedEnqueuesWhileCaptureWaits: a host function run in place
// that runs another host function of its stream in place, and then enqueues work on
// the stream while a BeginCapture waits for HostFunc's hold: the inner function's end
// must not unmark the outer one (or the outer's operation waits for the switch, which
// waits for the outer's HostFunc: a deadlock).
func TestHostFuncInPlaceNestedEnqueuesWhileCaptureWaits(t *testing.T) {
	asyncHostFuncs = false
	defer func() { asyncHostFuncs = true }()
	for _, concurrent := range []bool{false, true} {
		d, err := NewDevice(cpu.New(2))
		if err != nil {
			t.Fatal(err)
		}
		s, err := d.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		x, err := FromSlice(s, []float32{1, 2, 3})
		if err != nil {
			t.Fatal(err)
		}
		switching := func() bool {
			s.mu.Lock()
			defer s.mu.Unlock()
			return s.switching
		}
		captured := make(chan error, 1)
		var inner error
		started, otherDone := make(chan struct{}), make(chan error, 1)
		hf := func() error {
			if concurrent {
				// another goroutine's host function of s, in place, begins and ends meanwhile
				close(started)
				if err := <-otherDone; err != nil {
					return err
				}
			} else if err := s.HostFunc(func() error { return nil }); err != nil {
				return err
			}
			go func() { captured <- s.BeginCapture() }()
			for !switching() {
				time.Sleep(time.Millisecond)
			}
			_, inner = Eval[float32](s, "x*2", Vars{"x": x})
			return nil
		}
		done := make(chan error, 1)
		go func() { done <- s.HostFunc(hf) }()
		if concurrent {
			<-started
			otherDone <- s.HostFunc(func() error { return nil })
		}
		select {
		case err := <-done:
			if err != nil || inner != nil {
				t.Fatal(err, inner)
			}
		case <-time.After(10 * time.Second):
			go panic("deadlock (concurrent " + map[bool]string{true: "yes", false: "no"}[concurrent] + ")")
			select {}
		}
		if err := <-captured; err != nil {
			t.Fatal(err)
		}
		g, err := s.EndCapture()
		if err != nil {
			t.Fatal(err)
		}
		g.Close()
		s.Close()
	}
}
