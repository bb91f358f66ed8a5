package nccl

import (
	"os"
	"testing"

	"github.com/go-gpu/gpu/internal/gputest"
)

// TestMain says, on a machine with fewer than two CUDA devices, that the CUDA tests
// skip and why (package gputest).
func TestMain(m *testing.M) {
	gputest.Note("github.com/go-gpu/gpu/nccl", "the CUDA (NCCL) tests skip; the CPU communicator's tests run", 2)
	os.Exit(m.Run())
}
