package conformance_test

import (
	"errors"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/conformance"
)

// TestMultiCPU runs the two-device suite on two CPU devices.
func TestMultiCPU(t *testing.T) {
	d0, err := gpu.NewDevice(cpu.New(0))
	if err != nil {
		t.Fatal(err)
	}
	d1, err := gpu.NewDevice(cpu.New(0))
	if err != nil {
		t.Fatal(err)
	}
	conformance.RunMulti(t, d0, d1)
}

// TestMultiCUDA runs the two-device suite on CUDA devices 0 and 1; it skips unless
// there are two.
func TestMultiCUDA(t *testing.T) {
	d0, err := gpu.OpenBackend("cuda", 0)
	if errors.Is(err, gpu.ErrNoDevice) {
		t.Skipf("no CUDA device: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	d1, err := gpu.OpenBackend("cuda", 1)
	if errors.Is(err, gpu.ErrNoDevice) {
		t.Skipf("one CUDA device only: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	conformance.RunMulti(t, d0, d1)
}
