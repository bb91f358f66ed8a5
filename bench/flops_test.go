package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestFlops checks the floating-point rate of a benchmark that counts its operations:
// Setup's Flops and PeakFlops reach the result, TFLOP/s is Flops over the median, and
// the table and the Go benchmark format show it.
func TestFlops(t *testing.T) {
	calls := 0
	cfg := quick()
	cfg.Timer = &stepTimer{per: time.Microsecond, calls: &calls}
	b := Benchmark{Name: "matmul/float32/512", Flops: 1, Body: func() error { calls++; return nil },
		Setup: func(env *Env) error {
			if env.Flops != 1 {
				t.Errorf("Setup sees Flops %d", env.Flops)
			}
			env.Flops, env.PeakFlops = 2e6, 4e12 // 2e6 FLOP in 1 us: 2 TFLOP/s, half the peak
			return nil
		}}
	plain := Benchmark{Name: "array/copy", Bytes: 4000, Body: func() error { calls++; return nil }}
	rep, err := Run(context.Background(), cfg, []Benchmark{b, plain})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Results[0]
	if r.Flops != 2e6 || r.TFlops != 2 || r.PeakFlops != 4e12 || r.FracOfPeak != 0.5 {
		t.Errorf("flops %d, %v TFLOP/s, peak %v, fraction %v", r.Flops, r.TFlops, r.PeakFlops, r.FracOfPeak)
	}
	if p := rep.Results[1]; p.Flops != 0 || p.TFlops != 0 {
		t.Errorf("a benchmark without Flops reports %v TFLOP/s", p.TFlops)
	}
	var tab, gob bytes.Buffer
	if err := WriteTable(&tab, rep, TableOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tab.String(), "TFLOP/s") || !strings.Contains(tab.String(), "50.0%") {
		t.Errorf("table:\n%s", tab.String())
	}
	if err := WriteGoBench(&gob, rep, 1); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(gob.String(), "2.000 TFLOP/s") || !strings.Contains(gob.String(), "Unit TFLOP/s better=higher") {
		t.Errorf("Go benchmark format:\n%s", gob.String())
	}
}
