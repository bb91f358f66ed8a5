package kernel

import (
	"os"
	"testing"

	"github.com/go-gpu/gpu/internal/gputest"
)

// TestMain says, on a machine without a CUDA device, that the driver's checks of the
// generated PTX skip and why (package gputest).
func TestMain(m *testing.M) {
	gputest.Note("github.com/go-gpu/gpu/internal/kernel", "the CUDA driver's checks of the generated PTX skip", 1)
	os.Exit(m.Run())
}
