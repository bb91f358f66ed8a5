package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/examples/transformer/decoder"
)

// TestSmall runs a small block on the default device (the CPU backend without a GPU)
// with its check against plain Go.
func TestSmall(t *testing.T) {
	var out, errs bytes.Buffer
	args := []string{"-batch", "2", "-seq", "20", "-d", "32", "-heads", "4", "-hidden", "64", "-vocab", "300", "-runs", "2", "-check"}
	if code := run(context.Background(), args, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errs.String(), out.String())
	}
	if !strings.Contains(out.String(), "check: ok") || !strings.Contains(out.String(), "tokens/s") {
		t.Errorf("output:\n%s", out.String())
	}
	t.Log("\n" + out.String())
}

func TestBadFlags(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"-d", "x"}, &out, &errs); code != 2 {
		t.Errorf("exit %d for a bad flag", code)
	}
	for _, args := range [][]string{{"-seq", "0"}, {"-d", "30", "-heads", "4", "-seq", "4", "-vocab", "9"}} {
		if code := run(context.Background(), args, &out, &errs); code != 1 {
			t.Errorf("%v: exit %d", args, code)
		}
	}
	for _, bsr := range [][3]int{{0, 4, 1}, {1, 0, 1}, {1, 4, 0}} {
		err := forward(context.Background(), io.Discard, decoder.Small, bsr[0], bsr[1], bsr[2], 1, false)
		if !errors.Is(err, gpu.ErrInvalidValue) || !strings.Contains(err.Error(), "at least 1") {
			t.Errorf("batch, seq, runs %v: %v, want an error wrapping ErrInvalidValue that says why", bsr, err)
		}
	}
}
