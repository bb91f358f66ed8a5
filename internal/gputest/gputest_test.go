package gputest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-gpu/gpu/backend/cuda"
)

// TestMissing: the reason matches what the driver says on this machine.
func TestMissing(t *testing.T) {
	n, err := (cuda.Backend{}).DeviceCount()
	got := Missing(1)
	switch {
	case err != nil:
		if !strings.HasPrefix(got, "no CUDA device (") || !strings.Contains(got, err.Error()) {
			t.Errorf("Missing(1) = %q with the driver's error %v", got, err)
		}
	case n == 0:
		if got != "no CUDA device (the driver found none)" {
			t.Errorf("Missing(1) = %q with no device", got)
		}
	default:
		if got != "" {
			t.Errorf("Missing(1) = %q with %d devices", got, n)
		}
		if got := Missing(n + 1); got != fmt.Sprintf("%d CUDA device(s), %d needed", n, n+1) {
			t.Errorf("Missing(%d) = %q", n+1, got)
		}
	}
}

func TestLine(t *testing.T) {
	if got := line("example.com/p", "the GPU tests skip", "no CUDA device (x)", false); got != "example.com/p: no CUDA device (x): the GPU tests skip\n" {
		t.Errorf("line = %q", got)
	}
	if got := line("p", "w", "y", true); got != "p: y: w (go test -v lists them)\n" {
		t.Errorf("terminal line = %q", got)
	}
}
