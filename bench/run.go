package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"
)

// Defaults for the zero fields of a Config.
const (
	DefaultBenchtime     = 500 * time.Millisecond
	DefaultCount         = 1000
	DefaultMinSamples    = 5
	DefaultWarmupTime    = 50 * time.Millisecond
	DefaultWarmupCount   = 2
	DefaultMinSampleTime = 10 * time.Microsecond
)

// maxIters caps the calls per sample.
const maxIters = 1_000_000_000

// Config controls a run. Zero fields take the defaults above.
type Config struct {
	// Benchtime is the sampling budget per benchmark: samples are taken until
	// it is spent (and at least MinSamples were taken) or Count is reached.
	Benchtime time.Duration
	// Count is the most samples taken per benchmark.
	Count int
	// MinSamples is the fewest samples taken per benchmark, whatever the
	// budget (Count still caps it).
	MinSamples int
	// WarmupTime and WarmupCount: the warm-up lasts until both at least
	// WarmupCount calls were made and WarmupTime has passed (and the calls per
	// sample are calibrated).
	WarmupTime  time.Duration
	WarmupCount int
	// MinSampleTime is the shortest sample: a body faster than that is called
	// several times per sample, the count calibrated during the warm-up.
	MinSampleTime time.Duration

	// RefGBps is the reference bandwidth (the device-to-device copy, read
	// plus write) for the "% of copy" column. Zero: run Reference first and
	// use its GB/s.
	RefGBps float64
	// Reference is the copy benchmark measured at the start of the run when
	// RefGBps is zero; nil: no reference, no "% of copy".
	Reference *Benchmark

	// Timer times GPU-mode benchmarks (device events, from the runtime). Nil:
	// a HostTimer with Sync.
	Timer Timer
	// Sync waits for the device; nil: nothing to wait for.
	Sync SyncFunc
	// Device is handed to benchmarks as Env.Device.
	Device any
	// Meta describes the run (device, driver, backend); Run fills in the
	// date, the Go version, the platform, the settings and the reference.
	Meta Meta
	// Progress, if not nil, receives a progress line (rewritten in place with
	// carriage returns): benchmark i/n, name, elapsed time.
	Progress io.Writer
}

func (c *Config) fill() {
	if c.Benchtime <= 0 {
		c.Benchtime = DefaultBenchtime
	}
	if c.Count <= 0 {
		c.Count = DefaultCount
	}
	if c.MinSamples <= 0 {
		c.MinSamples = DefaultMinSamples
	}
	if c.WarmupTime < 0 {
		c.WarmupTime = 0
	} else if c.WarmupTime == 0 {
		c.WarmupTime = DefaultWarmupTime
	}
	if c.WarmupCount <= 0 {
		c.WarmupCount = DefaultWarmupCount
	}
	if c.MinSampleTime <= 0 {
		c.MinSampleTime = DefaultMinSampleTime
	}
	if c.Sync == nil {
		c.Sync = noSync
	}
}

// Run runs the benchmarks in order and returns the report. A benchmark that
// fails (setup, body, timer or teardown error, or a panic) gets Result.Err and
// the run goes on. If ctx is cancelled Run stops between samples and returns
// the results so far with ctx's error.
func Run(ctx context.Context, cfg Config, bs []Benchmark) (*Report, error) {
	cfg.fill()
	rep := &Report{Schema: Schema, Meta: cfg.Meta}
	m := &rep.Meta
	m.Date = time.Now().UTC().Truncate(time.Second)
	m.GoVersion = runtime.Version()
	m.GOOS, m.GOARCH = runtime.GOOS, runtime.GOARCH
	if m.Hostname == "" {
		m.Hostname, _ = os.Hostname()
	}
	m.Settings = Settings{
		Benchtime:     Duration(cfg.Benchtime),
		Count:         cfg.Count,
		MinSamples:    cfg.MinSamples,
		WarmupTime:    Duration(cfg.WarmupTime),
		WarmupCount:   cfg.WarmupCount,
		MinSampleTime: Duration(cfg.MinSampleTime),
	}
	env := &Env{Backend: m.Backend, Device: cfg.Device, Timer: cfg.Timer, Sync: cfg.Sync}
	r := &runner{cfg: &cfg, env: env, start: time.Now()}
	r.prog = newProgress(cfg.Progress, len(bs), r.start)
	defer r.prog.done()

	// The reference copy first, unless given.
	var refResult *Result
	ref := cfg.RefGBps
	if ref > 0 {
		m.Reference = "given"
	} else if cfg.Reference != nil {
		r.prog.begin(0, cfg.Reference.Name+" (reference)")
		res, err := r.one(ctx, *cfg.Reference)
		if err != nil {
			return rep, err
		}
		refResult = &res
		if res.Err == "" && res.GBps > 0 {
			ref = res.GBps
			m.Reference = res.Name
		}
	}
	m.RefGBps = ref

	for i, b := range bs {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		r.prog.begin(i+1, b.Name)
		var res Result
		if refResult != nil && b.Name == refResult.Name {
			res = *refResult
		} else {
			var err error
			res, err = r.one(ctx, b)
			if err != nil {
				return rep, err
			}
		}
		if ref > 0 && res.GBps > 0 {
			res.FracOfRef = res.GBps / ref
		}
		rep.Results = append(rep.Results, res)
	}
	return rep, nil
}

type runner struct {
	cfg   *Config
	env   *Env
	start time.Time
	prog  *progress
}

// errCancelled wraps a context error seen between samples.
type errCancelled struct{ err error }

func (e errCancelled) Error() string { return e.err.Error() }
func (e errCancelled) Unwrap() error { return e.err }

// one runs a benchmark. It returns an error only when ctx is cancelled; other
// failures are in Result.Err.
func (r *runner) one(ctx context.Context, b Benchmark) (res Result, err error) {
	res = Result{Name: b.Name, Group: b.group(), Mode: b.Mode, Bytes: b.Bytes, Timing: TimingHost}
	timer := Timer(NewHostTimer(r.cfg.Sync))
	if b.Mode == GPU {
		if b.Timer != nil {
			timer = b.Timer
		} else if r.cfg.Timer != nil {
			timer = r.cfg.Timer
		}
		if _, host := timer.(*HostTimer); !host {
			res.Timing = TimingDevice
		}
	}
	if b.Setup != nil {
		if err := protect(func() error { return b.Setup(r.env) }); err != nil {
			res.Err = "setup: " + err.Error()
			return res, nil
		}
	}
	if b.Teardown != nil {
		defer func() {
			if terr := protect(func() error { return b.Teardown(r.env) }); terr != nil && res.Err == "" {
				res.Err = "teardown: " + terr.Error()
			}
		}()
	}
	if err := protect(r.cfg.Sync); err != nil {
		res.Err = "sync after setup: " + err.Error()
		return res, nil
	}
	samples, iters, serr := r.measure(ctx, b, timer)
	res.Iters = iters
	res.Samples = samples
	res.Stats = Summarize(samples)
	res.GBps = GBps(b.Bytes, res.MedianNs)
	if serr != nil {
		var c errCancelled
		if errors.As(serr, &c) {
			return res, c.err
		}
		res.Err = serr.Error()
	}
	return res, nil
}

// measure warms b up, calibrates its calls per sample, and samples it.
func (r *runner) measure(ctx context.Context, b Benchmark, t Timer) (samples []float64, iters int, err error) {
	c := r.cfg
	n, fixed := b.Iters, b.Iters > 0
	if !fixed {
		n = 1
	}
	// Warm-up and calibration.
	wstart := time.Now()
	calls := 0
	for {
		if err := ctx.Err(); err != nil {
			return nil, n, errCancelled{err}
		}
		d, err := sample(t, b.Body, n)
		if err != nil {
			return nil, n, fmt.Errorf("warm-up: %w", err)
		}
		calls += n
		calibrated := fixed || d >= c.MinSampleTime || n >= maxIters
		if !calibrated {
			n = predictIters(c.MinSampleTime, n, d)
		}
		r.prog.tick()
		if calibrated && calls >= c.WarmupCount && time.Since(wstart) >= c.WarmupTime {
			break
		}
	}
	// Sampling.
	sstart := time.Now()
	for len(samples) < c.Count {
		if len(samples) >= c.MinSamples && time.Since(sstart) >= c.Benchtime {
			break
		}
		if err := ctx.Err(); err != nil {
			return samples, n, errCancelled{err}
		}
		d, err := sample(t, b.Body, n)
		if err != nil {
			return samples, n, err
		}
		samples = append(samples, float64(d.Nanoseconds())/float64(n))
		r.prog.tick()
	}
	return samples, n, nil
}

// sample times n calls of body with t.
func sample(t Timer, body func() error, n int) (d time.Duration, err error) {
	err = protect(func() error {
		if err := t.Start(); err != nil {
			return fmt.Errorf("timer start: %w", err)
		}
		for range n {
			if err := body(); err != nil {
				// Let the device finish what was queued before reporting.
				t.Stop()
				return err
			}
		}
		var err error
		d, err = t.Stop()
		if err != nil {
			return fmt.Errorf("timer stop: %w", err)
		}
		return nil
	})
	return d, err
}

// protect calls f and turns a panic into an error.
func protect(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return f()
}

// predictIters returns the calls per sample for the next try, given that prev
// calls took d and a sample should last goal; like testing.B, it aims 20%
// over, grows at most 100-fold and at least by one.
func predictIters(goal time.Duration, prev int, d time.Duration) int {
	ns := d.Nanoseconds()
	if ns <= 0 {
		ns = 1
	}
	n := goal.Nanoseconds() * int64(prev) / ns
	n += n / 5
	n = min(n, 100*int64(prev))
	n = max(n, int64(prev)+1)
	return int(min(n, maxIters))
}
