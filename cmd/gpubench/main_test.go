package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-gpu/gpu/backend/cuda/cu"
	"github.com/go-gpu/gpu/bench"
)

// TestMain lets the test binary serve as the latency benchmarks' child
// process, as the gpubench binary does.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == childFlag {
		os.Exit(childMain(os.Args[2:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func gpubench(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := bench.Main(context.Background(), args, &stdout, &stderr, bench.Default, open)
	return code, stdout.String(), stderr.String()
}

func TestList(t *testing.T) {
	code, out, errs := gpubench(t, "-list")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, name := range []string{
		"sync/stream ", "sync/stream/blocking", "sync/stream/spinning", "sync/context/blocking",
		"sync/stream/after_kernel/spinning", "sync/context/after_kernel ",
		"kernel/launch", "array/construct", "array/copyto/gpu_to_cpu_pinned/16k",
		"latency/init", "latency/first_kernel", "reference/dtod_copy (reference)",
	} {
		if !strings.Contains(out, name) {
			t.Errorf("-list lacks %s:\n%s", name, out)
		}
	}
	// Every benchmark with a raw baseline names one that is registered.
	for _, b := range bench.Default.All() {
		if b.Baseline == "" {
			continue
		}
		base, ok := bench.Default.Lookup(b.Baseline)
		if !ok || base.Interleave != b.Interleave || b.Interleave == "" {
			t.Errorf("%s: baseline %s registered %v, interleave %q vs %q", b.Name, b.Baseline, ok, b.Interleave, base.Interleave)
		}
		if !strings.HasPrefix(b.Baseline, "raw/"+b.Name) && !strings.HasPrefix(b.Baseline, "raw/"+strings.TrimSuffix(b.Name, "/blocking")) &&
			!strings.HasPrefix(b.Baseline, "raw/"+strings.TrimSuffix(b.Name, "/spinning")) {
			t.Errorf("%s: baseline %s is not named raw/<ours>", b.Name, b.Baseline)
		}
	}
}

// TestSuiteCPU runs the whole suite on the CPU backend with tiny budgets and
// checks that every benchmark produced a result without error, and that the
// raw driver baselines were skipped.
func TestSuiteCPU(t *testing.T) {
	js := filepath.Join(t.TempDir(), "cpu.json")
	code, out, errs := gpubench(t, "-backend", "cpu", "-benchtime", "1ms", "-warmup", "0", "-warmup-count", "1",
		"-count", "3", "-large", "256", "-peers", "none", "-json", js)
	if code != bench.ExitOK {
		t.Fatalf("exit %d: %s\n%s", code, errs, out)
	}
	rep, err := bench.ReadReportFile(js)
	if err != nil {
		t.Fatal(err)
	}
	skipped := map[string]string{}
	for _, s := range rep.Skipped {
		skipped[s.Name] = s.Reason
	}
	for _, b := range bench.Default.All() {
		r, ok := rep.Lookup(b.Name)
		if strings.HasPrefix(b.Name, "raw/") {
			if ok || skipped[b.Name] == "" {
				t.Errorf("%s: raw baseline on the CPU: result %v, skipped %q", b.Name, ok, skipped[b.Name])
			}
			continue
		}
		if goKernelRow(b.Name) && !strings.HasSuffix(b.Name, bench.LargeSuffix) && b.Name != "latency/first_gokernel" {
			// Go kernels over more threads than the CPU runs them for (suite_gokernels.go).
			if ok || !strings.Contains(skipped[b.Name], "through reflection") {
				t.Errorf("%s: a Go kernel at Metal.jl's size on the CPU: result %v, skipped %q", b.Name, ok, skipped[b.Name])
			}
			continue
		}
		if !ok {
			t.Errorf("%s: no result (skipped: %q)", b.Name, skipped[b.Name])
			continue
		}
		if r.Err != "" || r.N == 0 || r.MedianNs <= 0 {
			t.Errorf("%s: error %q, %d samples, median %v ns", b.Name, r.Err, r.N, r.MedianNs)
		}
		if (b.Bytes > 0) != (r.Bytes > 0) || (r.Bytes > 0 && r.GBps <= 0) {
			t.Errorf("%s: bytes %d (registered %d), %v GB/s", b.Name, r.Bytes, b.Bytes, r.GBps)
		}
	}
	m := rep.Meta
	// No "% copy" on the CPU backend (cpuNoCopyFraction says why).
	if m.Device == "" || m.Driver != "cpu" || m.LargeSide != 256 || m.Reference != "" || m.RefGBps != 0 || m.NoReference != cpuNoCopyFraction {
		t.Errorf("meta %+v", m)
	}
	for _, r := range rep.Results {
		if r.FracOfRef != 0 {
			t.Errorf("%s: %v of the copy on the CPU backend", r.Name, r.FracOfRef)
		}
	}
	// The /16k rows ran at 256x256 float32.
	if r, _ := rep.Lookup("array/copyto/gpu_to_gpu/16k"); r.Bytes != 2*4*256*256 {
		t.Errorf("gpu_to_gpu/16k moved %d bytes", r.Bytes)
	}
	if r, _ := rep.Lookup("reference/dtod_copy"); r.Bytes != 2*4*4*256*256 || r.Timing != bench.TimingDevice {
		t.Errorf("reference: %d bytes, timing %s", r.Bytes, r.Timing)
	}
	if r, _ := rep.Lookup("kernel/launch"); r.Iters != launchBatch || r.Timing != bench.TimingHost {
		t.Errorf("kernel/launch: %d launches per sample, timing %s", r.Iters, r.Timing)
	}
	for _, want := range []string{"sync/stream/after_kernel/blocking", "latency/first_kernel", "device: CPU", "driver cpu",
		"% copy: left out on this device: the CPU's caches", "/16k rows ran at 256x256", "skipped"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "FAILED") {
		t.Errorf("a benchmark failed:\n%s", out)
	}
	if head, _, _ := strings.Cut(out, "\n"); strings.Contains(head, "% copy") {
		t.Errorf("the CPU table has a %% copy column: %s", head)
	}
	// -ref-gbps still gives the column.
	code, out, errs = gpubench(t, "-backend", "cpu", "-run", "^array/copy$", "-benchtime", "1ms", "-warmup", "0",
		"-warmup-count", "1", "-count", "3", "-peers", "none", "-ref-gbps", "10")
	if head, _, _ := strings.Cut(out, "\n"); code != bench.ExitOK || !strings.Contains(head, "% copy") || !strings.Contains(out, "given reference bandwidth, 10.0 GB/s") {
		t.Errorf("-ref-gbps 10: exit %d, %s\n%s", code, errs, out)
	}
}

func TestChild(t *testing.T) {
	var out, errs bytes.Buffer
	if code := childMain([]string{"-backend", "cpu"}, &out, &errs); code != 0 || !strings.Contains(out.String(), "first_kernel_ns=") {
		t.Fatalf("child: exit %d, %q, %s", code, out.String(), errs.String())
	}
	d, err := runChild("cpu", "init_ns")
	if err != nil || d <= 0 {
		t.Errorf("runChild: %v, %v", d, err)
	}
	if _, err := runChild("cpu", "nothing_ns"); err == nil {
		t.Errorf("runChild found a figure the child does not print")
	}
	if code := childMain([]string{"-backend", "tpu"}, &out, &errs); code == 0 {
		t.Errorf("child opened backend tpu")
	}
}

func TestDriverVersion(t *testing.T) {
	d, err := openDevice("cpu")
	if err != nil {
		t.Fatal(err)
	}
	info := d.Info()
	if v := driverVersion(info); v != "cpu" {
		t.Errorf("CPU driver %q", v)
	}
	info.Backend, info.DriverVersion = "cuda", 13000
	if v := driverVersion(info); v != "13.0 "+cu.Binding {
		t.Errorf("13000 = %q", v)
	}
	info.DriverVersion = 12080
	if v := driverVersion(info); v != "12.8 "+cu.Binding {
		t.Errorf("12080 = %q", v)
	}
}

// goKernelRow reports whether a benchmark runs a Go kernel (suite_gokernels.go).
func goKernelRow(name string) bool {
	name = strings.TrimSuffix(name, bench.LargeSuffix)
	return strings.HasSuffix(name, "/go") || strings.HasPrefix(name, "gokernel/")
}
