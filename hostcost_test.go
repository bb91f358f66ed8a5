package gpu

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/internal/testenv"
)

// countDev is a backend that reports itself as a CUDA device of compute capability 9.0
// (132 multiprocessors, as an H200) and does nothing but count its calls: the array
// layer's whole CUDA path runs (planning, PTX generation once, launch geometry), and
// the counts say which driver calls an operation makes per call.
type countDev struct {
	cpu *cpu.Device
	mu  sync.Mutex
	n   map[string]int
	ptr uint64
	// first is the time of the first enqueued operation since mark was cleared.
	first  time.Time
	marked bool
	// coopErr, when set, is what every cooperative launch returns.
	coopErr error
}
type countStream struct{ d *countDev }
type countEvent struct{ d *countDev }
type countMem struct {
	ptr  uint64
	size int64
	kind backend.MemKind
	host []byte
}
type countModule struct{ d *countDev }
type countFunc struct{ name string }

func newCountDev() *countDev { return &countDev{cpu: cpu.New(1), n: map[string]int{}, ptr: 1 << 32} }

// newCountStream returns a counting device, the Device over it and a stream of it.
func newCountStream(tb testing.TB) (*countDev, *Device, *Stream) {
	tb.Helper()
	cd := newCountDev()
	d, err := NewDevice(cd)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := d.NewStream()
	if err != nil {
		tb.Fatal(err)
	}
	return cd, d, s
}

// countCalls runs f three times (the first calls' one-time work), then calls times,
// and returns the driver calls of those.
func countCalls(t *testing.T, cd *countDev, name string, f func() error, calls int) map[string]int {
	t.Helper()
	for range 3 {
		if err := f(); err != nil {
			t.Fatal(name, err)
		}
	}
	cd.take()
	for range calls {
		if err := f(); err != nil {
			t.Fatal(name, err)
		}
	}
	return cd.take()
}

func (d *countDev) add(name string) {
	d.mu.Lock()
	d.n[name]++
	d.mu.Unlock()
}

// enq counts an enqueued operation and notes the time of the first.
func (d *countDev) enq(name string) {
	d.mu.Lock()
	d.n[name]++
	if !d.marked {
		d.first, d.marked = time.Now(), true
	}
	d.mu.Unlock()
}

func (d *countDev) mark() {
	d.mu.Lock()
	d.marked = false
	d.mu.Unlock()
}

// take returns the counts since the last take, "name:n" sorted, and resets them.
func (d *countDev) take() map[string]int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := d.n
	d.n = map[string]int{}
	return n
}

func (d *countDev) Info() backend.Info {
	i := d.cpu.Info()
	i.Backend, i.Name = "cuda", "counting fake"
	i.ComputeMajor, i.ComputeMinor = 9, 0
	i.Multiprocessors, i.WarpSize = 132, 32
	i.MaxThreadsPerBlock, i.MaxSharedPerBlock = 1024, 227<<10
	i.L2CacheBytes = 50 << 20
	return i
}
func (d *countDev) NewStream() (backend.Stream, error) {
	d.add("NewStream")
	return countStream{d}, nil
}
func (d *countDev) NewEvent(bool) (backend.Event, error) {
	d.add("NewEvent")
	return countEvent{d}, nil
}
func (d *countDev) Alloc(k backend.MemKind, n int64, s backend.Stream) (backend.Mem, error) {
	d.mu.Lock()
	d.n["Alloc/"+k.String()]++
	p := d.ptr
	d.ptr += uint64(n+4095) &^ 4095
	d.mu.Unlock()
	m := &countMem{ptr: p, size: n, kind: k}
	if k != backend.DeviceMem {
		m.host = make([]byte, n)
	}
	return m, nil
}
func (d *countDev) FreeNow(backend.Mem) error      { d.add("FreeNow"); return nil }
func (d *countDev) MemInfo() (int64, int64, error) { return 1 << 40, 1 << 40, nil }
func (d *countDev) TrimPool(int64) error           { return nil }
func (d *countDev) LoadModule([]byte) (backend.Module, error) {
	d.add("LoadModule")
	return countModule{d}, nil
}
func (d *countDev) Builtin(n string) (backend.Function, error)       { return countFunc{n}, nil }
func (d *countDev) Synchronize() error                               { d.add("CtxSynchronize"); return nil }
func (d *countDev) CanAccessPeer(backend.Device) (bool, error)       { return true, nil }
func (d *countDev) EnablePeerAccess(backend.Device) error            { return nil }
func (m countModule) Function(name string) (backend.Function, error) { return countFunc{name}, nil }
func (m countModule) Unload() error                                  { return nil }
func (f countFunc) Name() string                                     { return f.name }
func (s countStream) Launch(f backend.Function, cfg backend.LaunchConfig, _ []backend.Arg) error {
	s.d.enq("Launch/" + f.Name())
	if cfg.Cooperative {
		s.d.enq("Cooperative")
		return s.d.coopErr
	}
	return nil
}
func (s countStream) Memset(backend.Mem, int64, uint32, int, int64) error {
	s.d.enq("Memset")
	return nil
}
func (s countStream) Copy(backend.Mem, int64, backend.Mem, int64, int64) error {
	s.d.enq("Copy")
	return nil
}
func (s countStream) Copy2D(backend.Mem, int64, int64, backend.Mem, int64, int64, int64, int64) error {
	s.d.enq("Copy2D")
	return nil
}
func (s countStream) CopyFromHost(backend.Mem, int64, []byte) error {
	s.d.enq("CopyFromHost")
	return nil
}
func (s countStream) CopyToHost([]byte, backend.Mem, int64) error { s.d.enq("CopyToHost"); return nil }
func (s countStream) Record(backend.Event) error                  { s.d.add("Record"); return nil }
func (s countStream) WaitEvent(backend.Event) error               { s.d.add("WaitEvent"); return nil }
func (s countStream) Query() (bool, error)                        { s.d.add("StreamQuery"); return true, nil }
func (s countStream) Synchronize() error                          { s.d.add("StreamSynchronize"); return nil }
func (s countStream) FreeAsync(backend.Mem) error                 { s.d.add("FreeAsync"); return nil }
func (s countStream) Destroy() error                              { return nil }
func (e countEvent) Query() (bool, error)                         { e.d.add("EventQuery"); return true, nil }
func (e countEvent) Synchronize() error                           { e.d.add("EventSynchronize"); return nil }
func (e countEvent) Elapsed(backend.Event) (time.Duration, error) { return 0, nil }
func (e countEvent) Destroy() error                               { return nil }
func (m *countMem) Ptr() uint64                                   { return m.ptr }
func (m *countMem) Size() int64                                   { return m.size }
func (m *countMem) Kind() backend.MemKind                         { return m.kind }
func (m *countMem) Host() []byte                                  { return m.host }

// hostCostOps returns the operations whose host cost the probes measure, at sizes
// whose outputs the block cache serves (no allocation in the steady state but the
// operations' own).
func hostCostOps(t testing.TB, s *Stream) ([]string, map[string]func() error) {
	const side = 1024
	a, _ := Empty[float32](s, side/4, side) // rows of 4 KiB: the pitched copies' shortest
	b, _ := Empty[float32](s, side/4, side)
	v0, _ := Empty[float32](s, side*side/2)
	v1, _ := Empty[float32](s, side*side/2)
	bins, _ := Empty[float32](s, 4096)
	vals, _ := Empty[float32](s, side*side/4)
	idx, _ := Empty[int64](s, side*side/4)
	big, _ := Empty[float32](s, side*side)
	keys, _ := Empty[float32](s, 512000)
	ops := map[string]func() error{
		"concat1": func() error {
			o, err := Concatenate(s, []*Array[float32]{a, b}, 1)
			if err == nil {
				o.Free()
			}
			return err
		},
		"concat0": func() error {
			o, err := Concatenate(s, []*Array[float32]{v0, v1}, 0)
			if err == nil {
				o.Free()
			}
			return err
		},
		"addat": func() error { return AddAt(s, bins, idx, vals) },
		"take": func() error {
			o, err := Take(s, big, idx)
			if err == nil {
				o.Free()
			}
			return err
		},
		"put": func() error { return Put(s, big, idx, vals) },
		"bincount/bins": func() error {
			o, err := Bincount(context.Background(), s, idx, 4096, Bins(4096))
			if err == nil {
				o.Free()
			}
			return err
		},
		"sort": func() error { // gpubench's array/sort/float32/512000
			o, err := Sort(s, keys, -1)
			if err == nil {
				o.Free()
			}
			return err
		},
	}
	return []string{"concat1", "concat0", "addat", "take", "put", "bincount/bins", "sort"}, ops
}

// TestIndexDriverCalls counts the driver calls each index operation (and Sort of
// 512000 keys) makes per call in the steady state (a fake CUDA device: countDev), a
// guard against work creeping into the per-call path: one kernel (or copy) each, the
// sort's one cooperative launch (or, with it off, its histogram, plan and four
// passes), no memsets but Bincount's zeroing and the passes' work (the fused sort's
// sums are scratch it leaves zero), no allocation but a
// pinned block of check slots now and then, no event or stream wait.
func TestIndexDriverCalls(t *testing.T) {
	cd, d, s := newCountStream(t)
	defer SetConcatMemcpyMin(4096, 1<<20)() // concat1's inputs: 1 MiB
	tu := d.Tuning()
	tu.Concat.RowsKernel = false // concat1: the pitched copies; concat1/k below: the kernel
	if _, err := d.SetTuning(tu); err != nil {
		t.Fatal(err)
	}
	names, ops := hostCostOps(t, s)
	concatEntry := "Launch/concat_rows"
	if tu.Concat.Variant == 2 {
		concatEntry = "Launch/concat_tiles" // the tiled kernel (Tuning.Concat.Variant)
	}
	want := map[string]map[string]int{
		"concat1":       {"Copy2D": 2},
		"concat1/k":     {concatEntry: 1},
		"concat0":       {"Copy": 2},
		"addat":         {"Launch/scatter": 1},
		"take":          {"Launch/gather": 1},
		"put":           {"Launch/scatter": 1},
		"bincount/bins": {"Launch/scatter": 1, "Memset": 1},
		"sort":          {"Launch/radix_fused": 1, "Cooperative": 1},
		"sort/passes":   {"Launch/radix_hist": 1, "Launch/radix_plan": 1, "Launch/radix_pass": 4, "Memset": 1},
	}
	run := func(name string, f func() error) {
		const calls = 3000 // past a block of check slots: each launch holds one until a wait
		got := countCalls(t, cd, name, f, calls)
		if got["Alloc/pinned"] > calls/1000+1 {
			t.Errorf("%s: %d pinned allocations in %d calls", name, got["Alloc/pinned"], calls)
		}
		delete(got, "Alloc/pinned")
		for k, v := range want[name] {
			if got[k] != v*calls {
				t.Errorf("%s: %s %d times in %d calls, want %d a call", name, k, got[k], calls, v)
			}
			delete(got, k)
		}
		for k, v := range got {
			t.Errorf("%s: %s %d times in %d calls, want none", name, k, v, calls)
		}
		if err := s.Synchronize(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range names {
		run(name, ops[name])
	}
	tu.Concat.RowsKernel = true
	if _, err := d.SetTuning(tu); err != nil {
		t.Fatal(err)
	}
	run("concat1/k", ops["concat1"])
	c := SortConfigFromEnv(func(string) string { return "" })
	c.FusedMax = 0
	defer SetSortConfig(SetSortConfig(c))
	run("sort/passes", ops["sort"])
}

// TestSortCooperativeRefused: a device that refuses the fused sort's cooperative launch
// (ErrNotSupported: no cuLaunchKernelEx, or CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE) gets
// the passes instead, in that call and without trying again.
func TestSortCooperativeRefused(t *testing.T) {
	cd, _, s := newCountStream(t)
	cd.coopErr = fmt.Errorf("refused: %w", backend.ErrNotSupported)
	_, ops := hostCostOps(t, s)
	for i, want := range []map[string]int{
		{"Launch/radix_fused": 1, "Cooperative": 1, "Memset": 2, "Launch/radix_hist": 1, "Launch/radix_plan": 1, "Launch/radix_pass": 4},
		{"Launch/radix_fused": 0, "Cooperative": 0, "Memset": 1, "Launch/radix_hist": 1, "Launch/radix_plan": 1, "Launch/radix_pass": 4},
	} {
		cd.take()
		if err := ops["sort"](); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		got := cd.take()
		for k, v := range want {
			if got[k] != v {
				t.Errorf("call %d: %s %d times, want %d (all: %v)", i, k, got[k], v, got)
			}
		}
	}
}

// TestIndexHostAllocs bounds the heap allocations per call of the index operations
// in the steady state (the counting fake CUDA device, whose launch record is one of
// them): their arguments go to the backend directly (launchArgs), their kernels are
// found without formatting a key (keyAppender). The bounds are today's counts; before
// both, concat1 took 33, concat0 20, addat 34, take 30, put 30 and sort 69.
func TestIndexHostAllocs(t *testing.T) {
	_, _, s := newCountStream(t)
	names, ops := hostCostOps(t, s)
	most := map[string]float64{"concat1": 9, "concat0": 11, "addat": 21, "take": 20, "put": 19, "bincount/bins": 24, "sort": 24}
	slack := 0.0
	if testenv.Race {
		slack = 4 // the race detector's sync.Pool drops a quarter of what it is given
	}
	run := func(name string, f func() error) {
		n := testing.AllocsPerRun(200, func() {
			if err := f(); err != nil {
				t.Fatal(name, err)
			}
		})
		t.Logf("%s: %v allocations a call", name, n)
		if n > most[name]+slack {
			t.Errorf("%s: %v allocations a call, want at most %v", name, n, most[name])
		}
		if err := s.Synchronize(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range names {
		run(name, ops[name])
	}
	// The passes (histogram, plan, a launch a digit) of a sort the fused one doesn't take.
	c := SortConfigFromEnv(func(string) string { return "" })
	c.FusedMax = 0
	defer SetSortConfig(SetSortConfig(c))
	most["sort/passes"] = 31
	run("sort/passes", ops["sort"])
}

// BenchmarkHostCost measures the runtime's own host time per call of the index
// operations on the counting fake CUDA device (the driver's time comes on top), and
// prelaunch-ns/op: the part before the first enqueued operation, which gpubench's
// GPU-mode rows (one call between two events) count as device time.
func BenchmarkHostCost(b *testing.B) {
	cd, _, s := newCountStream(b)
	names, ops := hostCostOps(b, s)
	for _, name := range names {
		f := ops[name]
		b.Run(name, func(b *testing.B) {
			var pre time.Duration
			for b.Loop() {
				cd.mark()
				t1 := time.Now()
				if err := f(); err != nil {
					b.Fatal(name, err)
				}
				pre += cd.first.Sub(t1)
			}
			b.ReportMetric(float64(pre.Nanoseconds())/float64(b.N), "prelaunch-ns/op")
			s.Synchronize(context.Background())
		})
	}
}

// TestSteadyStateDeviceAllocs: operations whose temporaries are small blocks reuse
// them from the stream's block cache from the second call on (no driver allocation or
// free per call). FindFirst's result word was freed, once settled, to the default
// stream's cache and allocated again on the caller's stream every call.
func TestSteadyStateDeviceAllocs(t *testing.T) {
	cd, _, s := newCountStream(t)
	ctx := context.Background()
	a, _ := Empty[float32](s, 1000, 512)
	ops := map[string]func() error{
		"FindFirst": func() error { _, err := FindFirst(ctx, s, a); return err },
		"Sum": func() error {
			o, err := Sum[float32, float32](s, a)
			if err == nil {
				o.Free()
			}
			return err
		},
		"Sum/axis0": func() error {
			o, err := Sum[float32, float32](s, a, Axes(0))
			if err == nil {
				o.Free()
			}
			return err
		},
	}
	for _, name := range []string{"FindFirst", "Sum", "Sum/axis0"} {
		const calls = 200
		got := countCalls(t, cd, name, ops[name], calls)
		for _, k := range []string{"Alloc/device", "FreeAsync", "FreeNow"} {
			if got[k] != 0 {
				t.Errorf("%s: %s %d times in %d calls, want none", name, k, got[k], calls)
			}
		}
	}
}
