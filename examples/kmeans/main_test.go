package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestSmall runs the example at a small size on the default device (the CPU backend
// without a GPU) with its check against plain Go.
func TestSmall(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"-n", "4000", "-k", "8", "-blobs", "8", "-iters", "5", "-check"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errs.String(), out.String())
	}
	if !strings.Contains(out.String(), "check: ok") {
		t.Errorf("no check in the output:\n%s", out.String())
	}
	t.Log("\n" + out.String())
}

func TestBadFlags(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"-n", "x"}, &out, &errs); code != 2 {
		t.Errorf("exit %d for a bad flag", code)
	}
	if code := run(context.Background(), []string{"-n", "0"}, &out, &errs); code != 1 {
		t.Errorf("exit %d for no points", code)
	}
}
