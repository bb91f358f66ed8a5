package bench

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"
)

// synthetic returns a report of results with the given samples (ns per call).
func synthetic(device string, ref float64, results ...Result) *Report {
	rep := &Report{Schema: Schema, Meta: Meta{
		Device: device, Driver: "580.159.04", Backend: "cuda", GoVersion: "go1.26.8", GOOS: "linux", GOARCH: "amd64",
		Date: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), RefGBps: ref, Reference: "array/copy/16k",
	}}
	for _, r := range results {
		r.Stats = Summarize(r.Samples)
		if r.Group == "" {
			r.Group, _, _ = strings.Cut(r.Name, "/")
		}
		if r.Iters == 0 {
			r.Iters = 1
		}
		if r.Timing == "" {
			r.Timing = TimingDevice
		}
		r.GBps = GBps(r.Bytes, r.MedianNs)
		if ref > 0 {
			r.FracOfRef = r.GBps / ref
		}
		rep.Results = append(rep.Results, r)
	}
	return rep
}

func sampleReport() *Report {
	return synthetic("NVIDIA H200", 4000,
		Result{Name: "array/copy/16k", Bytes: 2 << 30, Samples: []float64{540000, 530000, 536870.912, 600000}},
		Result{Name: "array/reductions/reduce/Float32/1d", Bytes: 2048000, Samples: []float64{20000, 21000, 19000}},
		Result{Name: "array/reductions/reduce/Float32/1d/16k", Bytes: 1 << 30, Samples: []float64{270000, 268435.456, 280000}},
		Result{Name: "sync/stream/blocking", Mode: Host, Timing: TimingHost, Iters: 4, Samples: []float64{5000, 5100, 4900, 5000, 5200, 5050, 4950, 5000, 5000, 5000, 5000, 5000}},
		Result{Name: "kernel/launch", Mode: Host, Err: "launch failed"},
	)
}

func TestJSONRoundTrip(t *testing.T) {
	// A real run, so that every field Run fills is covered.
	calls := 0
	cfg := quick()
	cfg.Timer = &stepTimer{per: 3 * time.Microsecond, calls: &calls}
	cfg.Meta = Meta{Device: "fake", Driver: "1.0", Backend: "cpu", Args: []string{"-run", "x"}}
	ref := Benchmark{Name: "array/copy", Bytes: 6000, Reference: true, Body: func() error { calls++; return nil }}
	cfg.Reference = &ref
	rep, err := Run(context.Background(), cfg, []Benchmark{
		ref,
		{Name: "host/noop", Mode: Host, Body: nop},
		{Name: "bad", Body: func() error { return os.ErrClosed }},
	})
	if err != nil {
		t.Fatal(err)
	}
	peers := &Peers{Path: "p.json", CupyS: map[string]float64{"copy": 25000}}
	peers.Annotate(rep)
	if rep.Results[0].Peer == nil || rep.Meta.Peers != "p.json" {
		t.Fatalf("Annotate did not set the peer figures")
	}
	for _, want := range []*Report{rep, sampleReport()} {
		var buf bytes.Buffer
		if err := want.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		got, err := ReadReport(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if !got.Meta.Date.Equal(want.Meta.Date) {
			t.Errorf("date %v, want %v", got.Meta.Date, want.Meta.Date)
		}
		g, w := *got, *want
		g.Meta.Date, w.Meta.Date = time.Time{}, time.Time{}
		if !reflect.DeepEqual(&g, &w) {
			t.Errorf("round trip:\n got %+v\nwant %+v\nJSON %s", g, w, buf.String())
		}
	}

	// The documented keys are there.
	var buf bytes.Buffer
	rep.WriteJSON(&buf)
	for _, key := range []string{`"schema": "gpubench/1"`, `"meta"`, `"device": "fake"`, `"driver": "1.0"`, `"date"`,
		`"go_version"`, `"backend": "cpu"`, `"reference": "array/copy"`, `"ref_gbps": 2`, `"settings"`, `"benchtime": "20ms"`,
		`"benchmarks"`, `"samples_ns"`, `"median_ns": 3000`, `"iters_per_sample"`, `"gbps": 2`, `"frac_of_ref": 1`,
		`"mode": "Host"`, `"timing": "device"`, `"peer"`, `"cupy_ns": 25000`, `"error": "warm-up: file already closed"`} {
		if !strings.Contains(buf.String(), key) {
			t.Errorf("JSON lacks %s:\n%s", key, buf.String())
		}
	}

	// A file of another schema is refused; so is garbage.
	if _, err := ReadReport(strings.NewReader(`{"schema": "other/2"}`)); err == nil {
		t.Errorf("ReadReport accepted another schema")
	}
	if _, err := ReadReport(strings.NewReader(`{`)); err == nil {
		t.Errorf("ReadReport accepted broken JSON")
	}
	path := filepath.Join(t.TempDir(), "r.json")
	os.WriteFile(path, buf.Bytes(), 0o644)
	if r, err := ReadReportFile(path); err != nil || r.Meta.Device != "fake" {
		t.Errorf("ReadReportFile = %v, %v", r, err)
	}
	if _, err := ReadReportFile(path + ".missing"); err == nil {
		t.Errorf("ReadReportFile of a missing file did not fail")
	}
}

func TestCompare(t *testing.T) {
	old := synthetic("NVIDIA H200", 0,
		Result{Name: "a", Samples: []float64{100}},
		Result{Name: "b", Samples: []float64{100}},
		Result{Name: "c", Samples: []float64{100}},
		Result{Name: "d", Samples: []float64{100}},
		Result{Name: "e", Samples: []float64{100}},
		Result{Name: "f", Samples: []float64{100}, Err: "x"},
	)
	cur := synthetic("NVIDIA H200", 0,
		Result{Name: "a", Samples: []float64{110}},  // exactly +10%: not past the threshold
		Result{Name: "b", Samples: []float64{111}},  // regression
		Result{Name: "c", Samples: []float64{50}},   // improvement
		Result{Name: "d", Samples: []float64{95}},   // neither
		Result{Name: "new", Samples: []float64{10}}, // not in old
		Result{Name: "f", Samples: []float64{10}},   // failed in old
		Result{Name: "e", Err: "y"},                 // failed now
	)
	c := Compare(cur, old, 0.10)
	if len(c.Deltas) != 4 {
		t.Fatalf("%d deltas, want 4: %+v", len(c.Deltas), c.Deltas)
	}
	for _, want := range []Delta{
		{Name: "a", OldNs: 100, NewNs: 110, Ratio: 1.1},
		{Name: "b", OldNs: 100, NewNs: 111, Ratio: 1.11, Regression: true},
		{Name: "c", OldNs: 100, NewNs: 50, Ratio: 0.5, Improvement: true},
		{Name: "d", OldNs: 100, NewNs: 95, Ratio: 0.95},
	} {
		got, ok := c.Lookup(want.Name)
		if !ok || got.Regression != want.Regression || got.Improvement != want.Improvement || !near(got.Ratio, want.Ratio) ||
			got.OldNs != want.OldNs || got.NewNs != want.NewNs {
			t.Errorf("delta %s = %+v, want %+v", want.Name, got, want)
		}
	}
	if r := c.Regressions(); len(r) != 1 || r[0].Name != "b" {
		t.Errorf("Regressions() = %+v", r)
	}
	if r := Compare(cur, old, 0.5).Regressions(); len(r) != 0 {
		t.Errorf("at a 50%% threshold: %+v", r)
	}
	if r := Compare(cur, old, 0).Regressions(); len(r) != 2 {
		t.Errorf("at a 0%% threshold: %d regressions, want 2", len(r))
	}
	var nilc *Comparison
	if _, ok := nilc.Lookup("a"); ok || nilc.Regressions() != nil {
		t.Errorf("nil comparison")
	}
}

func TestWriteTable(t *testing.T) {
	rep := sampleReport()
	var buf bytes.Buffer
	if err := WriteTable(&buf, rep, TableOptions{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[0], "benchmark") || !strings.Contains(lines[0], "median") || strings.Contains(lines[0], "CuPy") {
		t.Errorf("header %q", lines[0])
	}
	if strings.Contains(out, "no device timer") {
		t.Errorf("device-timed results reported as host-timed:\n%s", out)
	}
	for _, want := range []string{
		"array/reductions/reduce/Float32/1d/16k", "270 µs", "268 µs", "3977", // 2^30 B / 270 µs
		"99.4%", "5.00 µs", "FAILED kernel/launch: launch failed", "% copy: GB/s over array/copy/16k",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	// Columns are aligned: every row of the table is as wide as the header
	// or narrower, and the median column ends at the same place.
	end := strings.Index(lines[0], "median") + len("median")
	for _, l := range lines[1:6] {
		if r := []rune(l); len(r) < end || r[end-1] == ' ' {
			t.Errorf("row %q not aligned with the header (median ends at %d)", l, end)
		}
	}

	// With peers and a comparison.
	peers := &Peers{Path: "peers/h200.json", Meta: map[string]any{"date": "2026-12-01T09:00:00Z"},
		CupyS:  map[string]float64{"reductions/reduce/Float32/1d": 22328.5},
		TorchS: map[string]float64{"reductions/reduce/Float32/1d": 25406, "sync/stream": 8332},
		CupyL:  map[string]float64{"reductions/reduce/Float32/1d": 256337.5, "copy": 1288885.5},
		TorchL: map[string]float64{"reductions/reduce/Float32/1d": 262240.5, "copy": 521374.5},
	}
	old := synthetic("NVIDIA H200", 4000,
		Result{Name: "array/copy/16k", Samples: []float64{530000}},
		Result{Name: "array/reductions/reduce/Float32/1d", Samples: []float64{10000}},
	)
	buf.Reset()
	WriteTable(&buf, rep, TableOptions{Peers: peers, Comparison: Compare(rep, old, 0.1)})
	out = buf.String()
	for _, want := range []string{"CuPy", "PyTorch", "vs peer", "old", "vs old",
		"22.3 µs", "25.4 µs", "0.90x", // 20 µs / CuPy's 22.3 µs
		"1.05x", "1.29 ms", "521 µs", // copy/16k: 538 µs / PyTorch's 521 µs
		"2.00x", "REGRESSION", "1 regressions past 10%", "peers/h200.json, measured 2026-12-01T09:00:00Z",
		"8.33 µs", "0.60x", // sync/stream/blocking maps onto sync/stream
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestFormatters(t *testing.T) {
	for ns, want := range map[float64]string{0: "-", 1.5: "1.50 ns", 999: "999 ns", 1000: "1.00 µs", 22328.5: "22.3 µs",
		1.5e6: "1.50 ms", 130e6: "130 ms", 29.3e9: "29.3 s"} {
		if got := fmtNs(ns); got != want {
			t.Errorf("fmtNs(%v) = %q, want %q", ns, got, want)
		}
	}
	if GoBenchName("array/copy") != "BenchmarkArray/copy" || GoBenchName("kernel/launch") != "BenchmarkKernel/launch" {
		t.Errorf("GoBenchName")
	}
}

// TestGoBenchParses feeds WriteGoBench's output to benchstat's parser.
func TestGoBenchParses(t *testing.T) {
	rep := sampleReport()
	var buf bytes.Buffer
	if err := WriteGoBench(&buf, rep, 3); err != nil {
		t.Fatal(err)
	}
	type line struct {
		iters int
		vals  map[string]float64
	}
	got := map[string][]line{}
	r := benchfmt.NewReader(bytes.NewReader(buf.Bytes()), "new.txt")
	var units []string
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.Result:
			if v := rec.GetConfig("device"); v != "NVIDIA H200" {
				t.Errorf("device config %q", v)
			}
			if v := rec.GetConfig("goos"); v != "linux" {
				t.Errorf("goos config %q", v)
			}
			l := line{iters: rec.Iters, vals: map[string]float64{}}
			for _, v := range rec.Values {
				if v.OrigUnit != "" {
					l.vals[v.OrigUnit] = v.OrigValue
				} else {
					l.vals[v.Unit] = v.Value
				}
			}
			got[string(rec.Name)] = append(got[string(rec.Name)], l)
		case *benchfmt.UnitMetadata:
			units = append(units, rec.OrigUnit+" "+rec.Key+"="+rec.Value)
		case *benchfmt.SyntaxError:
			t.Errorf("benchfmt: %v", rec)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(units, ",") != "GB/s better=higher,frac-of-copy better=higher" {
		t.Errorf("unit metadata %v", units)
	}
	if len(got) != 4 {
		t.Errorf("%d benchmarks parsed, want 4 (the failed one skipped):\n%s", len(got), buf.String())
	}
	// reduce/Float32/1d: 3 samples, 3 lines of one sample each.
	red := got["Array/reductions/reduce/Float32/1d"]
	if len(red) != 3 || red[0].vals["ns/op"] != 20000 || red[1].vals["ns/op"] != 21000 || red[2].iters != 1 {
		t.Errorf("reduce lines %+v", red)
	}
	if g := red[0].vals["GB/s"]; math.Abs(g-102.4) > 0.05 {
		t.Errorf("reduce GB/s %v, want 102.4", g)
	}
	if f := red[0].vals["frac-of-copy"]; math.Abs(f-0.0256) > 1e-4 {
		t.Errorf("reduce frac-of-copy %v", f)
	}
	// sync: 12 samples of 4 calls in 3 lines: 16 calls each, the mean of 4 samples.
	syn := got["Sync/stream/blocking"]
	if len(syn) != 3 || syn[0].iters != 16 || syn[0].vals["ns/op"] != 5000 || syn[1].vals["ns/op"] != 5050 || len(syn[0].vals) != 1 {
		t.Errorf("sync lines %+v", syn)
	}
	// benchfmt splits the name into base and sub-benchmark parts as benchstat does.
	r = benchfmt.NewReader(bytes.NewReader(buf.Bytes()), "new.txt")
	for r.Scan() {
		if res, ok := r.Result().(*benchfmt.Result); ok && strings.HasSuffix(string(res.Name), "dims=1") {
			base, parts := res.Name.Parts()
			if string(base) != "Array" {
				t.Errorf("base %q parts %q", base, parts)
			}
		}
	}
	if !strings.Contains(buf.String(), "--- FAIL: BenchmarkKernel/launch") {
		t.Errorf("failed benchmark not marked:\n%s", buf.String())
	}
}

func TestPlot(t *testing.T) {
	rep := sampleReport()
	peers := &Peers{CupyS: map[string]float64{"reductions/reduce/Float32/1d": 22328.5}, TorchL: map[string]float64{"copy": 521374.5}}
	var buf bytes.Buffer
	if err := WritePlot(&buf, rep, peers); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	if !strings.Contains(svg, "<svg") || !strings.HasSuffix(strings.TrimSpace(svg), "</svg>") {
		t.Fatalf("not an SVG:\n%.300s", svg)
	}
	for _, want := range []string{"array/reductions/reduce/Float32/1d/16k", "sync/stream/blocking", "CuPy", "PyTorch", "gpu (ours)", "NVIDIA H200"} {
		if !strings.Contains(svg, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	if strings.Contains(svg, ">kernel/launch<") {
		t.Errorf("the failed benchmark is plotted")
	}
	dir := t.TempDir()
	for _, name := range []string{"a.svg", "a.png"} {
		if err := SavePlot(filepath.Join(dir, name), rep, nil); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Size() < 1000 {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A single value, and nothing at all.
	one := synthetic("", 0, Result{Name: "x", Samples: []float64{5}})
	if err := WritePlot(&buf, one, nil); err != nil {
		t.Errorf("one value: %v", err)
	}
	if err := WritePlot(&buf, synthetic("", 0), nil); err == nil {
		t.Errorf("an empty report plotted")
	}
}
