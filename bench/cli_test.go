package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"
)

// testRegistry returns synthetic benchmarks: a fake device timer gives them
// exact times, each scaled by *slow, so that a second run can regress.
func testRegistry(slow *float64) (*Registry, OpenFunc, *int) {
	calls := 0
	var r Registry
	body := func() error { calls++; return nil }
	r.Register(Benchmark{Name: "array/copy/16k", Bytes: 2 << 30, Reference: true, Body: body})
	r.Register(Benchmark{Name: "array/reductions/reduce/Float32/1d", Bytes: 2048000, Body: body})
	r.Register(Benchmark{Name: "sync/stream/blocking", Mode: Host, Body: func() error { time.Sleep(20 * time.Microsecond); return nil }})
	r.Register(Benchmark{Name: "host/noop", Mode: Host, Body: nop})
	closed := 0
	open := func(backend string) (*Target, error) {
		if backend == "cuda" {
			return nil, errors.New("no CUDA device")
		}
		return &Target{
			Device: "fake GPU", Driver: "1.2",
			Timer: &scaledTimer{calls: &calls, per: func() time.Duration { return time.Duration(*slow * 500e3) }},
			Close: func() error { closed++; return nil },
		}, nil
	}
	return &r, open, &closed
}

// scaledTimer is like stepTimer with a per-call time read at each Stop.
type scaledTimer struct {
	calls *int
	at    int
	per   func() time.Duration
}

func (t *scaledTimer) Start() error { t.at = *t.calls; return nil }
func (t *scaledTimer) Stop() (time.Duration, error) {
	return time.Duration(*t.calls-t.at) * t.per(), nil
}

func runMain(t *testing.T, reg *Registry, open OpenFunc, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	args = append([]string{"-benchtime", "5ms", "-warmup", "1ms", "-count", "20"}, args...)
	code := Main(context.Background(), args, &stdout, &stderr, reg, open)
	return code, stdout.String(), stderr.String()
}

func TestMainEndToEnd(t *testing.T) {
	slow := 1.0
	reg, open, closed := testRegistry(&slow)
	dir := t.TempDir()
	peers := filepath.Join(dir, "peers.json")
	os.WriteFile(peers, []byte(`{"ceilings": {}, "cupy_S": {"reductions/reduce/Float32/1d": 1000000},
		"torch_S": {"reductions/reduce/Float32/1d": 250000}, "cupy_L": {}, "torch_L": {"copy": 400000}}`), 0o644)
	oldJSON := filepath.Join(dir, "old.json")
	gob := filepath.Join(dir, "old.txt")
	svg := filepath.Join(dir, "chart.svg")

	code, out, errs := runMain(t, reg, open, "-json", oldJSON, "-gobench", gob, "-plot", svg, "-peers", peers)
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %s", code, errs)
	}
	if *closed != 1 {
		t.Errorf("device closed %d times", *closed)
	}
	for _, want := range []string{"benchmark", "array/copy/16k", "500 µs", "4295", "100.0%", "CuPy", "1.00 ms", "250 µs",
		"2.00x", // 500 µs / PyTorch's 250 µs
		"1.25x", // copy/16k: 500 µs / PyTorch's 400 µs
		"sync/stream/blocking", "host/noop", "device: fake GPU, driver 1.2, backend auto"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if errs != "" {
		t.Errorf("stderr not quiet when it is not a terminal: %q", errs)
	}
	old, err := ReadReportFile(oldJSON)
	if err != nil {
		t.Fatal(err)
	}
	if len(old.Results) != 4 || old.Meta.Device != "fake GPU" || old.Meta.Peers != peers || old.Meta.RefGBps == 0 ||
		strings.Join(old.Meta.Args, " ") == "" || old.Results[1].Peer == nil || old.Results[0].Timing != TimingDevice {
		t.Errorf("JSON report %+v", old)
	}
	f, _ := os.Open(gob)
	n := 0
	for r := benchfmt.NewReader(f, gob); r.Scan(); {
		if _, ok := r.Result().(*benchfmt.Result); ok {
			n++
		}
	}
	f.Close()
	if n < 4 {
		t.Errorf("%d Go benchmark lines", n)
	}
	if b, err := os.ReadFile(svg); err != nil || !bytes.Contains(b, []byte("<svg")) {
		t.Errorf("SVG: %v", err)
	}

	// Same speed: no regression.
	code, out, _ = runMain(t, reg, open, "-compare", oldJSON, "-fail-on-regression", "-peers", "none", "-run", "array/")
	if code != ExitOK || !strings.Contains(out, "vs old") || !strings.Contains(out, "1.00x") || strings.Contains(out, "REGRESSION") || strings.Contains(out, "CuPy") {
		t.Errorf("unchanged run: exit %d\n%s", code, out)
	}
	// 30% slower: flagged; the exit status changes only with -fail-on-regression.
	slow = 1.3
	code, out, errs = runMain(t, reg, open, "-compare", oldJSON, "-run", "array/")
	if code != ExitOK || !strings.Contains(out, "REGRESSION") || !strings.Contains(out, "1.30x") || !strings.Contains(errs, "2 regressions past 10%") {
		t.Errorf("slower run: exit %d\n%s\n%s", code, out, errs)
	}
	code, _, _ = runMain(t, reg, open, "-compare", oldJSON, "-run", "array/", "-fail-on-regression")
	if code != ExitRegression {
		t.Errorf("-fail-on-regression: exit %d, want %d", code, ExitRegression)
	}
	code, out, _ = runMain(t, reg, open, "-compare", oldJSON, "-run", "array/", "-fail-on-regression", "-threshold", "0.5")
	if code != ExitOK || strings.Contains(out, "REGRESSION") {
		t.Errorf("-threshold 0.5: exit %d\n%s", code, out)
	}

	// -format json and gobench on stdout; -ref-gbps.
	slow = 1
	code, out, _ = runMain(t, reg, open, "-format", "json", "-run", "reduce", "-ref-gbps", "8.192")
	var rep Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != ExitOK || len(rep.Results) != 1 ||
		rep.Meta.Reference != "given" || rep.Results[0].FracOfRef != 0.5 {
		t.Errorf("-format json: exit %d, %v, %+v", code, err, rep)
	}
	code, out, _ = runMain(t, reg, open, "-format", "gobench", "-run", "noop", "-gobench-runs", "2")
	if code != ExitOK || strings.Count(out, "BenchmarkHost/noop\t") != 2 || !strings.Contains(out, "device: fake GPU") {
		t.Errorf("-format gobench: exit %d\n%s", code, out)
	}
}

func TestMainListAndErrors(t *testing.T) {
	slow := 1.0
	reg, open, _ := testRegistry(&slow)
	code, out, _ := runMain(t, reg, open, "-list")
	if code != ExitOK || !strings.Contains(out, "array/copy/16k (reference)") || !strings.Contains(out, "copy (L)") ||
		!strings.Contains(out, "reductions/reduce/Float32/1d (S)") || strings.Count(out, "\n") != 5 {
		t.Errorf("-list: exit %d\n%s", code, out)
	}
	code, out, _ = runMain(t, reg, open, "-list", "-run", "^sync/")
	if code != ExitOK || strings.Count(out, "\n") != 2 {
		t.Errorf("-list -run: %s", out)
	}
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"-backend", "rocm"}, ExitUsage, "want auto, cpu or cuda"},
		{[]string{"-format", "xml"}, ExitUsage, "-format"},
		{[]string{"-run", "("}, ExitUsage, "-run"},
		{[]string{"-threshold", "-1"}, ExitUsage, "must be positive"},
		{[]string{"-count", "-3"}, ExitUsage, "-count must be positive"},
		{[]string{"-warmup", "-1s"}, ExitUsage, "-warmup must be positive"},
		{[]string{"-run", "noop", "-plot", "out.xyz"}, ExitUsage, "unknown chart format"},
		{[]string{"-nosuchflag"}, ExitUsage, "not defined"},
		{[]string{"extra"}, ExitUsage, "unexpected arguments"},
		{[]string{"-run", "nothing-matches"}, ExitFailed, "no benchmark matches"},
		{[]string{"-compare", "/nonexistent/old.json"}, ExitFailed, "-compare"},
		{[]string{"-peers", "/nonexistent/p.json"}, ExitFailed, "-peers"},
		{[]string{"-backend", "cuda"}, ExitFailed, "no CUDA device"},
		{[]string{"-run", "noop", "-json", "/nonexistent/dir/r.json"}, ExitFailed, "-json"},
		{[]string{"-run", "noop", "-plot", "/nonexistent/dir/r.svg"}, ExitFailed, "-plot"},
		{[]string{"-h"}, ExitOK, "usage: gpubench"},
	} {
		code, _, errs := runMain(t, reg, open, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.msg) {
			t.Errorf("%v: exit %d, want %d; stderr %q, want %q", tc.args, code, tc.code, errs, tc.msg)
		}
	}
}

func TestMainFailingBenchmark(t *testing.T) {
	var r Registry
	r.Register(Benchmark{Name: "host/fails", Body: func() error { return errors.New("out of memory") }})
	r.Register(Benchmark{Name: "host/fine", Body: nop})
	open := func(string) (*Target, error) { return &Target{}, nil }
	code, out, _ := runMain(t, &r, open)
	if code != ExitFailed || !strings.Contains(out, "FAILED host/fails: warm-up: out of memory") || !strings.Contains(out, "host/fine") ||
		!strings.Contains(out, "no device timer: 1 GPU-mode benchmarks were timed by the host clock") {
		t.Errorf("exit %d\n%s", code, out)
	}
}

func TestMainInterrupted(t *testing.T) {
	var r Registry
	ctx, cancel := context.WithCancel(context.Background())
	r.Register(Benchmark{Name: "host/first", Body: nop})
	r.Register(Benchmark{Name: "host/cancels", Body: func() error { cancel(); return nil }})
	r.Register(Benchmark{Name: "host/never", Body: nop})
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := Main(ctx, []string{"-benchtime", "5ms", "-json", filepath.Join(dir, "r.json")}, &stdout, &stderr, &r,
		func(string) (*Target, error) { return &Target{}, nil })
	rep, err := ReadReportFile(filepath.Join(dir, "r.json"))
	if code != ExitFailed || err != nil || len(rep.Results) != 1 || !strings.Contains(stderr.String(), "run stopped") {
		t.Errorf("exit %d, %v, %d results, stderr %q", code, err, len(rep.Results), stderr.String())
	}
}
