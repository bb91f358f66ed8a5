package bench

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Target is what a command's open hook returns: the device under test and
// how to time and synchronize it.
type Target struct {
	// Device and Driver describe the device for the report ("NVIDIA H200",
	// "580.159.04").
	Device, Driver string
	// Libraries names the libraries the run's operations use and the settings that
	// choose among their routines ("matrix products: cuBLAS 13.1.0 (...)"), for the
	// report; empty if none.
	Libraries string
	// Timer times GPU-mode benchmarks with device events; nil: host clock.
	Timer Timer
	// Sync waits for all work queued on the device; nil: nothing to wait for.
	Sync SyncFunc
	// Handle is passed to benchmarks as Env.Device.
	Handle any
	// Backend is the backend of the device opened ("cuda", "cpu"); empty if
	// unknown. The peer figures are GPU figures: -peers auto shows them only
	// when Backend is "cuda" or empty.
	Backend string
	// LargeSide is the device's default side for the LargeSuffix benchmarks
	// (what -large auto picks): 0 for LargeSide, ReducedLargeSide for a slow
	// device such as the CPU backend.
	LargeSide int
	// NoCopyFraction, if not empty, says why "% copy" means nothing on this
	// device: the run then measures no reference bandwidth first (unless
	// -ref-gbps gives one) and the table leaves the column out, saying why.
	NoCopyFraction string
	// Close, if not nil, releases the device after the run.
	Close func() error
}

// OpenFunc opens the device of a backend ("auto", "cpu" or "cuda").
type OpenFunc func(backend string) (*Target, error)

// Exit statuses of Main.
const (
	ExitOK         = 0 // all benchmarks ran
	ExitFailed     = 1 // a benchmark failed, or an output or input could not be handled
	ExitUsage      = 2 // bad flags
	ExitRegression = 3 // regressions past the threshold, with -fail-on-regression
)

const usageText = `usage: gpubench [flags]

Runs the benchmark suite and prints a table of median times, GB/s, the
fraction of the device-to-device copy bandwidth, the peers' (CuPy, PyTorch)
figures and our ratio to the faster one.

Exit status: 0 when every benchmark ran, 1 when one failed or a file could not
be read or written, 2 for bad flags, 3 for regressions past -threshold with
-fail-on-regression.

Flags:
`

// Main is the gpubench command: it parses args, runs the benchmarks of reg
// that -run selects on the device that open returns, writes the outputs, and
// returns the exit status. Cancelling ctx (an interrupt) stops the run between
// samples and still writes what was measured.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer, reg *Registry, open OpenFunc) int {
	fs := flag.NewFlagSet("gpubench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usageText)
		fs.PrintDefaults()
	}
	var (
		runRe       = fs.String("run", "", "run only benchmarks whose name matches this `regexp` (unanchored)")
		backend     = fs.String("backend", "auto", "device backend: auto, cpu or cuda")
		format      = fs.String("format", "table", "stdout format: table, gobench or json")
		jsonOut     = fs.String("json", "", "write the report as JSON to `file`")
		gobenchOut  = fs.String("gobench", "", "write Go benchmark format (for benchstat) to `file`")
		gobenchRuns = fs.Int("gobench-runs", DefaultGoBenchRuns, "lines per benchmark in Go benchmark format (`n` groups of samples)")
		compare     = fs.String("compare", "", "compare with an earlier JSON report `file`: adds old median and new/old ratio")
		threshold   = fs.Float64("threshold", DefaultThreshold, "regression threshold for -compare, a `fraction` (0.10: 10% slower)")
		failOnReg   = fs.Bool("fail-on-regression", false, "exit with status 3 if -compare finds regressions")
		peersPath   = fs.String("peers", "auto", "peer figures JSON `file` (from peers/peers.py); auto: the latest peers/h200-*.json in this or a parent directory, for a CUDA device; none: no peers")
		plotOut     = fs.String("plot", "", "write a chart of our times beside the peers' to `file` (.svg; .png and .pdf work too)")
		benchtime   = fs.Duration("benchtime", DefaultBenchtime, "sampling time budget per benchmark")
		count       = fs.Int("count", DefaultCount, "most samples per benchmark")
		warmup      = fs.Duration("warmup", DefaultWarmupTime, "least warm-up time per benchmark")
		warmupCount = fs.Int("warmup-count", DefaultWarmupCount, "least warm-up calls per benchmark")
		minSample   = fs.Duration("min-sample", DefaultMinSampleTime, "shortest sample: faster bodies are called several times per sample")
		refGBps     = fs.Float64("ref-gbps", 0, "reference copy bandwidth in GB/s for % copy; 0: measure the reference benchmark first")
		large       = fs.String("large", "auto", "side of the "+LargeSuffix+" benchmarks' arrays: auto (full on a GPU, reduced on the CPU backend), full (16384), reduced (4096), off (skip them), or a `side`")
		quiet       = fs.Bool("q", false, "no progress on stderr (a line rewritten in place on a terminal, else a line per group of benchmarks)")
		list        = fs.Bool("list", false, "list the selected benchmarks and exit")
	)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitUsage
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "gpubench: "+format+"\n", a...)
		return ExitUsage
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "gpubench: "+format+"\n", a...)
		return ExitFailed
	}
	if fs.NArg() > 0 {
		return usage("unexpected arguments %q", fs.Args())
	}
	switch *backend {
	case "auto", "cpu", "cuda":
	default:
		return usage("-backend %q: want auto, cpu or cuda", *backend)
	}
	switch *format {
	case "table", "gobench", "json":
	default:
		return usage("-format %q: want table, gobench or json", *format)
	}
	for _, c := range []struct {
		name string
		bad  bool
	}{
		{"-threshold", *threshold < 0}, {"-count", *count <= 0}, {"-benchtime", *benchtime <= 0},
		{"-warmup", *warmup < 0}, {"-warmup-count", *warmupCount <= 0}, {"-min-sample", *minSample <= 0},
		{"-ref-gbps", *refGBps < 0}, {"-gobench-runs", *gobenchRuns <= 0},
	} {
		if c.bad {
			return usage("%s must be positive (-threshold, -warmup and -ref-gbps may be 0)", c.name)
		}
	}
	// Output files: their folders must exist and the chart's format be known before the
	// run, so that a typo does not cost one.
	for _, o := range []struct{ flag, path string }{{"-json", *jsonOut}, {"-gobench", *gobenchOut}, {"-plot", *plotOut}} {
		if o.path == "" {
			continue
		}
		if fi, err := os.Stat(filepath.Dir(o.path)); err != nil || !fi.IsDir() {
			return fail("%s %q: no such folder %q", o.flag, o.path, filepath.Dir(o.path))
		}
	}
	if *plotOut != "" {
		if err := checkPlotFormat(*plotOut); err != nil {
			return usage("-plot: %v", err)
		}
	}
	var re *regexp.Regexp
	if *runRe != "" {
		var err error
		if re, err = regexp.Compile(*runRe); err != nil {
			return usage("-run: %v", err)
		}
	}
	side := 0 // auto
	switch *large {
	case "auto", "off":
	case "full":
		side = LargeSide
	case "reduced":
		side = ReducedLargeSide
	default:
		n, err := strconv.Atoi(*large)
		if err != nil || n <= 0 || n > LargeSide {
			return usage("-large %q: want auto, full, reduced, off or a side from 1 to %d", *large, LargeSide)
		}
		side = n
	}
	bs := withBaselines(reg, reg.Select(re))
	if *large == "off" {
		bs = slices.DeleteFunc(bs, func(b Benchmark) bool { return strings.HasSuffix(b.Name, LargeSuffix) })
	}

	if *list {
		rows := [][]string{{"benchmark", "group", "mode", "peer key", "baseline", "bytes"}}
		for _, b := range bs {
			peer := "-"
			if key, size, ok := PeerKey(b.Name); ok {
				peer = key + " (" + string(size) + ")"
			}
			ref := ""
			if b.Reference {
				ref = " (reference)"
			}
			rows = append(rows, []string{b.Name + ref, b.group(), b.Mode.String(), peer, cmp.Or(b.Baseline, "-"), strconv.FormatInt(b.Bytes, 10)})
		}
		writeAligned(stdout, rows, 5)
		return ExitOK
	}
	if len(bs) == 0 {
		return fail("no benchmark matches -run %q", *runRe)
	}

	// Inputs first, so that a typo does not cost a run.
	var old *Report
	if *compare != "" {
		var err error
		if old, err = ReadReportFile(*compare); err != nil {
			return fail("-compare: %v", err)
		}
	}
	var peers *Peers
	autoPeers := false
	switch path := *peersPath; path {
	case "none", "":
	case "auto":
		if path = FindPeersFile("."); path != "" {
			if wd, err := os.Getwd(); err == nil {
				if rel, err := filepath.Rel(wd, path); err == nil {
					path = rel
				}
			}
			if p, err := ReadPeers(path); err == nil {
				peers, autoPeers = p, true
			} else {
				fmt.Fprintf(stderr, "gpubench: ignoring peer figures: %v\n", err)
			}
		}
	default:
		p, err := ReadPeers(path)
		if err != nil {
			return fail("-peers: %v", err)
		}
		peers = p
	}

	tgt, err := open(*backend)
	if err != nil {
		return fail("opening backend %s: %v", *backend, err)
	}
	if autoPeers && tgt.Backend != "" && tgt.Backend != "cuda" {
		peers = nil // GPU figures: no comparison for the CPU backend unless -peers names them
	}
	if tgt.Close != nil {
		defer func() {
			if err := tgt.Close(); err != nil {
				fmt.Fprintf(stderr, "gpubench: closing device: %v\n", err)
			}
		}()
	}
	cfg := Config{
		Benchtime:     *benchtime,
		Count:         *count,
		WarmupTime:    *warmup,
		WarmupCount:   *warmupCount,
		MinSampleTime: *minSample,
		RefGBps:       *refGBps,
		Timer:         tgt.Timer,
		Sync:          tgt.Sync,
		Device:        tgt.Handle,
		LargeSide:     cmp.Or(side, tgt.LargeSide, LargeSide),
		Meta:          Meta{Device: tgt.Device, Driver: tgt.Driver, Libraries: tgt.Libraries, Backend: *backend, Args: args},
	}
	if *warmup == 0 {
		cfg.WarmupTime = -1 // no minimum warm-up time
	}
	switch {
	case *refGBps > 0:
	case tgt.NoCopyFraction != "":
		cfg.Meta.NoReference = tgt.NoCopyFraction
	default:
		if ref, ok := reg.Reference(); ok {
			cfg.Reference = &ref
		}
	}
	cfg.Progress, cfg.ProgressLines = ProgressTo(stderr, *quiet)
	rep, runErr := Run(ctx, cfg, bs)
	if runErr != nil {
		fmt.Fprintf(stderr, "gpubench: run stopped: %v; writing the %d results so far\n", runErr, len(rep.Results))
	}
	peers.Annotate(rep)
	var comp *Comparison
	if old != nil {
		comp = Compare(rep, old, *threshold)
	}

	status := ExitOK
	if runErr != nil || len(rep.Failed()) > 0 {
		status = ExitFailed
	}
	switch *format {
	case "table":
		err = WriteTable(stdout, rep, TableOptions{Peers: peers, Comparison: comp})
	case "gobench":
		err = WriteGoBench(stdout, rep, *gobenchRuns)
	case "json":
		err = rep.WriteJSON(stdout)
	}
	if err != nil {
		status = fail("writing stdout: %v", err)
	}
	writeFile := func(flagName, path string, write func(io.Writer) error) {
		if path == "" {
			return
		}
		f, err := os.Create(path)
		if err == nil {
			err = write(f)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			status = fail("%s: %v", flagName, err)
		}
	}
	writeFile("-json", *jsonOut, rep.WriteJSON)
	writeFile("-gobench", *gobenchOut, func(w io.Writer) error { return WriteGoBench(w, rep, *gobenchRuns) })
	if *plotOut != "" {
		if err := SavePlot(*plotOut, rep, peers); err != nil {
			status = fail("-plot: %v", err)
		}
	}

	if regs := comp.Regressions(); len(regs) > 0 {
		fmt.Fprintf(stderr, "gpubench: %d regressions past %.0f%% against %s:\n", len(regs), 100**threshold, *compare)
		for _, d := range regs {
			fmt.Fprintf(stderr, "  %s: %s -> %s (%s)\n", d.Name, fmtNs(d.OldNs), fmtNs(d.NewNs), fmtRatio(d.Ratio))
		}
		if *failOnReg && status == ExitOK {
			status = ExitRegression
		}
	}
	return status
}

// withBaselines adds to bs the baselines its benchmarks name, so that -run
// selecting one of ours also runs the raw driver baseline it is compared with;
// the result keeps the registry's order.
func withBaselines(reg *Registry, bs []Benchmark) []Benchmark {
	want := map[string]bool{}
	for _, b := range bs {
		want[b.Name] = true
	}
	added := false
	for _, b := range bs {
		if b.Baseline != "" && !want[b.Baseline] {
			if _, ok := reg.Lookup(b.Baseline); ok {
				want[b.Baseline], added = true, true
			}
		}
	}
	if !added {
		return bs
	}
	var out []Benchmark
	for _, b := range reg.All() {
		if want[b.Name] {
			out = append(out, b)
		}
	}
	return out
}
