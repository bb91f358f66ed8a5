package bench

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"
)

// stepTimer is a fake device timer: a sample lasts exactly per times the
// calls counted between Start and Stop, whatever the host clock says.
type stepTimer struct {
	per          time.Duration
	calls        *int
	at           int
	starts, stop int
	failStop     bool
}

func (t *stepTimer) Start() error { t.at = *t.calls; t.starts++; return nil }
func (t *stepTimer) Stop() (time.Duration, error) {
	t.stop++
	if t.failStop {
		return 0, errors.New("event failed")
	}
	return time.Duration(*t.calls-t.at) * t.per, nil
}

// quick is a Config for tests: small budgets.
func quick() Config {
	return Config{Benchtime: 20 * time.Millisecond, WarmupTime: time.Millisecond, Count: 50}
}

func TestRunDeviceTimer(t *testing.T) {
	calls := 0
	tm := &stepTimer{per: time.Microsecond, calls: &calls}
	cfg := quick()
	cfg.Timer = tm
	cfg.Meta = Meta{Device: "fake", Backend: "cuda"}
	b := Benchmark{Name: "array/copy", Bytes: 4000, Body: func() error { calls++; return nil }}
	rep, err := Run(context.Background(), cfg, []Benchmark{b})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Results[0]
	if r.Err != "" || r.Timing != TimingDevice || r.Mode != GPU || r.Group != "array" {
		t.Fatalf("result %+v", r)
	}
	// 1 µs per call: calibrated from 1 call (1 µs < 10 µs) to 12 calls per sample.
	if r.Iters != 12 {
		t.Errorf("Iters = %d, want 12", r.Iters)
	}
	if r.N != 50 || len(r.Samples) != 50 {
		t.Errorf("N = %d (%d samples), want Count = 50", r.N, len(r.Samples))
	}
	if r.MinNs != 1000 || r.MedianNs != 1000 || r.MeanNs != 1000 || r.MaxNs != 1000 || r.StddevNs != 0 {
		t.Errorf("stats %+v, want exactly 1000 ns", r.Stats)
	}
	if r.GBps != 4 {
		t.Errorf("GBps = %v, want 4000 B / 1000 ns = 4", r.GBps)
	}
	if tm.starts != tm.stop || calls < cfg.WarmupCount+50*12 {
		t.Errorf("starts %d stops %d calls %d", tm.starts, tm.stop, calls)
	}
	m := rep.Meta
	if m.Device != "fake" || m.Backend != "cuda" || m.GoVersion != runtime.Version() || m.Date.IsZero() ||
		m.Settings.Count != 50 || m.Settings.Benchtime != Duration(20*time.Millisecond) || m.RefGBps != 0 || rep.Schema != Schema {
		t.Errorf("meta %+v", m)
	}
}

func TestRunBenchmarkTimerOverrides(t *testing.T) {
	calls := 0
	run := &stepTimer{per: time.Second, calls: &calls}
	own := &stepTimer{per: 20 * time.Microsecond, calls: &calls}
	cfg := quick()
	cfg.Timer = run
	rep, _ := Run(context.Background(), cfg, []Benchmark{{Name: "k", Timer: own, Iters: 3, Body: func() error { calls++; return nil }}})
	r := rep.Results[0]
	if run.starts != 0 || own.starts == 0 || r.MedianNs != 20000 || r.Iters != 3 || r.Timing != TimingDevice {
		t.Errorf("run timer %d starts, own %d; result %+v", run.starts, own.starts, r.Stats)
	}
	if calls != 3*own.starts {
		t.Errorf("%d calls in %d samples of 3", calls, own.starts)
	}
}

func TestRunHostSleep(t *testing.T) {
	syncs := 0
	calls := 0
	cfg := quick()
	cfg.Sync = func() error { syncs++; return nil }
	cfg.Timer = &stepTimer{per: time.Hour, calls: &calls} // not used in Host mode
	b := Benchmark{Name: "sync/stream/blocking", Mode: Host, Body: func() error {
		calls++
		time.Sleep(300 * time.Microsecond)
		return nil
	}}
	rep, _ := Run(context.Background(), cfg, []Benchmark{b})
	r := rep.Results[0]
	if r.Err != "" || r.Timing != TimingHost || r.Iters != 1 {
		t.Fatalf("result %+v", r)
	}
	if r.MinNs < 300e3 || r.MedianNs < 300e3 || r.MedianNs > 100e6 {
		t.Errorf("a 300 µs sleep measured min %v median %v", r.MinNs, r.MedianNs)
	}
	if r.N < DefaultMinSamples || r.N > 70 {
		t.Errorf("%d samples of 300 µs in a 20 ms budget", r.N)
	}
	// One sync after setup, one per sample (warm-up included).
	if syncs != calls+1 {
		t.Errorf("%d syncs for %d calls", syncs, calls)
	}
	if r.GBps != 0 || r.FracOfRef != 0 {
		t.Errorf("latency benchmark has GB/s %v", r.GBps)
	}
}

func TestRunCalibratesShortBody(t *testing.T) {
	cfg := quick()
	x := 0
	rep, _ := Run(context.Background(), cfg, []Benchmark{{Name: "host/noop", Mode: Host, Body: func() error { x++; return nil }}})
	r := rep.Results[0]
	if r.Iters < 10 {
		t.Errorf("a no-op body got %d calls per sample; want many", r.Iters)
	}
	if r.MedianNs <= 0 || r.MedianNs > 2000 {
		t.Errorf("no-op median %v ns", r.MedianNs)
	}
	if float64(r.Iters)*r.MedianNs < 5e3 {
		t.Errorf("samples of %d calls at %v ns are shorter than the 10 µs minimum", r.Iters, r.MedianNs)
	}
}

func TestRunBusyLoopHostFallback(t *testing.T) {
	var sink int
	body := func() error {
		s := 0
		for i := range 200000 {
			s += i * i
		}
		sink = s
		return nil
	}
	cfg := quick()
	cfg.Count = 8
	rep, _ := Run(context.Background(), cfg, []Benchmark{{Name: "host/busy", Bytes: 1 << 20, Body: body}})
	r := rep.Results[0]
	if r.Timing != TimingHost || r.Mode != GPU {
		t.Errorf("GPU mode without a device timer: timing %q, mode %v", r.Timing, r.Mode)
	}
	if r.N != 8 || r.MedianNs < 1000 || r.MinNs > r.MedianNs || r.MedianNs > r.MaxNs || r.GBps <= 0 {
		t.Errorf("busy loop stats %+v GB/s %v", r.Stats, r.GBps)
	}
	_ = sink
}

func TestRunMinSamples(t *testing.T) {
	cfg := Config{Benchtime: time.Microsecond, WarmupTime: time.Microsecond, WarmupCount: 1, MinSamples: 3}
	calls := 0
	rep, _ := Run(context.Background(), cfg, []Benchmark{{Name: "slow", Iters: 1, Body: func() error {
		calls++
		time.Sleep(2 * time.Millisecond)
		return nil
	}}})
	if r := rep.Results[0]; r.N != 3 || calls != 4 {
		t.Errorf("%d samples, %d calls; want 3 samples after 1 warm-up call", r.N, calls)
	}
	cfg.Count = 2 // Count caps MinSamples
	rep, _ = Run(context.Background(), cfg, []Benchmark{{Name: "slow", Body: func() error { time.Sleep(time.Millisecond); return nil }}})
	if r := rep.Results[0]; r.N != 2 {
		t.Errorf("%d samples, want Count = 2", r.N)
	}
}

func TestRunWarmup(t *testing.T) {
	calls := 0
	tm := &stepTimer{per: time.Millisecond, calls: &calls}
	cfg := Config{Timer: tm, WarmupCount: 7, WarmupTime: time.Nanosecond, Count: 5}
	rep, _ := Run(context.Background(), cfg, []Benchmark{{Name: "w", Body: func() error { calls++; return nil }}})
	if calls != 7+5 || rep.Results[0].N != 5 {
		t.Errorf("%d calls, want 7 warm-up and 5 samples", calls)
	}
	// Warm-up by time: at least 30 ms of it.
	start := time.Now()
	cfg = Config{WarmupCount: 1, WarmupTime: 30 * time.Millisecond, Count: 1}
	Run(context.Background(), cfg, []Benchmark{{Name: "w", Body: func() error { time.Sleep(time.Millisecond); return nil }}})
	if el := time.Since(start); el < 30*time.Millisecond {
		t.Errorf("run with a 30 ms warm-up took %v", el)
	}
}

func TestRunErrors(t *testing.T) {
	var log []string
	rec := func(s string) func(*Env) error { return func(*Env) error { log = append(log, s); return nil } }
	calls := 0
	bs := []Benchmark{
		{Name: "setup", Setup: func(*Env) error { return errors.New("no memory") }, Teardown: rec("teardown setup"),
			Body: func() error { log = append(log, "body setup"); return nil }},
		{Name: "body", Setup: rec("setup body"), Teardown: rec("teardown body"), Body: func() error {
			if calls++; calls > 3 {
				return errors.New("launch failed")
			}
			return nil
		}},
		{Name: "panic", Teardown: rec("teardown panic"), Body: func() error { panic("boom") }},
		{Name: "teardown", Teardown: func(*Env) error { return errors.New("free failed") }, Body: nop},
		{Name: "fine", Body: nop},
	}
	rep, err := Run(context.Background(), quick(), bs)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"setup": "setup: no memory", "body": "launch failed", "panic": "panic: boom", "teardown": "teardown: free failed", "fine": ""}
	for _, r := range rep.Results {
		if w := want[r.Name]; (w == "") != (r.Err == "") || !strings.Contains(r.Err, w) {
			t.Errorf("%s: error %q, want %q", r.Name, r.Err, w)
		}
	}
	if got := strings.Join(log, ","); got != "setup body,teardown body,teardown panic" {
		t.Errorf("setup/teardown calls: %s", got)
	}
	if len(rep.Failed()) != 4 || len(rep.Results) != 5 {
		t.Errorf("%d failed of %d", len(rep.Failed()), len(rep.Results))
	}
	// A failing device timer.
	c := 0
	cfg := quick()
	cfg.Timer = &stepTimer{calls: &c, failStop: true}
	rep, _ = Run(context.Background(), cfg, []Benchmark{{Name: "t", Body: nop}})
	if e := rep.Results[0].Err; !strings.Contains(e, "event failed") {
		t.Errorf("timer failure reported as %q", e)
	}
	// A failing sync after setup.
	cfg = quick()
	cfg.Sync = func() error { return errors.New("device lost") }
	rep, _ = Run(context.Background(), cfg, []Benchmark{{Name: "t", Body: nop}})
	if e := rep.Results[0].Err; !strings.Contains(e, "device lost") {
		t.Errorf("sync failure reported as %q", e)
	}
}

func TestRunReference(t *testing.T) {
	calls := 0
	setups := 0
	tm := &stepTimer{per: time.Millisecond, calls: &calls}
	body := func() error { calls++; return nil }
	ref := Benchmark{Name: "array/copy/16k", Bytes: 4e6, Reference: true, Body: body, Setup: func(*Env) error { setups++; return nil }}
	half := Benchmark{Name: "array/broadcast", Bytes: 2e6, Body: body}
	lat := Benchmark{Name: "sync/stream", Mode: Host, Body: nop}
	cfg := quick()
	cfg.Timer = tm
	cfg.Reference = &ref
	rep, _ := Run(context.Background(), cfg, []Benchmark{half, ref, lat})
	if rep.Meta.RefGBps != 4 || rep.Meta.Reference != "array/copy/16k" {
		t.Fatalf("reference %q %v GB/s, want 4 GB/s", rep.Meta.Reference, rep.Meta.RefGBps)
	}
	if setups != 1 {
		t.Errorf("the reference ran %d times, want once", setups)
	}
	fr := map[string]float64{}
	for _, r := range rep.Results {
		fr[r.Name] = r.FracOfRef
	}
	if fr["array/broadcast"] != 0.5 || fr["array/copy/16k"] != 1 || fr["sync/stream"] != 0 || len(rep.Results) != 3 {
		t.Errorf("fractions %v", fr)
	}
	// Not selected: measured, not reported.
	rep, _ = Run(context.Background(), cfg, []Benchmark{half})
	if len(rep.Results) != 1 || rep.Results[0].FracOfRef != 0.5 {
		t.Errorf("reference not in the list: %+v", rep.Results)
	}
	// Given: not measured.
	cfg.RefGBps = 8
	setups = 0
	rep, _ = Run(context.Background(), cfg, []Benchmark{half})
	if setups != 0 || rep.Meta.Reference != "given" || rep.Results[0].FracOfRef != 0.25 {
		t.Errorf("given reference: setups %d, meta %q, fraction %v", setups, rep.Meta.Reference, rep.Results[0].FracOfRef)
	}
}

func TestRunCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := quick()
	cfg.Benchtime = time.Hour // only the cancel ends the sampling
	cfg.Count = 1 << 30
	n := 0
	torn, next := false, false
	bs := []Benchmark{
		{Name: "cancelled", Iters: 1, Teardown: func(*Env) error { torn = true; return nil }, Body: func() error {
			if n++; n == 100 {
				cancel()
			}
			time.Sleep(10 * time.Microsecond)
			return nil
		}},
		{Name: "next", Body: func() error { next = true; return nil }},
	}
	start := time.Now()
	rep, err := Run(ctx, cfg, bs)
	if !errors.Is(err, context.Canceled) || time.Since(start) > 10*time.Second {
		t.Fatalf("Run = %v after %v", err, time.Since(start))
	}
	if !torn || next || len(rep.Results) != 0 {
		t.Errorf("cancelled run: teardown %v, next ran %v, %d results", torn, next, len(rep.Results))
	}
}

func TestProgress(t *testing.T) {
	var buf bytes.Buffer
	cfg := quick()
	cfg.Progress = &buf
	Run(context.Background(), cfg, []Benchmark{{Name: "a/one", Body: nop}, {Name: "b/two", Body: nop}})
	out := buf.String()
	if !strings.Contains(out, "[1/2] a/one") || !strings.Contains(out, "[2/2] b/two") || !strings.HasSuffix(out, "\r") {
		t.Errorf("progress output %q", out)
	}
	buf.Reset()
	cfg.Progress = nil
	Run(context.Background(), cfg, []Benchmark{{Name: "a/one", Body: nop}})
	if buf.Len() != 0 {
		t.Errorf("progress written without a writer")
	}
}

func TestPredictIters(t *testing.T) {
	goal := 10 * time.Microsecond
	for _, tc := range []struct {
		prev int
		d    time.Duration
		want int
	}{
		{1, time.Microsecond, 12},
		{1, 0, 100},                    // no time measured: grow 100-fold
		{1, 9999 * time.Nanosecond, 2}, // at least one more
		{100, 50 * time.Nanosecond, 10000},
		{maxIters / 2, time.Nanosecond, maxIters},
	} {
		if got := predictIters(goal, tc.prev, tc.d); got != tc.want {
			t.Errorf("predictIters(%v, %d, %v) = %d, want %d", goal, tc.prev, tc.d, got, tc.want)
		}
	}
}
