package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/go-gpu/gpu/bench"
)

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
	for _, name := range []string{"host/noop", "host/memmove/2MB", "host/memmove/256MB (reference)", "host/sum/Float32/512K"} {
		if !strings.Contains(out, name) {
			t.Errorf("-list lacks %s:\n%s", name, out)
		}
	}
}

func TestRunPlaceholders(t *testing.T) {
	// The 256 MB reference is measured first; keep the budgets small.
	code, out, errs := gpubench(t, "-run", "noop|2MB|sum", "-benchtime", "20ms", "-warmup", "1ms", "-count", "10", "-peers", "none")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errs, out)
	}
	for _, want := range []string{"host/noop", "host/memmove/2MB", "host/sum/Float32/512K", "% copy: GB/s over host/memmove/256MB"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "FAILED") {
		t.Errorf("a placeholder failed:\n%s", out)
	}
}
