package gpu

import (
	"testing"
	"time"

	"github.com/go-gpu/gpu/backend/cpu"
)

// TestAccessScopeEnqueuesWhileCaptureWaits: an Access scope on s enqueues an operation
// of the package on s (another buffer) while another goroutine's BeginCapture waits for
// the scope's hold: the operation must go ahead of the switch (it waited for it, which
// waits for the scope: a deadlock).
func TestAccessScopeEnqueuesWhileCaptureWaits(t *testing.T) {
	_, s := cpuTestStream(t)
	b, err := s.Alloc(64)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	x, err := FromSlice(s, []float32{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Free()
	switching := func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.switching
	}
	captured := make(chan error, 1)
	var inner error
	done := make(chan error, 1)
	go func() {
		done <- b.Access(s, Read, func(DevicePtr) error {
			go func() { captured <- s.BeginCapture() }()
			for !switching() {
				time.Sleep(time.Millisecond)
			}
			var y *Array[float32]
			y, inner = Eval[float32](s, "x*2", Vars{"x": x})
			if inner == nil {
				y.Free()
			}
			return nil
		})
	}()
	select {
	case err := <-done:
		if err != nil || inner != nil {
			t.Fatal(err, inner)
		}
	case <-time.After(10 * time.Second):
		go panic("deadlock: an Access scope's operation on its stream while a capture waits")
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
}

// cpuTestStream returns a new CPU device of two workers and a stream of it, closed when
// the test ends.
func cpuTestStream(t testing.TB) (*Device, *Stream) {
	t.Helper()
	d, err := NewDevice(cpu.New(2))
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return d, s
}
