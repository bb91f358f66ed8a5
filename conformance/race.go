package conformance

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-gpu/gpu"
)

// FailOnRace turns d's race checker on for the rest of the test and makes each report
// fail it (the checker's test mode); the checker is turned off again at the end.
func FailOnRace(t testing.TB, d *gpu.Device) {
	t.Helper()
	d.SetRaceCheck(true)
	d.SetRaceHandler(func(r *gpu.RaceReport) { t.Errorf("race checker: %v", r) })
	t.Cleanup(func() {
		d.SetRaceHandler(nil)
		d.SetRaceCheck(false)
	})
}

// RunRace checks the race checker on d: each kind of race, made on purpose, is
// reported once with both accesses' stacks, and the same work ordered right is not;
// reports without a handler go to the next wait.
func RunRace(t *testing.T, d *gpu.Device) {
	k := Kernels(t, d)
	was := d.RaceCheck()
	d.SetRaceCheck(true)
	defer d.SetRaceCheck(was)
	for _, tc := range []struct {
		name string
		f    func(*testing.T, *K, *raceLog)
	}{
		{"RawPointer", testRaceRawPointer}, {"Untracked", testRaceUntracked},
		{"PinnedHost", testRacePinnedHost}, {"BackendStream", testRaceBackend},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := &raceLog{}
			d.SetRaceHandler(log.add)
			defer d.SetRaceHandler(nil)
			tc.f(t, k, log)
		})
	}
	t.Run("ToNextWait", func(t *testing.T) { testRaceToWait(t, k) })
}

// quietly waits for s's work through the backend, which the checker doesn't see: the
// deliberate races below then don't happen for real (Go's race detector, watching the
// CPU backend's memory, would report them), yet nothing the checker knows orders them.
func quietly(t *testing.T, s *gpu.Stream) {
	t.Helper()
	must(t, s.BackendStream().Synchronize())
}

// raceLog collects reports.
type raceLog struct {
	mu      sync.Mutex
	reports []*gpu.RaceReport
}

func (l *raceLog) add(r *gpu.RaceReport) {
	l.mu.Lock()
	l.reports = append(l.reports, r)
	l.mu.Unlock()
}

// take returns the reports so far and forgets them.
func (l *raceLog) take() []*gpu.RaceReport {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.reports
	l.reports = nil
	return r
}

// want checks that the reports since the last take are exactly one of kind, naming
// fn in both stacks; none if kind is "".
func (l *raceLog) want(t *testing.T, what, kind, fn string) {
	t.Helper()
	rs := l.take()
	if kind == "" {
		for _, r := range rs {
			t.Errorf("%s: unexpected report: %v", what, r)
		}
		return
	}
	if len(rs) != 1 {
		t.Errorf("%s: %d reports, want 1 of %q: %v", what, len(rs), kind, rs)
		return
	}
	r := rs[0]
	if r.Kind != kind || !errors.Is(r, gpu.ErrRace) {
		t.Errorf("%s: report of kind %q, want %q", what, r.Kind, kind)
	}
	for i, a := range []gpu.RaceAccess{r.First, r.Second} {
		if !strings.Contains(a.Stack, fn) {
			t.Errorf("%s: access %d's stack doesn't name %s:\n%s", what, i+1, fn, a.Stack)
		}
	}
	t.Logf("%s: %v", what, r)
}

// testRaceRawPointer: a pointer from Access used in the scope is fine; passed to
// Launch after the scope ended, it is a race.
func testRaceRawPointer(t *testing.T, k *K, log *raceLog) {
	const n = 1 << 10
	s, s2 := stream(t, k.D), stream(t, k.D)
	x := alloc(t, k.D, 4*n)
	var p gpu.DevicePtr
	must(t, x.Access(s, gpu.Write, func(ptr gpu.DevicePtr) error {
		p = ptr
		return s.Launch(k.Fill, grid(n), ptr, uint32(1), uint64(n))
	}))
	log.want(t, "a raw pointer used in its scope", "", "")
	quietly(t, s)
	must(t, s2.Launch(k.Fill, grid(n), p, uint32(2), uint64(n)))
	log.want(t, "a raw pointer used after its scope", gpu.RaceRawPointer, "testRaceRawPointer")
	must(t, k.D.Synchronize(context.Background()))
}

// testRaceUntracked: an untracked buffer written on one stream and read on another
// with nothing between is a race; with an event between, a host wait between, or on
// disjoint halves, it is not.
func testRaceUntracked(t *testing.T, k *K, log *raceLog) {
	const n = 1 << 12
	a, b := stream(t, k.D), stream(t, k.D)
	x := alloc(t, k.D, 4*n)
	y := alloc(t, k.D, 4*n)
	must(t, k.D.Synchronize(context.Background()))
	must(t, x.SetTracking(false))
	ev, err := k.D.NewEvent(gpu.DisableTiming)
	must(t, err)
	defer ev.Close()
	// An event between.
	must(t, k.FillU32(a, x, 1))
	must(t, a.Record(ev))
	must(t, b.WaitEvent(ev))
	must(t, k.AddU32(b, y, x, 1))
	log.want(t, "ordered by an event", "", "")
	must(t, b.Synchronize(context.Background())) // (the write below must follow the read)
	// A host wait between.
	must(t, k.FillU32(a, x, 2))
	must(t, a.Synchronize(context.Background()))
	must(t, k.AddU32(b, y, x, 1))
	log.want(t, "ordered by a host wait", "", "")
	must(t, b.Synchronize(context.Background()))
	// Disjoint halves at once.
	lo, _ := x.Slice(0, 2*n)
	hi, _ := x.Slice(2*n, 2*n)
	must(t, k.FillU32(a, lo, 3))
	must(t, k.FillU32(b, hi, 4))
	log.want(t, "disjoint halves", "", "")
	must(t, k.D.Synchronize(context.Background()))
	// Nothing between: a race.
	must(t, k.FillU32(a, x, 5))
	quietly(t, a)
	must(t, k.AddU32(b, y, x, 1))
	log.want(t, "nothing between", gpu.RaceUntracked, "testRaceUntracked")
	must(t, k.D.Synchronize(context.Background()))
}

// testRacePinnedHost: the host writing pinned memory that a pending copy reads is a
// race; after a wait for the copy it is not.
func testRacePinnedHost(t *testing.T, k *K, log *raceLog) {
	const n = 1 << 12
	s := stream(t, k.D)
	pin, err := k.D.AllocPinned(4 * n)
	must(t, err)
	defer pin.Free()
	dev := alloc(t, k.D, 4*n)
	var host []byte
	must(t, pin.HostAccess(context.Background(), gpu.Write, func(h []byte) error { host = h; return nil }))
	must(t, k.SpinFor(s, 20*time.Millisecond))
	must(t, s.CopyHtoD(dev, host))
	quietly(t, s)
	must(t, pin.HostAccess(context.Background(), gpu.Write, func(h []byte) error { h[0] = 1; return nil }))
	log.want(t, "a host write during the copy", gpu.RacePinnedHost, "testRacePinnedHost")
	must(t, s.Synchronize(context.Background()))
	must(t, pin.HostAccess(context.Background(), gpu.Write, func(h []byte) error { h[0] = 2; return nil }))
	log.want(t, "a host write after a wait", "", "")
}

// testRaceBackend: work enqueued through BackendStream on a buffer that another stream
// writes, not waited for, is a race; after a wait it is not.
func testRaceBackend(t *testing.T, k *K, log *raceLog) {
	const n = 1 << 12
	a, b := stream(t, k.D), stream(t, k.D)
	x := alloc(t, k.D, 4*n)
	must(t, k.SpinFor(a, 10*time.Millisecond))
	must(t, k.FillU32(a, x, 1))
	quietly(t, a)
	mem, off := x.BackendMem()
	must(t, b.BackendStream().Memset(mem, off, 0, 4, n))
	log.want(t, "a memset through BackendStream while another stream writes", gpu.RaceBackend, "testRaceBackend")
	must(t, a.Synchronize(context.Background()))
	must(t, b.BackendStream().Memset(mem, off, 0, 4, n))
	log.want(t, "after a wait", "", "")
	must(t, k.D.Synchronize(context.Background()))
}

// testRaceToWait: without a handler, a report goes to the next wait, once.
func testRaceToWait(t *testing.T, k *K) {
	const n = 1 << 10
	s, s2 := stream(t, k.D), stream(t, k.D)
	x := alloc(t, k.D, 4*n)
	var p gpu.DevicePtr
	must(t, x.Access(s, gpu.Write, func(ptr gpu.DevicePtr) error { p = ptr; return nil }))
	quietly(t, s)
	must(t, s2.Launch(k.Fill, grid(n), p, uint32(2), uint64(n)))
	err := s2.Synchronize(context.Background())
	var r *gpu.RaceReport
	if !errors.Is(err, gpu.ErrRace) || !errors.As(err, &r) || r.Kind != gpu.RaceRawPointer {
		t.Errorf("the wait after a race = %v, want a RaceReport of kind %q", err, gpu.RaceRawPointer)
	}
	must(t, k.D.Synchronize(context.Background()))
}
