package bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestProgressLines: for a pipe or a file, a line per group of benchmarks (no
// carriage returns), the same benchmark line as on a terminal.
func TestProgressLines(t *testing.T) {
	var buf bytes.Buffer
	cfg := quick()
	cfg.Progress, cfg.ProgressLines = &buf, true
	bs := []Benchmark{{Name: "a/one", Body: nop}, {Name: "a/two", Body: nop}, {Name: "b/three", Body: nop}, {Name: "c/four", Group: "a", Body: nop}}
	if _, err := Run(context.Background(), cfg, bs); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if strings.Contains(out, "\r") || len(lines) != 3 || !strings.HasPrefix(lines[0], "gpubench: [1/4] a/one  ") ||
		!strings.HasPrefix(lines[1], "gpubench: [3/4] b/three  ") || !strings.HasPrefix(lines[2], "gpubench: [4/4] c/four  ") {
		t.Errorf("progress lines %q", out)
	}
}

// TestProgressLinesLongGroup: within one long group, a line at least every
// progressLineEvery (from the sampling loop's ticks too).
func TestProgressLinesLongGroup(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, true, 3, time.Now())
	p.begin(1, "a/one", "a")
	p.begin(2, "a/two", "a")
	p.tick()
	if n := strings.Count(buf.String(), "\n"); n != 1 {
		t.Fatalf("%d lines at once: %q", n, buf.String())
	}
	p.last = time.Now().Add(-progressLineEvery)
	p.tick()
	p.last = time.Now().Add(-progressLineEvery)
	p.begin(3, "a/three", "a")
	p.done()
	if got := buf.String(); strings.Count(got, "\n") != 3 || !strings.Contains(got, "[2/3] a/two") || !strings.Contains(got, "[3/3] a/three") {
		t.Errorf("progress %q", got)
	}
}

// TestProgressTo: a terminal gets the line rewritten in place, another file a line
// per group, -q or a non-file writer nothing.
func TestProgressTo(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if w, lines := ProgressTo(f, false); w != f || !lines {
		t.Errorf("a file: %v, lines %v", w, lines)
	}
	if w, _ := ProgressTo(f, true); w != nil {
		t.Errorf("-q: %v", w)
	}
	if w, _ := ProgressTo(&bytes.Buffer{}, false); w != nil {
		t.Errorf("a buffer: %v", w)
	}
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		if w, lines := ProgressTo(tty, false); w != tty || lines {
			t.Errorf("a terminal: %v, lines %v", w, lines)
		}
	}
}

// TestMainNoCopyFraction: a target that says "% copy" means nothing there gets no
// reference run and no column, and the footer says why; -ref-gbps still gives one.
func TestMainNoCopyFraction(t *testing.T) {
	slow := 1.0
	reg, open, _ := testRegistry(&slow)
	noFrac := func(backend string) (*Target, error) {
		tgt, err := open(backend)
		if err == nil {
			tgt.NoCopyFraction = "caches hold the arrays"
		}
		return tgt, err
	}
	js := filepath.Join(t.TempDir(), "r.json")
	code, out, errs := runMain(t, reg, noFrac, "-peers", "none", "-json", js)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	head, _, _ := strings.Cut(out, "\n")
	if strings.Contains(head, "% copy") || strings.Contains(out, "%\n") || !strings.Contains(out, "% copy: left out on this device: caches hold the arrays\n") {
		t.Errorf("table:\n%s", out)
	}
	rep, err := ReadReportFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Meta.RefGBps != 0 || rep.Meta.Reference != "" || rep.Meta.NoReference != "caches hold the arrays" {
		t.Errorf("meta %+v", rep.Meta)
	}
	if r, ok := rep.Lookup("array/copy/16k"); !ok || r.GBps <= 0 || r.FracOfRef != 0 {
		t.Errorf("the reference benchmark as a row: %+v", r)
	}
	code, out, _ = runMain(t, reg, noFrac, "-peers", "none", "-ref-gbps", "4000")
	if head, _, _ := strings.Cut(out, "\n"); code != ExitOK || !strings.Contains(head, "% copy") || !strings.Contains(out, "given reference bandwidth") {
		t.Errorf("-ref-gbps:\n%s", out)
	}
}
