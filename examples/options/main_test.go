package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/go-gpu/gpu"
)

// TestSmall runs the example at a small size on the default device (the CPU backend
// without a GPU) with its checks against the closed forms and plain Go.
func TestSmall(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"-paths", "50000", "-steps", "16", "-batch", "65536", "-seed", "7", "-check"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errs.String(), out.String())
	}
	if !strings.Contains(out.String(), "check: ok") {
		t.Errorf("no check in the output:\n%s", out.String())
	}
	t.Log("\n" + out.String())
}

func TestBadFlags(t *testing.T) {
	var out, errs bytes.Buffer
	for _, args := range [][]string{{"-paths", "x"}, {"-nope"}} {
		if code := run(context.Background(), args, &out, &errs); code != 2 {
			t.Errorf("%v: exit %d", args, code)
		}
	}
	for _, args := range [][]string{{"-paths", "1"}, {"-sigma", "-1", "-paths", "10"}, {"-steps", "0"}} {
		if code := run(context.Background(), args, &out, &errs); code != 1 {
			t.Errorf("%v: exit %d", args, code)
		}
	}
	for _, c := range []config{{steps: 0, batch: 16, paths: 10}, {steps: 8, batch: 4, paths: 10}} {
		if err := price(context.Background(), io.Discard, c); !errors.Is(err, gpu.ErrInvalidValue) || !strings.Contains(err.Error(), "at least") {
			t.Errorf("%+v: %v, want an error wrapping ErrInvalidValue that says why", c, err)
		}
	}
}
