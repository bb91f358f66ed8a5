package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
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
	// LargeSide is handed to benchmarks as Env.LargeSide: the side of the
	// LargeSuffix benchmarks' arrays (0: LargeSide).
	LargeSide int
	// Meta describes the run (device, driver, backend); Run fills in the
	// date, the Go version, the platform, the settings and the reference.
	Meta Meta
	// Progress, if not nil, receives a progress line (rewritten in place with
	// carriage returns): benchmark i/n, name, elapsed time.
	Progress io.Writer
	// ProgressLines makes Progress a line ("gpubench: [i/n] name  elapsed")
	// when a group of benchmarks starts and at least every 10 s, never
	// rewritten: for a pipe or a file (ProgressTo).
	ProgressLines bool
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
// the run goes on; one whose Setup returns ErrSkip is listed in
// Report.Skipped. Benchmarks that share an Interleave group are sampled in
// turn when the first of them is reached. If ctx is cancelled Run stops
// between samples and returns the results so far with ctx's error.
func Run(ctx context.Context, cfg Config, bs []Benchmark) (rep *Report, err error) {
	cfg.fill()
	rep = &Report{Schema: Schema, Meta: cfg.Meta}
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
	if cfg.LargeSide > 0 && cfg.LargeSide != LargeSide {
		m.LargeSide = cfg.LargeSide
	}
	env := &Env{Backend: m.Backend, Device: cfg.Device, Timer: cfg.Timer, Sync: cfg.Sync, LargeSide: cfg.LargeSide}
	r := &runner{cfg: &cfg, env: env, start: time.Now()}
	r.prog = newProgress(cfg.Progress, cfg.ProgressLines, len(bs), r.start)
	defer r.prog.done()
	defer compareBaselines(rep)

	// The reference copy first, unless given.
	var refResult *Result
	ref := cfg.RefGBps
	if ref > 0 {
		m.Reference = "given"
	} else if cfg.Reference != nil {
		r.prog.begin(0, cfg.Reference.Name+" (reference)", cfg.Reference.group())
		j, err := r.runAlone(ctx, *cfg.Reference)
		if err != nil {
			return rep, err
		}
		if j.skipped == "" {
			refResult = &j.res
			if j.res.Err == "" && j.res.GBps > 0 {
				ref = j.res.GBps
				m.Reference = j.res.Name
			}
		}
	}
	m.RefGBps = ref

	// Interleaved groups run when their first member comes up; their jobs wait
	// here for their turn in the output.
	done := map[string]*job{}
	for i, b := range bs {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		j := done[b.Name]
		switch {
		case j != nil:
		case refResult != nil && b.Name == refResult.Name:
			j = &job{res: *refResult}
		case b.Interleave != "":
			var members []Benchmark
			for _, o := range bs[i:] {
				if o.Interleave == b.Interleave && (refResult == nil || o.Name != refResult.Name) {
					members = append(members, o)
				}
			}
			label := b.Name
			if len(members) > 1 {
				label = fmt.Sprintf("%s (+%d interleaved)", b.Name, len(members)-1)
			}
			r.prog.begin(i+1, label, b.group())
			jobs, err := r.runInterleaved(ctx, members)
			if err != nil {
				return rep, err
			}
			for _, mj := range jobs {
				done[mj.b.Name] = mj
			}
			j = done[b.Name]
		default:
			r.prog.begin(i+1, b.Name, b.group())
			var err error
			if j, err = r.runAlone(ctx, b); err != nil {
				return rep, err
			}
		}
		if j.skipped != "" {
			rep.Skipped = append(rep.Skipped, Skipped{Name: b.Name, Reason: j.skipped})
			continue
		}
		res := j.res
		if ref > 0 && res.GBps > 0 {
			res.FracOfRef = res.GBps / ref
		}
		rep.Results = append(rep.Results, res)
	}
	return rep, nil
}

// compareBaselines sets VsBaseline on the results whose baseline ran.
func compareBaselines(rep *Report) {
	for i := range rep.Results {
		r := &rep.Results[i]
		if r.Baseline == "" || r.Err != "" || r.MedianNs <= 0 {
			continue
		}
		if b, ok := rep.Lookup(r.Baseline); ok && b.Err == "" && b.MedianNs > 0 {
			r.VsBaseline = r.MedianNs / b.MedianNs
		}
	}
}

type runner struct {
	cfg   *Config
	env   *Env
	start time.Time
	prog  *progress
}

// job is one benchmark being run: its result so far and its sampling state.
type job struct {
	b       Benchmark
	env     Env
	timer   Timer
	res     Result
	n       int    // calls per sample
	fixed   bool   // n is b.Iters
	setUp   bool   // Setup succeeded: Teardown is due
	over    bool   // failed (res.Err), skipped, or out of samples
	skipped string // the reason, when Setup returned ErrSkip
	samples []float64
}

func (r *runner) newJob(b Benchmark) *job {
	j := &job{b: b, env: *r.env}
	j.env.Bytes = b.Bytes
	j.env.Flops = b.Flops
	j.res = Result{Name: b.Name, Group: b.group(), Mode: b.Mode, Bytes: b.Bytes, Timing: TimingHost, Baseline: b.Baseline}
	switch {
	case b.Timer != nil:
		j.timer = b.Timer
	case b.Mode == GPU && r.cfg.Timer != nil:
		j.timer = r.cfg.Timer
	default:
		j.timer = NewHostTimer(r.cfg.Sync)
	}
	if _, host := j.timer.(*HostTimer); b.Mode == GPU && !host {
		j.res.Timing = TimingDevice
	}
	j.n, j.fixed = b.Iters, b.Iters > 0
	if !j.fixed {
		j.n = 1
	}
	return j
}

func (j *job) fail(err string) {
	if j.res.Err == "" {
		j.res.Err = err
	}
	j.over = true
}

// setup runs the benchmark's Setup and waits for the device.
func (r *runner) setup(j *job) {
	if j.b.Setup != nil {
		if err := protect(func() error { return j.b.Setup(&j.env) }); err != nil {
			if errors.Is(err, ErrSkip) {
				j.skipped, j.over = strings.TrimSuffix(err.Error(), ": "+ErrSkip.Error()), true
				return
			}
			j.fail("setup: " + err.Error())
			return
		}
	}
	j.setUp = true
	if j.env.Bytes < 0 {
		j.fail(fmt.Sprintf("setup: negative Bytes %d", j.env.Bytes))
		return
	}
	j.res.Bytes = j.env.Bytes
	j.res.Flops, j.res.PeakFlops = j.env.Flops, j.env.PeakFlops
	if err := protect(r.cfg.Sync); err != nil {
		j.fail("sync after setup: " + err.Error())
	}
}

// finish runs the Teardown if it is due and summarizes the samples.
func (r *runner) finish(j *job) {
	if j.setUp && j.b.Teardown != nil {
		if err := protect(func() error { return j.b.Teardown(&j.env) }); err != nil {
			j.fail("teardown: " + err.Error())
		}
	}
	j.setUp = false
	j.res.Iters = j.n
	j.res.Samples = j.samples
	j.res.Stats = Summarize(j.samples)
	j.res.GBps = GBps(j.res.Bytes, j.res.MedianNs)
	if j.res.Flops > 0 && j.res.MedianNs > 0 {
		j.res.TFlops = float64(j.res.Flops) / j.res.MedianNs / 1e3
		if j.res.PeakFlops > 0 {
			j.res.FracOfPeak = j.res.TFlops * 1e12 / j.res.PeakFlops
		}
	}
}

// warm warms the benchmark up and calibrates its calls per sample. It returns
// an error only when ctx is cancelled; a failing body fails the job.
func (r *runner) warm(ctx context.Context, j *job) error {
	c := r.cfg
	wstart := time.Now()
	calls := 0
	for !j.over {
		if err := ctx.Err(); err != nil {
			return err
		}
		d, err := sample(j.timer, j.b.Body, j.n)
		if err != nil {
			j.fail("warm-up: " + err.Error())
			return nil
		}
		calls += j.n
		calibrated := j.fixed || d >= c.MinSampleTime || j.n >= maxIters
		if !calibrated {
			j.n = predictIters(c.MinSampleTime, j.n, d)
		}
		r.prog.tick()
		if calibrated && calls >= c.WarmupCount && time.Since(wstart) >= c.WarmupTime {
			break
		}
	}
	return nil
}

// sampleOnce takes one sample. It returns an error only when ctx is cancelled.
func (r *runner) sampleOnce(ctx context.Context, j *job) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d, err := sample(j.timer, j.b.Body, j.n)
	if err != nil {
		j.fail(err.Error())
		return nil
	}
	j.samples = append(j.samples, float64(d.Nanoseconds())/float64(j.n))
	if len(j.samples) >= r.cfg.Count {
		j.over = true
	}
	r.prog.tick()
	return nil
}

// runAlone runs one benchmark. It returns an error only when ctx is
// cancelled; other failures are in the job's result.
func (r *runner) runAlone(ctx context.Context, b Benchmark) (*job, error) {
	jobs, err := r.runInterleaved(ctx, []Benchmark{b})
	if err != nil {
		return nil, err
	}
	return jobs[0], nil
}

// runInterleaved runs benchmarks together: set up and warm up each, then one
// sample of each in turn until every one has its samples, then tear down.
func (r *runner) runInterleaved(ctx context.Context, bs []Benchmark) ([]*job, error) {
	jobs := make([]*job, len(bs))
	for i, b := range bs {
		jobs[i] = r.newJob(b)
	}
	defer func() {
		for _, j := range jobs {
			r.finish(j)
		}
	}()
	live := 0
	for _, j := range jobs {
		r.setup(j)
		if err := r.warm(ctx, j); err != nil {
			return nil, err
		}
		if !j.over {
			live++
		}
	}
	// The budget is Benchtime per member still sampling after the warm-up.
	budget := time.Duration(live) * r.cfg.Benchtime
	sstart := time.Now()
	for {
		enough := time.Since(sstart) >= budget
		more := false
		for _, j := range jobs {
			if !j.over && (len(j.samples) < r.cfg.MinSamples || !enough) {
				more = true
			}
		}
		if !more {
			return jobs, nil
		}
		for _, j := range jobs {
			if j.over {
				continue
			}
			if err := r.sampleOnce(ctx, j); err != nil {
				return nil, err
			}
		}
	}
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
