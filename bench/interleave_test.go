package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRunInterleaved(t *testing.T) {
	// Three members of one group and a lone benchmark between them: the
	// group's samples alternate, and every result keeps its place.
	var trace []string
	calls := map[string]int{}
	var torn []string
	mk := func(name string, per time.Duration) Benchmark {
		calls := &calls
		n := 0
		return Benchmark{
			Name: name, Mode: Host, Iters: 1, Interleave: "pair",
			Timer:    &stepTimer{per: per, calls: &n},
			Body:     func() error { n++; (*calls)[name]++; trace = append(trace, name); return nil },
			Teardown: func(*Env) error { torn = append(torn, name); return nil },
		}
	}
	ours := mk("sync/stream", 2*time.Microsecond)
	ours.Baseline = "raw/sync/stream"
	raw := mk("raw/sync/stream", time.Microsecond)
	skip := mk("raw/sync/other", time.Microsecond)
	skip.Setup = func(*Env) error { return fmt.Errorf("needs the CUDA backend: %w", ErrSkip) }
	lone := Benchmark{Name: "host/noop", Mode: Host, Body: nop}
	cfg := quick()
	cfg.Count = 10
	rep, err := Run(context.Background(), cfg, []Benchmark{ours, lone, raw, skip})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rep.Results {
		names = append(names, r.Name)
	}
	if got := strings.Join(names, " "); got != "sync/stream host/noop raw/sync/stream" {
		t.Errorf("results in order %s", got)
	}
	if len(rep.Skipped) != 1 || rep.Skipped[0].Name != "raw/sync/other" || rep.Skipped[0].Reason != "needs the CUDA backend" {
		t.Errorf("skipped %+v", rep.Skipped)
	}
	if calls["raw/sync/other"] != 0 || strings.Join(torn, " ") != "sync/stream raw/sync/stream" {
		t.Errorf("skipped benchmark ran %d calls; torn down %v", calls["raw/sync/other"], torn)
	}
	// After the warm-ups, the samples alternate.
	i := strings.Index(strings.Join(trace, " "), "sync/stream raw/sync/stream sync/stream raw/sync/stream")
	if i < 0 {
		t.Errorf("samples do not alternate: %v", trace)
	}
	o, _ := rep.Lookup("sync/stream")
	r, _ := rep.Lookup("raw/sync/stream")
	if o.N != 10 || r.N != 10 || o.MedianNs != 2000 || r.MedianNs != 1000 || o.Timing != TimingHost {
		t.Errorf("ours %+v raw %+v", o.Stats, r.Stats)
	}
	if o.Baseline != "raw/sync/stream" || o.VsBaseline != 2 || r.VsBaseline != 0 {
		t.Errorf("vs baseline %v (%q), raw %v", o.VsBaseline, o.Baseline, r.VsBaseline)
	}
	var sb strings.Builder
	if err := WriteTable(&sb, rep, TableOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"vs raw", "2.00x", "skipped 1: needs the CUDA backend", "raw driver calls"} {
		if !strings.Contains(sb.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, sb.String())
		}
	}
}

func TestRunInterleavedFailureAndCancel(t *testing.T) {
	n := 0
	bad := Benchmark{Name: "a/bad", Mode: Host, Interleave: "g", Body: func() error {
		if n++; n > 3 {
			return errors.New("boom")
		}
		return nil
	}}
	good := Benchmark{Name: "a/good", Mode: Host, Interleave: "g", Body: nop}
	rep, err := Run(context.Background(), quick(), []Benchmark{bad, good})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := rep.Lookup("a/bad")
	g, _ := rep.Lookup("a/good")
	if b.Err == "" || g.Err != "" || g.N < DefaultMinSamples {
		t.Errorf("bad %q, good %q with %d samples", b.Err, g.Err, g.N)
	}

	// Cancelled while sampling (the second member's 5th call is past its
	// warm-up): both are torn down, no result is kept.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	torn := 0
	slow := Benchmark{Name: "a/slow", Mode: Host, Interleave: "h", Teardown: func(*Env) error { torn++; return nil },
		Body: func() error { time.Sleep(time.Millisecond); return nil }}
	other := slow
	other.Name = "a/other"
	otherCalls := 0
	other.Body = func() error {
		if otherCalls++; otherCalls == 5 {
			cancel()
		}
		time.Sleep(time.Millisecond)
		return nil
	}
	cfg := quick()
	cfg.Benchtime = time.Hour
	cfg.Count = 1 << 30
	rep, err = Run(ctx, cfg, []Benchmark{slow, other})
	if !errors.Is(err, context.Canceled) || torn != 2 || len(rep.Results) != 0 {
		t.Errorf("cancelled group: %v, %d torn down, %d results", err, torn, len(rep.Results))
	}
}

func TestRunSetupBytesAndLargeSide(t *testing.T) {
	var seen []int
	b := Benchmark{Name: "array/copy/16k", Bytes: 2 << 30, Setup: func(env *Env) error {
		seen = append(seen, env.Side())
		env.Bytes = 2 * 4 * int64(env.Side()) * int64(env.Side())
		return nil
	}, Body: nop}
	other := Benchmark{Name: "array/other", Bytes: 100, Setup: func(env *Env) error {
		if env.Bytes != 100 {
			return fmt.Errorf("env.Bytes %d leaked from the previous benchmark", env.Bytes)
		}
		return nil
	}, Body: nop}
	cfg := quick()
	cfg.LargeSide = ReducedLargeSide
	rep, err := Run(context.Background(), cfg, []Benchmark{b, other})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Results[0]
	if r.Bytes != 8<<24 || rep.Meta.LargeSide != ReducedLargeSide || len(seen) != 1 || seen[0] != ReducedLargeSide || rep.Results[1].Err != "" {
		t.Errorf("bytes %d, meta side %d, seen %v, %q", r.Bytes, rep.Meta.LargeSide, seen, rep.Results[1].Err)
	}
	var sb strings.Builder
	WriteTable(&sb, rep, TableOptions{})
	if !strings.Contains(sb.String(), "/16k rows ran at 4096x4096") {
		t.Errorf("table lacks the reduced size:\n%s", sb.String())
	}
	// A comparison across sides leaves the /16k rows out.
	full := *rep
	full.Meta.LargeSide = 0
	if c := Compare(rep, &full, 0.1); len(c.Deltas) != 1 || c.Deltas[0].Name != "array/other" {
		t.Errorf("deltas across sides %+v", c.Deltas)
	}
	if c := Compare(rep, rep, 0.1); len(c.Deltas) != 2 {
		t.Errorf("deltas at one side %+v", c.Deltas)
	}
	if (*Env)(nil).Side() != LargeSide || (&Env{}).Side() != LargeSide {
		t.Errorf("default side")
	}
}

func TestMainLargeFlag(t *testing.T) {
	var r Registry
	var sides []int
	body := func() error { return nil }
	r.Register(Benchmark{Name: "x/big/16k", Mode: Host, Setup: func(env *Env) error { sides = append(sides, env.Side()); return nil }, Body: body})
	r.Register(Benchmark{Name: "x/small", Mode: Host, Body: body})
	open := func(backend string) (*Target, error) {
		return &Target{Device: "slow", LargeSide: ReducedLargeSide}, nil
	}
	for _, tc := range []struct {
		flag string
		side int
	}{{"auto", ReducedLargeSide}, {"full", LargeSide}, {"reduced", ReducedLargeSide}, {"512", 512}} {
		sides = nil
		code, _, errs := runMain(t, &r, open, "-large", tc.flag, "-peers", "none")
		if code != ExitOK || len(sides) != 1 || sides[0] != tc.side {
			t.Errorf("-large %s: exit %d, sides %v, %s", tc.flag, code, sides, errs)
		}
	}
	sides = nil
	code, out, _ := runMain(t, &r, open, "-large", "off", "-peers", "none")
	if code != ExitOK || len(sides) != 0 || strings.Contains(out, "x/big") || !strings.Contains(out, "x/small") {
		t.Errorf("-large off: exit %d, sides %v\n%s", code, sides, out)
	}
	for _, bad := range []string{"huge", "0", "-3", "20000"} {
		if code, _, _ := runMain(t, &r, open, "-large", bad); code != ExitUsage {
			t.Errorf("-large %s: exit %d", bad, code)
		}
	}
}

func TestMainRunAddsBaselines(t *testing.T) {
	var r Registry
	var ran []string
	mk := func(name, base string) Benchmark {
		return Benchmark{Name: name, Mode: Host, Interleave: "g", Baseline: base, Body: func() error {
			if len(ran) == 0 || ran[len(ran)-1] != name {
				ran = append(ran, name)
			}
			return nil
		}}
	}
	r.Register(mk("sync/stream", "raw/sync/stream/cuStreamSynchronize"))
	r.Register(mk("sync/stream/blocking", "raw/sync/stream/cuStreamSynchronize"))
	r.Register(mk("raw/sync/stream/cuStreamSynchronize", ""))
	r.Register(mk("other", "raw/missing"))
	open := func(string) (*Target, error) { return &Target{}, nil }
	code, out, errs := runMain(t, &r, open, "-run", "blocking$|other", "-peers", "none")
	if code != ExitOK || strings.Contains(out, "sync/stream ") || !strings.Contains(out, "raw/sync/stream/cuStreamSynchronize") ||
		!strings.Contains(out, "vs raw") || !strings.Contains(out, "other") {
		t.Errorf("exit %d: %s\n%s", code, errs, out)
	}
	if code, out, _ := runMain(t, &r, open, "-list", "-run", "blocking$"); code != ExitOK || !strings.Contains(out, "raw/sync/stream/cuStreamSynchronize") {
		t.Errorf("-list does not show the baseline:\n%s", out)
	}
}

func TestPeersAtOtherSizes(t *testing.T) {
	p := &Peers{CupyS: map[string]float64{"copy": 10}, CupyL: map[string]float64{"copy": 1000}}
	full := &Report{}
	reduced := &Report{Meta: Meta{LargeSide: ReducedLargeSide}}
	if _, ok := p.LookupIn(full, "array/copy/16k"); !ok {
		t.Errorf("L figure missing at full size")
	}
	if _, ok := p.LookupIn(reduced, "array/copy/16k"); ok {
		t.Errorf("L figure shown for a reduced run")
	}
	if _, ok := p.LookupIn(reduced, "array/copy"); !ok {
		t.Errorf("S figure missing in a reduced run")
	}
	reduced.Results = []Result{{Name: "array/copy/16k"}, {Name: "array/copy"}}
	p.Annotate(reduced)
	if reduced.Results[0].Peer != nil || reduced.Results[1].Peer == nil {
		t.Errorf("Annotate: %+v", reduced.Results)
	}

	// -peers auto shows GPU figures for a CUDA device only; a named file
	// always.
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "peers"), 0o755)
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "peers", "h200-2026-11-30.json"), []byte(`{"cupy_S": {"copy": 10}}`), 0o644)
	t.Chdir(dir)
	var r Registry
	r.Register(Benchmark{Name: "array/copy", Mode: Host, Body: nop})
	for _, tc := range []struct {
		backend, peers string
		shown          bool
	}{{"cuda", "auto", true}, {"", "auto", true}, {"cpu", "auto", false}, {"cpu", "peers/h200-2026-11-30.json", true}} {
		open := func(string) (*Target, error) { return &Target{Backend: tc.backend}, nil }
		code, out, errs := runMain(t, &r, open, "-peers", tc.peers)
		if code != ExitOK || strings.Contains(out, "CuPy") != tc.shown {
			t.Errorf("backend %q, -peers %s: exit %d, peers shown %v, want %v\n%s%s", tc.backend, tc.peers, code, strings.Contains(out, "CuPy"), tc.shown, out, errs)
		}
	}
}
