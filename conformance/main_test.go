package conformance_test

import (
	"os"
	"testing"

	"github.com/go-gpu/gpu/internal/gputest"
)

// TestMain says, on a machine without a CUDA device, that the CUDA conformance runs
// skip and why (package gputest).
func TestMain(m *testing.M) {
	gputest.Note("github.com/go-gpu/gpu/conformance", "the CUDA conformance runs skip; the CPU backend's runs don't", 1)
	os.Exit(m.Run())
}
