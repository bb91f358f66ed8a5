package gpu

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
)

// quiesceDev is the CPU backend with the CUDA driver's behaviour around host frees:
// FreeNow (cuMemFreeHost, cuMemFree) takes a lock that event queries and records wait
// for, and holds it while it waits for every stream's work. A stream that waits for a
// ring's word (WaitValue32) whose drainer must first query an event then deadlocks
// with the free, unless the device keeps frees away from the rings' waits (freeGate).
type quiesceDev struct {
	*cpu.Device
	lock sync.RWMutex
}

type quiesceStream struct {
	*cpu.Stream
	d *quiesceDev
}

type quiesceEvent struct {
	*cpu.Event
	d *quiesceDev
}

func (d *quiesceDev) NewStream() (backend.Stream, error) {
	s, err := d.Device.NewStream()
	if err != nil {
		return nil, err
	}
	return &quiesceStream{s.(*cpu.Stream), d}, nil
}

func (d *quiesceDev) NewEvent(timing bool) (backend.Event, error) {
	e, err := d.Device.NewEvent(timing)
	if err != nil {
		return nil, err
	}
	return &quiesceEvent{e.(*cpu.Event), d}, nil
}

func (d *quiesceDev) FreeNow(m backend.Mem) error {
	d.lock.Lock()
	defer d.lock.Unlock()
	if err := d.Device.Synchronize(); err != nil {
		return err
	}
	return d.Device.FreeNow(m)
}

func (e *quiesceEvent) Query() (bool, error) {
	e.d.lock.RLock()
	defer e.d.lock.RUnlock()
	return e.Event.Query()
}

func (e *quiesceEvent) Synchronize() error {
	for {
		if done, err := e.Query(); done || err != nil {
			return err
		}
		time.Sleep(20 * time.Microsecond)
	}
}

func (e *quiesceEvent) Elapsed(start backend.Event) (time.Duration, error) {
	return e.Event.Elapsed(start.(*quiesceEvent).Event)
}

func (s *quiesceStream) Record(e backend.Event) error {
	s.d.lock.RLock()
	defer s.d.lock.RUnlock()
	return s.Stream.Record(e.(*quiesceEvent).Event)
}

func (s *quiesceStream) WaitEvent(e backend.Event) error {
	return s.Stream.WaitEvent(e.(*quiesceEvent).Event)
}

// Pinned buffers freed while streams copy pageable memory through their rings: no
// deadlock (the free waits for the rings' jobs, which wait for nothing it holds), and
// the copies come back right.
func TestFreeDuringRingWaits(t *testing.T) {
	d, err := NewDevice(&quiesceDev{Device: cpu.New(2)})
	if err != nil {
		t.Fatal(err)
	}
	d.forceStaging = true
	ctx := context.Background()
	done := make(chan struct{})
	stop := make(chan struct{})
	go func() {
		defer close(done)
		var copiers, freers sync.WaitGroup
		for g := range 6 {
			copiers.Go(func() {
				s, err := d.NewStream()
				if err != nil {
					t.Error(err)
					return
				}
				defer s.Close()
				n := 1000 + rand.IntN(5000) + g
				b, err := d.Alloc(int64(n))
				if err != nil {
					t.Error(err)
					return
				}
				defer b.Free()
				src, dst := make([]byte, n), make([]byte, n)
				for it := range 60 {
					for i := range src {
						src[i] = byte(rand.Uint32())
						dst[i] = 0xA5
					}
					if err := s.CopyHtoD(b, src); err != nil {
						t.Error(err)
						return
					}
					if err := s.CopyDtoH(dst, b); err != nil {
						t.Error(err)
						return
					}
					if err := s.Synchronize(ctx); err != nil {
						t.Error(err)
						return
					}
					for i := range src {
						if dst[i] != src[i] {
							t.Errorf("goroutine %d, iteration %d: byte %d of %d = %#x, want %#x", g, it, i, n, dst[i], src[i])
							return
						}
					}
				}
			})
		}
		for range 2 {
			freers.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					p, err := d.AllocPinned(4096)
					if err != nil {
						t.Error(err)
						return
					}
					if err := p.Free(); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		copiers.Wait()
		close(stop)
		freers.Wait()
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		buf := make([]byte, 1<<20)
		t.Fatalf("deadlock: a host free and the rings' waits\n%s", buf[:runtime.Stack(buf, true)])
	}
	if err := d.Synchronize(ctx); err != nil {
		t.Fatal(err)
	}
}
