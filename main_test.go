package gpu_test

import (
	"os"
	"testing"

	"github.com/go-gpu/gpu/internal/gputest"
)

// TestMain says, on a machine without a CUDA device, that the GPU tests skip and why
// (package gputest).
func TestMain(m *testing.M) {
	gputest.Note("github.com/go-gpu/gpu", "the GPU tests skip; the CPU backend runs everything else", 1)
	os.Exit(m.Run())
}
